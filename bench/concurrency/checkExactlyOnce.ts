import { readFile, rm } from 'node:fs/promises';

/** Whether the ranks of one epoch together received every sample exactly once. */
export interface ExactlyOnceCheck {
  /** Samples in the dataset. */
  expected: number;
  /** Samples received by all ranks together, repeats included. */
  delivered: number;
  /** Ids received more than once (within one rank or by several), counted once per repeat. */
  duplicates: number;
  /** Dataset ids no rank received. */
  missing: number;
  /** Ids received that are not in the dataset. */
  unexpected: number;
  ok: boolean;
}

/**
 * Compares the ids the ranks of one epoch received with the dataset's ids: the union must be
 * the dataset, with no id received twice. @internal
 */
export function checkExactlyOnce(
  datasetIds: readonly string[],
  idsByRank: readonly (readonly string[])[],
): ExactlyOnceCheck {
  const dataset = new Set(datasetIds);
  const seen = new Set<string>();
  let delivered = 0;
  let duplicates = 0;
  let unexpected = 0;
  for (const ids of idsByRank) {
    for (const id of ids) {
      delivered++;
      if (seen.has(id)) duplicates++;
      else {
        seen.add(id);
        if (!dataset.has(id)) unexpected++;
      }
    }
  }
  const missing = dataset.size - (seen.size - unexpected);
  return {
    expected: dataset.size,
    delivered,
    duplicates,
    missing,
    unexpected,
    ok: duplicates === 0 && missing === 0 && unexpected === 0,
  };
}

/** Adds up the checks of several epochs or runs; ok only when every one is. @internal */
export function combineExactlyOnce(checks: readonly ExactlyOnceCheck[]): ExactlyOnceCheck {
  const sum = (f: (c: ExactlyOnceCheck) => number): number => checks.reduce((a, c) => a + f(c), 0);
  return {
    expected: sum((c) => c.expected),
    delivered: sum((c) => c.delivered),
    duplicates: sum((c) => c.duplicates),
    missing: sum((c) => c.missing),
    unexpected: sum((c) => c.unexpected),
    ok: checks.length > 0 && checks.every((c) => c.ok),
  };
}

/**
 * Reads (and removes) the ids file of a ranks client child and checks every epoch of it
 * against the dataset's ids; also the samples and bytes the ranks received together. @internal
 */
export async function checkRanksFile(
  idsFile: string,
  datasetIds: readonly string[],
  epochs: number,
  ranks: readonly { samples: number; bytes: number }[],
): Promise<{ exactlyOnce: ExactlyOnceCheck; samples: number; bytes: number }> {
  const ids = JSON.parse(await readFile(idsFile, 'utf8')) as string[][][];
  await rm(idsFile, { force: true });
  const exactlyOnce = combineExactlyOnce(
    Array.from({ length: epochs }, (_, epoch) =>
      checkExactlyOnce(
        datasetIds,
        ids.map((byEpoch) => byEpoch[epoch] ?? []),
      ),
    ),
  );
  const samples = ranks.reduce((a, r) => a + r.samples, 0);
  const bytes = ranks.reduce((a, r) => a + r.bytes, 0);
  return { exactlyOnce, samples, bytes };
}

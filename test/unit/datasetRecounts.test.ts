import type cassandra from 'cassandra-driver';
import { describe, expect, it } from 'vitest';
import type { DatasetCounts } from '../../src/core/schema/datasetInfo.js';
import { DatasetRecounts } from '../../src/core/schema/DatasetRecounts.js';

const client = {} as cassandra.Client;

/** A recount the test finishes by hand: each started one waits for `finish`. */
function manualRecounts(): {
  recounts: DatasetRecounts;
  started: Array<{ dataset: string; finish: (samples: number) => void; fail: () => void }>;
} {
  const started: Array<{ dataset: string; finish: (n: number) => void; fail: () => void }> = [];
  const recounts = new DatasetRecounts({
    recount: (_client, dataset) =>
      new Promise<DatasetCounts>((resolve, reject) => {
        started.push({
          dataset,
          finish: (n) => resolve({ sampleCount: n, totalBytes: 0, classCounts: new Map() }),
          fail: () => reject(new Error('scan failed')),
        });
      }),
  });
  return { recounts, started };
}

/** Lets every pending promise callback run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('DatasetRecounts', () => {
  it('runs one recount at a time per dataset; callers during it share the next one', async () => {
    const { recounts, started } = manualRecounts();
    const first = recounts.recount(client, 'a');
    await settle();
    expect(started).toHaveLength(1);

    // Three calls end while the first recount runs: none starts a scan of its own yet.
    const waiting = [1, 2, 3].map(() => recounts.recount(client, 'a'));
    await settle();
    expect(started).toHaveLength(1);
    expect(waiting[1]).toBe(waiting[0]);
    expect(waiting[2]).toBe(waiting[0]);

    started[0]!.finish(10);
    expect((await first).sampleCount).toBe(10);
    await settle();
    // One more recount, started after the first ended, for all three.
    expect(started).toHaveLength(2);
    started[1]!.finish(13);
    const counts = await Promise.all(waiting);
    expect(counts.map((c) => c.sampleCount)).toEqual([13, 13, 13]);

    // Idle again: the next caller starts at once.
    const later = recounts.recount(client, 'a');
    await settle();
    expect(started).toHaveLength(3);
    started[2]!.finish(14);
    expect((await later).sampleCount).toBe(14);
  });

  it('never makes a caller take a recount that started before it asked', async () => {
    const { recounts, started } = manualRecounts();
    void recounts.recount(client, 'a');
    await settle();
    const mine = recounts.recount(client, 'a');
    let done = false;
    void mine.then(() => (done = true));
    started[0]!.finish(1);
    await settle();
    expect(done).toBe(false);
    started[1]!.finish(2);
    expect((await mine).sampleCount).toBe(2);
  });

  it('keeps datasets apart', async () => {
    const { recounts, started } = manualRecounts();
    const a = recounts.recount(client, 'a');
    const b = recounts.recount(client, 'b');
    await settle();
    expect(started.map((s) => s.dataset)).toEqual(['a', 'b']);
    started[1]!.finish(2);
    started[0]!.finish(1);
    expect((await a).sampleCount).toBe(1);
    expect((await b).sampleCount).toBe(2);
  });

  it('starts the next recount after a failed one, and tells each start', async () => {
    const starts: string[] = [];
    let calls = 0;
    const recounts = new DatasetRecounts({
      recount: () => {
        calls++;
        return calls === 1
          ? Promise.reject(new Error('scan failed'))
          : Promise.resolve({ sampleCount: 5, totalBytes: 0, classCounts: new Map() });
      },
      onRecount: (dataset) => starts.push(dataset),
    });
    const failed = recounts.recount(client, 'a');
    const next = recounts.recount(client, 'a');
    await expect(failed).rejects.toThrow('scan failed');
    expect((await next).sampleCount).toBe(5);
    expect(starts).toEqual(['a', 'a']);
  });
});

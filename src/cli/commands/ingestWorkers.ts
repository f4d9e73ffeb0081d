import { type ChildProcess, fork } from 'node:child_process';
import {
  checkIngestCaps,
  createDbClient,
  ensureDatasetSchema,
  type IngestCapRules,
  type IngestSkip,
  type IngestSource,
  type IngestSummary,
  recordIngestStart,
  refreshDatasetCounts,
  type Replication,
  SampleWriter,
  unavailable,
} from '../../core/index.js';
import { dbConfigFromFlags, dbSettingNames } from '../dbOptions.js';
import { ingestFlagOf } from './ingestFormatOptions.js';
import { createProgress, type Progress } from '../progress.js';
import type { IngestFlags } from './ingestFlags.js';

/** The variable a `--workers` child reads its flags from (instead of its command line). */
export const WORKER_FLAGS_ENV = 'SCYLLA_LOADER_INGEST_WORKER_FLAGS';

/** What a child sends its parent. */
type WorkerMessage =
  | { kind: 'progress'; done: number; bytes: number }
  | { kind: 'log'; line: string }
  | { kind: 'summary'; summary: WireSummary };

/** An {@link IngestSummary} as it crosses IPC (counts as a plain object). */
export type WireSummary = Omit<IngestSummary, 'dataset'>;

/** The summary a child sends (its counts are the parent's to compute). */
export function toWire(summary: IngestSummary): WireSummary {
  const rest: Partial<IngestSummary> = { ...summary };
  delete rest.dataset;
  return rest as WireSummary;
}

/** A child's progress, sent to its parent four times a second and at the end. */
export function reportToParent(): Progress {
  let done = 0;
  let bytes = 0;
  const send = (message: WorkerMessage): void => {
    process.send?.(message);
  };
  const timer = setInterval(() => send({ kind: 'progress', done, bytes }), 250);
  timer.unref();
  return {
    update(d, b) {
      done = d;
      if (b !== undefined) bytes = b;
    },
    log(line) {
      send({ kind: 'log', line });
    },
    stop() {
      clearInterval(timer);
      send({ kind: 'progress', done, bytes });
    },
  };
}

/** The flags a `--workers` child runs with: its shard, read from {@link WORKER_FLAGS_ENV}. */
export function workerChildFlags(): IngestFlags {
  const raw = process.env[WORKER_FLAGS_ENV];
  if (!raw) throw new Error(`--worker-child needs ${WORKER_FLAGS_ENV}`);
  return { ...(JSON.parse(raw) as IngestFlags), workerChild: true };
}

/**
 * `ingest --workers N`: makes the dataset's schema and records the ingest once (concurrent
 * schema changes from several clients are what Cassandra handles worst), then runs N copies
 * of this command with `--shard i/N`, one progress display summing theirs, and recomputes the
 * counts when all are done. A child that fails does not stop the others (what they write is
 * kept); the ingest then fails naming it, and running it again resumes it.
 */
export async function runIngestWorkers(
  dataset: string,
  flags: IngestFlags,
  plan: { source: IngestSource; workers: number; replication: Replication; caps: IngestCapRules },
): Promise<IngestSummary> {
  const started = performance.now();
  const client = await createDbClient(dbConfigFromFlags(flags), { settingNames: dbSettingNames() });
  try {
    const { columns, labelNames } = plan.source;
    checkIngestCaps({ dataset, columns, labelNames }, plan.caps);
    await ensureDatasetSchema(client, {
      dataset,
      replication: plan.replication,
      columns,
      caps: plan.caps,
      nameOption: ingestFlagOf,
    });
    await recordIngestStart(
      client,
      dataset,
      {
        labelNames,
        columns: Object.fromEntries(columns.map((c) => [c.name, c.type])),
        source: plan.source.description,
      },
      plan.caps,
    );
    // Decided once: a child starting after another's first write must not think otherwise.
    const freshDataset = await SampleWriter.isEmpty(client, dataset);

    const progress = createProgress(
      `ingest ${dataset} (${plan.workers} processes)`,
      plan.source.total ?? 0,
    );
    const done = new Array<number>(plan.workers).fill(0);
    const bytes = new Array<number>(plan.workers).fill(0);
    const summaries: Array<WireSummary | undefined> = [];
    const children: ChildProcess[] = [];
    const onSignal = (): void => {
      for (const c of children) c.kill('SIGINT');
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let failures: string[];
    try {
      const exits = Array.from({ length: plan.workers }, (_, i) => {
        const child = fork(process.argv[1]!, ['ingest', dataset, '--worker-child'], {
          execArgv: process.execArgv,
          env: {
            ...process.env,
            [WORKER_FLAGS_ENV]: JSON.stringify({
              ...flags,
              workers: '1',
              freshDataset,
              shard: `${i}/${plan.workers}`,
            }),
          },
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        });
        children.push(child);
        child.on('message', (m: WorkerMessage) => {
          if (m.kind === 'progress') {
            done[i] = m.done;
            bytes[i] = m.bytes;
            progress.update(sum(done), sum(bytes));
          } else if (m.kind === 'log') {
            progress.log(m.line);
          } else {
            summaries[i] = m.summary;
          }
        });
        return new Promise<string | undefined>((resolve) => {
          child.on('error', (err) => resolve(`process ${i} could not start: ${err.message}`));
          // 'close', not 'exit': only 'close' comes after the child's last message (its summary).
          child.on('close', (code, signal) =>
            resolve(
              code === 0 && summaries[i]
                ? undefined
                : `process ${i} (--shard ${i}/${plan.workers}) ended with ` +
                    (signal ? `signal ${signal}` : `exit code ${code}`),
            ),
          );
        });
      });
      failures = (await Promise.all(exits)).filter((f): f is string => f !== undefined);
    } finally {
      progress.stop();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    if (failures.length > 0) {
      throw unavailable(
        `ingest of ${dataset} with ${plan.workers} processes did not finish: ` +
          `${failures.join('; ')} (its message is above). Samples written so far are kept: ` +
          'after fixing what it says (or at once, if it was database trouble), running the ' +
          'same command again resumes the ingest',
      );
    }
    const parts = summaries as WireSummary[];
    const skipped: IngestSkip[] = parts.flatMap((s) => s.skipped);
    return {
      total: sum(parts.map((s) => s.total)),
      done: sum(parts.map((s) => s.done)),
      written: sum(parts.map((s) => s.written)),
      alreadyPresent: sum(parts.map((s) => s.alreadyPresent)),
      failed: sum(parts.map((s) => s.failed)),
      bytesWritten: sum(parts.map((s) => s.bytesWritten)),
      seconds: (performance.now() - started) / 1000,
      skipped,
      fresh: parts.every((s) => s.fresh),
      dataset: await refreshDatasetCounts(client, dataset),
    };
  } finally {
    await client.shutdown();
  }
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

import type cassandra from 'cassandra-driver';
import type { Command } from 'commander';
import {
  createDbClient,
  DEFAULT_LEDGER_KEYSPACE,
  findLedgerSample,
  invalidArgument,
  Ledger,
  type LedgerBatchView,
  type LedgerJob,
  type LedgerSampleRef,
  notFound,
  parseReplication,
  readLedgerBatches,
  splitIds,
  uuidText,
  validateJobId,
} from '../../core/index.js';
import { addDbOptions, dbConfigFromFlags, type DbFlags, dbSettingNames } from '../dbOptions.js';
import { runAction } from '../runAction.js';

/** Flags every `ledger` command takes. */
interface LedgerFlags extends DbFlags {
  ledgerKeyspace: string;
  includeSuperseded?: boolean;
  json?: boolean;
}

/** Flags of `ledger show`. */
export interface LedgerShowFlags extends LedgerFlags {
  epoch: string;
  rank: string;
  batch: string;
  columns?: string;
}

/** Flags of `ledger find`. */
export interface LedgerFindFlags extends LedgerFlags {
  sample?: string;
  id?: string;
  dataset?: string;
}

/**
 * Registers `ledger show`, `ledger find` and `ledger drop`: a job's training ledger (streams
 * that named the job with `job_id`), read and dropped in the database directly.
 */
export function registerLedgerCommand(program: Command): void {
  const ledger = program
    .command('ledger')
    .description("read a job's training ledger: which samples every batch held (docs/ledger.md)");

  const show = common(
    ledger
      .command('show')
      .description("print a rank's recorded batches of an epoch: each sample's source key")
      .argument('<job>', 'job id (as streams named it)')
      .requiredOption('--epoch <e>', 'epoch')
      .requiredOption(
        '--rank <r>',
        "the stream's rank (DataLoader workers: rank x workers + worker)",
      )
      .requiredOption('--batch <k[..l]>', 'a batch index, or a range of them, e.g. 41..44')
      .option('--columns <names>', 'metadata columns to print too, comma-separated'),
  );
  addDbOptions(show).action(
    runAction(async (jobId: string, flags: LedgerShowFlags) => {
      const range = parseBatchRange(flags.batch);
      const epoch = count(flags.epoch, '--epoch');
      const rank = count(flags.rank, '--rank');
      await withLedger(flags, async (ledger, client) => {
        const job = await requireJob(ledger, jobId);
        const views = await readLedgerBatches(
          ledger,
          job,
          { epoch, rank, ...range },
          {
            client,
            columns: flags.columns ? flags.columns.split(',').map((c) => c.trim()) : [],
            includeSuperseded: flags.includeSuperseded ?? false,
            readAttempts: 3,
            retryBaseMs: 100,
            signal: new AbortController().signal,
          },
        );
        process.stdout.write(
          flags.json
            ? `${JSON.stringify(views.map(batchJson), null, 2)}\n`
            : formatBatches(job, views),
        );
      });
    }),
  );

  const find = common(
    ledger
      .command('find')
      .description('print every appearance of a sample in a job: epoch, rank, batch, position')
      .argument('<job>', 'job id')
      .option('--sample <key>', "the sample's source key (its path in the ingested dataset)")
      .option('--id <uuid>', "the sample's id instead")
      .option('--dataset <name>', "the source key's dataset, when the job reads several"),
  );
  addDbOptions(find).action(
    runAction(async (jobId: string, flags: LedgerFindFlags) => {
      const ref = sampleRef(flags);
      await withLedger(flags, async (ledger) => {
        const job = await requireJob(ledger, jobId);
        const found = await findLedgerSample(ledger, job, ref, flags.includeSuperseded ?? false);
        const rows = found.appearances.map((a) => ({
          epoch: a.epoch,
          rank: a.rank,
          worldSize: a.worldSize,
          batch: a.batchIndex,
          position: a.position,
          sentAt: a.sentAt.toISOString(),
          superseded: a.superseded,
        }));
        if (flags.json) {
          process.stdout.write(
            `${JSON.stringify({ id: uuidText(found.sampleId), appearances: rows }, null, 2)}\n`,
          );
          return;
        }
        const lines = [
          `sample ${uuidText(found.sampleId)} in job ${jobId}: ${rows.length} appearance(s)`,
          ...rows.map(
            (r) =>
              `  epoch ${r.epoch}  rank ${r.rank} of ${r.worldSize}  batch ${r.batch}  ` +
              `position ${r.position}  sent ${r.sentAt}${r.superseded ? '  superseded' : ''}`,
          ),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      });
    }),
  );

  const drop = ledger
    .command('drop')
    .description("delete a job's ledger rows (its batches, sample index and job row)")
    .argument('<job>', 'job id')
    .option('--ledger-keyspace <name>', 'keyspace of the ledger', DEFAULT_LEDGER_KEYSPACE);
  addDbOptions(drop).action(
    runAction(async (jobId: string, flags: LedgerFlags) => {
      await withLedger(flags, async (ledger) => {
        if (!(await ledger.drop(validateJobId(jobId, 'job')))) {
          throw notFound(`job ${jobId} has no training ledger in ${flags.ledgerKeyspace}`);
        }
        process.stdout.write(`dropped job ${jobId} from the training ledger\n`);
      });
    }),
  );
}

function common(cmd: Command): Command {
  return cmd
    .option('--ledger-keyspace <name>', 'keyspace of the ledger', DEFAULT_LEDGER_KEYSPACE)
    .option('--include-superseded', 'also rows written but never received by the trainer', false)
    .option('--json', 'print JSON instead of text', false);
}

async function withLedger(
  flags: LedgerFlags,
  run: (ledger: Ledger, client: cassandra.Client) => Promise<void>,
): Promise<void> {
  const client = await createDbClient(dbConfigFromFlags(flags), { settingNames: dbSettingNames() });
  try {
    // Reading and dropping never make the keyspace, so its replication is not needed here.
    const ledger = new Ledger({
      client,
      keyspace: flags.ledgerKeyspace,
      replication: parseReplication('simple:1'),
      ttlSeconds: 0,
    });
    await run(ledger, client);
  } finally {
    await client.shutdown();
  }
}

async function requireJob(ledger: Ledger, jobId: string): Promise<LedgerJob> {
  const job = await ledger.readJob(validateJobId(jobId, 'job'));
  if (job === undefined) {
    throw notFound(
      `job ${jobId} has no training ledger: no stream named it, or its rows expired or were ` +
        'dropped (or it is in another --ledger-keyspace)',
    );
  }
  return job;
}

/** `--batch 41` or `--batch 41..44`. @internal */
export function parseBatchRange(text: string): { first: number; last: number } {
  const m = /^(\d+)(?:\.\.(\d+))?$/.exec(text.trim());
  if (!m)
    throw invalidArgument(`--batch ${JSON.stringify(text)}: use an index (41) or a range (41..44)`);
  const first = Number(m[1]);
  const last = m[2] === undefined ? first : Number(m[2]);
  if (last < first) throw invalidArgument(`--batch ${text}: the range ends before it starts`);
  return { first, last };
}

function count(text: string, flag: string): number {
  if (!/^\d+$/.test(text.trim()))
    throw invalidArgument(`${flag} ${JSON.stringify(text)}: use a whole number`);
  return Number(text);
}

function sampleRef(flags: LedgerFindFlags): LedgerSampleRef {
  if ((flags.sample === undefined) === (flags.id === undefined)) {
    throw invalidArgument(
      'name the sample with --sample <source key> or --id <uuid> (one of them)',
    );
  }
  if (flags.id !== undefined) {
    const hex = flags.id.replaceAll('-', '');
    if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw invalidArgument(`--id ${flags.id}: not a UUID`);
    return { id: Buffer.from(hex, 'hex') };
  }
  return { sourceKey: flags.sample!, ...(flags.dataset ? { dataset: flags.dataset } : {}) };
}

function batchJson(v: LedgerBatchView): Record<string, unknown> {
  return {
    epoch: v.epoch,
    rank: v.rank,
    worldSize: v.worldSize,
    index: v.index,
    sentAt: v.sentAt.toISOString(),
    superseded: v.superseded,
    ids: splitIds(v.ids).map(uuidText),
    sourceIndexes: v.sourceIndexes,
    sourceKeys: v.sourceKeys,
    columns: Object.fromEntries(
      v.columns.map((c) => [c.name, c.values.map((x) => (typeof x === 'bigint' ? String(x) : x))]),
    ),
  };
}

/** The batches as text: a header per batch, then one line per sample. @internal */
export function formatBatches(job: LedgerJob, views: readonly LedgerBatchView[]): string {
  const sources = job.sources.map((s) => `${s.dataset}/${s.split}`).join(', ');
  const lines = [`job ${job.jobId} (${sources}): ${views.length} batch(es)`];
  for (const v of views) {
    lines.push(
      `epoch ${v.epoch}  rank ${v.rank} of ${v.worldSize}  batch ${v.index}  ` +
        `sent ${v.sentAt.toISOString()}${v.superseded ? '  superseded' : ''}`,
    );
    v.sourceKeys.forEach((key, i) => {
      const source =
        job.sources.length > 1 ? `  [${job.sources[v.sourceIndexes?.[i] ?? 0]?.dataset}]` : '';
      const cols = v.columns.map((c) => `  ${c.name}=${String(c.values[i])}`).join('');
      lines.push(`  ${String(i).padStart(4)}  ${key ?? '(no metadata row)'}${source}${cols}`);
    });
  }
  return `${lines.join('\n')}\n`;
}

import cassandra from 'cassandra-driver';
import { QUERY_PROFILES } from '../db/consistency.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import { retryableDriverError } from '../db/retryableDriverError.js';
import { LoaderError, invalidArgument } from '../errors/LoaderError.js';
import { validateIdentifier } from '../schema/identifiers.js';
import type { Replication } from '../schema/replication.js';
import { LEDGER_BUCKETS, ensureLedgerSchema, sampleBucket } from './ledgerSchema.js';
import { resolveSuperseded, type VersionedBatch } from './resolveSuperseded.js';

/** Where a ledger lives and how long its rows are kept. */
export interface LedgerOptions {
  client: cassandra.Client;
  keyspace: string;
  /** Replication of the keyspace when the ledger makes it. */
  replication: Replication;
  /** Seconds a row is kept (0: until its job is dropped). */
  ttlSeconds: number;
  /** Where each batch's recording time and failures are counted (absent: nowhere). */
  metrics?: Pick<LoaderMetrics, 'ledgerWriteSeconds' | 'ledgerWriteFailures'>;
}

/** One source of a job, as its streams name it. */
export interface LedgerSource {
  dataset: string;
  split: string;
}

/** What a stream says of its job when it opens it. */
export interface LedgerJobSpec {
  /** Digest of the fields that decide the job's samples (see `ledgerFingerprint`). */
  fingerprint: Buffer;
  sources: LedgerSource[];
}

/** A job's row. */
export interface LedgerJob extends LedgerJobSpec {
  jobId: string;
  buckets: number;
  /** Epochs some stream recorded a batch in, ascending. */
  epochs: number[];
}

/**
 * A point of one rank's timeline: the batch a stream starting there sends first. Rows of the
 * same rank, world and segment at or after it, and of the rank and world in later epochs,
 * were never received by the trainer the stream continues.
 */
export interface TimelinePoint {
  epoch: number;
  rank: number;
  worldSize: number;
  /**
   * The job checkpoint digest the epoch was re-sharded from (16 zero bytes: none); absent:
   * rows of any segment (a rank of a checkpoint that had no batch of the epoch yet).
   */
  segment?: Buffer;
  batchIndex: number;
  /** Also the rank and world's rows in the job's later epochs (default: yes). */
  laterEpochs?: boolean;
  /** Rows of this segment in the point's epoch are left alone (the new world's own rows). */
  sparedSegment?: Buffer;
}

/** A batch as the ledger records it, before it is sent. */
export interface BatchRecord {
  epoch: number;
  index: number;
  /** Sample ids, 16 bytes each, in the batch's order. */
  ids: readonly Buffer[];
  /** Each sample's source index (absent: a stream of one source). */
  sources?: readonly number[];
  /** Each sample's position in the rank's epoch (what resume tokens count). */
  positions: readonly number[];
  /** Each sample's position in the epoch's order, before sharding (what a replay reads). */
  epochPositions: readonly number[];
  /** The resume token sent with the batch. */
  resumeToken: Buffer;
}

/** A batch row's flags, as a sample's appearances are resolved against them. */
type BatchVersion = VersionedBatch & { skipped: boolean };

/** A batch row as read. */
export interface LedgerBatchRow {
  epoch: number;
  rank: number;
  worldSize: number;
  index: number;
  segment: Buffer;
  /** The sending stream's start time (100 ns) and id: the latest of a batch's live rows wins. */
  streamTime: bigint;
  streamId: string;
  /** Sample ids, 16 bytes each, concatenated. */
  ids: Buffer;
  sourceIndexes?: number[];
  positions: number[];
  epochPositions: number[];
  resumeToken: Buffer;
  sentAt: Date;
  superseded: boolean;
  /** Left out by a resume that skipped it (never superseded). */
  skipped: boolean;
}

/** One appearance of a sample. */
export interface LedgerAppearanceRow {
  epoch: number;
  rank: number;
  worldSize: number;
  batchIndex: number;
  segment: Buffer;
  position: number;
  sentAt: Date;
  superseded: boolean;
  skipped: boolean;
}

/** What one stream records into (see {@link Ledger.startStream}). */
export interface LedgerStream {
  /**
   * Writes the batch's row and its samples' index rows at the write consistency, and the
   * epoch into the job's row the first time the stream records one. Resolves once every write
   * is acknowledged; rejects with UNAVAILABLE naming the batch when one fails.
   */
  record(batch: BatchRecord): Promise<void>;
}

/** Largest number of samples a read of batches returns (the rest is refused, not cut). */
export const LEDGER_READ_MAX_SAMPLES = 65_536;
/** Largest number of batches a read returns. */
export const LEDGER_READ_MAX_BATCHES = 1_000;
/** Largest number of appearances a sample query returns. */
export const LEDGER_MAX_APPEARANCES = 10_000;
/** The primary key of one `batches` row, as an UPDATE's WHERE clause binds it. */
const BATCH_ROW_KEY =
  'job_id = ? AND epoch = ? AND rank = ? AND batch_index = ? AND world_size = ? AND ' +
  'segment = ? AND stream_id = ?';
/** Partitions {@link Ledger.supersede} reads at once. */
const SUPERSEDE_PASSES = 8;
/** Rows written at once by the ledger's concurrent updates and deletes. */
const WRITE_CONCURRENCY = 64;
/** Most partitions of one unlogged batch of index rows (the databases warn above 10). */
export const GROUP_PARTITIONS = 10;
/** Most rows of one unlogged batch of index rows (about 100 bytes each; warnings at 5 KiB). */
export const GROUP_ROWS = 40;

/**
 * A job's training ledger in the database: what every batch of every rank held, when it was
 * sent, and which rows were superseded (written, then never received because the stream was
 * continued from an earlier point). See `ensureLedgerSchema` for the tables.
 */
export class Ledger {
  readonly #client: cassandra.Client;
  readonly #ks: string;
  readonly #ttl: number;
  readonly #replication: Replication;
  readonly #metrics: LedgerOptions['metrics'];
  #schema: Promise<void> | undefined;

  constructor(options: LedgerOptions) {
    this.#client = options.client;
    this.#ks = validateIdentifier(options.keyspace, 'ledger keyspace');
    this.#ttl = options.ttlSeconds;
    this.#replication = options.replication;
    this.#metrics = options.metrics;
  }

  /** The keyspace and tables, made once per process (again after a failure). */
  ready(): Promise<void> {
    this.#schema ??= ensureLedgerSchema(this.#client, this.#ks, this.#replication).catch(
      (err: unknown) => {
        this.#schema = undefined;
        throw ledgerUnavailable('could not make the training ledger tables', err);
      },
    );
    return this.#schema;
  }

  /** Whether the ledger's tables exist (a read-only caller does not make them). */
  async exists(): Promise<boolean> {
    const rs = await this.#client.execute(
      'SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?',
      [this.#ks, 'batches'],
      { prepare: true },
    );
    return rs.rowLength > 0;
  }

  /** A job's row, or undefined when no stream named the job (or its rows expired or were dropped). */
  async readJob(jobId: string): Promise<LedgerJob | undefined> {
    if (!(await this.exists())) return undefined;
    return this.#readJobRow(jobId);
  }

  async #readJobRow(jobId: string): Promise<LedgerJob | undefined> {
    const rs = await this.#client.execute(
      `SELECT fingerprint, source_datasets, source_splits, buckets, epochs FROM ${this.#ks}.jobs ` +
        'WHERE job_id = ?',
      [jobId],
      { prepare: true },
    );
    const row = rs.first();
    // A row whose cells expired but for a later epoch's (each has its own TTL) is no job.
    if (!row || !row['fingerprint']) return undefined;
    const datasets = (row['source_datasets'] as string[] | null) ?? [];
    if (datasets.length === 0) return undefined;
    const splits = (row['source_splits'] as string[] | null) ?? [];
    return {
      jobId,
      fingerprint: row['fingerprint'] as Buffer,
      sources: datasets.map((dataset, i) => ({ dataset, split: splits[i] ?? '' })),
      buckets: (row['buckets'] as number | null) ?? LEDGER_BUCKETS,
      epochs: [...((row['epochs'] as number[] | null) ?? [])].sort((a, b) => a - b),
    };
  }

  /**
   * Opens a job for a stream: makes its row the first time (a lightweight transaction, so two
   * ranks starting at once agree), else checks that the stream's job fields are the ones the
   * job was recorded with: another job under the same id is FAILED_PRECONDITION.
   */
  async openJob(jobId: string, spec: LedgerJobSpec): Promise<LedgerJob> {
    await this.ready();
    // A plain read first: every stream but a job's first finds its row without a transaction.
    const what = `could not open job ${jobId} in the training ledger`;
    const known = await this.#readJobRow(jobId).catch((err: unknown) => {
      throw ledgerUnavailable(what, err);
    });
    if (known !== undefined) {
      const job = this.#sameJob(known, spec);
      // Each stream keeps the job's own cells alive as long as its rows (they expire apart).
      await this.#write(
        `UPDATE ${this.#ks}.jobs USING TTL ? SET fingerprint = ?, source_datasets = ?, ` +
          'source_splits = ?, buckets = ? WHERE job_id = ?',
        [this.#ttl, job.fingerprint, datasetsOf(job), splitsOf(job), job.buckets, jobId],
        what,
      );
      return job;
    }
    const rs = await this.#write(
      `INSERT INTO ${this.#ks}.jobs (job_id, fingerprint, source_datasets, source_splits, ` +
        'buckets, created_at) VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS USING TTL ?',
      [
        jobId,
        spec.fingerprint,
        datasetsOf(spec),
        splitsOf(spec),
        LEDGER_BUCKETS,
        new Date(),
        this.#ttl,
      ],
      what,
    );
    const applied = rs.first()?.['[applied]'] === true;
    const job = applied ? undefined : await this.#readJobRow(jobId);
    if (job !== undefined) return this.#sameJob(job, spec);
    if (!applied) {
      // The row exists only through a later epoch's cells (the job's own expired): make it anew.
      await this.#write(
        `UPDATE ${this.#ks}.jobs USING TTL ? SET fingerprint = ?, source_datasets = ?, ` +
          'source_splits = ?, buckets = ?, created_at = ? WHERE job_id = ?',
        [
          this.#ttl,
          spec.fingerprint,
          datasetsOf(spec),
          splitsOf(spec),
          LEDGER_BUCKETS,
          new Date(),
          jobId,
        ],
        what,
      );
    }
    return {
      jobId,
      ...spec,
      buckets: LEDGER_BUCKETS,
      epochs: (await this.#readJobRow(jobId))?.epochs ?? [],
    };
  }

  /** `job` when `spec` is its job; FAILED_PRECONDITION when the id names another one. */
  #sameJob(job: LedgerJob, spec: LedgerJobSpec): LedgerJob {
    const { jobId } = job;
    if (!job.fingerprint.equals(spec.fingerprint)) {
      throw new LoaderError(
        'FAILED_PRECONDITION',
        `job ${jobId} is recorded in the training ledger for other job fields (its sources, ` +
          'split contents, seed, batch size, shard rule, shuffle, drop_last or transform): name ' +
          `this job differently, or drop the old one with \`scylla-loader ledger drop ${jobId}\``,
      );
    }
    return job;
  }

  /**
   * Marks superseded every live row a stream starting at `points` makes stale: for each
   * point, the rows of its rank, world and segment in its epoch from its batch on, and the
   * rows of its rank and world in the job's later `epochs`. Returns how many rows it marked.
   */
  async supersede(
    jobId: string,
    points: readonly TimelinePoint[],
    epochs: readonly number[],
    keep: readonly LedgerBatchRow[] = [],
  ): Promise<number> {
    const kept = new Set(keep.map((r) => `${r.epoch}/${r.rank}/${r.index}/${r.streamId}`));
    const passes = points.flatMap((p) =>
      [p.epoch, ...(p.laterEpochs === false ? [] : epochs.filter((e) => e > p.epoch))].map(
        (epoch) => ({ p, epoch }),
      ),
    );
    let marked = 0;
    // A few partitions' reads at once: a job checkpoint of many ranks is that many passes.
    for (let i = 0; i < passes.length; i += SUPERSEDE_PASSES) {
      const counts = await Promise.all(
        passes
          .slice(i, i + SUPERSEDE_PASSES)
          .map(({ p, epoch }) => this.#supersedePass(jobId, p, epoch, kept)),
      );
      marked += counts.reduce((a, b) => a + b, 0);
    }
    return marked;
  }

  /** One point's pass over one epoch, page by page (see {@link Ledger.supersede}). */
  async #supersedePass(
    jobId: string,
    p: TimelinePoint,
    epoch: number,
    kept: ReadonlySet<string>,
  ): Promise<number> {
    const from = epoch === p.epoch ? p.batchIndex : 0;
    let marked = 0;
    let pageState: string | undefined;
    do {
      const rs = await this.#client
        .execute(
          'SELECT batch_index, world_size, segment, stream_id, superseded ' +
            `FROM ${this.#ks}.batches ` +
            'WHERE job_id = ? AND epoch = ? AND rank = ? AND batch_index >= ?',
          [jobId, epoch, p.rank, from],
          { prepare: true, fetchSize: 5_000, ...(pageState ? { pageState } : {}) },
        )
        .catch((err: unknown) => {
          throw ledgerUnavailable(`could not read job ${jobId}'s training ledger`, err);
        });
      const stale = rs.rows.filter((r) => {
        if (r['superseded'] === true || r['world_size'] !== p.worldSize) return false;
        if (kept.has(`${epoch}/${p.rank}/${r['batch_index']}/${r['stream_id']}`)) return false;
        if (epoch !== p.epoch) return true;
        const segment = r['segment'] as Buffer;
        if (p.sparedSegment?.equals(segment)) return false;
        return p.segment === undefined || segment.equals(p.segment);
      });
      await this.#writeAll(
        `UPDATE ${this.#ks}.batches USING TTL ? SET superseded = true WHERE ${BATCH_ROW_KEY}`,
        stale.map((r) => [
          this.#ttl,
          jobId,
          epoch,
          p.rank,
          r['batch_index'],
          r['world_size'],
          r['segment'],
          r['stream_id'],
        ]),
        `could not mark superseded batches of job ${jobId} in the training ledger`,
      );
      marked += stale.length;
      pageState = rs.pageState ?? undefined;
    } while (pageState);
    return marked;
  }

  /**
   * The live rows of batches `point.batchIndex` to `last` of the point's epoch, rank, world and
   * segment: what a resume skips. A batch of the range without one is INVALID_ARGUMENT naming
   * the first such.
   */
  async skippable(
    jobId: string,
    point: TimelinePoint & { segment: Buffer },
    last: number,
  ): Promise<LedgerBatchRow[]> {
    const { epoch, rank } = point;
    // Not held to a read's caps: a skip of a few hundred large batches is one request, and
    // what it reads is bounded by the rank's epoch.
    const rows = (
      await this.batches(jobId, { epoch, rank, first: point.batchIndex, last }, false, false)
    ).filter((r) => r.worldSize === point.worldSize && r.segment.equals(point.segment));
    for (let index = point.batchIndex; index <= last; index++) {
      if (!rows.some((r) => r.index === index)) {
        throw invalidArgument(
          `skip_batches names batch ${index} of epoch ${epoch}, rank ${rank} of ` +
            `${point.worldSize}, which the ledger of job ${jobId} does not hold: skip only ` +
            'batches the job received',
        );
      }
    }
    return rows;
  }

  /** Marks `rows` skipped (and not superseded): left out of their epoch by a resume. */
  async markSkipped(jobId: string, rows: readonly LedgerBatchRow[]): Promise<void> {
    await this.#writeAll(
      `UPDATE ${this.#ks}.batches USING TTL ? SET skipped = true, superseded = false ` +
        `WHERE ${BATCH_ROW_KEY}`,
      rows.map((r) => [
        this.#ttl,
        jobId,
        r.epoch,
        r.rank,
        r.index,
        r.worldSize,
        r.segment,
        cassandra.types.TimeUuid.fromString(r.streamId),
      ]),
      `could not mark skipped batches of job ${jobId} in the training ledger`,
    );
  }

  /** A stream of `job` at `rank` of `worldSize`, its epochs' segments given by `segmentOf`. */
  startStream(
    job: LedgerJob,
    rank: number,
    worldSize: number,
    segmentOf: (epoch: number) => Buffer,
  ): LedgerStream {
    const streamId = cassandra.types.TimeUuid.now();
    const epochsSeen = new Set(job.epochs);
    return {
      record: async (batch) => {
        const sentAt = new Date();
        const segment = segmentOf(batch.epoch);
        const what = `could not record batch ${batch.index} of epoch ${batch.epoch} (job ${job.jobId}) in the training ledger; the batch was not sent`;
        const started = performance.now();
        const writes: Promise<unknown>[] = [];
        if (!epochsSeen.has(batch.epoch)) {
          writes.push(
            this.#write(
              `UPDATE ${this.#ks}.jobs USING TTL ? SET epochs = epochs + ? WHERE job_id = ?`,
              [this.#ttl, [batch.epoch], job.jobId],
              what,
            ).then(() => epochsSeen.add(batch.epoch)),
          );
        }
        writes.push(
          this.#write(
            `INSERT INTO ${this.#ks}.batches (job_id, epoch, rank, batch_index, world_size, ` +
              'segment, stream_id, ids, source_indexes, positions, epoch_positions, ' +
              'resume_token, sent_at, superseded, skipped) ' +
              'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, false, false) USING TTL ?',
            [
              job.jobId,
              batch.epoch,
              rank,
              batch.index,
              worldSize,
              segment,
              streamId,
              Buffer.concat(batch.ids),
              batch.sources ? encodeSources(batch.sources) : null,
              encodeUint32(batch.positions),
              encodeUint32(batch.epochPositions),
              batch.resumeToken,
              sentAt,
              this.#ttl,
            ],
            what,
          ),
        );
        writes.push(
          this.#writeGrouped(
            `INSERT INTO ${this.#ks}.appearances (job_id, bucket, sample_id, epoch, rank, ` +
              'batch_index, world_size, segment, stream_id, position, sent_at) ' +
              'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?',
            batch.ids.map((id, position) => [
              job.jobId,
              sampleBucket(id, job.buckets),
              new cassandra.types.Uuid(id),
              batch.epoch,
              rank,
              batch.index,
              worldSize,
              segment,
              streamId,
              position,
              sentAt,
              this.#ttl,
            ]),
            what,
          ),
        );
        try {
          await Promise.all(writes);
        } catch (err) {
          this.#metrics?.ledgerWriteFailures.inc();
          throw err;
        }
        this.#metrics?.ledgerWriteSeconds.observe((performance.now() - started) / 1000);
      },
    };
  }

  /**
   * A rank's batches `first` to `last` of an epoch, by index then send time, each marked
   * superseded or not (see {@link resolveSuperseded}); without `includeSuperseded` only the
   * live ones. More than {@link LEDGER_READ_MAX_BATCHES} batches or
   * {@link LEDGER_READ_MAX_SAMPLES} samples is INVALID_ARGUMENT naming the last batch that fits.
   */
  async batches(
    jobId: string,
    range: { epoch: number; rank: number; first: number; last: number },
    includeSuperseded: boolean,
    capped = true,
  ): Promise<LedgerBatchRow[]> {
    if (capped && range.last - range.first + 1 > LEDGER_READ_MAX_BATCHES) {
      throw invalidArgument(
        `batches ${range.first} to ${range.last} are ${range.last - range.first + 1} batches, ` +
          `over the ${LEDGER_READ_MAX_BATCHES} one read returns: ask for fewer`,
      );
    }
    const rows: LedgerBatchRow[] = [];
    let samples = 0;
    let pageState: string | undefined;
    do {
      const rs = await this.#client.execute(
        `SELECT epoch, rank, batch_index, world_size, segment, stream_id, ids, source_indexes, ` +
          'positions, epoch_positions, resume_token, sent_at, superseded, skipped ' +
          `FROM ${this.#ks}.batches WHERE job_id = ? AND ` +
          'epoch = ? AND rank = ? AND batch_index >= ? AND batch_index <= ?',
        [jobId, range.epoch, range.rank, range.first, range.last],
        { prepare: true, fetchSize: 200, ...(pageState ? { pageState } : {}) },
      );
      for (const r of rs.rows) {
        // A row whose written cells expired before its superseded flag's is gone.
        if (r['ids'] === null) continue;
        const row = toBatchRow(r);
        samples += row.ids.length / 16;
        if (capped && samples > LEDGER_READ_MAX_SAMPLES) {
          throw invalidArgument(
            `batches ${range.first} to ${range.last} hold more than ${LEDGER_READ_MAX_SAMPLES} ` +
              `samples, the most one read returns: ask for batches ${range.first} to ` +
              `${Math.max(range.first, row.index - 1)} first`,
          );
        }
        rows.push(row);
      }
      pageState = rs.pageState ?? undefined;
    } while (pageState);
    const resolved = resolveSuperseded(rows);
    return includeSuperseded ? resolved : resolved.filter((r) => !r.superseded);
  }

  /**
   * Every appearance of a sample in a job (by epoch, rank and batch), each marked superseded
   * when the batch that held it is. Over {@link LEDGER_MAX_APPEARANCES} is INVALID_ARGUMENT.
   */
  async appearances(
    job: LedgerJob,
    sampleId: Buffer,
    includeSuperseded: boolean,
  ): Promise<LedgerAppearanceRow[]> {
    const rs = await this.#client.execute(
      `SELECT epoch, rank, batch_index, world_size, segment, stream_id, position, sent_at ` +
        `FROM ${this.#ks}.appearances WHERE job_id = ? AND bucket = ? AND sample_id = ? ` +
        `LIMIT ${LEDGER_MAX_APPEARANCES + 1}`,
      [job.jobId, sampleBucket(sampleId, job.buckets), new cassandra.types.Uuid(sampleId)],
      { prepare: true, fetchSize: LEDGER_MAX_APPEARANCES + 1 },
    );
    if (rs.rowLength > LEDGER_MAX_APPEARANCES) {
      throw invalidArgument(
        `the sample appears more than ${LEDGER_MAX_APPEARANCES} times in job ${job.jobId}, ` +
          'the most one read returns',
      );
    }
    // Each batch holding the sample is looked up once (the flags of every row of its index, no
    // ids), a few at a time.
    const keys = [...new Set(rs.rows.map((r) => `${r['epoch']}/${r['rank']}/${r['batch_index']}`))];
    const versions = new Map<string, BatchVersion[]>();
    for (let i = 0; i < keys.length; i += SUPERSEDE_PASSES) {
      await Promise.all(
        keys.slice(i, i + SUPERSEDE_PASSES).map(async (key) => {
          const [epoch, rank, index] = key.split('/').map(Number) as [number, number, number];
          versions.set(key, await this.#versions(job.jobId, epoch, rank, index));
        }),
      );
    }
    const found: LedgerAppearanceRow[] = [];
    for (const r of rs.rows) {
      const epoch = r['epoch'] as number;
      const rank = r['rank'] as number;
      const batchIndex = r['batch_index'] as number;
      const worldSize = r['world_size'] as number;
      const segment = r['segment'] as Buffer;
      const streamId = (r['stream_id'] as cassandra.types.TimeUuid).toString();
      const batch = (versions.get(`${epoch}/${rank}/${batchIndex}`) ?? []).find(
        (b) => b.worldSize === worldSize && b.segment.equals(segment) && b.streamId === streamId,
      );
      // An index row whose batch row is gone (expired first) counts as superseded.
      const superseded = batch?.superseded ?? true;
      if (superseded && !includeSuperseded) continue;
      const skipped = batch?.skipped ?? false;
      found.push({
        epoch,
        rank,
        worldSize,
        batchIndex,
        segment,
        position: r['position'] as number,
        sentAt: r['sent_at'] as Date,
        superseded,
        skipped,
      });
    }
    return found;
  }

  /** Every row of one batch index, with its flags only, resolved (see {@link resolveSuperseded}). */
  async #versions(
    jobId: string,
    epoch: number,
    rank: number,
    index: number,
  ): Promise<BatchVersion[]> {
    const rs = await this.#client.execute(
      'SELECT world_size, segment, stream_id, sent_at, superseded, skipped ' +
        `FROM ${this.#ks}.batches WHERE job_id = ? AND epoch = ? AND rank = ? AND batch_index = ?`,
      [jobId, epoch, rank, index],
      { prepare: true },
    );
    return resolveSuperseded(
      rs.rows
        .filter((r) => r['sent_at'] !== null)
        .map((r) => {
          const stream = r['stream_id'] as cassandra.types.TimeUuid;
          return {
            epoch,
            rank,
            index,
            worldSize: r['world_size'] as number,
            segment: r['segment'] as Buffer,
            streamTime: streamTimeOf(stream),
            streamId: stream.toString(),
            sentAt: r['sent_at'] as Date,
            superseded: r['superseded'] === true,
            skipped: r['skipped'] === true,
          };
        }),
    );
  }

  /** Deletes a job's rows: its batches, its sample index and its job row. False: no such job. */
  async drop(jobId: string): Promise<boolean> {
    const job = await this.readJob(jobId);
    if (job === undefined) return false;
    const what = `could not drop job ${jobId} from the training ledger`;
    await this.#writeAll(
      `DELETE FROM ${this.#ks}.batches WHERE job_id = ? AND epoch = ?`,
      job.epochs.map((e) => [jobId, e]),
      what,
    );
    await this.#writeAll(
      `DELETE FROM ${this.#ks}.appearances WHERE job_id = ? AND bucket = ?`,
      Array.from({ length: job.buckets }, (_, b) => [jobId, b]),
      what,
    );
    await this.#write(`DELETE FROM ${this.#ks}.jobs WHERE job_id = ?`, [jobId], what);
    return true;
  }

  async #write(query: string, params: unknown[], what: string): Promise<cassandra.types.ResultSet> {
    try {
      return await this.#client.execute(query, params, {
        prepare: true,
        executionProfile: QUERY_PROFILES.write,
      });
    } catch (err) {
      throw ledgerUnavailable(what, err);
    }
  }

  /**
   * Writes index rows in unlogged batches of at most {@link GROUP_PARTITIONS} partitions and
   * {@link GROUP_ROWS} rows each (a row's partition is its first two values: job, bucket), all
   * batches at once: the 128 index rows of a batch of 128 samples are 13 requests rather than
   * 128, and a request is most of what a row costs the loader's CPU. The bounds keep a batch
   * under the databases' warnings (unlogged batches over 10 partitions, batches over 5 KiB).
   */
  async #writeGrouped(query: string, params: unknown[][], what: string): Promise<void> {
    const groups = groupRows(params, (row) => row[1] as number);
    try {
      await Promise.all(
        groups.map((rows) =>
          this.#client.batch(
            rows.map((p) => ({ query, params: p })),
            { prepare: true, logged: false, executionProfile: QUERY_PROFILES.write },
          ),
        ),
      );
    } catch (err) {
      throw ledgerUnavailable(what, err);
    }
  }

  async #writeAll(query: string, params: unknown[][], what: string): Promise<void> {
    if (params.length === 0) return;
    try {
      await cassandra.concurrent.executeConcurrent(this.#client, query, params, {
        concurrencyLevel: WRITE_CONCURRENCY,
        executionProfile: QUERY_PROFILES.write,
        raiseOnFirstError: true,
      });
    } catch (err) {
      throw ledgerUnavailable(what, err);
    }
  }
}

/**
 * `rows` in groups of at most {@link GROUP_PARTITIONS} partitions (`partitionOf`) and
 * {@link GROUP_ROWS} rows, a partition's rows kept together unless they are more than a group
 * holds.
 */
export function groupRows<T>(rows: readonly T[], partitionOf: (row: T) => number): T[][] {
  const byPartition = new Map<number, T[]>();
  for (const row of rows) {
    const key = partitionOf(row);
    const list = byPartition.get(key);
    if (list) list.push(row);
    else byPartition.set(key, [row]);
  }
  const groups: T[][] = [];
  let group: T[] = [];
  let partitions = 0;
  for (const list of byPartition.values()) {
    if (partitions === GROUP_PARTITIONS || group.length + list.length > GROUP_ROWS) {
      if (group.length > 0) groups.push(group);
      group = [];
      partitions = 0;
    }
    for (const row of list) {
      if (group.length === GROUP_ROWS) {
        groups.push(group);
        group = [];
        partitions = 0;
      }
      if (group.length === 0 || partitionOf(group.at(-1)!) !== partitionOf(row)) partitions++;
      group.push(row);
    }
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * UNAVAILABLE with the trouble's kind when the database may take the write again (the caller
 * resumes then); any other error (a schema or permission problem) as it is, which the server
 * reports as INTERNAL and logs.
 */
function ledgerUnavailable(what: string, err: unknown): Error {
  if (err instanceof LoaderError) return err;
  const why = retryableDriverError(err);
  if (why === undefined) return err instanceof Error ? err : new Error(String(err));
  return new LoaderError('UNAVAILABLE', `${what}: ${why}`, { cause: err });
}

function datasetsOf(job: LedgerJobSpec): string[] {
  return job.sources.map((s) => s.dataset);
}

function splitsOf(job: LedgerJobSpec): string[] {
  return job.sources.map((s) => s.split);
}

/** Positions as 32-bit integers, little-endian. */
function encodeUint32(values: readonly number[]): Buffer {
  const out = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => out.writeUInt32LE(v, i * 4));
  return out;
}

function decodeUint32(blob: Buffer | null): number[] {
  const out: number[] = [];
  if (blob === null) return out;
  for (let i = 0; i + 3 < blob.length; i += 4) out.push(blob.readUInt32LE(i));
  return out;
}

/** Source indexes as 16-bit integers, little-endian. */
function encodeSources(sources: readonly number[]): Buffer {
  const out = Buffer.alloc(sources.length * 2);
  sources.forEach((s, i) => out.writeUInt16LE(s, i * 2));
  return out;
}

function decodeSources(blob: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i + 1 < blob.length; i += 2) out.push(blob.readUInt16LE(i));
  return out;
}

/** The canonical text of 16 UUID bytes (the driver's, as the core's messages print ids). */
export function uuidText(id: Buffer): string {
  return new cassandra.types.Uuid(id).toString();
}

/** A stream id's start time in 100 ns units, as a bigint (beyond 2^53 as a number). */
function streamTimeOf(stream: cassandra.types.TimeUuid): bigint {
  const { date, ticks } = stream.getDatePrecision();
  return BigInt(date.getTime()) * 10_000n + BigInt(ticks);
}

function toBatchRow(r: cassandra.types.Row): LedgerBatchRow {
  const stream = r['stream_id'] as cassandra.types.TimeUuid;
  const sources = r['source_indexes'] as Buffer | null;
  return {
    epoch: r['epoch'] as number,
    rank: r['rank'] as number,
    worldSize: r['world_size'] as number,
    index: r['batch_index'] as number,
    segment: r['segment'] as Buffer,
    streamTime: streamTimeOf(stream),
    streamId: stream.toString(),
    ids: r['ids'] as Buffer,
    ...(sources ? { sourceIndexes: decodeSources(sources) } : {}),
    positions: decodeUint32(r['positions'] as Buffer | null),
    epochPositions: decodeUint32(r['epoch_positions'] as Buffer | null),
    resumeToken: r['resume_token'] as Buffer,
    sentAt: r['sent_at'] as Date,
    superseded: r['superseded'] === true,
    skipped: r['skipped'] === true,
  };
}

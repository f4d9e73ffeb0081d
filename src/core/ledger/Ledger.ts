import cassandra from 'cassandra-driver';
import { QUERY_PROFILES } from '../db/consistency.js';
import { LoaderError, invalidArgument } from '../errors/LoaderError.js';
import { validateIdentifier } from '../schema/identifiers.js';
import type { Replication } from '../schema/replication.js';
import { LEDGER_BUCKETS, ensureLedgerSchema, sampleBucket } from './ledgerSchema.js';
import { resolveSuperseded } from './resolveSuperseded.js';

/** Where a ledger lives and how long its rows are kept. */
export interface LedgerOptions {
  client: cassandra.Client;
  keyspace: string;
  /** Replication of the keyspace when the ledger makes it. */
  replication: Replication;
  /** Seconds a row is kept (0: until its job is dropped). */
  ttlSeconds: number;
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

/** A batch row as read. */
export interface LedgerBatchRow {
  epoch: number;
  rank: number;
  worldSize: number;
  index: number;
  segment: Buffer;
  /** The sending stream's start time (ms) and id: the latest of a batch's live rows wins. */
  streamTime: number;
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
/** Index rows written at once for one batch. */
const WRITE_CONCURRENCY = 64;

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
  #schema: Promise<void> | undefined;

  constructor(options: LedgerOptions) {
    this.#client = options.client;
    this.#ks = validateIdentifier(options.keyspace, 'ledger keyspace');
    this.#ttl = options.ttlSeconds;
    this.#replication = options.replication;
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
    if (!row) return undefined;
    const datasets = (row['source_datasets'] as string[] | null) ?? [];
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
    const known = await this.#readJobRow(jobId);
    if (known !== undefined) return this.#sameJob(known, spec);
    const rs = await this.#write(
      `INSERT INTO ${this.#ks}.jobs (job_id, fingerprint, source_datasets, source_splits, ` +
        'buckets, epochs, created_at) VALUES (?, ?, ?, ?, ?, {}, ?) IF NOT EXISTS USING TTL ?',
      [
        jobId,
        spec.fingerprint,
        spec.sources.map((s) => s.dataset),
        spec.sources.map((s) => s.split),
        LEDGER_BUCKETS,
        new Date(),
        this.#ttl,
      ],
      `could not open job ${jobId} in the training ledger`,
    );
    if (rs.first()?.['[applied]'] === true) {
      return { jobId, ...spec, buckets: LEDGER_BUCKETS, epochs: [] };
    }
    const job = await this.#readJobRow(jobId);
    if (job === undefined) return this.openJob(jobId, spec);
    return this.#sameJob(job, spec);
  }

  /** `job` when `spec` is its job; FAILED_PRECONDITION when the id names another one. */
  #sameJob(job: LedgerJob, spec: LedgerJobSpec): LedgerJob {
    const { jobId } = job;
    if (!job.fingerprint.equals(spec.fingerprint)) {
      throw new LoaderError(
        'FAILED_PRECONDITION',
        `job ${jobId} is recorded in the training ledger for other job fields (sources ` +
          `${job.sources.map((s) => `${s.dataset}/${s.split}`).join(', ')}, or another seed, ` +
          'batch size, epochs rule or transform): name this job differently, or drop the old ' +
          `one with \`scylla-loader ledger drop ${jobId}\``,
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
  ) {
    const kept = new Set(keep.map((r) => `${r.epoch}/${r.rank}/${r.index}/${r.streamId}`));
    let marked = 0;
    for (const p of points) {
      for (const epoch of [p.epoch, ...epochs.filter((e) => e > p.epoch)]) {
        const from = epoch === p.epoch ? p.batchIndex : 0;
        const rs = await this.#client.execute(
          'SELECT batch_index, world_size, segment, stream_id, superseded, skipped ' +
            `FROM ${this.#ks}.batches ` +
            'WHERE job_id = ? AND epoch = ? AND rank = ? AND batch_index >= ?',
          [jobId, epoch, p.rank, from],
          { prepare: true, fetchSize: 100_000 },
        );
        const stale = rs.rows.filter(
          (r) =>
            r['superseded'] !== true &&
            r['skipped'] !== true &&
            !kept.has(`${epoch}/${p.rank}/${r['batch_index']}/${r['stream_id']}`) &&
            r['world_size'] === p.worldSize &&
            (epoch !== p.epoch ||
              p.segment === undefined ||
              (r['segment'] as Buffer).equals(p.segment)),
        );
        await this.#writeAll(
          `UPDATE ${this.#ks}.batches USING TTL ? SET superseded = true WHERE job_id = ? AND ` +
            'epoch = ? AND rank = ? AND batch_index = ? AND world_size = ? AND segment = ? ' +
            'AND stream_id = ?',
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
      }
    }
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
    const rows = (
      await this.batches(jobId, { epoch, rank, first: point.batchIndex, last }, false)
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
      `UPDATE ${this.#ks}.batches USING TTL ? SET skipped = true, superseded = false WHERE ` +
        'job_id = ? AND epoch = ? AND rank = ? AND batch_index = ? AND world_size = ? AND ' +
        'segment = ? AND stream_id = ?',
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
          this.#writeAll(
            `INSERT INTO ${this.#ks}.appearances (job_id, bucket, sample_id, epoch, rank, ` +
              'batch_index, world_size, segment, stream_id, position, sent_at) ' +
              'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?',
            batch.ids.map((id, position) => [
              job.jobId,
              sampleBucket(id, job.buckets),
              cassandra.types.Uuid.fromString(uuidText(id)),
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
        await Promise.all(writes);
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
  ): Promise<LedgerBatchRow[]> {
    if (range.last - range.first + 1 > LEDGER_READ_MAX_BATCHES) {
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
        const row = toBatchRow(r);
        samples += row.ids.length / 16;
        if (samples > LEDGER_READ_MAX_SAMPLES) {
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
      [
        job.jobId,
        sampleBucket(sampleId, job.buckets),
        cassandra.types.Uuid.fromString(uuidText(sampleId)),
      ],
      { prepare: true, fetchSize: LEDGER_MAX_APPEARANCES + 1 },
    );
    if (rs.rowLength > LEDGER_MAX_APPEARANCES) {
      throw invalidArgument(
        `the sample appears more than ${LEDGER_MAX_APPEARANCES} times in job ${job.jobId}, ` +
          'the most one read returns',
      );
    }
    // Each batch holding the sample is looked up once, with every row of its index.
    const batches = new Map<string, Promise<LedgerBatchRow[]>>();
    const rowsOf = (epoch: number, rank: number, index: number) => {
      const key = `${epoch}/${rank}/${index}`;
      let rows = batches.get(key);
      if (rows === undefined) {
        rows = this.batches(job.jobId, { epoch, rank, first: index, last: index }, true);
        batches.set(key, rows);
      }
      return rows;
    };
    const found: LedgerAppearanceRow[] = [];
    for (const r of rs.rows) {
      const epoch = r['epoch'] as number;
      const rank = r['rank'] as number;
      const batchIndex = r['batch_index'] as number;
      const worldSize = r['world_size'] as number;
      const segment = r['segment'] as Buffer;
      const streamId = (r['stream_id'] as cassandra.types.TimeUuid).toString();
      const batch = (await rowsOf(epoch, rank, batchIndex)).find(
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

/** UNAVAILABLE with the database's reason: the caller may try again once it is back. */
function ledgerUnavailable(what: string, err: unknown): LoaderError {
  if (err instanceof LoaderError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return new LoaderError('UNAVAILABLE', `${what}: ${reason}`, { cause: err });
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

/** The canonical text of 16 UUID bytes. */
export function uuidText(id: Buffer): string {
  const h = id.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function toBatchRow(r: cassandra.types.Row): LedgerBatchRow {
  const stream = r['stream_id'] as cassandra.types.TimeUuid;
  const { date, ticks } = stream.getDatePrecision();
  const sources = r['source_indexes'] as Buffer | null;
  return {
    epoch: r['epoch'] as number,
    rank: r['rank'] as number,
    worldSize: r['world_size'] as number,
    index: r['batch_index'] as number,
    segment: r['segment'] as Buffer,
    streamTime: date.getTime() * 10_000 + ticks,
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

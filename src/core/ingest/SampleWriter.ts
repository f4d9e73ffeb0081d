import cassandra from 'cassandra-driver';
import type { ColumnSpec } from '../schema/columnTypes.js';
import { QUERY_PROFILES } from '../db/consistency.js';
import { quoteIdentifier } from '../schema/identifiers.js';
import type { MetadataValue } from './IngestEntry.js';

/** A sample ready to be written: its id made, its bytes read, its label checked. */
export interface WritableSample {
  /** The sample's id (a uuid string, from its source key). */
  id: string;
  sourceKey: string;
  data: Buffer;
  label: number | null;
  labelBlob?: Buffer;
  metadata: Record<string, MetadataValue>;
}

/** Options of {@link SampleWriter.open}. */
export interface SampleWriterOptions {
  dataset: string;
  /** The metadata columns written (every other column of the table is left unset). */
  columns: readonly ColumnSpec[];
  /**
   * Bytes of small samples sent in one request (an unlogged batch of their rows; data, label
   * blob and metadata counted); a sample this large or larger is written alone. The default stays under Cassandra's default
   * `batch_size_fail_threshold` (50 KiB), which a multi-partition batch must respect.
   */
  groupBytes?: number;
  /** Samples in one request at most. */
  groupSamples?: number;
  /** Requests in flight before small samples are held back to fill a request. */
  eagerRequests?: number;
  /**
   * Whether the dataset held no sample before this ingest (skip existence checks); default:
   * asked at open. `ingest --workers` asks once for all its processes.
   */
  fresh?: boolean;
}

/** Default of {@link SampleWriterOptions.groupBytes}. */
export const DEFAULT_GROUP_BYTES = 24 * 1024;
const DEFAULT_GROUP_SAMPLES = 32;
const DEFAULT_EAGER_REQUESTS = 4;
/** Ids a fresh writer keeps (a few MB) before asking the database instead. */
const FRESH_IDS_MAX = 100_000;
/** Ids asked about in one existence query. */
const CHECK_GROUP = 100;

interface Pending {
  sample: WritableSample;
  resolve: () => void;
  reject: (err: unknown) => void;
}

interface Group {
  /** The replica that owns the group's samples ('' for a sample written alone). */
  replica: string;
  items: Pending[];
  bytes: number;
}

interface PendingCheck {
  id: string;
  resolve: (exists: boolean) => void;
  reject: (err: unknown) => void;
}

/**
 * Writes samples the way the database takes them fastest while keeping the ingest's promise
 * that a sample listed in `metadata` has its data row: each request carries the data rows of a
 * group of samples (many small ones, or one large one) in an unlogged batch, and only once it
 * is acknowledged the group's metadata rows follow, in another. A crash between the two leaves
 * data rows no metadata row names: the next ingest writes them again (they are not in any
 * split, so no stream or cache has seen them). No logged batch (its batchlog costs the
 * database a write and a delete per batch) and no atomicity across partitions is relied on.
 *
 * Samples are grouped by the replica that owns them, so each request goes to a node that
 * stores all of it (the driver routes by the first row). A group is sent when full, or at once
 * while fewer than `eagerRequests` requests are in flight (a lone sample does not wait), and
 * a request's completion sends the fullest waiting group: under load requests fill up, idle
 * they go one by one.
 *
 * Whether a sample exists is answered the same way, many ids per query ({@link exists}); a
 * dataset whose metadata table was empty when the writer opened skips those reads entirely
 * ({@link fresh}), as nothing written before can be there.
 */
export class SampleWriter {
  /** The ids given to {@link write} while the dataset was empty at open (see {@link fresh}). */
  private writtenIds: Set<string> | undefined;
  /** Samples waiting for their data rows' request, by replica. */
  private readonly groups = new Map<string, Group>();
  /** Samples whose data rows are stored, waiting for their metadata rows' request. */
  private readonly metadataGroups = new Map<string, Group>();
  private inFlight = 0;
  private readonly checks: PendingCheck[] = [];
  private checksInFlight = 0;
  private readonly groupBytes: number;
  private readonly groupSamples: number;
  private readonly eagerRequests: number;
  private readonly dataInsert: string;
  private readonly metaInsert: string;
  private readonly existsQuery: string;
  private readonly columnNames: string[];

  private constructor(
    private readonly client: cassandra.Client,
    private readonly options: SampleWriterOptions,
    fresh: boolean,
  ) {
    if (fresh) this.writtenIds = new Set();
    const ks = options.dataset;
    this.columnNames = options.columns.map((c) => c.name);
    this.groupBytes = options.groupBytes ?? DEFAULT_GROUP_BYTES;
    this.groupSamples = options.groupSamples ?? DEFAULT_GROUP_SAMPLES;
    this.eagerRequests = options.eagerRequests ?? DEFAULT_EAGER_REQUESTS;
    this.dataInsert = `INSERT INTO ${ks}.samples (id, label, label_blob, data) VALUES (?, ?, ?, ?)`;
    this.metaInsert =
      `INSERT INTO ${ks}.metadata (id, label, source_key, size_bytes` +
      this.columnNames.map((c) => `, ${quoteIdentifier(c)}`).join('') +
      `) VALUES (?, ?, ?, ?${', ?'.repeat(this.columnNames.length)})`;
    this.existsQuery = `SELECT id FROM ${ks}.metadata WHERE id IN ?`;
  }

  /** A writer for a dataset whose schema exists (see `ensureDatasetSchema`). */
  static async open(client: cassandra.Client, options: SampleWriterOptions): Promise<SampleWriter> {
    const fresh = options.fresh ?? (await SampleWriter.isEmpty(client, options.dataset));
    return new SampleWriter(client, options, fresh);
  }

  /** Whether a dataset's metadata table holds no row. */
  static async isEmpty(client: cassandra.Client, dataset: string): Promise<boolean> {
    const any = await client.execute(`SELECT id FROM ${dataset}.metadata LIMIT 1`);
    return any.rowLength === 0;
  }

  /**
   * True while the dataset held no sample but this writer's: existence is then answered from
   * the ids this writer was given, without reading the database.
   */
  get fresh(): boolean {
    return this.writtenIds !== undefined;
  }

  /** Whether a sample with this id is stored, or given to {@link write} already. */
  exists(id: string): Promise<boolean> {
    if (this.writtenIds) return Promise.resolve(this.writtenIds.has(id));
    return new Promise((resolve, reject) => {
      this.checks.push({ id, resolve, reject });
      if (this.checks.length >= CHECK_GROUP || this.checksInFlight < this.eagerRequests) {
        this.sendChecks();
      }
    });
  }

  /** Writes one sample; resolves once its data and metadata rows are both acknowledged. */
  write(sample: WritableSample): Promise<void> {
    if (this.writtenIds) {
      this.writtenIds.add(sample.id);
      // Past this many, ids are asked of the database like any other writer's: the set is
      // what a key sent twice (or a resumed call) is caught by, and it must stay small.
      if (this.writtenIds.size > FRESH_IDS_MAX) this.writtenIds = undefined;
    }
    return new Promise((resolve, reject) => {
      const item = { sample, resolve, reject };
      const size = rowBytes(sample);
      const replica = this.replicaOf(sample.id);
      if (size >= this.groupBytes) {
        this.send({ replica, items: [item], bytes: size });
        return;
      }
      let group = this.groups.get(replica);
      if (group && group.bytes + size > this.groupBytes) {
        this.groups.delete(replica);
        this.send(group);
        group = undefined;
      }
      if (!group) {
        group = { replica, items: [], bytes: 0 };
        this.groups.set(replica, group);
      }
      group.items.push(item);
      group.bytes += size;
      if (group.items.length >= this.groupSamples || this.inFlight < this.eagerRequests) {
        this.groups.delete(replica);
        this.send(group);
      }
    });
  }

  private replicaOf(id: string): string {
    const hosts = this.client.getReplicas(this.options.dataset, uuidBytes(id));
    return hosts?.[0]?.address ?? '';
  }

  /**
   * Sends a group's data rows, then its metadata rows: a group of small samples in a request of
   * their own right after, a large sample's metadata row with other large samples' (see
   * {@link queueMetadata}), so neither kind needs more requests than it must.
   */
  private send(group: Group): void {
    this.inFlight++;
    const rows = group.items.map(({ sample: s }) => ({
      query: this.dataInsert,
      // Null, not unset: a data row left by a crashed ingest (no metadata row names it) is
      // written again, and an unset label or blob would keep that row's old value.
      params: [s.id, s.label ?? null, s.labelBlob ?? null, s.data],
    }));
    const alone = group.items.length === 1 && group.bytes >= this.groupBytes;
    this.run(rows, group.items[0]!.sample.id)
      .then(async () => {
        if (alone) {
          this.queueMetadata(group);
          return;
        }
        await this.run(this.metadataRows(group), group.items[0]!.sample.id);
        for (const item of group.items) item.resolve();
      })
      .catch((err: unknown) => {
        for (const item of group.items) item.reject(err);
      })
      .finally(() => {
        this.inFlight--;
        this.pump();
      });
  }

  /**
   * A group's metadata rows. Absent values stay unset (no tombstone): a metadata row is only
   * written for an id that has none, so there is no old value to clear, and the table is
   * scanned whole (counts, splits), where tombstones cost.
   */
  private metadataRows(group: Group): Array<{ query: string; params: unknown[] }> {
    return group.items.map(({ sample: s }) => ({
      query: this.metaInsert,
      params: [
        s.id,
        s.label ?? cassandra.types.unset,
        s.sourceKey,
        s.data.length,
        ...this.columnNames.map((c) => toCql(s.metadata[c] ?? null)),
      ],
    }));
  }

  /**
   * Queues a large sample whose data row is stored for its metadata row. Metadata rows are
   * small whatever the sample's size, so they travel many to a request (a 100 kB image's data
   * row goes alone, its metadata row with other images').
   */
  private queueMetadata(stored: Group): void {
    const replica = stored.replica;
    const bytes = stored.items.reduce((sum, item) => sum + metadataBytes(item.sample), 0);
    let group = this.metadataGroups.get(replica);
    if (
      group &&
      (group.bytes + bytes > this.groupBytes ||
        group.items.length + stored.items.length > this.groupSamples)
    ) {
      this.metadataGroups.delete(replica);
      this.sendMetadata(group);
      group = undefined;
    }
    if (!group) {
      group = { replica, items: [], bytes: 0 };
      this.metadataGroups.set(replica, group);
    }
    group.items.push(...stored.items);
    group.bytes += bytes;
    if (group.items.length >= this.groupSamples || this.inFlight <= this.eagerRequests) {
      this.metadataGroups.delete(replica);
      this.sendMetadata(group);
    }
  }

  private sendMetadata(group: Group): void {
    this.inFlight++;
    const rows = this.metadataRows(group);
    this.run(rows, group.items[0]!.sample.id)
      .then(
        () => {
          for (const item of group.items) item.resolve();
        },
        (err: unknown) => {
          for (const item of group.items) item.reject(err);
        },
      )
      .finally(() => {
        this.inFlight--;
        this.pump();
      });
  }

  /**
   * After a request completes: the fullest waiting group goes out, metadata first (it
   * completes samples, which lets the caller start others).
   */
  private pump(): void {
    const fullest = (groups: Map<string, Group>): [string, Group] | undefined => {
      let best: [string, Group] | undefined;
      for (const entry of groups) {
        if (!best || entry[1].items.length > best[1].items.length) best = entry;
      }
      return best;
    };
    const metadata = fullest(this.metadataGroups);
    if (metadata) {
      this.metadataGroups.delete(metadata[0]);
      this.sendMetadata(metadata[1]);
      return;
    }
    const data = fullest(this.groups);
    if (data) {
      this.groups.delete(data[0]);
      this.send(data[1]);
    }
  }

  private async run(
    rows: Array<{ query: string; params: unknown[] }>,
    firstId: string,
  ): Promise<void> {
    const options = {
      prepare: true,
      isIdempotent: true,
      routingKey: uuidBytes(firstId),
      executionProfile: QUERY_PROFILES.write,
    };
    if (rows.length === 1) {
      await this.client.execute(rows[0]!.query, rows[0]!.params, options);
    } else {
      await this.client.batch(rows, { ...options, logged: false });
    }
  }

  private sendChecks(): void {
    const batch = this.checks.splice(0, CHECK_GROUP);
    if (batch.length === 0) return;
    this.checksInFlight++;
    this.client
      .execute(this.existsQuery, [batch.map((c) => c.id)], { prepare: true, isIdempotent: true })
      .then(
        (rs) => {
          const found = new Set(rs.rows.map((r) => String(r['id'])));
          for (const c of batch) c.resolve(found.has(c.id));
        },
        (err: unknown) => {
          for (const c of batch) c.reject(err);
        },
      )
      .finally(() => {
        this.checksInFlight--;
        this.sendChecks();
      });
  }
}

/**
 * What a sample adds to a batch, as the database counts a batch's size: its data and label
 * blob, and its metadata row (key and values; a long text column counts too, or a group of
 * samples with large metadata could pass the batch limit in its metadata request).
 */
function rowBytes(sample: WritableSample): number {
  return sample.data.length + (sample.labelBlob?.length ?? 0) + metadataBytes(sample);
}

/** What a sample's metadata row adds to a batch: its key and values, and the fixed fields. */
function metadataBytes(sample: WritableSample): number {
  let bytes = 64 + Buffer.byteLength(sample.sourceKey);
  for (const value of Object.values(sample.metadata)) {
    bytes += typeof value === 'string' ? Buffer.byteLength(value) : 8;
  }
  return bytes;
}

function uuidBytes(id: string): Buffer {
  return Buffer.from(id.replaceAll('-', ''), 'hex');
}

function toCql(value: MetadataValue): unknown {
  if (value === null) return cassandra.types.unset;
  if (typeof value === 'bigint') return cassandra.types.Long.fromString(value.toString());
  return value;
}

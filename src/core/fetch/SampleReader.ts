import cassandra from 'cassandra-driver';
import { QUERY_PROFILES } from '../db/consistency.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import type { CachedSample } from '../cache/CachedSample.js';
import type { PathSelector, PathState } from './PathSelector.js';
import type { SourceCatalog } from './SourceCatalog.js';

/** The answer to one read: the sample's id and its row (null when the id has none). */
export interface RowRead {
  id: Buffer;
  row: cassandra.types.Row | null;
}

/**
 * Options of every sample read: idempotent (retried and hedged safely), at the sample read
 * consistency (`sampleReadConsistency`, one replica's answer by default).
 */
const READ_OPTIONS = {
  prepare: true,
  isIdempotent: true,
  executionProfile: QUERY_PROFILES.sampleRead,
} as const;

/**
 * Reads one sample's row with a single-partition query, or a group's rows with one
 * multi-partition query ({@link SampleReader.readGroup}), over a given route, keeping the
 * route's figures (reads in flight, mean latency, a penalty on failure) and the read metrics.
 * Retrying, hedging and ordering are the caller's: this is one attempt.
 */
export class SampleReader {
  /** Each source's single-row and group queries (sources are datasets: keyspaces). */
  private readonly queries: { one: string; group: string }[];

  constructor(
    /** The stream's sources; stored positions are the catalog's. */
    readonly catalog: SourceCatalog,
    private readonly selector: PathSelector,
    private readonly metrics: Pick<LoaderMetrics, 'dbRequestsInFlight' | 'dbReadSeconds'>,
  ) {
    this.queries = catalog.sources.map(({ keyspace }) => ({
      one: `SELECT label, label_blob, data FROM ${keyspace}.samples WHERE id = ?`,
      group: `SELECT id, label, label_blob, data FROM ${keyspace}.samples WHERE id IN ?`,
    }));
  }

  /** The id of the sample stored at `storedPosition` (a view into its source's ids). */
  idAt(storedPosition: number): Buffer {
    return this.catalog.idAt(storedPosition);
  }

  /**
   * Reads the sample stored at `storedPosition` of the split over `path`. A `hedge` (the second
   * read of a stuck one) goes to the replica with the fewest requests in flight.
   */
  async read(storedPosition: number, path: PathState, hedge = false): Promise<RowRead> {
    const source = this.catalog.sourceOf(storedPosition);
    const id = this.catalog.idAt(storedPosition, source);
    const host = hedge ? this.leastBusyReplica(path.path.client, source, id) : undefined;
    const started = performance.now();
    path.inFlight++;
    this.metrics.dbRequestsInFlight.inc();
    try {
      const rs = await path.path.client.execute(
        this.queries[source]!.one,
        [new cassandra.types.Uuid(id)],
        {
          ...READ_OPTIONS,
          ...(host ? { host } : {}),
        },
      );
      const ms = performance.now() - started;
      this.selector.observe(path, ms);
      this.metrics.dbReadSeconds.observe({ path: path.path.name }, ms / 1000);
      return { id, row: rs.first() };
    } catch (err) {
      this.selector.penalize(path);
      throw err;
    } finally {
      path.inFlight--;
      this.metrics.dbRequestsInFlight.dec();
    }
  }

  /**
   * Reads the samples stored at `storedPositions` over `path` with one `WHERE id IN (...)`
   * query, routed by the first id (the caller groups ids of one dataset's table that share
   * their replicas, so the coordinator owns them all; they may be of several of the stream's
   * sources, splits of that dataset). The answers come in the order asked; an id without a row gets
   * a null row, as a single read of it would. A `hedge` goes to the least busy replica of the
   * group's first id (the group shares its replicas).
   */
  async readGroup(
    storedPositions: readonly number[],
    path: PathState,
    hedge = false,
  ): Promise<RowRead[]> {
    const source = this.catalog.sourceOf(storedPositions[0]!);
    const ids = storedPositions.map((p) => this.catalog.idAt(p));
    const host = hedge ? this.leastBusyReplica(path.path.client, source, ids[0]!) : undefined;
    const started = performance.now();
    path.inFlight++;
    this.metrics.dbRequestsInFlight.inc();
    try {
      const rs = await path.path.client.execute(
        this.queries[source]!.group,
        [ids.map((id) => new cassandra.types.Uuid(id))],
        { ...READ_OPTIONS, routingKey: ids[0], ...(host ? { host } : {}) },
      );
      const ms = performance.now() - started;
      this.selector.observe(path, ms);
      this.metrics.dbReadSeconds.observe({ path: path.path.name }, ms / 1000);
      // Rows come in token order, not the order asked: match them by id.
      const byId = new Map<string, cassandra.types.Row>();
      for (const row of rs.rows) {
        byId.set((row['id'] as cassandra.types.Uuid).getBuffer().toString('latin1'), row);
      }
      return ids.map((id) => ({ id, row: byId.get(id.toString('latin1')) ?? null }));
    } catch (err) {
      this.selector.penalize(path);
      throw err;
    } finally {
      path.inFlight--;
      this.metrics.dbRequestsInFlight.dec();
    }
  }

  /**
   * The live replica of `id`'s partition with the fewest requests in flight, or undefined (the
   * driver chooses) when there are fewer than two. Why: with two replicas the driver picks one
   * at random, ignoring their load, so a second read of a sample stuck on a hung node (alive
   * to the driver, answering nothing) went back to that node half the time and stuck as well;
   * the hung node's in-flight requests pile up, which is what tells it apart.
   */
  private leastBusyReplica(
    client: cassandra.Client,
    source: number,
    id: Buffer,
  ): cassandra.Host | undefined {
    const keyspace = this.catalog.sources[source]!.keyspace;
    const replicas = (client.getReplicas(keyspace, id) ?? []).filter((h) => h.isUp());
    if (replicas.length < 2) return undefined;
    const state = client.getState();
    let best = replicas[0]!;
    let bestLoad = state.getInFlightQueries(best);
    for (const h of replicas.slice(1)) {
      const load = state.getInFlightQueries(h);
      if (load < bestLoad) [best, bestLoad] = [h, load];
    }
    return best;
  }

  /** A sample's label and bytes from a row this reader read. */
  toCached(row: cassandra.types.Row): CachedSample {
    return {
      label: (row['label'] as number | null) ?? -1,
      labelBlob: (row['label_blob'] as Buffer | null) ?? null,
      data: row['data'] as Buffer,
    };
  }
}

import type cassandra from 'cassandra-driver';
import { type DatasetCounts, refreshDatasetCounts } from './datasetInfo.js';

/** How a dataset is recounted: a full scan of its metadata table (see `refreshDatasetCounts`). */
export type Recount = (client: cassandra.Client, dataset: string) => Promise<DatasetCounts>;

/** Options of {@link DatasetRecounts}. */
export interface DatasetRecountsOptions {
  /** The recount (default `refreshDatasetCounts`); tests give their own. */
  recount?: Recount;
  /** Told of each recount as it starts (a metric). */
  onRecount?: (dataset: string) => void;
}

/**
 * The recounts of a process's datasets, one at a time per dataset. A recount scans the whole
 * metadata table, so many ingest calls of one dataset ending together must not each start one:
 * a caller that asks while none runs starts one; a caller that asks while one runs gets the
 * next one, which starts once the running one has ended (so it counts everything the caller
 * wrote) and is shared by every caller that asked meanwhile. At most one recount runs and one
 * waits per dataset, however many calls end.
 */
export class DatasetRecounts {
  readonly #recount: Recount;
  readonly #onRecount: ((dataset: string) => void) | undefined;
  /** The recount running, by dataset. */
  readonly #running = new Map<string, Promise<DatasetCounts>>();
  /** The recount waiting for the running one to end, by dataset. */
  readonly #next = new Map<string, Promise<DatasetCounts>>();

  constructor(options: DatasetRecountsOptions = {}) {
    this.#recount = options.recount ?? refreshDatasetCounts;
    this.#onRecount = options.onRecount;
  }

  /** The dataset's counts from a recount that starts no earlier than this call. */
  recount(client: cassandra.Client, dataset: string): Promise<DatasetCounts> {
    const waiting = this.#next.get(dataset);
    if (waiting !== undefined) return waiting;
    const running = this.#running.get(dataset);
    if (running === undefined) return this.#start(client, dataset);
    const next = running
      .catch(() => undefined)
      .then(() => {
        this.#next.delete(dataset);
        return this.#start(client, dataset);
      });
    this.#next.set(dataset, next);
    return next;
  }

  #start(client: cassandra.Client, dataset: string): Promise<DatasetCounts> {
    this.#onRecount?.(dataset);
    const run = Promise.resolve().then(() => this.#recount(client, dataset));
    this.#running.set(dataset, run);
    const forget = (): void => {
      if (this.#running.get(dataset) === run) this.#running.delete(dataset);
    };
    run.then(forget, forget);
    return run;
  }
}

import type cassandra from 'cassandra-driver';
import type { CachedSample } from '../cache/CachedSample.js';
import { cacheKey } from '../cache/cacheKey.js';
import type { SharedRead } from '../cache/SampleCache.js';
import type { ResumeState } from '../resume/resumeToken.js';
import type { EpochShard } from '../sampling/epochShard.js';
import type { StreamTransformer } from '../transform/StreamTransformer.js';
import { UndecodableImageError } from '../transform/UndecodableImageError.js';
import type { AssembledBatch } from './AssembledBatch.js';
import { BatchAssembler } from './BatchAssembler.js';
import { FetchWindow, type ReadBound } from './FetchWindow.js';
import type { FetchedSample } from './FetchedSample.js';
import type { FetchOptions } from './FetchOptions.js';
import { groupByReplica } from './groupByReplica.js';
import { PathSelector, type PathState } from './PathSelector.js';
import { ReadRetries } from './ReadRetries.js';
import type { StreamReads } from './ReadSlots.js';
import { ReplicaSets } from './ReplicaSets.js';
import { SampleReader, type RowRead } from './SampleReader.js';
import { SourceCatalog } from './SourceCatalog.js';
import { StragglerHedger } from './StragglerHedger.js';

/**
 * The fetch engine of one stream. It keeps up to `prefetch x batchSize` positions of the
 * rank's epoch requested or waiting, reads each sample with a single-partition query over the
 * route expected to answer first, and replaces every completed read at once (after a start
 * that ramps up instead of bursting). In out-of-order mode a batch is whichever `batchSize`
 * samples arrived first; in in-order mode it is the next `batchSize` positions in order.
 *
 * Requests never reach further than a bounded span (twice the window) above the lowest
 * position that has not arrived: a stuck read is retried, not overtaken without limit, and an
 * arrived sample leaves in the next batch (lowest positions first), so delivered positions
 * never spread more than about two spans above the lowest undelivered one and the resume
 * token stays small whatever the dataset's size. Reads that fail retryably are retried with
 * exponential backoff on another route when there is one; after `readAttempts` the stream
 * fails with UNAVAILABLE. A cancelled stream issues no further reads (the ones in flight
 * finish and are dropped).
 *
 * With `groupReads` above 1 the positions a pump may issue are read in groups: ids sharing
 * their replicas, up to `groupReads` per query, one `WHERE id IN (...)` query routed to
 * those replicas. Every member still holds its own place in the window and the span; a group
 * is retried and hedged as a whole (less its members already resolved), and a member without
 * a row follows the missing-sample policy exactly as a single read of it would.
 *
 * With a sample cache (`cache`), each position a pump admits is looked up first: a hit
 * resolves the position at once, without a database request (it still holds its place in the
 * window until sent, so a stream of hits is paced by its client); a sample another stream is
 * reading is taken from that read (single flight); only the rest is read, and what is read
 * fills the cache, whether this stream still wants it or not. Where bytes came from changes
 * nothing about batches, ordering or resume state.
 *
 * A mixture's sources are read alike: stored positions index the sources laid end to end
 * ({@link SourceCatalog}), each read goes to its source's table, groups never span two datasets, and
 * each sample carries its source's index.
 *
 * This class only wires the parts together and issues the reads: the window, span and ramp
 * are {@link FetchWindow}'s, routes {@link PathSelector}'s, second reads of stragglers
 * {@link StragglerHedger}'s, retries {@link ReadRetries}', one read {@link SampleReader}'s,
 * and batches and resume state {@link BatchAssembler}'s.
 */
export class BatchFetcher {
  private readonly selector: PathSelector;
  private readonly catalog: SourceCatalog;
  private readonly reader: SampleReader;
  private readonly window: FetchWindow;
  /** This stream's share of the process's cap on queries in flight (absent: no cap). */
  private reads: StreamReads | undefined;
  private readonly hedger: StragglerHedger;
  private readonly retries: ReadRetries;
  private readonly assembler: BatchAssembler;
  /** Samples per query at most (1: single-row reads). */
  private readonly groupSize: number;
  /** Replica set of each sample, when reads are grouped. */
  private readonly replicaSets: ReplicaSets | undefined;
  private failure: unknown;
  private wake: (() => void) | undefined;
  private closed = false;
  /**
   * Reads awaiting their answer (any attempt); second reads of stragglers are not counted,
   * they take no place in the window (the hedger bounds them).
   */
  private inFlight = 0;
  /** Queries awaiting their answer: one per read, one per group of grouped reads. */
  private queries = 0;
  /** Positions whose read (or group) waits out a retry backoff. */
  private retryingPositions = 0;
  /** Members of each group in flight by its first position, the one the hedger tracks. */
  private readonly groupsByLead = new Map<number, number[]>();
  /**
   * The current epoch's first reads (or groups) in flight, by first position: whether each
   * still counts in {@link BatchFetcher.inFlight} and the queries. One that lost to its second
   * read stops counting (see {@link BatchFetcher.release}).
   */
  private readonly firstReads = new Map<number, { counted: boolean }>();
  /** First reads released while still in flight (a hung node's, until its driver timeout). */
  private released = 0;
  /** Positions whose sample was read and is being transformed (they hold window places). */
  private readonly transforming = new Set<number>();
  /** Set by a pump that resolved positions from the cache before returning. */
  private resolvedNow = false;
  /** Bytes of samples arrived or being transformed and not sent yet (see `maxWindowBytes`). */
  private heldBytes = 0;
  /** Bytes and count of the samples that arrived, for the mean a read in flight is taken at. */
  private arrivedBytes = 0;
  private arrivedCount = 0;
  /** What this stream counts in the process's budget now (see {@link BatchFetcher.sync}). */
  private budgeted = 0;
  /** This stream's cache look ups: hits, misses read from the database, shared reads. */
  readonly cacheFigures = { hits: 0, misses: 0, shared: 0 };

  // Per-epoch state.
  private plan!: EpochShard;
  /** Next position to request. */
  private issueCursor = 0;
  /** Lowest position neither delivered nor arrived: the span of requests is measured from it. */
  private unresolved = 0;

  constructor(private readonly opts: FetchOptions) {
    this.selector = new PathSelector(opts.paths);
    this.catalog = new SourceCatalog(opts.sources);
    this.reader = new SampleReader(this.catalog, this.selector, opts.metrics);
    this.window = new FetchWindow(opts);
    this.retries = new ReadRetries(opts);
    this.assembler = new BatchAssembler(opts);
    this.groupSize = Math.max(1, Math.floor(opts.groupReads ?? 1));
    this.replicaSets =
      this.groupSize > 1
        ? new ReplicaSets(opts.paths[0]!.client.metadata, this.catalog)
        : undefined;
    this.hedger = new StragglerHedger(this.selector, (position, path, done) =>
      this.hedge(position, path, done),
    );
    opts.signal.addEventListener('abort', () => this.notify(), { once: true });
    this.hedger.start();
  }

  /** Positions the window holds now (grown from prefetch x batch size when adaptive). */
  get windowPositions(): number {
    return this.window.positions;
  }

  /** Yields the rank's batches, epoch after epoch, starting where `resume` says. */
  async *batches(): AsyncGenerator<AssembledBatch> {
    // Joined here, not when made: `close()` (this generator's `finally`) is what leaves.
    const slots = this.opts.readSlots;
    if (slots !== undefined) {
      // A stream on a route others read lately starts from what they measured: its reads in
      // flight, and which of its paths is fast.
      const route = this.route();
      const recalled = slots.recall(route, performance.now());
      if (recalled !== undefined) {
        this.window.startFrom(recalled);
        if (recalled.pathLatencyMs) this.selector.startFrom(recalled.pathLatencyMs);
      }
      this.reads = slots.join(route, () => {
        const estimate = this.window.target?.estimate;
        return estimate && { ...estimate, pathLatencyMs: this.selector.latencies };
      });
    }
    try {
      const start = this.opts.resume?.epoch ?? this.opts.firstEpoch;
      for (let epoch = start; epoch < this.opts.endEpoch; epoch++) {
        this.startEpoch(epoch, epoch === start ? this.opts.resume : undefined);
        while (!this.assembler.epochDone) {
          this.check();
          const batch = this.assembler.take();
          if (batch) {
            let sent = 0;
            for (const s of batch.samples) sent += sampleBytes(s);
            this.hold(-sent);
            this.pump();
            yield batch;
            continue;
          }
          // Cache hits resolve positions within the pump: take what they made ready first.
          let ready = this.pump();
          if (this.growWindowIfStarved()) ready = this.pump() || ready;
          if (ready) continue;
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = undefined;
        }
      }
    } finally {
      this.close();
    }
  }

  /**
   * What this stream reads and over which paths: streams with the same route see the same
   * round trips and sample sizes, so one's rate and round trip are a start for the next.
   */
  private route(): string {
    const paths = this.opts.paths.map((p) => p.name).join(',');
    const sources = this.opts.sources.map((s) => s.keyspace).join(',');
    return `${paths}|${sources}`;
  }

  /** Stops issuing reads and clears retry timers. */
  close(): void {
    this.heldBytes = 0;
    this.closed = true;
    this.sync();
    this.reads?.leave();
    this.hedger.stop();
    this.retries.close();
  }

  private startEpoch(epoch: number, resume: ResumeState | undefined): void {
    this.plan = this.opts.shardOf(epoch);
    // A previous epoch's reads still in flight keep their own accounting (see read()).
    this.firstReads.clear();
    this.groupsByLead.clear();
    // What the previous epoch still held is dropped with it (see BatchAssembler.startEpoch).
    this.hold(-this.heldBytes);
    this.assembler.startEpoch(epoch, this.plan.length, resume);
    this.issueCursor = this.assembler.low;
    this.unresolved = this.assembler.low;
  }

  private check(): void {
    if (this.failure !== undefined) throw this.failure;
    this.opts.signal.throwIfAborted();
  }

  private notify(): void {
    this.wake?.();
  }

  /**
   * Positions requested, being transformed, or holding data until sent (see
   * {@link BatchAssembler.held}): a transform's time counts against the window as a read's does.
   */
  private get occupancy(): number {
    return this.inFlight + this.transforming.size + this.retryingPositions + this.assembler.held;
  }

  /** Database requests going: queries in flight and reads or groups waiting out a backoff. */
  private get requests(): number {
    return this.queries + this.retries.waiting;
  }

  /** True once a position arrived, was skipped or delivered, or is being transformed. */
  private isTaken(position: number): boolean {
    return this.transforming.has(position) || this.assembler.isResolved(position);
  }

  /** Grows an adaptive window when it alone starves the stream (see {@link FetchWindow}). */
  private growWindowIfStarved(): boolean {
    if (this.closed) return false;
    // Samples being transformed are work in flight like reads: a window full of them starves
    // the stream the same way when transforms take long.
    return this.window.growIfStarved(
      this.occupancy,
      this.inFlight + this.transforming.size,
      this.retries.waiting,
      this.issueCursor >= this.plan.length,
      this.queries,
    );
  }

  /**
   * Issues reads while the window, the span, the in-flight limit and the ramp allow: the
   * positions admitted are taken from the cache when it has them, the rest read one by one, or
   * grouped by replica set when reads are grouped.
   *
   * @returns true when positions were resolved from the cache before returning.
   */
  private pump(): boolean {
    this.resolvedNow = false;
    const { assembler, window, groupSize } = this;
    const picked: number[] = [];
    let bound: ReadBound = 'done';
    // Picked positions are not issued yet: they count as in flight, and as the queries they
    // will make, so the window and the in-flight limits see them.
    while (!this.closed) {
      const queries = Math.ceil(picked.length / groupSize);
      const refused =
        window.refuses(this.occupancy + picked.length, this.requests + queries) ??
        (this.bytesAdmit(picked.length) ? undefined : 'bytes') ??
        (this.slotsAdmit(picked.length, queries) ? undefined : 'process');
      if (refused !== undefined) {
        bound = refused;
        break;
      }
      while (this.issueCursor < this.plan.length && assembler.isDelivered(this.issueCursor)) {
        this.issueCursor++;
      }
      if (this.issueCursor >= this.plan.length) break;
      while (this.unresolved < this.issueCursor && assembler.isResolved(this.unresolved)) {
        this.unresolved++;
      }
      if (!window.reaches(this.issueCursor, this.unresolved)) {
        bound = 'span';
        break;
      }
      window.issued();
      picked.push(this.issueCursor++);
    }
    // A window full of samples waiting to be sent: the trainer, not the reads, holds it.
    // (In order, samples held behind a straggler are no sign of that.)
    if (
      bound === 'window' &&
      this.opts.ordering === 'out-of-order' &&
      assembler.held >= this.opts.batchSize
    ) {
      bound = 'trainer';
    }
    this.reads?.setBound(bound);
    const toRead = this.opts.cache && picked.length > 0 ? this.fromCache(picked) : picked;
    if (toRead.length > 0) {
      if (groupSize === 1) {
        for (const position of toRead) this.read([position], 1, undefined);
      } else {
        const sets = this.replicaSets!;
        // A replica set is one table's: a group never spans two datasets.
        const groups = groupByReplica(
          toRead,
          (p) => sets.of(this.plan.storedPosition(p)),
          groupSize,
        );
        for (const group of groups) this.read(group, 1, undefined);
      }
    }
    this.sync();
    return this.resolvedNow;
  }

  /**
   * True when one more read fits the byte bounds: the stream's held bytes plus its reads in
   * flight (and `picked`, about to be) at the mean sample size stay under `maxWindowBytes`,
   * and the process's budget is not spent. Reads for one batch are always admitted, so a
   * stream whose samples are larger than its bound still makes progress, a batch at a time.
   * Until a size is known (no dataset mean, nothing arrived yet), reads go no further than
   * one batch either.
   */
  private bytesAdmit(picked: number): boolean {
    const { maxWindowBytes, budget, batchSize } = this.opts;
    if (maxWindowBytes === undefined && budget === undefined) return true;
    if (this.occupancy + picked < batchSize) return true;
    const mean = this.meanBytes();
    if (mean === undefined) return false;
    // The process's budget counts every stream's held bytes and reads in flight (see sync()):
    // this stream's picked reads are not in it yet.
    if (budget !== undefined && budget.held + (picked + 1) * mean > budget.limit) return false;
    if (maxWindowBytes === undefined) return true;
    const expected = (this.inFlight + this.retryingPositions + picked + 1) * mean;
    return this.heldBytes + expected <= maxWindowBytes;
  }

  /**
   * True when the process's cap on queries in flight (see `ReadSlots`) admits the query
   * of one more read, `picked` reads (`queries` queries) being about to go too. A stream with
   * few queries going is admitted whatever the cap (see `READS_PAST_THE_CAP`).
   */
  private slotsAdmit(picked: number, queries: number): boolean {
    if (this.reads === undefined) return true;
    // The next read opens a query when it starts a new group.
    const opens = picked % this.groupSize === 0 ? 1 : 0;
    return this.reads.admits(queries + opens);
  }

  /** The size a read in flight is expected to bring: the stream's mean, else the dataset's. */
  private meanBytes(): number | undefined {
    return this.arrivedCount > 0
      ? this.arrivedBytes / this.arrivedCount
      : this.opts.meanSampleBytes;
  }

  /** Counts `bytes` more held by this stream (negative: sent or dropped). */
  private hold(bytes: number): void {
    this.heldBytes += bytes;
    this.sync();
  }

  /**
   * Brings this stream's share of the process's budget up to date: its held bytes plus its
   * reads in flight at the mean size. Reserving reads as they are issued, not only the bytes
   * that arrived, is what keeps streams from issuing a budget's worth each at once.
   */
  private sync(): void {
    const { reads } = this;
    if (reads !== undefined) {
      reads.setQueries(this.closed ? 0 : this.requests);
      if (!this.closed) {
        reads.setTarget(this.window.inFlightLimit, this.window.target?.minRoundTripMs);
      }
    }
    const { budget } = this.opts;
    if (budget === undefined) return;
    const mean = this.closed ? 0 : (this.meanBytes() ?? 0);
    const now = this.closed ? 0 : this.heldBytes + (this.inFlight + this.retryingPositions) * mean;
    budget.add(now - this.budgeted);
    this.budgeted = now;
  }

  /**
   * Resolves the positions of `picked` the cache has, waits on other streams' reads for those
   * being read, and returns the rest, to be read from the database.
   */
  private fromCache(picked: readonly number[]): number[] {
    const { store, scopes } = this.opts.cache!;
    const left: number[] = [];
    for (const position of picked) {
      const stored = this.plan.storedPosition(position);
      const source = this.catalog.sourceOf(stored);
      const id = this.catalog.idAt(stored, source);
      const found = store.lookup(cacheKey(scopes[source]!, id));
      if (found === undefined) {
        this.cacheFigures.misses++;
        left.push(position);
      } else if ('sample' in found) {
        this.cacheFigures.hits++;
        this.window.completed();
        this.onSample(position, id, found.sample, performance.now());
        this.resolvedNow = true;
      } else {
        this.cacheFigures.shared++;
        this.join(position, id, found.shared);
      }
    }
    return left;
  }

  /**
   * Waits for another stream's read of the sample at `position`: it holds its place in the
   * window as a read of its own would, without a database request, and is hedged as one (that
   * read may be stuck on a hung node, and its stream may have gone, taking its hedges along).
   * A read that gave up sends the position back to the cache, then to a read of its own.
   */
  private join(position: number, id: Buffer, shared: SharedRead): void {
    const epoch = this.assembler.epoch;
    this.inFlight++;
    this.hedger.track(position, this.selector.pick(), performance.now());
    void shared.then((sample) => {
      this.inFlight--;
      if (this.closed || epoch !== this.assembler.epoch) return;
      this.hedger.settled(position);
      if (sample === undefined && !this.isTaken(position)) {
        this.retake(position); // its completion is counted where it ends now
      } else {
        this.window.completed();
        // Taken already: a hedge of it came first.
        if (sample && !this.isTaken(position)) {
          this.onSample(position, id, sample, performance.now());
        } else if (sample === null) {
          this.onRow(position, id, null);
        }
      }
      this.pump();
      this.notify();
    });
  }

  /** A position whose shared read gave up: from the cache, another shared read, or a read. */
  private retake(position: number): void {
    const left = this.fromCache([position]);
    if (left.length > 0) this.read(left, 1, undefined);
  }

  /**
   * Reads the rows of `positions` over `path`: one single-row read, or one group query. With a
   * cache, a first read claims its ids (other streams wait for it rather than read them too),
   * and every answer fills the cache, even one that comes after this stream closed.
   */
  private fetchRows(
    positions: readonly number[],
    path: PathState,
    hedge = false,
  ): Promise<RowRead[]> {
    const rows =
      positions.length === 1
        ? this.reader.read(this.plan.storedPosition(positions[0]!), path, hedge).then((r) => [r])
        : this.reader.readGroup(
            positions.map((p) => this.plan.storedPosition(p)),
            path,
            hedge,
          );
    const cache = this.opts.cache;
    if (!cache) return rows;
    const keys = positions.map((p) => {
      const stored = this.plan.storedPosition(p);
      const source = this.catalog.sourceOf(stored);
      return cacheKey(cache.scopes[source]!, this.catalog.idAt(stored, source));
    });
    const claims = hedge ? [] : keys.map((key) => ({ key, token: cache.store.claim(key) }));
    return rows.then(
      (answers) => {
        for (let i = 0; i < answers.length; i++) {
          const { row } = answers[i]!;
          cache.store.fill(keys[i]!, row ? this.reader.toCached(row) : null);
        }
        return answers;
      },
      (err: unknown) => {
        for (const { key, token } of claims) if (token) cache.store.abandon(key, token);
        throw err;
      },
    );
  }

  /**
   * Attempt number `attempt` of a first read of `group` (one position, or a group sharing
   * replicas), avoiding the route `avoid`. The hedger tracks the group by its first position.
   */
  private read(group: number[], attempt: number, avoid: PathState | undefined): void {
    const path = this.selector.pick(avoid);
    const epoch = this.assembler.epoch;
    const lead = group[0]!;
    this.inFlight += group.length;
    this.queries++;
    if (group.length > 1) this.groupsByLead.set(lead, group);
    const first = { counted: true };
    this.firstReads.set(lead, first);
    const issuedAt = performance.now();
    const mark = this.window.mark;
    this.hedger.track(lead, path, issuedAt);
    this.fetchRows(group, path).then(
      (rows) => {
        // A read its second read overtook took a hung node's time: not a round trip.
        if (first.counted && !this.closed)
          this.window.answered(issuedAt, mark, performance.now(), path.path.name);
        this.ended(group, first, epoch);
        if (this.closed) return;
        // A previous epoch's read freed a request: this epoch may be waiting for one.
        if (epoch !== this.assembler.epoch) return this.notify();
        // A read its second read overtook was counted when released (see release()): counted
        // again, its completions could grow the window behind a stuck read.
        if (first.counted) for (let i = 0; i < rows.length; i++) this.window.completed();
        this.onRows(group, rows);
      },
      (err: unknown) => {
        this.ended(group, first, epoch);
        if (this.closed) return;
        if (epoch !== this.assembler.epoch) return this.notify();
        const left = group.filter((p) => !this.isTaken(p));
        if (left.length > 0) this.onError(left, attempt, path, err);
      },
    );
  }

  /**
   * A first read of `group`, issued in `epoch`, ended, answered or failed. A previous epoch's
   * read (stuck on a hung node until the driver's timeout) must not untrack this epoch's read
   * of the same position: that one would never be hedged.
   */
  private ended(group: number[], first: { counted: boolean }, epoch: number): void {
    const lead = group[0]!;
    if (first.counted) {
      this.inFlight -= group.length;
      this.queries--;
    } else {
      this.released--;
    }
    if (this.firstReads.get(lead) === first) this.firstReads.delete(lead);
    if (epoch !== this.assembler.epoch) return;
    this.hedger.settled(lead);
    if (this.groupsByLead.get(lead) === group) this.groupsByLead.delete(lead);
  }

  /**
   * A second read answered before the first (of `size` positions, led by `lead`): the first
   * stops counting against the window and the in-flight limit, and earns the ramp's credit as
   * if it had answered. Why: the first read of a sample on a hung node (alive to the driver,
   * answering nothing) stays in flight until the driver's request timeout (12 s by default);
   * counted, a third of the reads (a hung node of three at replication 2) filled the window
   * within seconds and the stream stalled for the rest of that timeout, hedging or not.
   * Released reads are bounded by the in-flight limit, so a hung node costs the driver at most
   * twice the usual requests.
   */
  private release(lead: number, size: number): void {
    const first = this.firstReads.get(lead);
    if (!first?.counted || this.released >= this.window.inFlightLimit) return;
    first.counted = false;
    this.inFlight -= size;
    this.queries--;
    this.released++;
    for (let i = 0; i < size; i++) this.window.completed();
  }

  /**
   * An extra read of a stuck read or group (tracked by its first position `lead`), decided by
   * the hedger: the members not resolved yet are read again, and the first answer wins. `done`
   * tells the hedger this read ended.
   */
  private hedge(lead: number, path: PathState, done: () => void): void {
    const group = (this.groupsByLead.get(lead) ?? [lead]).filter((p) => !this.isTaken(p));
    if (group.length === 0) {
      done();
      this.hedger.settled(lead);
      return;
    }
    const epoch = this.assembler.epoch;
    this.opts.metrics.dbHedgedReads.inc({ path: path.path.name });
    const size = this.groupsByLead.get(lead)?.length ?? 1;
    this.fetchRows(group, path, true).then(
      (rows) => {
        done();
        if (this.closed || epoch !== this.assembler.epoch) return;
        if (group.some((p) => !this.isTaken(p))) this.release(lead, size);
        this.onRows(group, rows);
        // Resolved: the first read may stay stuck for the driver's timeout, but no more
        // extra reads for it.
        this.hedger.settled(lead);
      },
      () => {
        done(); // the first read carries on, with its own retries (and further extra reads)
      },
    );
  }

  /** Takes the answers of a read or group (`rows[i]` is `positions[i]`'s), then refills. */
  private onRows(positions: readonly number[], rows: readonly RowRead[]): void {
    for (let i = 0; i < positions.length; i++) {
      const { id, row } = rows[i]!;
      this.onRow(positions[i]!, id, row);
    }
    this.pump();
    this.notify();
  }

  private onRow(position: number, id: Buffer, row: cassandra.types.Row | null): void {
    // A resolved position: the other read of a hedged pair came first; this one only freed a
    // place.
    if (!this.isTaken(position)) {
      const now = performance.now();
      if (row) {
        this.onSample(position, id, this.reader.toCached(row), now);
      } else {
        const source = this.catalog.sourceOf(this.plan.storedPosition(position));
        const keyspace = this.catalog.sources[source]!.keyspace;
        const lost = this.assembler.missingRow(position, id, keyspace, now);
        if (lost) this.failure ??= lost;
      }
    }
  }

  /** The sample at `position` arrived (read, or from the cache): transform it, or keep it. */
  private onSample(position: number, id: Buffer, sample: CachedSample, now: number): void {
    // A fresh object: the transform swaps its data, and a cached sample must stay as it is.
    const source = this.catalog.sourceOf(this.plan.storedPosition(position));
    const fetched: FetchedSample = { position, id, source, ...sample };
    const bytes = sampleBytes(fetched);
    this.arrivedBytes += bytes;
    this.arrivedCount++;
    this.hold(bytes);
    if (this.opts.transform) this.transformSample(fetched, this.opts.transform);
    else this.assembler.add(fetched, now);
  }

  /**
   * Transforms a sample before it joins a batch. An undecodable one is skipped and counted, or
   * ends the stream with DATA_LOSS, as the transform's bad-image policy says; a result that
   * comes back after the stream closed or its epoch ended is dropped.
   */
  private transformSample(sample: FetchedSample, transform: StreamTransformer): void {
    const epoch = this.assembler.epoch;
    const { position } = sample;
    this.transforming.add(position);
    const mixedPosition = this.opts.mixed ? this.plan.epochPosition(position) : undefined;
    const mask = transform.spec.masks ? (sample.labelBlob ?? undefined) : undefined;
    transform.run(sample.data, sample.id, epoch, mixedPosition, mask).then(
      ({ data, mask: transformed }) => {
        this.transforming.delete(position);
        if (this.closed || epoch !== this.assembler.epoch) return;
        // The sample is this engine's own: swap in the output rather than copy the object.
        const before = sampleBytes(sample);
        sample.data = data;
        // With masks, the label blob is the mask, transformed as its image was.
        if (transformed) sample.labelBlob = transformed;
        this.hold(sampleBytes(sample) - before);
        this.assembler.add(sample, performance.now());
        this.pump();
        this.notify();
      },
      (err: unknown) => {
        this.transforming.delete(position);
        if (this.closed || epoch !== this.assembler.epoch) return;
        this.hold(-sampleBytes(sample));
        if (err instanceof UndecodableImageError && transform.spec.badImage === 'skip') {
          this.assembler.undecodable(position, performance.now());
        } else {
          this.failure ??= err;
        }
        this.pump();
        this.notify();
      },
    );
  }

  /** A first read of `group` (its members not resolved yet) failed: retry it, or fail. */
  private onError(group: number[], attempt: number, path: PathState, err: unknown): void {
    const fatal = this.retries.afterFailure(err, attempt, path.path.name, () => {
      this.retryingPositions -= group.length;
      if (this.closed) return;
      // A hedge may have brought some members meanwhile: read only the rest.
      const left = group.filter((p) => !this.isTaken(p));
      if (left.length > 0) this.read(left, attempt + 1, path);
    });
    if (fatal === undefined) {
      this.retryingPositions += group.length;
      return;
    }
    this.failure ??= fatal;
    this.notify();
  }
}

/** Bytes a fetched sample holds: its data and its label blob. */
function sampleBytes(sample: FetchedSample): number {
  return sample.data.length + (sample.labelBlob?.length ?? 0);
}

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { type Database, type RootDatabase, open } from 'lmdb';

/** Layout of the store; another one found at open is cleared (it is a cache). */
const FORMAT = 1;
/**
 * Share of the bound the store's pages in use may take at first. LMDB does not reuse freed
 * pages perfectly (a value of several pages needs a free run that long), so its file grows
 * past the pages in use: measured up to twice as far with 30 kB samples. When the file still
 * nears the bound, the share is lowered for good (see {@link DiskTier.afterCommit}).
 */
const FIRST_TARGET_SHARE = 0.5;
/** The file's size, as a share of the bound, past which the target share is lowered. */
const HIGH_WATER_SHARE = 0.7;
/** What the target share is multiplied by each time the file passes the high-water mark. */
const TARGET_STEP = 0.8;
/** The target share never goes below this. */
const MIN_TARGET_SHARE = 0.1;
/** Victims looked at per step of an eviction. */
const EVICT_STEP = 64;
/** How long writes gather before their transaction. */
const FLUSH_DELAY_MS = 5;
/** Transactions of writes under way at most. */
const MAX_TRANSACTIONS = 4;
/** Bytes of writes not committed yet at most; more are dropped. */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
const STATE_KEY = Buffer.from('state');
const TARGET_KEY = Buffer.from('target');
const FORMAT_KEY = Buffer.from('format');

/** What a {@link DiskTier}'s background writes report. */
export interface DiskTierEvents {
  /** A transaction of writes committed, evicting `evicted` entries to stay in the bound. */
  onCommit(evicted: number): void;
  /** A transaction of writes failed (a full or failing disk); its writes are lost. */
  onError(err: unknown): void;
  /** A write was dropped: the disk did not keep up with the writes queued for it. */
  onDrop(): void;
  /** The store found at open did not open (`err`) and was made anew, empty. */
  onRemade?(err: unknown): void;
}

/**
 * The disk tier: one LMDB environment in a folder on local storage, shared by every loader
 * process of the host (LMDB's write lock is across processes), bounded in bytes. Entries leave
 * in the order they came (first in, first out): an epoch reads its split in a random order,
 * so recency says nothing about the next read, and insertion order needs no write per hit.
 * The byte count and the order live in the store itself, updated in the same transaction as
 * the entries, so every process sees and keeps one bound.
 */
export class DiskTier {
  /** Counted bytes the entries may take, kept by evicting (see {@link DiskTier.afterCommit}). */
  private budget: number;
  /** Pages in use per counted byte, as last measured (LMDB's page overhead and fill). */
  private inflation = 1;
  private readonly pageSize: number;
  private queue: { key: Buffer; value: Buffer }[] = [];
  private queuedBytes = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  /** Transactions of writes started and not ended yet. */
  private readonly committing = new Set<Promise<void>>();
  private closed = false;

  private constructor(
    private readonly env: RootDatabase<Buffer, Buffer>,
    private readonly entries: Database<Buffer, Buffer>,
    /** Insertion order: 8-byte sequence number → entry key and its counted bytes. */
    private readonly order: Database<Buffer, Buffer>,
    private readonly meta: Database<Buffer, Buffer>,
    /** The bound: the store's files never grow past it. */
    readonly maxBytes: number,
    private readonly events: DiskTierEvents,
  ) {
    this.pageSize = (env.getStats() as { pageSize: number }).pageSize;
    this.budget = Math.floor(maxBytes * FIRST_TARGET_SHARE);
  }

  /**
   * Opens (making it if needed) the store in `dir`. Throws when the folder cannot be made or
   * the store cannot be opened there; the caller names the setting.
   */
  static open(dir: string, maxBytes: number, events: DiskTierEvents): DiskTier {
    const path = join(dir, 'samples');
    // Commits are not flushed (noSync): a process that dies leaves a sound store (the kernel
    // holds its writes), a machine that stops may not. A store last opened before the
    // machine's last start is made anew rather than opened: a torn one could crash LMDB.
    const marker = join(path, 'boot-id');
    const boot = currentBootId();
    if (existsSync(join(path, 'data.mdb')) && readText(marker) !== boot) {
      rmSync(path, { recursive: true, force: true });
      events.onRemade?.(
        new Error('the machine has started since the store was last open: it may be torn'),
      );
    }
    mkdirSync(path, { recursive: true });
    writeFileSync(marker, boot);
    try {
      return DiskTier.openAt(path, maxBytes, events);
    } catch (err) {
      // A store that is there but does not open (a crash of the machine, another LMDB
      // layout) is a cache: it is made anew. A folder that cannot be written is the caller's.
      const code = (err as NodeJS.ErrnoException).code;
      const unwritable = code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
      if (unwritable || !existsSync(join(path, 'data.mdb'))) throw err;
      rmSync(path, { recursive: true, force: true });
      mkdirSync(path, { recursive: true });
      writeFileSync(marker, boot);
      const tier = DiskTier.openAt(path, maxBytes, events);
      events.onRemade?.(err);
      return tier;
    }
  }

  private static openAt(path: string, maxBytes: number, events: DiskTierEvents): DiskTier {
    const binary = { encoding: 'binary', keyEncoding: 'binary' } as const;
    const env = open<Buffer, Buffer>({
      path,
      noSubdir: false, // a folder holding data.mdb and lock.mdb
      ...binary,
      // The map starts at the bound; lmdb-js grows it past a full map by itself, so the bound
      // is the eviction's to keep (see afterCommit).
      mapSize: Math.max(1 << 20, Math.ceil(maxBytes / 65536) * 65536),
      maxDbs: 4,
      // A cache needs no flush to disk per commit (a flush per commit could not keep up with
      // a stream's reads): a store a crash of the machine left unreadable is made anew at
      // open, and a damaged entry is caught by its checksum.
      noSync: true,
      // Writes of one event turn go in one transaction, committed off the main thread.
      commitDelay: 5,
    });
    const entries = env.openDB<Buffer, Buffer>({ name: 'entries', ...binary });
    const order = env.openDB<Buffer, Buffer>({ name: 'order', ...binary });
    const meta = env.openDB<Buffer, Buffer>({ name: 'meta', ...binary });
    const tier = new DiskTier(env, entries, order, meta, maxBytes, events);
    tier.checkFormat();
    return tier;
  }

  /** The stored entry of `key` (a copy), or undefined. */
  get(key: Buffer): Buffer | undefined {
    return this.entries.getBinary(key) ?? undefined;
  }

  /**
   * Queues `value` to be stored under `key`. Writes of a few milliseconds go in one
   * transaction, which skips keys stored already (another process may have read the same
   * sample) and first evicts the oldest entries while the count would pass the budget. While
   * {@link MAX_QUEUED_BYTES} (or a quarter of the bound) wait, further writes are dropped: the
   * cache is best effort, the stream never waits for it.
   */
  write(key: Buffer, value: Buffer): void {
    const queueBound = Math.min(MAX_QUEUED_BYTES, this.maxBytes / 4);
    if (this.closed || this.counted(key.length, value.length) > this.budget / 4) return;
    if (this.queuedBytes + value.length > queueBound) {
      this.events.onDrop();
      return;
    }
    this.queue.push({ key, value });
    this.queuedBytes += value.length;
    this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS);
  }

  /** Resolves once every write queued so far is committed (or failed). */
  async settled(): Promise<void> {
    while (this.flushTimer !== undefined || this.committing.size > 0) {
      if (this.flushTimer !== undefined) {
        clearTimeout(this.flushTimer);
        this.flush();
      }
      await Promise.all(this.committing);
    }
  }

  /**
   * Starts transactions for what is queued, a 32nd of the bound each at most (so the file's
   * growth between two measurements stays small against the room above the high-water mark),
   * {@link MAX_TRANSACTIONS} at a time; the rest waits for one of them to end.
   */
  private flush(): void {
    this.flushTimer = undefined;
    const most = this.maxBytes / 32;
    while (this.queue.length > 0 && this.committing.size < MAX_TRANSACTIONS) {
      let take = 0;
      let bytes = 0;
      while (
        take < this.queue.length &&
        (take === 0 || bytes + this.queue[take]!.value.length <= most)
      ) {
        bytes += this.queue[take]!.value.length;
        take++;
      }
      const batch = this.queue.splice(0, take);
      const commit: Promise<void> = (
        this.env.transaction(() => this.store(batch)) as Promise<number>
      )
        .then(
          (evicted) => {
            // Nothing may escape: nobody awaits this promise but settled().
            try {
              this.afterCommit();
              this.events.onCommit(evicted);
            } catch (err) {
              this.failed(err);
            }
          },
          (err: unknown) => this.failed(err),
        )
        .finally(() => {
          this.committing.delete(commit);
          this.queuedBytes -= bytes;
          if (this.queue.length > 0 && this.flushTimer === undefined && !this.closed) this.flush();
        });
      this.committing.add(commit);
    }
  }

  /** Inside a write transaction: stores `batch`, evicting first; returns the entries evicted. */
  private store(batch: readonly { key: Buffer; value: Buffer }[]): number {
    const state = this.readState();
    let evicted = 0;
    for (const { key, value } of batch) {
      if (this.entries.doesExist(key)) continue;
      const size = this.counted(key.length, value.length);
      while (state.bytes + size > this.budget) {
        const victims = [...this.order.getRange({ limit: EVICT_STEP })];
        if (victims.length === 0) {
          state.bytes = 0; // nothing left to count: a count that drifted starts over
          break;
        }
        for (const { key: seq, value: ref } of victims) {
          if (state.bytes + size <= this.budget) break;
          this.entries.removeSync(ref.subarray(4));
          this.order.removeSync(seq);
          state.bytes -= ref.readUInt32BE(0);
          evicted++;
        }
      }
      this.entries.putSync(key, value);
      const ref = Buffer.allocUnsafe(4 + key.length);
      ref.writeUInt32BE(size, 0);
      key.copy(ref, 4);
      this.order.putSync(sequenceKey(state.next++), ref);
      state.bytes += size;
    }
    this.writeState(state);
    return evicted;
  }

  /** Drops the entry of `key` (a damaged one); its bytes stay counted until it would leave. */
  remove(key: Buffer): void {
    this.entries.remove(key).catch((err: unknown) => this.failed(err));
  }

  /**
   * Reports a failed write once its cause is known. lmdb-js rejects each write of a failed
   * commit with "Commit failed" and the cause in a promise of its own (`commitError`), which
   * it rejects later and which, unhandled, would end the process.
   */
  private failed(err: unknown): void {
    const cause = (err as { commitError?: unknown } | null)?.commitError;
    if (!(cause instanceof Promise)) {
      this.events.onError(err);
      return;
    }
    let reported = false;
    const report = (e: unknown): void => {
      if (reported) return;
      reported = true;
      clearTimeout(fallback);
      this.events.onError(e);
    };
    const fallback = setTimeout(() => report(err), 1000).unref();
    cause.then(
      () => report(err),
      (real: unknown) => report(real),
    );
  }

  /**
   * Bytes an entry is counted as: its key twice (entry and order), its value, and LMDB's
   * per-node headers. What pages that really takes is measured after each commit.
   */
  private counted(keyBytes: number, valueBytes: number): number {
    return 2 * keyBytes + valueBytes + 40;
  }

  /**
   * Measures the store after a commit and sets the budget of counted bytes from it: the pages
   * in use are kept to the target share of the bound, whatever LMDB's overhead per entry. The
   * file (its high-water mark, which never shrinks) is watched too: past
   * {@link HIGH_WATER_SHARE} of the bound, the target share is lowered for every process of
   * the host, so more pages are free and reused and the file stops short of the bound.
   */
  private afterCommit(): void {
    const stats = (db: Database<Buffer, Buffer>): number => {
      const s = db.getStats() as {
        treeBranchPageCount: number;
        treeLeafPageCount: number;
        overflowPages: number;
      };
      return s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;
    };
    const usedBytes = (stats(this.entries) + stats(this.order)) * this.pageSize;
    const counted = this.readState().bytes;
    if (counted > this.maxBytes / 100) this.inflation = Math.max(1, usedBytes / counted);
    let target = this.readTarget();
    const fileBytes =
      ((this.env.getStats() as { lastPageNumber: number }).lastPageNumber + 1) * this.pageSize;
    if (fileBytes > this.maxBytes * HIGH_WATER_SHARE && target > MIN_TARGET_SHARE) {
      target = Math.max(MIN_TARGET_SHARE, target * TARGET_STEP);
      const raw = Buffer.allocUnsafe(8);
      raw.writeDoubleBE(target, 0);
      this.meta.put(TARGET_KEY, raw).catch((err: unknown) => this.failed(err));
    }
    this.budget = Math.floor((this.maxBytes * target) / this.inflation);
  }

  /** The share of the bound the pages in use are kept to (lowered as the file grows). */
  private readTarget(): number {
    const raw = this.meta.getBinary(TARGET_KEY);
    return raw?.length === 8 ? raw.readDoubleBE(0) : FIRST_TARGET_SHARE;
  }

  /** Bytes of the store's file: its high-water mark, what the bound is kept on. */
  get fileBytes(): number {
    return ((this.env.getStats() as { lastPageNumber: number }).lastPageNumber + 1) * this.pageSize;
  }

  /** Bytes counted against the bound now, by every process of the host. */
  get bytes(): number {
    return this.readState().bytes;
  }

  /** Entries stored now. */
  get entryCount(): number {
    return (this.entries.getStats() as { entryCount: number }).entryCount;
  }

  /** Commits what is queued, then closes the store; later writes are dropped. */
  async close(): Promise<void> {
    await this.settled();
    this.closed = true;
    await this.env.close();
  }

  private readState(): { bytes: number; next: number } {
    const raw = this.meta.getBinary(STATE_KEY);
    if (!raw || raw.length !== 16) return { bytes: 0, next: 0 };
    return { bytes: raw.readDoubleBE(0), next: raw.readDoubleBE(8) };
  }

  private writeState(state: { bytes: number; next: number }): void {
    const raw = Buffer.allocUnsafe(16);
    raw.writeDoubleBE(Math.max(0, state.bytes), 0);
    raw.writeDoubleBE(state.next, 8);
    this.meta.putSync(STATE_KEY, raw);
  }

  /** Clears a store of another layout (or none yet) and stamps this one. */
  private checkFormat(): void {
    const stamp = this.meta.getBinary(FORMAT_KEY);
    if (stamp?.length === 4 && stamp.readUInt32BE(0) === FORMAT) return;
    this.env.transactionSync(() => {
      this.entries.clearSync();
      this.order.clearSync();
      this.meta.clearSync();
      const raw = Buffer.alloc(4);
      raw.writeUInt32BE(FORMAT, 0);
      this.meta.putSync(FORMAT_KEY, raw);
    });
  }
}

/**
 * What tells this start of the machine from others: Linux's boot id, else the boot time from
 * the uptime (to the minute).
 */
function currentBootId(): string {
  const id = readText('/proc/sys/kernel/random/boot_id');
  if (id) return id.trim();
  return `booted ${Math.round((Date.now() / 1000 - os.uptime()) / 60)}`;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function sequenceKey(n: number): Buffer {
  const key = Buffer.allocUnsafe(8);
  // Big-endian: byte order is number order, so the range starts at the oldest entry.
  key.writeBigUInt64BE(BigInt(n), 0);
  return key;
}

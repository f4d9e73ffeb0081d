import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { type Database, type RootDatabase, open } from 'lmdb';
import { ADMIT_WHEN_FULL } from './admission.js';

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
/** Victims looked at per step of an eviction (a run of neighbours in insertion order). */
const EVICT_STEP = 64;
/** How long writes gather before their transaction. */
const FLUSH_DELAY_MS = 5;
/** Entries per transaction at most (a few milliseconds of the event loop). */
const MAX_TRANSACTION_ENTRIES = 1000;
/** Bytes of values per transaction at most. */
const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;
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
 * process of the host (LMDB's write lock is across processes), bounded in bytes. Once full, a
 * new sample is kept with the chance {@link ADMIT_WHEN_FULL}, in place of entries from a
 * random place of the insertion order (see `admission.ts`; no write per hit).
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
  /** Damaged entries to drop in the next transaction. */
  private removals: Buffer[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly env: RootDatabase<Buffer, Buffer>,
    private readonly entries: Database<Buffer, Buffer>,
    /** Every entry by insertion: 8-byte sequence number → entry key and its counted bytes. */
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
    // The host's processes (a cluster's workers start together) decide one at a time whether
    // the store is to be made anew: two deciding at once removed a store the other had open.
    return withFolderLock(dir, () => {
      // Commits are not flushed (noSync): a process that dies leaves a sound store (the
      // kernel holds its writes), a machine that stops may not. A store last opened before the
      // machine's last start is made anew rather than opened: a torn one could crash LMDB.
      const marker = join(path, 'boot-id');
      const boot = currentBootId();
      const stamped = readText(marker);
      if (existsSync(join(path, 'data.mdb')) && stamped !== undefined && stamped !== boot) {
        rmSync(path, { recursive: true, force: true });
        events.onRemade?.(
          new Error('the machine has started since the store was last open: it may be torn'),
        );
      }
      mkdirSync(path, { recursive: true });
      if (stamped !== boot) writeAtomically(marker, boot);
      try {
        return DiskTier.openAt(path, maxBytes, events);
      } catch (err) {
        // A store that LMDB refuses (its own errors are negative numbers: a torn or foreign
        // file) is a cache: it is made anew. Anything else (a folder that cannot be written,
        // a full or failing disk) is the caller's, and the store is left as it is.
        const code = (err as { code?: unknown }).code;
        if (typeof code !== 'number' || code >= 0) throw err;
        rmSync(path, { recursive: true, force: true });
        mkdirSync(path, { recursive: true });
        writeAtomically(marker, boot);
        const tier = DiskTier.openAt(path, maxBytes, events);
        events.onRemade?.(err);
        return tier;
      }
    });
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
   * sample) and makes room by evicting first. While {@link MAX_QUEUED_BYTES} (or a quarter of
   * the bound) wait, further writes are dropped: the cache is best effort, the stream never
   * waits for it.
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
    this.schedule(FLUSH_DELAY_MS);
  }

  /** Drops the entry of `key` (a damaged one) in the next transaction. */
  remove(key: Buffer): void {
    if (this.closed) return;
    this.removals.push(key);
    this.schedule(FLUSH_DELAY_MS);
  }

  /** Bytes of writes queued and not committed yet. */
  get backlogBytes(): number {
    return this.queuedBytes;
  }

  /** Commits every write queued so far (or fails, as {@link DiskTierEvents.onError} says). */
  async settled(): Promise<void> {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    while (!this.closed && (this.queue.length > 0 || this.removals.length > 0)) this.flush();
    return Promise.resolve();
  }

  private schedule(delayMs: number): void {
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
      // One transaction per turn of the event loop: streams go on between them.
      if (this.queue.length > 0 || this.removals.length > 0) this.schedule(0);
    }, delayMs);
  }

  /**
   * Commits one transaction of what is queued: at most {@link MAX_TRANSACTION_ENTRIES} entries
   * and a 32nd of the bound (at most {@link MAX_TRANSACTION_BYTES}), so one holds the event
   * loop for a few milliseconds and the file's growth between two measurements stays small
   * against the room above the high-water mark. Synchronous on purpose: lmdb-js's
   * asynchronous transactions leave a rejected promise nobody can handle when a commit fails
   * (kriszyp/lmdb-js#368), which would end the process on a full disk.
   */
  private flush(): void {
    const most = Math.min(MAX_TRANSACTION_BYTES, this.maxBytes / 32);
    let take = 0;
    let bytes = 0;
    while (
      take < this.queue.length &&
      take < MAX_TRANSACTION_ENTRIES &&
      (take === 0 || bytes + this.queue[take]!.value.length <= most)
    ) {
      bytes += this.queue[take]!.value.length;
      take++;
    }
    const batch = this.queue.splice(0, take);
    const removals = this.removals;
    this.removals = [];
    this.queuedBytes -= bytes;
    let evicted = 0;
    try {
      this.env.transactionSync(() => {
        for (const key of removals) this.entries.removeSync(key);
        evicted = this.store(batch);
      });
      this.afterCommit();
    } catch (err) {
      // A full or failing disk: nothing more is written; the owner turns the tier off.
      this.queue = [];
      this.queuedBytes = 0;
      this.closed = true;
      this.events.onError(err);
      return;
    }
    this.events.onCommit(evicted);
  }

  /** Inside a write transaction: stores `batch`, evicting first; returns the entries evicted. */
  private store(batch: readonly { key: Buffer; value: Buffer }[]): number {
    const state = this.readState();
    let evicted = 0;
    for (const { key, value } of batch) {
      if (this.entries.doesExist(key)) continue;
      const size = this.counted(key.length, value.length);
      if (state.bytes + size > this.budget && Math.random() >= ADMIT_WHEN_FULL) continue;
      while (state.bytes + size > this.budget) {
        // Victims from a random place of the insertion order, as many as the room needs
        // (see admission.ts for why not the oldest), a run of neighbours at a time, whose
        // pages LMDB frees together.
        const from = sequenceKey(Math.floor(Math.random() * state.next));
        let victims = [...this.order.getRange({ start: from, limit: EVICT_STEP })];
        if (victims.length === 0) victims = [...this.order.getRange({ limit: EVICT_STEP })];
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
    const target = this.readTarget();
    let share = target.share;
    const fileBytes = this.fileBytes;
    // The file never shrinks: lowered once for each growth of a transaction's worth past the
    // high-water mark, not at every commit while the file stays there.
    if (
      fileBytes > this.maxBytes * HIGH_WATER_SHARE &&
      fileBytes > target.fileAtLowering + this.maxBytes / 32 &&
      share > MIN_TARGET_SHARE
    ) {
      share = Math.max(MIN_TARGET_SHARE, share * TARGET_STEP);
      const raw = Buffer.allocUnsafe(16);
      raw.writeDoubleBE(share, 0);
      raw.writeDoubleBE(fileBytes, 8);
      this.env.transactionSync(() => this.meta.putSync(TARGET_KEY, raw));
    }
    this.budget = Math.floor((this.maxBytes * share) / this.inflation);
  }

  /**
   * The share of the bound the pages in use are kept to (lowered as the file grows), and the
   * file's size when it was last lowered.
   */
  private readTarget(): { share: number; fileAtLowering: number } {
    const raw = this.meta.getBinary(TARGET_KEY);
    return raw?.length === 16
      ? { share: raw.readDoubleBE(0), fileAtLowering: raw.readDoubleBE(8) }
      : { share: FIRST_TARGET_SHARE, fileAtLowering: 0 };
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

  /** Commits what is queued (unless the disk failed), then closes the store. */
  async close(): Promise<void> {
    if (!this.closed) await this.settled();
    this.closed = true;
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
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

/** Writes `text` to `file` so that a reader sees the old text or the new, never a part. */
function writeAtomically(file: string, text: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, file);
}

/** How long {@link withFolderLock} waits for another process before giving up. */
const LOCK_WAIT_MS = 10_000;

/**
 * Runs `work` holding `<dir>/open.lock` (made exclusively, holding the pid). A lock whose
 * process is gone (killed while opening) is taken over. The wait blocks: it happens once, at
 * start, for the few milliseconds another process takes to open the store.
 */
function withFolderLock<T>(dir: string, work: () => T): T {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, 'open.lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readText(lock));
      if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
        rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`${lock} has been held by process ${holder} for over 10 s`, { cause: err });
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    return work();
  } finally {
    rmSync(lock, { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
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

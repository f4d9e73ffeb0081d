import { createHash, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { mixedSequence } from '../../src/core/mixing/mixedSequence.js';
import { Offloader } from '../../src/core/offload/Offloader.js';
import { epochRemainder } from '../../src/core/sampling/epochRemainder.js';
import { createPermutationCache } from '../../src/core/sampling/createPermutationCache.js';
import { createRemainderCache } from '../../src/core/sampling/createRemainderCache.js';
import { permutation } from '../../src/core/sampling/permutation.js';
import { sortPackedIds } from '../../src/core/splits/sortPackedIds.js';

/** A permutation large enough to stall the event loop for seconds when made inline. */
const LARGE = 10_000_000;

/** Measures the longest gap between ticks of a 5 ms interval while `work` runs. */
async function longestGap<T>(
  work: () => Promise<T>,
): Promise<{ value: T; gap: number; ticks: number; ms: number }> {
  let last = performance.now();
  let gap = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
    ticks++;
  }, 5);
  const started = performance.now();
  try {
    const value = await work();
    const now = performance.now();
    return { value, gap: Math.max(gap, now - last), ticks, ms: now - started };
  } finally {
    clearInterval(timer);
  }
}

const offloaders: Offloader[] = [];
/** An offloader closed after the file's tests. */
function offloader(options: ConstructorParameters<typeof Offloader>[0]): Offloader {
  const o = new Offloader(options);
  offloaders.push(o);
  return o;
}
afterAll(async () => {
  await Promise.all(offloaders.map((o) => o.close()));
});

const same = (a: Uint32Array, b: Uint32Array): boolean =>
  a.length === b.length &&
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );

describe('Offloader', () => {
  it('keeps the event loop turning while a permutation of 10^7 is made', async () => {
    const pool = offloader({ maxThreads: 1 });
    const cache = createPermutationCache(1 << 30, 60_000, undefined, pool);
    // The thread started first: from the sources it compiles its TypeScript as it starts,
    // which the build's thread does not.
    await cache.lookup('warm', { n: 200_000, seed: 1n, epoch: 0 });
    const offloaded = await longestGap(() =>
      cache.lookup('large', { n: LARGE, seed: 11n, epoch: 3 }),
    );
    expect(pool.figures.offloaded).toBe(2);
    // What it replaces: the same permutation made inline holds the loop for all its time.
    const inline = await longestGap(async () => permutation(LARGE, 11n, 3));
    expect(inline.gap).toBeGreaterThan(inline.ms * 0.9);
    // The timer kept firing while the thread worked: 5 ms asked, under 25 ms apart on average
    // (none at all inline)...
    expect(offloaded.ms / offloaded.ticks).toBeLessThan(25);
    // ...and never stalled for long: its longest gap was 10-70 ms on this 2-core machine, and
    // up to a few hundred ms with the machine loaded 5 times over (the inline permutation then
    // takes 2-4 s); a fifth of the inline stall tells the two apart either way.
    expect(offloaded.gap).toBeLessThan(inline.gap / 5);
    expect(same(offloaded.value, inline.value)).toBe(true);
  });

  it('stops a permutation once every waiter is cancelled, and caches nothing', async () => {
    // Idle threads live a minute: a thread that exits sooner was terminated.
    const pool = offloader({ maxThreads: 1, idleMs: 60_000 });
    const cache = createPermutationCache(1 << 30, 60_000, undefined, pool);
    const args = { n: LARGE, seed: 5n, epoch: 0 };
    const first = new AbortController();
    const second = new AbortController();
    const a = cache.lookup('k', args, { signal: first.signal });
    const b = cache.lookup('k', args, { signal: second.signal });
    await vi.waitFor(() => expect(pool.running).toBe(1));
    expect(pool.figures.offloaded).toBe(1); // one computation for both waiters

    const reason = new Error('rank 0 went away');
    let t0 = performance.now();
    first.abort(reason);
    await expect(a).rejects.toBe(reason);
    // At once, not when the permutation is done (1.5-4 s); the bound only allows for a loaded
    // machine pausing the process.
    expect(performance.now() - t0).toBeLessThan(500);
    // The other rank still waits: the computation goes on.
    expect(cache.computing).toBe(1);
    expect(pool.running).toBe(1);
    expect(pool.figures.cancelled).toBe(0);

    t0 = performance.now();
    second.abort();
    await expect(b).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - t0).toBeLessThan(500);
    expect(cache.computing).toBe(0);
    expect(pool.running).toBe(0);
    expect(pool.figures.cancelled).toBe(1);
    // The thread is terminated, not left to finish: it exits long before its idle time.
    await vi.waitFor(() => expect(pool.threads).toBe(0), { timeout: 10_000 });
    expect(cache.has('k')).toBe(false);

    // Asked again, it is made afresh (on a new thread) and equal to the inline one.
    const again = await cache.lookup('k', args);
    expect(pool.figures.threadsStarted).toBe(2);
    expect(cache.has('k')).toBe(true);
    expect(same(again, permutation(LARGE, 5n, 0))).toBe(true);
  });

  it('lets a task waiting for a thread leave the line when cancelled', async () => {
    const pool = offloader({ maxThreads: 1, inlineBelow: 0 });
    const busy = new AbortController();
    const running = pool.run('permutation', { n: LARGE, seed: 1n, epoch: 0 }, busy.signal);
    const waiting = new AbortController();
    const queued = pool.run('permutation', { n: 10, seed: 1n, epoch: 0 }, waiting.signal);
    waiting.abort();
    await expect(queued).rejects.toMatchObject({ name: 'AbortError' });
    busy.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    // The slot is free again: a new task runs.
    expect(
      same(await pool.run('permutation', { n: 10, seed: 1n, epoch: 0 }), permutation(10, 1n, 0)),
    ).toBe(true);
  });

  it('gives on a thread exactly what the inline functions give', async () => {
    const pool = offloader({ maxThreads: 2, inlineBelow: 0 });
    for (const [n, seed, epoch] of [
      [0, 1n, 0],
      [1, 1n, 0],
      [2, 3n, 1],
      [1000, 7n, 2],
      [100_003, 2n ** 63n + 5n, 4_000_000_000],
      [1_000_000, 0n, 9],
    ] as const) {
      const made = await pool.run('permutation', { n, seed, epoch });
      expect(same(made, permutation(n, seed, epoch)), `n=${n} seed=${seed} epoch=${epoch}`).toBe(
        true,
      );
    }
    const spec = {
      parts: [
        { size: 1000, quota: 300, offset: 0, seed: 3n },
        { size: 50, quota: 700, offset: 1000, seed: 4n },
      ],
      quotas: [300, 700],
      shuffle: 'uniform' as const,
    };
    for (const epoch of [0, 1, 5]) {
      expect(
        same(
          await pool.run('mixedSequence', { spec, seed: 9n, epoch }),
          mixedSequence(spec, 9n, epoch),
        ),
      ).toBe(true);
    }
    const layers = [
      {
        worldSize: 3,
        progress: [0, 1, 2].map((r) => ({ low: 100 * r, deliveredAbove: [r + 200] })),
      },
      {
        worldSize: 2,
        progress: [
          { low: 50, deliveredAbove: [] },
          { low: 7, deliveredAbove: [9] },
        ],
      },
    ];
    const rules = { shardRule: 'pad' as const, batchSize: 8, dropLast: false };
    expect(
      same(
        await pool.run('epochRemainder', { n: 5000, layers, rules }),
        epochRemainder(5000, layers, rules),
      ),
    ).toBe(true);
    // Split ids: pieces large and small (large ones are moved to the thread, small ones copied).
    const pieces = [randomBytes(16 * 1000), randomBytes(16 * 3), randomBytes(16 * 5000)];
    const joined = Buffer.concat(pieces);
    const sorted = await pool.run('splitIds', {
      pieces: pieces.map((p) => Buffer.from(p)),
      sort: true,
    });
    expect(Buffer.isBuffer(sorted.ids)).toBe(true);
    expect(sorted.count).toBe(6003);
    expect(sorted.ids.equals(sortPackedIds(joined, 6003))).toBe(true);
    expect(sorted.contentHash).toBe(createHash('sha256').update(sorted.ids).digest('hex'));
    const kept = await pool.run('splitIds', {
      pieces: pieces.map((p) => Buffer.from(p)),
      sort: false,
    });
    expect(kept.ids.equals(joined)).toBe(true);
    expect(kept.contentHash).toBe(createHash('sha256').update(joined).digest('hex'));
    expect(pool.figures.inline).toBe(0);
  });

  it('passes a task error to the caller and keeps the thread', async () => {
    const pool = offloader({ maxThreads: 1, inlineBelow: 0 });
    await expect(pool.run('permutation', { n: 1.5, seed: 1n, epoch: 0 })).rejects.toThrow(
      RangeError,
    );
    expect(
      same(await pool.run('permutation', { n: 3, seed: 1n, epoch: 0 }), permutation(3, 1n, 0)),
    ).toBe(true);
    expect(pool.figures.threadsStarted).toBe(1);
  });

  it('computes a remainder off the event loop through its cache', async () => {
    const pool = offloader({ maxThreads: 1, inlineBelow: 0 });
    const cache = createRemainderCache(1 << 20, 60_000, undefined, pool);
    const args = {
      n: 1000,
      layers: [
        {
          worldSize: 2,
          progress: [
            { low: 10, deliveredAbove: [] },
            { low: 3, deliveredAbove: [] },
          ],
        },
      ],
      rules: { shardRule: 'uneven' as const, batchSize: 4, dropLast: false },
    };
    const r = await cache.lookup('r', args);
    expect(pool.figures.offloaded).toBe(1);
    expect(same(r, epochRemainder(args.n, args.layers, args.rules))).toBe(true);
    expect(await cache.lookup('r', args)).toBe(r);
  });
});

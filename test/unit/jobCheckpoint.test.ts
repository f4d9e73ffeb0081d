import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type CheckpointContext,
  type JobCheckpoint,
  resolveJobCheckpoint,
} from '../../src/core/resume/jobCheckpoint.js';
import {
  encodeResumeToken,
  jobFingerprint,
  NO_BASE,
  requestFingerprint,
} from '../../src/core/resume/resumeToken.js';
import { epochRemainder } from '../../src/core/sampling/epochRemainder.js';
import { epochShard } from '../../src/core/sampling/epochShard.js';
import type { ShardRule } from '../../src/core/sampling/shard.js';

const key = randomBytes(32);
const fields = {
  dataset: 'd',
  split: 'all',
  splitContentHash: 'h',
  batchSize: 4,
  seed: 7n,
  firstEpoch: 0,
  epochs: 3,
  shardRule: 'uneven',
  shuffle: 'none',
  dropLast: false,
};
const job = jobFingerprint(fields);

function context(n: number, shardRule: ShardRule = 'uneven'): CheckpointContext {
  return {
    key,
    job,
    legacyFor: (owner) => requestFingerprint({ ...fields, ...owner }),
    n,
    rules: { shardRule, batchSize: fields.batchSize, dropLast: false },
  };
}

/** A rank's positions of the epoch (its shard over `remainder`, or over the whole split). */
function positionsOf(
  n: number,
  rank: number,
  w: number,
  rule: ShardRule,
  remainder?: Uint32Array,
): number[] {
  const s = epochShard(
    {
      n,
      seed: 7n,
      epoch: 1,
      rank,
      worldSize: w,
      shardRule: rule,
      shuffle: 'none',
      batchSize: 4,
      dropLast: false,
    },
    undefined,
    remainder,
  );
  return Array.from({ length: s.length }, (_, j) => s.storedPosition(j));
}

/** A token saying rank `rank` of `w` delivered its positions `delivered` (own indices) in epoch 1. */
function token(rank: number, w: number, delivered: number[], base: Buffer = NO_BASE): Buffer {
  const set = new Set(delivered);
  let low = 0;
  while (set.has(low)) low++;
  const above = [...set].filter((p) => p > low).sort((a, b) => a - b);
  return encodeResumeToken(
    key,
    { job, rank, worldSize: w, base },
    {
      epoch: 1,
      low,
      deliveredAbove: above,
      nextBatchIndex: Math.ceil(set.size / 4),
    },
  );
}

/** Own positions 0..k-1 plus a few scattered above, as an out-of-order stream leaves them. */
function progress(k: number, extra: number[] = []): number[] {
  return [...Array.from({ length: k }, (_, j) => j), ...extra.map((e) => k + e)];
}

describe('job checkpoints', () => {
  it('re-shards exactly the undelivered positions, through two changes of world size', () => {
    const n = 103;
    // World 4 delivered different amounts, out of order.
    const w1 = [progress(5, [2, 3]), progress(7), progress(3, [1]), progress(6, [4])];
    const seen: number[] = [];
    w1.forEach((own, r) => {
      const pos = positionsOf(n, r, 4, 'uneven');
      for (const j of own) seen.push(pos[j]!);
    });
    const cp1: JobCheckpoint = {
      worldSize: 4,
      ranks: w1.map((own, r) => ({ rank: r, epoch: 0, resumeToken: token(r, 4, own) })).reverse(),
    };
    const r1 = resolveJobCheckpoint(cp1, context(n));
    expect(r1.epoch).toBe(1);
    const rem1 = epochRemainder(n, r1.layers, {
      shardRule: 'uneven',
      batchSize: 4,
      dropLast: false,
    });
    const expected1 = Array.from({ length: n }, (_, i) => i).filter((i) => !seen.includes(i));
    expect([...rem1]).toEqual(expected1);

    // World 3 splits the remainder exactly; it delivers some of it.
    const w2 = [progress(4, [1]), progress(9), progress(2)];
    w2.forEach((own, r) => {
      const pos = positionsOf(n, r, 3, 'uneven', rem1);
      for (const j of own) seen.push(pos[j]!);
    });
    const all3 = [0, 1, 2].flatMap((r) => positionsOf(n, r, 3, 'uneven', rem1));
    expect(all3.sort((a, b) => a - b)).toEqual(expected1);

    const cp2: JobCheckpoint = {
      worldSize: 3,
      ranks: w2.map((own, r) => ({ rank: r, epoch: 1, resumeToken: token(r, 3, own, r1.digest) })),
      base: cp1,
    };
    const r2 = resolveJobCheckpoint(cp2, context(n));
    expect(r2.layers.map((l) => l.worldSize)).toEqual([4, 3]);
    const rem2 = epochRemainder(n, r2.layers, {
      shardRule: 'uneven',
      batchSize: 4,
      dropLast: false,
    });
    const all5 = [0, 1, 2, 3, 4].flatMap((r) => positionsOf(n, r, 5, 'uneven', rem2));
    // Every sample of the epoch exactly once over the three worlds.
    expect([...seen, ...all5].sort((a, b) => a - b)).toEqual(
      Array.from({ length: n }, (_, i) => i),
    );
    expect(r2.digest.equals(r1.digest)).toBe(false);
  });

  it('gives every rank the same number of positions under pad after a re-shard', () => {
    const n = 50;
    const cp: JobCheckpoint = {
      worldSize: 4,
      ranks: [0, 1, 2, 3].map((r) => ({
        rank: r,
        epoch: 1,
        resumeToken: token(r, 4, progress(r + 2)),
      })),
    };
    const ctx = context(n, 'pad');
    const r = resolveJobCheckpoint(cp, ctx);
    const rem = epochRemainder(n, r.layers, ctx.rules);
    const lengths = [0, 1, 2, 3, 4, 5].map((k) => positionsOf(n, k, 6, 'pad', rem).length);
    expect(new Set(lengths).size).toBe(1);
    expect(lengths[0]! * 6).toBeGreaterThanOrEqual(rem.length);
    const union = new Set([0, 1, 2, 3, 4, 5].flatMap((k) => positionsOf(n, k, 6, 'pad', rem)));
    expect(union.size).toBe(rem.length);
  });

  it('counts a rank that finished the epoch as done, and a job all done as the next epoch', () => {
    const n = 20;
    const next = (r: number): Buffer =>
      encodeResumeToken(
        key,
        { job, rank: r, worldSize: 2 },
        { epoch: 2, low: 0, deliveredAbove: [], nextBatchIndex: 0 },
      );
    const half = resolveJobCheckpoint(
      {
        worldSize: 2,
        ranks: [
          { rank: 0, epoch: 0, resumeToken: next(0) },
          { rank: 1, epoch: 0, resumeToken: token(1, 2, progress(3)) },
        ],
      },
      context(n),
    );
    expect(half.epoch).toBe(1);
    const rem = epochRemainder(n, half.layers, context(n).rules);
    expect([...rem]).toEqual([7, 9, 11, 13, 15, 17, 19]);
    const done = resolveJobCheckpoint(
      { worldSize: 2, ranks: [0, 1].map((r) => ({ rank: r, epoch: 0, resumeToken: next(r) })) },
      context(n),
    );
    expect(done).toMatchObject({ epoch: 2, layers: [] });
    const fresh = resolveJobCheckpoint(
      {
        worldSize: 2,
        ranks: [0, 1].map((r) => ({ rank: r, epoch: 1, resumeToken: Buffer.alloc(0) })),
      },
      context(n),
    );
    expect(fresh).toMatchObject({ epoch: 1, layers: [] });
  });

  it('refuses a checkpoint missing a rank, with a rank twice, of another job, or altered', () => {
    const n = 40;
    const ranks = [0, 1, 2, 3].map((r) => ({
      rank: r,
      epoch: 1,
      resumeToken: token(r, 4, progress(2)),
    }));
    const resolve = (cp: JobCheckpoint): unknown => resolveJobCheckpoint(cp, context(n));
    expect(() => resolve({ worldSize: 4, ranks: ranks.slice(0, 3) })).toThrow(
      /lacks rank 3 of its world size 4/,
    );
    expect(() => resolve({ worldSize: 4, ranks: [...ranks.slice(0, 3), ranks[1]!] })).toThrow(
      /lists rank 1 twice/,
    );
    expect(() => resolve({ worldSize: 4, ranks: [...ranks, { ...ranks[0]!, rank: 4 }] })).toThrow(
      /rank 4, outside its world size 4/,
    );
    expect(() =>
      resolve({
        worldSize: 4,
        ranks: [ranks[0]!, { ...ranks[2]!, rank: 1 }, ranks[1]!, ranks[3]!].map((e, i) => ({
          ...e,
          rank: i,
        })),
      }),
    ).toThrow(/resume token of rank 1 was issued to rank 2 of world size 4/);
    const otherSeed = encodeResumeToken(
      key,
      { job: jobFingerprint({ ...fields, seed: 8n }), rank: 2, worldSize: 4 },
      { epoch: 1, low: 1, deliveredAbove: [], nextBatchIndex: 0 },
    );
    expect(() =>
      resolve({
        worldSize: 4,
        ranks: ranks.map((e) => (e.rank === 2 ? { ...e, resumeToken: otherSeed } : e)),
      }),
    ).toThrow(/resume token of rank 2 belongs to another request/);
    const altered = Buffer.from(ranks[3]!.resumeToken);
    altered[altered.length - 40]! ^= 4;
    expect(() =>
      resolve({
        worldSize: 4,
        ranks: ranks.map((e) => (e.rank === 3 ? { ...e, resumeToken: altered } : e)),
      }),
    ).toThrow(/not authentic/);
    const ahead = encodeResumeToken(
      key,
      { job, rank: 0, worldSize: 4 },
      { epoch: 2, low: 3, deliveredAbove: [], nextBatchIndex: 1 },
    );
    expect(() =>
      resolve({
        worldSize: 4,
        ranks: ranks.map((e) => (e.rank === 0 ? { ...e, resumeToken: ahead } : e)),
      }),
    ).toThrow(/different epochs: rank 0 delivered part of epoch 2 while rank 1 is in epoch 1/);
    const foreignBase = ranks.map((e) => ({
      ...e,
      resumeToken: token(e.rank, 4, progress(2), randomBytes(16)),
    }));
    expect(() => resolve({ worldSize: 4, ranks: foreignBase })).toThrow(
      /re-sharded from another job checkpoint/,
    );
  });

  it('accepts tokens signed with a previous resume key, and refuses unlisted keys', () => {
    const n = 40;
    const ranks = [0, 1, 2, 3].map((r) => ({
      rank: r,
      epoch: 1,
      resumeToken: token(r, 4, progress(2)),
    }));
    const cp: JobCheckpoint = { worldSize: 4, ranks };
    const before = resolveJobCheckpoint(cp, context(n));
    const rotated = { ...context(n), key: [randomBytes(32), key] as const };
    expect(resolveJobCheckpoint(cp, rotated)).toEqual(before);
    const dropped = { ...context(n), key: [randomBytes(32), randomBytes(32)] as const };
    expect(() => resolveJobCheckpoint(cp, dropped)).toThrow(/not authentic/);
  });

  it('stays as small as the tokens it was made of, whatever the split size', () => {
    const ranks = [0, 1, 2, 3].map((r) => ({
      rank: r,
      epoch: 1,
      resumeToken: token(r, 4, progress(1000, [3, 9])),
    }));
    const small = resolveJobCheckpoint({ worldSize: 4, ranks }, context(10_000));
    const big = resolveJobCheckpoint({ worldSize: 4, ranks }, context(10_000_000));
    expect(JSON.stringify(big.layers).length).toBe(JSON.stringify(small.layers).length);
    expect(JSON.stringify(big.layers).length).toBeLessThan(400);
  });
});

describe('job checkpoint entries without a token', () => {
  it('mean nothing delivered, and cannot claim a rank done with the epoch', () => {
    const t = token(0, 2, progress(3));
    expect(() =>
      resolveJobCheckpoint(
        {
          worldSize: 2,
          ranks: [
            { rank: 0, epoch: 1, resumeToken: t },
            { rank: 1, epoch: 2, resumeToken: Buffer.alloc(0) },
          ],
        },
        context(30),
      ),
    ).toThrow(/rank 1 has no resume token but is said to be in epoch 2/);
    const r = resolveJobCheckpoint(
      {
        worldSize: 2,
        ranks: [
          { rank: 0, epoch: 1, resumeToken: t },
          { rank: 1, epoch: 1, resumeToken: Buffer.alloc(0) },
        ],
      },
      context(30),
    );
    expect([...epochRemainder(30, r.layers, context(30).rules)]).toHaveLength(27);
  });
});

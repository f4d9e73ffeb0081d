import { encodeJobCheckpoint, decodeJobCheckpoint } from '../proto/jobCheckpointCodec.js';
import { uint32 } from './toProtoRequest.js';

/** One rank's part of a job checkpoint. */
export interface RankResumeState {
  /** The rank, in [0, worldSize). */
  rank: number;
  /** The `resumeToken` of the last batch the rank consumed; absent when it got none yet. */
  resumeToken?: Uint8Array;
  /** The epoch a rank without a token is in (ignored when there is a token). */
  epoch?: number;
}

/** What {@link mergeResumeTokens} merges. */
export interface MergeResumeTokensOptions {
  /** The world size the ranks streamed at. */
  worldSize: number;
  /** Every rank of the world, once, in any order. */
  ranks: readonly RankResumeState[];
  /**
   * The `jobCheckpoint` these ranks' streams were started with, if they were: it is kept
   * while any of them is still in the epoch it re-sharded, and dropped after.
   */
  base?: Uint8Array;
}

/**
 * Merges the resume tokens of every rank of a job into one job checkpoint: pass it as
 * `jobCheckpoint` to streams of the same job at any world size, and together they deliver
 * exactly the samples of the epoch the old ranks had not, then later epochs in full. The
 * server validates it (each token's HMAC, the same job, every rank once, one epoch) and
 * answers INVALID_ARGUMENT naming what is wrong; this function refuses what it can see
 * itself (a rank missing, twice or out of range) with a RangeError. The checkpoint is about
 * as large as the tokens, whatever the dataset's size.
 */
export function mergeResumeTokens(options: MergeResumeTokensOptions): Buffer {
  const worldSize = uint32('worldSize', options.worldSize);
  if (worldSize < 1) throw new RangeError('worldSize must be at least 1');
  const seen = new Set<number>();
  for (const r of options.ranks) {
    if (!Number.isInteger(r.rank) || r.rank < 0 || r.rank >= worldSize) {
      throw new RangeError(`rank ${r.rank} is outside world size ${worldSize}`);
    }
    if (seen.has(r.rank)) throw new RangeError(`rank ${r.rank} is given twice`);
    seen.add(r.rank);
  }
  const missing = [...Array(worldSize).keys()].filter((r) => !seen.has(r));
  if (missing.length > 0) {
    throw new RangeError(
      `ranks ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', ...' : ''} of world ` +
        `size ${worldSize} are missing: a job checkpoint needs every rank`,
    );
  }
  const ranks = options.ranks.map((r) => ({
    rank: r.rank,
    epoch: uint32('epoch', r.epoch),
    resumeToken: r.resumeToken ? Buffer.from(r.resumeToken) : Buffer.alloc(0),
  }));
  const keepBase =
    options.base !== undefined &&
    options.base.length > 0 &&
    ranks.some((r) => r.resumeToken.length === 0 || hasBase(r.resumeToken));
  return encodeJobCheckpoint({
    worldSize,
    ranks,
    ...(keepBase ? { base: decodeJobCheckpoint(options.base!) } : {}),
  });
}

/**
 * Whether a token continues an epoch re-sharded from a job checkpoint: version 2 tokens hold
 * that checkpoint's digest (zero when none) after version, job fingerprint, rank and world size.
 */
function hasBase(token: Buffer): boolean {
  if (token[0] !== 2 || token.length < 41) return false;
  return token.subarray(25, 41).some((b) => b !== 0);
}

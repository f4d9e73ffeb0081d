import { createHash } from 'node:crypto';
import type { SettingNames } from '../config/settingNames.js';
import { invalidArgument } from '../errors/LoaderError.js';
import {
  type DeliveredPositions,
  type EpochLayer,
  type LayerRules,
  epochRemainder,
} from '../sampling/epochRemainder.js';
import { trimmedShard } from '../sampling/trimmedShard.js';
import {
  DIGEST_BYTES,
  NO_BASE,
  type ResumeKeyring,
  type TokenOwner,
  checkTokenBinding,
  readResumeToken,
} from './resumeToken.js';

/**
 * Where every rank of a job stands: the resume tokens of all ranks of one world (proto
 * `JobCheckpoint`), and the checkpoint they were started from when their epoch was itself
 * re-sharded. Built by the SDKs from tokens they hold (mergeResumeTokens, merge_states); the
 * server trusts nothing in it but the tokens' HMACs.
 */
export interface JobCheckpoint {
  worldSize: number;
  ranks: readonly JobCheckpointRank[];
  base?: JobCheckpoint | undefined;
}

/** One rank's entry: its last resume token, or none when it was given no batch yet. */
export interface JobCheckpointRank {
  rank: number;
  /** The epoch a rank without a token is in (a token says its own). */
  epoch: number;
  /** Empty: nothing delivered in `epoch` yet. */
  resumeToken: Buffer;
}

/**
 * A validated job checkpoint: the epoch to continue in and what each world delivered of it
 * (no layers: nothing was). `digest` names it in the tokens of streams re-sharded from it.
 */
export interface ResolvedCheckpoint {
  epoch: number;
  layers: EpochLayer[];
  digest: Buffer;
}

/** What a job checkpoint is checked against: the request's job, and the split's size. */
export interface CheckpointContext {
  /** The resume keys: a token signed with any of them is authentic. */
  key: ResumeKeyring;
  /** jobFingerprint of the request. */
  job: Buffer;
  /** requestFingerprint of the request at another rank and world size (version 1 tokens). */
  legacyFor: (owner: TokenOwner) => Buffer;
  /** Samples in the split. */
  n: number;
  rules: LayerRules;
  /** How messages name the resume key's setting. */
  settingNames?: SettingNames;
}

/** Largest world a checkpoint may describe: bounds the work a request can ask for. */
export const MAX_CHECKPOINT_WORLD = 65_536;
/** Most nested changes of world size within one epoch. */
export const MAX_CHECKPOINT_DEPTH = 32;

/**
 * Validates a job checkpoint and works out what was delivered of its epoch: every rank of its
 * world exactly once, each token authentic and issued for this job to the rank it is listed
 * as, every rank in the same epoch (a rank that finished it and delivered nothing of the next
 * counts as done), and the tokens of a re-sharded epoch started from the checkpoint given as
 * `base`. Anything else is INVALID_ARGUMENT naming the problem.
 *
 * The result's size is bounded by the tokens it was made of, whatever the dataset's size.
 */
export function resolveJobCheckpoint(
  cp: JobCheckpoint,
  ctx: CheckpointContext,
  depth = 0,
): ResolvedCheckpoint {
  if (depth >= MAX_CHECKPOINT_DEPTH) {
    throw invalidArgument(
      `job checkpoint is nested more than ${MAX_CHECKPOINT_DEPTH} deep (one level per change of world size within an epoch)`,
    );
  }
  const where = depth === 0 ? 'job checkpoint' : `job checkpoint's base (level ${depth})`;
  const w = cp.worldSize;
  if (!Number.isInteger(w) || w < 1 || w > MAX_CHECKPOINT_WORLD) {
    throw invalidArgument(`${where} has world_size ${w}; it must be 1 to ${MAX_CHECKPOINT_WORLD}`);
  }
  const byRank = new Array<JobCheckpointRank | undefined>(w);
  for (const entry of cp.ranks) {
    if (!Number.isInteger(entry.rank) || entry.rank < 0 || entry.rank >= w) {
      throw invalidArgument(`${where} lists rank ${entry.rank}, outside its world size ${w}`);
    }
    if (byRank[entry.rank]) throw invalidArgument(`${where} lists rank ${entry.rank} twice`);
    byRank[entry.rank] = entry;
  }
  const missing = [...byRank.keys()].filter((r) => !byRank[r]);
  if (missing.length > 0) {
    throw invalidArgument(
      `${where} lacks ${missing.length === 1 ? 'rank' : 'ranks'} ${listNumbers(missing)} of ` +
        `its world size ${w}: merge the state of every rank (and every DataLoader worker) of the job`,
    );
  }
  const base = cp.base ? resolveJobCheckpoint(cp.base, ctx, depth + 1) : undefined;

  const entries = (byRank as JobCheckpointRank[]).map((entry) => {
    if (entry.resumeToken.length === 0) {
      return { epoch: entry.epoch, progress: { low: 0, deliveredAbove: [] }, base: undefined };
    }
    const what = `${where}'s resume token of rank ${entry.rank}`;
    const read = readResumeToken(ctx.key, entry.resumeToken, ctx.settingNames);
    const owner = { rank: entry.rank, worldSize: w };
    checkTokenBinding(read, { job: ctx.job, legacy: ctx.legacyFor(owner), ...owner }, what);
    const { epoch, low, deliveredAbove } = read.state;
    return { epoch, progress: { low, deliveredAbove }, base: read.base, what };
  });
  const epoch = Math.min(...entries.map((e) => e.epoch));
  const started = (e: (typeof entries)[number]): boolean =>
    e.progress.low > 0 || e.progress.deliveredAbove.length > 0;
  entries.forEach((e, rank) => {
    if (!e.what && e.epoch !== epoch) {
      // Only a token may say a rank is done with an epoch: a bare claim could lose samples.
      throw invalidArgument(
        `${where}'s rank ${rank} has no resume token but is said to be in epoch ${e.epoch}, ` +
          `after epoch ${epoch} of other ranks: a rank done with an epoch must give the token ` +
          'of its last batch',
      );
    }
    if (e.epoch > epoch + 1 || (e.epoch === epoch + 1 && started(e))) {
      const behind = entries.findIndex((x) => x.epoch === epoch);
      throw invalidArgument(
        `ranks of the ${where} are in different epochs: rank ${rank} delivered part of epoch ` +
          `${e.epoch} while rank ${behind} is in epoch ${epoch}; take a job checkpoint where ` +
          'every rank is in the same epoch (at a training step, which keeps ranks in step)',
      );
    }
  });
  if (base && base.epoch > epoch) {
    throw invalidArgument(
      `${where}'s ranks are in epoch ${epoch}, before epoch ${base.epoch} of the checkpoint ` +
        'they were started from: its ranks and its base come from different runs',
    );
  }
  const before = base && base.epoch === epoch ? base.layers : [];
  const baseDigest = before.length > 0 ? base!.digest : NO_BASE;
  const remaining = before.length > 0 ? epochRemainder(ctx.n, before, ctx.rules).length : ctx.n;
  const progress: DeliveredPositions[] = entries.map((e, rank) => {
    const s = trimmedShard(
      remaining,
      rank,
      w,
      ctx.rules.shardRule,
      ctx.rules.batchSize,
      ctx.rules.dropLast,
    );
    if (e.epoch === epoch + 1) return { low: s.length, deliveredAbove: [] }; // done with `epoch`
    if (e.base && !e.base.equals(baseDigest)) {
      throw invalidArgument(
        `${e.what} continues an epoch re-sharded from another job checkpoint than this ` +
          "one's base: pass, as base, the job_checkpoint that rank was started from",
      );
    }
    const last = e.progress.deliveredAbove.at(-1) ?? e.progress.low - 1;
    if (e.progress.low > s.length || last >= s.length) {
      throw invalidArgument(
        `${e.what ?? `${where}'s rank ${rank}`} does not fit its shard of epoch ${epoch} ` +
          `(${s.length} positions)`,
      );
    }
    return e.progress;
  });
  const layers = progress.some((p) => p.low > 0 || p.deliveredAbove.length > 0)
    ? [...before, { worldSize: w, progress }]
    : [...before];
  return { epoch, layers, digest: checkpointDigest(ctx.job, epoch, layers) };
}

/**
 * Names a resolved checkpoint by its content (not its encoding, which SDKs may produce in
 * other byte orders): the job, the epoch and every layer's delivered positions.
 */
function checkpointDigest(job: Buffer, epoch: number, layers: readonly EpochLayer[]): Buffer {
  if (layers.length === 0) return NO_BASE;
  const h = createHash('sha256').update('checkpoint/v1').update(job);
  h.update(JSON.stringify([epoch, layers.map((l) => [l.worldSize, l.progress])]));
  return h.digest().subarray(0, DIGEST_BYTES);
}

function listNumbers(ns: number[]): string {
  const shown = ns.slice(0, 10).join(', ');
  return ns.length > 10 ? `${shown} and ${ns.length - 10} more` : shown;
}

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { type SettingNames, settingName } from '../config/settingNames.js';
import { invalidArgument } from '../errors/LoaderError.js';
import type { ResumeKeys } from './parseResumeKeys.js';

/** Where a stream continues: which epoch, and which of its positions were already delivered. */
export interface ResumeState {
  /** Absolute epoch to continue in. */
  epoch: number;
  /** Lowest position of the rank's epoch not yet delivered; every position below it was. */
  low: number;
  /** Delivered positions at or above `low`, sorted ascending (all below `low + span`). */
  deliveredAbove: number[];
  /** Batches already emitted in this epoch: the index of the next batch. */
  nextBatchIndex: number;
}

/**
 * The request fields that decide which samples a job sees, in which epochs, and the split's
 * contents: every rank of one job shares them. Rank and world size are left out (a job
 * checkpoint moves between world sizes), and so are the ordering mode and prefetch, so a
 * stream may resume with another ordering or window.
 */
export interface JobFields {
  dataset: string;
  split: string;
  splitContentHash: string;
  batchSize: number;
  seed: bigint;
  firstEpoch: number;
  epochs: number;
  shardRule: string;
  shuffle: string;
  dropLast: boolean;
  /**
   * The stream's transform: a resumed epoch must give the same pixels (and one shape) as the
   * part already delivered. Left out when absent, so tokens of streams without one keep the
   * fingerprint they had before transforms existed.
   */
  transform?: unknown;
}

/** Which rank of which world a token was issued to. */
export interface TokenOwner {
  rank: number;
  worldSize: number;
}

/** What a token is checked against: the request's job and rank. */
export interface TokenBinding extends TokenOwner {
  /** {@link jobFingerprint} of the request. */
  job: Buffer;
  /** {@link requestFingerprint} of the request (checks tokens issued before version 2). */
  legacy: Buffer;
}

/** A token read and authenticated, not yet checked against a request. */
export interface ReadToken {
  state: ResumeState;
  /** Version 2 on: the issuing request's job fingerprint, rank and world size. */
  job?: Buffer;
  owner?: TokenOwner;
  /** Version 1: the issuing request's fingerprint (job, rank and world size together). */
  legacy?: Buffer;
  /**
   * Digest of the job checkpoint the stream's epoch was re-sharded from ({@link NO_BASE} when
   * the epoch is an ordinary one): the token only makes sense together with that checkpoint.
   */
  base: Buffer;
}

const FINGERPRINT_BYTES = 16;
const MAC_BYTES = 32;
/** Version 1: version, fingerprint, epoch, low, next batch index, bitmap length. */
const V1_HEADER = 1 + FINGERPRINT_BYTES + 4 * 4;
/** Version 2: version, job fingerprint, rank, world size, base digest, then as version 1. */
const V2_HEADER = 1 + FINGERPRINT_BYTES + 4 + 4 + FINGERPRINT_BYTES + 4 * 4;

/** The base digest of a token whose epoch was not re-sharded from a job checkpoint. */
export const NO_BASE: Buffer = Buffer.alloc(FINGERPRINT_BYTES);

/** Length of fingerprints and base digests in tokens. */
export const DIGEST_BYTES = FINGERPRINT_BYTES;

/**
 * What tokens are signed and checked with: one key, or {@link ResumeKeys} (the first signs,
 * any verifies, so a key can be rotated without invalidating tokens in flight).
 */
export type ResumeKeyring = Buffer | ResumeKeys;

function signingKey(keys: ResumeKeyring): Buffer {
  return Buffer.isBuffer(keys) ? keys : keys[0];
}

/**
 * Whether `mac` is the HMAC of `body` under any of the keys. Every key is tried even after a
 * match, so the time taken does not tell which key (or whether an old one) signed a token.
 */
function signedByAny(keys: ResumeKeyring, body: Buffer, mac: Buffer): boolean {
  let ok = false;
  for (const key of Buffer.isBuffer(keys) ? [keys] : keys) {
    if (timingSafeEqual(mac, createHmac('sha256', key).update(body).digest())) ok = true;
  }
  return ok;
}

/** A digest of the {@link JobFields}: a token or job checkpoint only serves the same job. */
export function jobFingerprint(fields: JobFields): Buffer {
  return digest(['job/v2', ...jobFieldList(fields)]);
}

/**
 * The version 1 fingerprint: the job fields together with rank and world size. Tokens issued
 * before version 2 carry it instead of their rank in clear.
 */
export function requestFingerprint(fields: JobFields & TokenOwner): Buffer {
  const list = jobFieldList(fields);
  // Version 1's field order: rank and world size came between epochs and shard rule.
  list.splice(7, 0, fields.rank, fields.worldSize);
  return digest(list);
}

function jobFieldList(f: JobFields): unknown[] {
  return [
    f.dataset,
    f.split,
    f.splitContentHash,
    f.batchSize,
    f.seed.toString(),
    f.firstEpoch,
    f.epochs,
    f.shardRule,
    f.shuffle,
    f.dropLast,
    ...(f.transform === undefined ? [] : [f.transform]),
  ];
}

function digest(list: unknown[]): Buffer {
  return createHash('sha256').update(JSON.stringify(list)).digest().subarray(0, FINGERPRINT_BYTES);
}

/**
 * Encodes a resume token (version 2): version, job fingerprint, rank, world size, base digest,
 * epoch, low, next batch index, a bitmap of the delivered positions above `low` (bit i:
 * position low + i), and an HMAC-SHA256 of all of it under the replicas' shared key. Rank and
 * world size are in clear so the tokens of a job can be merged into a job checkpoint. Its size
 * depends on the spread of delivered positions above `low`, which the fetch engine bounds,
 * never on the dataset's size. Signed with the first of several keys.
 */
export function encodeResumeToken(
  key: ResumeKeyring,
  binding: Pick<TokenBinding, 'job' | 'rank' | 'worldSize'> & { base?: Buffer },
  state: ResumeState,
): Buffer {
  const last = state.deliveredAbove.at(-1);
  const bitmapBytes = last === undefined ? 0 : ((last - state.low) >> 3) + 1;
  const body = Buffer.alloc(V2_HEADER + bitmapBytes);
  body.writeUInt8(2, 0);
  binding.job.copy(body, 1, 0, FINGERPRINT_BYTES);
  let o = 1 + FINGERPRINT_BYTES;
  o = body.writeUInt32BE(binding.rank, o);
  o = body.writeUInt32BE(binding.worldSize, o);
  (binding.base ?? NO_BASE).copy(body, o, 0, FINGERPRINT_BYTES);
  o += FINGERPRINT_BYTES;
  o = body.writeUInt32BE(state.epoch, o);
  o = body.writeUInt32BE(state.low, o);
  o = body.writeUInt32BE(state.nextBatchIndex, o);
  o = body.writeUInt32BE(bitmapBytes, o);
  for (const p of state.deliveredAbove) {
    const bit = p - state.low;
    body[o + (bit >> 3)]! |= 1 << (bit & 7);
  }
  const mac = createHmac('sha256', signingKey(key)).update(body).digest();
  return Buffer.concat([body, mac]);
}

/**
 * Checks a token's HMAC and format and returns what it says, without checking it against a
 * request (see {@link decodeResumeToken} for that). A token signed with any of several keys
 * is authentic. Anything else is INVALID_ARGUMENT; the key's setting is named as `names` does.
 */
export function readResumeToken(
  key: ResumeKeyring,
  token: Buffer,
  names?: SettingNames,
): ReadToken {
  if (token.length < V1_HEADER + MAC_BYTES) {
    throw invalidArgument('resume token is truncated; pass the resume_token of a batch unchanged');
  }
  const body = token.subarray(0, token.length - MAC_BYTES);
  const mac = token.subarray(token.length - MAC_BYTES);
  if (!signedByAny(key, body, mac)) {
    throw invalidArgument(
      'resume token is not authentic: it was altered, or issued by a loader with another ' +
        `resume key (every replica must share ${settingName(names, 'resumeKey')}, and keep a ` +
        'rotated key after the new one while its tokens are in use)',
    );
  }
  const version = body.readUInt8(0);
  if (version !== 1 && version !== 2) {
    throw invalidArgument(`resume token version ${version} is not supported`);
  }
  const head = body.subarray(1, 1 + FINGERPRINT_BYTES);
  let o = 1 + FINGERPRINT_BYTES;
  const read: Omit<ReadToken, 'state'> = { base: NO_BASE };
  if (version === 1) {
    read.legacy = head;
  } else {
    if (body.length < V2_HEADER) throw invalidArgument('resume token is malformed');
    read.job = head;
    read.owner = { rank: body.readUInt32BE(o), worldSize: body.readUInt32BE(o + 4) };
    o += 8;
    read.base = body.subarray(o, o + FINGERPRINT_BYTES);
    o += FINGERPRINT_BYTES;
  }
  const epoch = body.readUInt32BE(o);
  const low = body.readUInt32BE((o += 4));
  const nextBatchIndex = body.readUInt32BE((o += 4));
  const bitmapBytes = body.readUInt32BE((o += 4));
  o += 4;
  if (body.length !== o + bitmapBytes) throw invalidArgument('resume token is malformed');
  const deliveredAbove: number[] = [];
  for (let i = 0; i < bitmapBytes; i++) {
    const byte = body[o + i]!;
    if (byte === 0) continue;
    for (let b = 0; b < 8; b++) if (byte & (1 << b)) deliveredAbove.push(low + i * 8 + b);
  }
  return { ...read, state: { epoch, low, deliveredAbove, nextBatchIndex } };
}

/**
 * Checks that an authentic token was issued for this job, to this rank of this world size;
 * anything else is INVALID_ARGUMENT with a message saying what differs and what to do.
 * `what` names the token in messages.
 */
export function checkTokenBinding(
  read: ReadToken,
  binding: TokenBinding,
  what = 'resume token',
): void {
  const fields =
    'dataset and split (or sources, with their weights and repeat, and samples_per_epoch), ' +
    'batch_size, seed, first_epoch, epochs, shard_rule, shuffle, drop_last and transform of ' +
    "the original one (and the splits' contents must not have changed)";
  if (!read.job || !read.owner) {
    // Version 1 cannot tell its job from its rank: one fingerprint covers both.
    if (!read.legacy!.equals(binding.legacy)) {
      throw invalidArgument(
        `${what} belongs to another request: a resumed request must repeat rank, world_size, ` +
          fields,
      );
    }
    return;
  }
  if (!read.job.equals(binding.job)) {
    throw invalidArgument(
      `${what} belongs to another request: a resumed request must repeat ${fields}`,
    );
  }
  const { rank, worldSize } = read.owner;
  if (rank !== binding.rank || worldSize !== binding.worldSize) {
    throw invalidArgument(
      `${what} was issued to rank ${rank} of world size ${worldSize}, not rank ` +
        `${binding.rank} of world size ${binding.worldSize}; to continue at another world ` +
        'size, merge the tokens of every rank into a job checkpoint (mergeResumeTokens, ' +
        'merge_states) and pass it as job_checkpoint',
    );
  }
}

/**
 * Reads a token and checks it against the request (see {@link readResumeToken} and
 * {@link checkTokenBinding}).
 */
export function decodeResumeToken(
  key: ResumeKeyring,
  binding: TokenBinding,
  token: Buffer,
  names?: SettingNames,
): ReadToken {
  const read = readResumeToken(key, token, names);
  checkTokenBinding(read, binding);
  return read;
}

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { invalidArgument } from '../errors/LoaderError.js';

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

const VERSION = 1;
const FINGERPRINT_BYTES = 16;
const MAC_BYTES = 32;
const HEADER_BYTES = 1 + FINGERPRINT_BYTES + 4 * 4;

/**
 * A digest of the request fields that decide which samples a rank sees, in which epochs, and
 * of the split's contents: a token is only valid for a request with the same digest. The
 * ordering mode and prefetch are left out on purpose, so a stream may resume with another
 * ordering or window.
 */
export function requestFingerprint(fields: {
  dataset: string;
  split: string;
  splitContentHash: string;
  batchSize: number;
  seed: bigint;
  firstEpoch: number;
  epochs: number;
  rank: number;
  worldSize: number;
  shardRule: string;
  shuffle: string;
  dropLast: boolean;
  /**
   * The stream's transform: a resumed epoch must give the same pixels (and one shape) as the
   * part already delivered. Left out when absent, so tokens of streams without one keep the
   * fingerprint they had before transforms existed.
   */
  transform?: unknown;
}): Buffer {
  const canonical = JSON.stringify([
    fields.dataset,
    fields.split,
    fields.splitContentHash,
    fields.batchSize,
    fields.seed.toString(),
    fields.firstEpoch,
    fields.epochs,
    fields.rank,
    fields.worldSize,
    fields.shardRule,
    fields.shuffle,
    fields.dropLast,
    ...(fields.transform === undefined ? [] : [fields.transform]),
  ]);
  return createHash('sha256').update(canonical).digest().subarray(0, FINGERPRINT_BYTES);
}

/**
 * Encodes a resume token: version, fingerprint, epoch, low, next batch index, a bitmap of the
 * delivered positions above `low` (bit i: position low + i), and an HMAC-SHA256 of all of it
 * under the replicas' shared key. Its size depends on the spread of delivered positions above
 * `low`, which the fetch engine bounds, never on the dataset's size.
 */
export function encodeResumeToken(key: Buffer, fingerprint: Buffer, state: ResumeState): Buffer {
  const last = state.deliveredAbove.at(-1);
  const bitmapBytes = last === undefined ? 0 : ((last - state.low) >> 3) + 1;
  const body = Buffer.alloc(HEADER_BYTES + bitmapBytes);
  body.writeUInt8(VERSION, 0);
  fingerprint.copy(body, 1, 0, FINGERPRINT_BYTES);
  let o = 1 + FINGERPRINT_BYTES;
  o = body.writeUInt32BE(state.epoch, o);
  o = body.writeUInt32BE(state.low, o);
  o = body.writeUInt32BE(state.nextBatchIndex, o);
  o = body.writeUInt32BE(bitmapBytes, o);
  for (const p of state.deliveredAbove) {
    const bit = p - state.low;
    body[o + (bit >> 3)]! |= 1 << (bit & 7);
  }
  const mac = createHmac('sha256', key).update(body).digest();
  return Buffer.concat([body, mac]);
}

/**
 * Checks a token's HMAC and that it was issued for a request with this fingerprint, and
 * returns its state. Anything else is INVALID_ARGUMENT with a message saying what to do.
 */
export function decodeResumeToken(key: Buffer, fingerprint: Buffer, token: Buffer): ResumeState {
  if (token.length < HEADER_BYTES + MAC_BYTES) {
    throw invalidArgument('resume token is truncated; pass the resume_token of a batch unchanged');
  }
  const body = token.subarray(0, token.length - MAC_BYTES);
  const mac = token.subarray(token.length - MAC_BYTES);
  const want = createHmac('sha256', key).update(body).digest();
  if (!timingSafeEqual(mac, want)) {
    throw invalidArgument(
      'resume token is not authentic: it was altered, or issued by a loader with another ' +
        'resume key (every replica must share SCYLLA_LOADER_RESUME_KEY)',
    );
  }
  if (body.readUInt8(0) !== VERSION) {
    throw invalidArgument(`resume token version ${body.readUInt8(0)} is not supported`);
  }
  if (!body.subarray(1, 1 + FINGERPRINT_BYTES).equals(fingerprint.subarray(0, FINGERPRINT_BYTES))) {
    throw invalidArgument(
      'resume token belongs to another request: a resumed request must repeat dataset, split, ' +
        'batch_size, seed, first_epoch, epochs, rank, world_size, shard_rule, shuffle and ' +
        "drop_last of the original one (and the split's contents must not have changed)",
    );
  }
  let o = 1 + FINGERPRINT_BYTES;
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
  return { epoch, low, deliveredAbove, nextBatchIndex };
}

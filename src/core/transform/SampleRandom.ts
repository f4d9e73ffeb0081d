import { createHash } from 'node:crypto';

/**
 * The random draws of one sample's transform: uniform numbers that are a pure function of
 * (seed, epoch, sample id), so a resumed, repeated or re-sharded epoch, on any loader process,
 * gives the same crop and flip to the same sample, and ranks never coordinate. Each block of
 * eight 32-bit words is SHA-256 of the parts and a block counter; a sample needs a handful of
 * words (a flip, and at most 41 for a random-resized crop), so hashing is cheaper than seeding
 * a cipher, and it costs microseconds next to a decode's milliseconds. @internal
 */
export class SampleRandom {
  private readonly prefix: Buffer;
  private block = 0;
  private words = new Uint32Array(0);
  private next = 0;

  /**
   * @param position - A mixed stream's position of the sample in its epoch: a sample that
   *   comes more than once in one epoch (a repeated source) gets new draws each time, the same
   *   ones whenever that position is delivered (resumed, re-sharded). Absent for a single
   *   source, whose draws stay those of (seed, epoch, id).
   */
  constructor(seed: bigint, epoch: number, id: Buffer, position?: number) {
    const head = Buffer.alloc(8 + 4 + 4 + (position === undefined ? 0 : 4));
    head.writeBigUInt64LE(BigInt.asUintN(64, seed), 0);
    head.writeUInt32LE(epoch >>> 0, 8);
    // Domain: not the permutation's stream, and versioned (tfm2: with a mixed position).
    head.write(position === undefined ? 'tfm1' : 'tfm2', 12, 'latin1');
    if (position !== undefined) head.writeUInt32LE(position >>> 0, 16);
    this.prefix = Buffer.concat([head, id]);
  }

  /** The next uniform 32-bit word. */
  nextUint32(): number {
    if (this.next === this.words.length) {
      const counter = Buffer.alloc(4);
      counter.writeUInt32LE(this.block++, 0);
      const digest = createHash('sha256').update(this.prefix).update(counter).digest();
      this.words = new Uint32Array(digest.buffer, digest.byteOffset, 8);
      this.next = 0;
    }
    return this.words[this.next++]!;
  }

  /** A uniform number in [0, 1) with 53 random bits. */
  uniform(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** A uniform number in [a, b). */
  between(a: number, b: number): number {
    return a + (b - a) * this.uniform();
  }

  /** A uniform integer in [0, n] (inclusive), n >= 0. */
  integerTo(n: number): number {
    return Math.min(n, Math.floor(this.uniform() * (n + 1)));
  }
}

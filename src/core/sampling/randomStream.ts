import { createCipheriv, createHash } from 'node:crypto';

/**
 * A deterministic stream of uniform 32-bit words: the ChaCha20 keystream under a key derived
 * from the given parts. Counter-based, so the same parts give the same words on every
 * machine and Node version, and independent parts give independent streams. @internal
 */
export class RandomStream {
  private readonly cipher;
  private words = new Uint32Array(0);
  private next = 0;
  private static readonly ZEROS = Buffer.alloc(64 * 1024);

  constructor(...parts: Array<string | number | bigint>) {
    const key = createHash('sha256').update(parts.map(String).join('\u0000')).digest();
    this.cipher = createCipheriv('chacha20', key, Buffer.alloc(16));
  }

  /** The next uniform 32-bit word. */
  nextUint32(): number {
    if (this.next === this.words.length) {
      const bytes = this.cipher.update(RandomStream.ZEROS);
      this.words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
      this.next = 0;
    }
    return this.words[this.next++]!;
  }

  /**
   * A uniform integer in [0, bound), exactly: draw words masked to the smallest power of two
   * covering `bound` and reject those at or above it (fewer than two draws on average; no
   * modulo bias, and no floating-point product that could round). `bound` is in [1, 2^32].
   */
  below(bound: number): number {
    if (bound <= 1) return 0;
    const bits = 32 - Math.clz32(bound - 1);
    const mask = bits === 32 ? 0xffffffff : 2 ** bits - 1;
    for (;;) {
      const x = (this.nextUint32() & mask) >>> 0;
      if (x < bound) return x;
    }
  }
}

import { ADMIT_WHEN_FULL } from './admission.js';
import { type CachedSample, memoryFootprint } from './CachedSample.js';

/**
 * The memory tier of one loader process: samples by cache key, bounded by `maxBytes` (counted
 * by {@link memoryFootprint}). Once full, a new sample is kept with the chance
 * {@link ADMIT_WHEN_FULL}, in place of a random entry: not least recently used, which under
 * epochs that each read the split in a new random order keeps what the epoch will not ask
 * again (see `admission.ts`). `onEvict` hears of every entry pushed out by the bound.
 */
export class MemoryTier {
  private readonly entries = new Map<string, { sample: CachedSample; slot: number }>();
  /** The keys, in no order: an entry's `slot` is its index, for a random pick and removal. */
  private readonly keys: string[] = [];
  private held = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onEvict: () => void,
    private readonly random: () => number = Math.random,
  ) {}

  get(key: string): CachedSample | undefined {
    return this.entries.get(key)?.sample;
  }

  /**
   * Keeps `sample`, copied into buffers of its own (the driver's buffers are views into whole
   * response frames, which a kept view would keep alive beyond the bound), or as it is when
   * `owned`: its buffers are views into one buffer of about its size that nothing else keeps
   * (a disk entry). A sample larger than
   * the whole tier is not kept; one kept already is left as it is (samples are immutable under
   * their key); once the tier is full, most are not kept (see {@link ADMIT_WHEN_FULL}).
   */
  set(key: string, sample: CachedSample, owned = false): void {
    const size = memoryFootprint(sample);
    if (size > this.maxBytes || this.entries.has(key)) return;
    if (this.held + size > this.maxBytes && this.random() >= ADMIT_WHEN_FULL) return;
    while (this.held + size > this.maxBytes) this.evictOne();
    this.entries.set(key, {
      sample: owned
        ? sample
        : {
            label: sample.label,
            labelBlob: sample.labelBlob ? copyOf(sample.labelBlob) : null,
            data: copyOf(sample.data),
          },
      slot: this.keys.length,
    });
    this.keys.push(key);
    this.held += size;
  }

  /** Bytes held, as counted against the bound. */
  get bytes(): number {
    return this.held;
  }

  get entryCount(): number {
    return this.entries.size;
  }

  private evictOne(): void {
    const slot = Math.floor(this.random() * this.keys.length);
    const key = this.keys[slot]!;
    const last = this.keys.pop()!;
    if (slot < this.keys.length) {
      this.keys[slot] = last;
      this.entries.get(last)!.slot = slot;
    }
    this.held -= memoryFootprint(this.entries.get(key)!.sample);
    this.entries.delete(key);
    this.onEvict();
  }
}

function copyOf(b: Buffer): Buffer {
  // allocUnsafeSlow: not a slice of the shared pool, which would keep 8 KiB per small sample.
  const out = Buffer.allocUnsafeSlow(b.length);
  b.copy(out);
  return out;
}

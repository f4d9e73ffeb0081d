import { LRUCache } from 'lru-cache';
import { type CachedSample, memoryFootprint } from './CachedSample.js';

/**
 * The memory tier of one loader process: samples by cache key, least recently used out first
 * when over `maxBytes` (counted by {@link memoryFootprint}). `onEvict` hears of every entry
 * pushed out by the bound.
 */
export class MemoryTier {
  private readonly lru: LRUCache<string, CachedSample>;

  constructor(maxBytes: number, onEvict: () => void) {
    this.lru = new LRUCache<string, CachedSample>({
      maxSize: maxBytes,
      sizeCalculation: memoryFootprint,
      dispose: (_value, _key, reason) => {
        if (reason === 'evict') onEvict();
      },
    });
  }

  get(key: string): CachedSample | undefined {
    return this.lru.get(key);
  }

  /**
   * Keeps `sample`, copied into buffers of its own: the driver's buffers are views into whole
   * response frames, which a kept view would keep alive beyond the bound.
   */
  set(key: string, sample: CachedSample): void {
    if (memoryFootprint(sample) > this.lru.maxSize) return;
    this.lru.set(key, {
      label: sample.label,
      labelBlob: sample.labelBlob ? copyOf(sample.labelBlob) : null,
      data: copyOf(sample.data),
    });
  }

  /** Bytes held, as counted against the bound. */
  get bytes(): number {
    return this.lru.calculatedSize;
  }

  get entries(): number {
    return this.lru.size;
  }
}

function copyOf(b: Buffer): Buffer {
  // allocUnsafeSlow: not a slice of the shared pool, which would keep 8 KiB per small sample.
  const out = Buffer.allocUnsafeSlow(b.length);
  b.copy(out);
  return out;
}

import pLimit, { type LimitFunction } from 'p-limit';
import sharp from 'sharp';
import type { SettingNames } from '../config/settingNames.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import type { NativeTransformModule } from './nativeTransform.js';
import { StreamTransformer } from './StreamTransformer.js';
import type { TransformSpec } from './TransformSpec.js';

/** How a process runs transforms. */
export interface TransformPoolOptions {
  /** Transforms running at once in the process. */
  slots: number;
  /** Transforms running at once per stream. */
  perStream: number;
  /** Largest image decoded (see `maxImagePixels`). */
  maxPixels: number;
  /** How a refused image names the limit's setting (default: `maxImagePixels`). */
  settingNames?: SettingNames;
  /** The native module for JPEG and 8-bit PNG raw output; undefined: sharp for everything. */
  native?: NativeTransformModule;
  metrics: Pick<
    LoaderMetrics,
    'transformSeconds' | 'transformFailures' | 'transformPixels' | 'transformsWaiting'
  >;
}

/**
 * The process's transform slots, shared by every stream. A transform runs on libuv's thread
 * pool (sharp), one libvips thread per image, so a slot is a thread kept busy; the pool is sized
 * to the CPU quota, and a stream takes at most `perStream` slots, waiting its turn (first come,
 * first served) for the rest. What waits is bounded by the streams' windows: a stream only
 * transforms samples its window fetched, so the queue is back-pressure, not a growing backlog.
 */
export class TransformPool {
  private readonly limit: LimitFunction;

  constructor(readonly options: TransformPoolOptions) {
    this.limit = pLimit(options.slots);
    // Many small images at once, one thread each: libvips' own threads per image would only
    // contend with the other slots. Its operation cache holds nothing worth reusing here.
    sharp.concurrency(1);
    sharp.cache(false);
  }

  /** Transforms running now in the process. */
  get active(): number {
    return this.limit.activeCount;
  }

  /** A stream's transformer: its own slot limit, its seed, its cancellation. */
  forStream(spec: TransformSpec, seed: bigint, signal: AbortSignal): StreamTransformer {
    return new StreamTransformer(spec, seed, signal, {
      streamLimit: pLimit(this.options.perStream),
      processLimit: this.limit,
      maxPixels: this.options.maxPixels,
      ...(this.options.settingNames ? { settingNames: this.options.settingNames } : {}),
      ...(this.options.native ? { native: this.options.native } : {}),
      metrics: this.options.metrics,
    });
  }
}

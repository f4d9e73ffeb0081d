import cassandra from 'cassandra-driver';
import type { LimitFunction } from 'p-limit';
import type { SettingNames } from '../config/settingNames.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import { SampleRandom } from './SampleRandom.js';
import type { NativeTransformModule } from './nativeTransform.js';
import { type Decoder, type TransformThread, transformImage } from './transformImage.js';
import { transformMask } from './transformMask.js';
import type { TransformSpec } from './TransformSpec.js';
import { UndecodableImageError } from './UndecodableImageError.js';

/** What a stream's transformer shares with its pool. @internal */
export interface StreamTransformerContext {
  streamLimit: LimitFunction;
  processLimit: LimitFunction;
  maxPixels: number;
  /** How a refused image names the limit's setting. */
  settingNames?: SettingNames;
  /** The native module; undefined: sharp transforms every sample. */
  native?: NativeTransformModule;
  metrics: Pick<
    LoaderMetrics,
    'transformSeconds' | 'transformFailures' | 'transformPixels' | 'transformsWaiting'
  >;
}

/**
 * Transforms one stream's samples: at most the stream's share of slots at once, each random
 * choice drawn from (seed, epoch, sample id), nothing started once the stream is cancelled.
 * Keeps the stream's figures for its end line.
 */
export class StreamTransformer {
  /** Seconds transforms of this stream ran on the thread pool (one thread each: CPU time). */
  threadSeconds = 0;
  /** Samples of this stream that could not be decoded. */
  undecodable = 0;

  constructor(
    readonly spec: TransformSpec,
    private readonly seed: bigint,
    private readonly signal: AbortSignal,
    private readonly ctx: StreamTransformerContext,
  ) {}

  /**
   * The transformed bytes of sample `id` of epoch `epoch` (at `position` of a mixed epoch: see
   * {@link SampleRandom}), and with the spec's `masks` its mask (`labelBlob`) transformed alike
   * (same plan, same draws).
   *
   * @throws {@link UndecodableImageError} naming the sample when it (or its mask) cannot be
   *   decoded; the abort reason once the stream is cancelled.
   */
  run(
    data: Buffer,
    id: Buffer,
    epoch: number,
    position?: number,
    labelBlob?: Buffer,
  ): Promise<{ data: Buffer; mask?: Buffer }> {
    const { metrics } = this.ctx;
    metrics.transformsWaiting.inc();
    return this.ctx.streamLimit(() =>
      this.ctx.processLimit(async () => {
        metrics.transformsWaiting.dec();
        this.signal.throwIfAborted();
        const started = performance.now();
        let decoder: Decoder | 'none' = 'none';
        let thread: TransformThread | 'none' = 'none';
        try {
          const out = await transformImage(
            data,
            this.spec,
            new SampleRandom(this.seed, epoch, id, position),
            this.ctx.maxPixels,
            this.ctx.native,
            this.ctx.settingNames,
          );
          decoder = out.decoder;
          thread = out.thread;
          metrics.transformPixels.inc(out.width * out.height);
          if (!this.spec.masks) return { data: out.data };
          const mask = await transformMask(
            labelBlob,
            out.target,
            this.ctx.maxPixels,
            this.ctx.native,
          );
          return { data: out.data, mask: mask.data };
        } catch (err) {
          if (!(err instanceof UndecodableImageError)) throw err;
          this.undecodable++;
          metrics.transformFailures.inc({ reason: err.reason });
          throw new UndecodableImageError(
            err.reason,
            `sample ${new cassandra.types.Uuid(id).toString()}: ${err.message}; ask for ` +
              'bad_image_policy SKIP to leave such samples out',
            { cause: err },
          );
        } finally {
          const seconds = (performance.now() - started) / 1000;
          this.threadSeconds += seconds;
          metrics.transformSeconds.observe(
            { output: this.spec.output.format, decoder, thread },
            seconds,
          );
        }
      }),
    );
  }
}

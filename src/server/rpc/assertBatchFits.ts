import { LoaderError } from '../../core/index.js';

/** Bytes kept free under the message limit for each sample's id, label, sizes and framing. */
const OVERHEAD_PER_SAMPLE = 64;
/** And for the batch's own fields (epoch, index, flags, field headers). */
const OVERHEAD_PER_BATCH = 256;

/**
 * Refuses a batch that could exceed the message limit: its sample and label blob bytes plus
 * a generous allowance for everything else. The allowance bounds the encoding's overhead from
 * above (at most 31 bytes a sample and 70 a batch), so a batch that passes is never larger
 * than the limit once encoded, whatever its labels and sizes.
 *
 * @param samples - Samples in the batch.
 * @param payloadBytes - Their data and label blob bytes together.
 * @throws {@link LoaderError} INVALID_ARGUMENT, not RESOURCE_EXHAUSTED: the remedy is a smaller
 *   batch_size, and clients retry RESOURCE_EXHAUSTED (the admission limit) by themselves.
 * @internal
 */
export function assertBatchFits(
  samples: number,
  payloadBytes: number,
  resumeToken: Buffer,
  maxMessageBytes: number,
): void {
  const total =
    payloadBytes + samples * OVERHEAD_PER_SAMPLE + OVERHEAD_PER_BATCH + resumeToken.length;
  if (total > maxMessageBytes) {
    throw new LoaderError(
      'INVALID_ARGUMENT',
      `a batch of ${samples} samples is ${total} bytes, over the message limit of ` +
        `${maxMessageBytes} bytes (SCYLLA_LOADER_MAX_MESSAGE_BYTES); ask for a smaller batch_size`,
    );
  }
}

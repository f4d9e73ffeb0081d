/**
 * The most bytes one sample may take (data, label blob and metadata): a sample is one database
 * write, and Cassandra and ScyllaDB refuse a write over half a commit log segment (16 MiB with
 * the default 32 MiB segments). Kept under it with room for the rows' other fields.
 */
export const MAX_SAMPLE_BYTES = 15 * 1024 * 1024;

/** What {@link sampleProblem} checks a sample against. */
export interface SampleRules {
  /** The dataset's class names: a label must index them (any int when empty). */
  labelNames: readonly string[];
  /**
   * The samples come from an unlabelled source (one where no sample has a label or a label
   * blob): a sample with neither is stored without a label instead of refused.
   */
  unlabelled?: boolean;
}

/** The part of a sample {@link sampleProblem} looks at. */
export interface CheckedSample {
  data: Buffer;
  label: number | null;
  labelBlob?: Buffer | undefined;
}

/**
 * Why a sample cannot be stored, or undefined when it can: over {@link MAX_SAMPLE_BYTES}, no
 * data, a label that is not an int32 or outside the class names, neither label nor blob (unless
 * the source is unlabelled).
 * The same rules hold for `ingest` and the IngestSamples call.
 */
export function sampleProblem(sample: CheckedSample, rules: SampleRules): string | undefined {
  const size = sample.data.length + (sample.labelBlob?.length ?? 0);
  if (size > MAX_SAMPLE_BYTES) {
    return (
      `is ${size} bytes with its label blob, over the limit of ${MAX_SAMPLE_BYTES} bytes ` +
      '(one sample is one database write; the database refuses writes over 16 MiB)'
    );
  }
  if (sample.data.length === 0) return 'has no data (0 bytes)';
  const { label } = sample;
  if (label === null) {
    if (!sample.labelBlob && !rules.unlabelled) return 'has neither a label nor a label blob';
    return undefined;
  }
  if (!Number.isInteger(label) || label < 0 || label > 2 ** 31 - 1) {
    return `has label ${label}; a label is an integer from 0 to ${2 ** 31 - 1}`;
  }
  if (rules.labelNames.length > 0 && label >= rules.labelNames.length) {
    return (
      `has label ${label}, but the dataset has ${rules.labelNames.length} classes ` +
      `(labels 0 to ${rules.labelNames.length - 1})`
    );
  }
  return undefined;
}

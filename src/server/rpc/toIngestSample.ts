import type { IngestSample__Output } from '../../generated/scylla_loader/v1/IngestSample.js';
import type { MetadataValue__Output } from '../../generated/scylla_loader/v1/MetadataValue.js';
import {
  MAX_SAMPLE_BYTES,
  sampleId,
  sampleProblem,
  type ColumnType,
  type MetadataValue,
  type WritableSample,
} from '../../core/index.js';

/** Longest source key, in UTF-8 bytes (the proto's rule). */
export const MAX_SOURCE_KEY_BYTES = 1024;

/** What {@link toIngestSample} checks a sample against: the call's target. */
export interface IngestSampleRules {
  /** The target's metadata columns and their types. */
  columns: ReadonlyMap<string, ColumnType>;
  /** The dataset's class names (empty: any int32 label). */
  labelNames: readonly string[];
  /** `datasetNamespace(dataset)`, from which the sample's id derives. */
  namespace: string;
  /**
   * Whether the call is unlabelled, as its first sample says (neither a label nor a label
   * blob): then every sample must have neither, else every sample must have one. Absent:
   * every sample must have one.
   */
  unlabelled?: boolean;
}

/** A sample ready for the writer, or why it cannot be stored. */
export type IngestSampleResult = { sample: WritableSample } | { problem: string };

/**
 * Converts one sample of an IngestSamples request into what the `SampleWriter` takes, or says
 * which rule it breaks: the source key is 1 to {@link MAX_SOURCE_KEY_BYTES} bytes; every
 * metadata key is a column of the target and its value's kind fits the column's type (an int
 * fits int when within int32, bigint, and double; a double fits double when finite; text and
 * boolean fit their own); the metadata's text counts towards the sample's size; and the rules
 * every ingest shares (`sampleProblem`: size, data, label range), and the sample has a label or
 * a label blob exactly when the call is labelled (see {@link IngestSampleRules.unlabelled}). The problem
 * is a phrase to follow "sample <key>", e.g. `has label 12, but the dataset has 10 classes`.
 */
export function toIngestSample(
  sample: IngestSample__Output,
  rules: IngestSampleRules,
): IngestSampleResult {
  const keyBytes = Buffer.byteLength(sample.sourceKey, 'utf8');
  if (keyBytes === 0) return { problem: 'has an empty source key; give every sample a key' };
  if (keyBytes > MAX_SOURCE_KEY_BYTES) {
    return {
      problem:
        `has a source key of ${keyBytes} bytes, over the limit of ${MAX_SOURCE_KEY_BYTES} ` +
        'bytes (UTF-8)',
    };
  }
  const metadata: Record<string, MetadataValue> = {};
  let metadataBytes = 0;
  for (const [column, value] of Object.entries(sample.metadata)) {
    const type = rules.columns.get(column);
    if (type === undefined) {
      const known = [...rules.columns.keys()];
      return {
        problem:
          `has metadata ${JSON.stringify(column)}, which is not a column of the target ` +
          (known.length === 0 ? '(it declares none)' : `(its columns: ${known.join(', ')})`),
      };
    }
    const converted = toColumnValue(value, type);
    if (typeof converted === 'object' && converted !== null && 'problem' in converted) {
      return { problem: `has metadata ${JSON.stringify(column)} ${converted.problem}` };
    }
    if (typeof converted === 'string') metadataBytes += Buffer.byteLength(converted, 'utf8');
    metadata[column] = converted;
  }
  const label = sample.label ?? null;
  const labelBlob = sample.labelBlob.length > 0 ? sample.labelBlob : undefined;
  const problem =
    sampleProblem(
      { data: sample.data, label, labelBlob },
      { labelNames: rules.labelNames, unlabelled: rules.unlabelled !== undefined },
    ) ?? labelKindProblem(label !== null || labelBlob !== undefined, rules.unlabelled);
  if (problem !== undefined) return { problem };
  const size = sample.data.length + (labelBlob?.length ?? 0) + metadataBytes;
  if (size > MAX_SAMPLE_BYTES) {
    return {
      problem:
        `is ${size} bytes with its label blob and metadata, over the limit of ` +
        `${MAX_SAMPLE_BYTES} bytes (one sample is one database write; the database refuses ` +
        'writes over 16 MiB)',
    };
  }
  return {
    sample: {
      id: sampleId(sample.sourceKey, rules.namespace),
      sourceKey: sample.sourceKey,
      data: sample.data,
      label,
      ...(labelBlob ? { labelBlob } : {}),
      metadata,
    },
  };
}

/**
 * Why a sample that has (or lacks) a label does not belong to a call that is unlabelled (or
 * labelled): a call is one source, all labelled or all unlabelled, so that a labelled call
 * whose sample lost its label is refused rather than stored without one.
 */
function labelKindProblem(
  labelled: boolean,
  callUnlabelled: boolean | undefined,
): string | undefined {
  if (callUnlabelled === undefined || labelled === !callUnlabelled) return undefined;
  return labelled
    ? "has a label or a label blob, but this call's first sample had neither: a call's " +
        'samples are all unlabelled or all labelled (send them in separate calls)'
    : "has neither a label nor a label blob, but this call's first sample had one: a call's " +
        'samples are all labelled or all unlabelled (an unlabelled dataset is ingested by calls ' +
        'whose samples have neither)';
}

const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;

/** A proto metadata value as a value of a column of `type`, or why it does not fit. */
function toColumnValue(
  value: MetadataValue__Output,
  type: ColumnType,
): MetadataValue | { problem: string } {
  const kind = value.kind;
  // A value with no kind set is how the proto says null (as a key left out does).
  if (kind === undefined) return null;
  const wrong = (): { problem: string } => ({
    problem: `is ${kind === 'int' ? 'an' : 'a'} ${kind} value, but the column is ${type}${fitsHint(type)}`,
  });
  switch (type) {
    case 'text':
      return kind === 'text' ? (value.text ?? '') : wrong();
    case 'boolean':
      return kind === 'boolean' ? (value.boolean ?? false) : wrong();
    case 'int': {
      if (kind !== 'int') return wrong();
      const n = BigInt(value.int ?? '0');
      if (n < INT32_MIN || n > INT32_MAX) {
        return {
          problem: `is ${n}, outside the int column's range (${INT32_MIN} to ${INT32_MAX}); declare it bigint`,
        };
      }
      return Number(n);
    }
    case 'bigint':
      return kind === 'int' ? BigInt(value.int ?? '0') : wrong();
    case 'double': {
      if (kind === 'int') return Number(BigInt(value.int ?? '0'));
      if (kind !== 'double') return wrong();
      const n = value.double ?? 0;
      if (!Number.isFinite(n)) return { problem: `is ${n}; a double column takes finite numbers` };
      return n;
    }
  }
}

function fitsHint(type: ColumnType): string {
  switch (type) {
    case 'int':
    case 'bigint':
      return ' (it takes int values)';
    case 'double':
      return ' (it takes int and double values)';
    default:
      return ` (it takes ${type} values)`;
  }
}

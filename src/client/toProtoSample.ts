import type { IngestSample } from '../generated/scylla_loader/v1/IngestSample.js';
import type { MetadataValue } from '../generated/scylla_loader/v1/MetadataValue.js';
import type { IngestMetadataValue, IngestSampleInput } from './IngestOptions.js';

/** Bytes a sample adds to a request beyond its data, blob, key and text (field tags, sizes). */
const SAMPLE_OVERHEAD_BYTES = 32;

/** A sample as the wire carries it, and about how many bytes it takes there. */
export interface ProtoSample {
  sample: IngestSample;
  /** Data and label blob bytes (what the server's size limit counts). */
  sampleBytes: number;
  /** Estimated encoded size, for filling requests. */
  wireBytes: number;
}

/**
 * Converts one input sample to its proto form without copying its bytes. A value of the wrong
 * type (no key, data that is not a Uint8Array, a label that is not an integer, a metadata
 * value that is not a string, number, bigint, boolean or null) throws a TypeError naming the
 * sample's position, at once: it is the caller's bug, not a sample against the rules.
 *
 * @internal
 */
export function toProtoSample(input: IngestSampleInput, position: number): ProtoSample {
  const where = `sample ${position}`;
  if (typeof input !== 'object' || input === null) {
    throw new TypeError(`${where} is not an object with sourceKey and data`);
  }
  if (typeof input.sourceKey !== 'string') {
    throw new TypeError(`${where}: sourceKey must be a string`);
  }
  if (!(input.data instanceof Uint8Array)) {
    throw new TypeError(`${where} (${JSON.stringify(input.sourceKey)}): data must be a Uint8Array`);
  }
  if (input.labelBlob !== undefined && !(input.labelBlob instanceof Uint8Array)) {
    throw new TypeError(
      `${where} (${JSON.stringify(input.sourceKey)}): labelBlob must be a Uint8Array`,
    );
  }
  if (input.label !== undefined && !Number.isInteger(input.label)) {
    throw new TypeError(
      `${where} (${JSON.stringify(input.sourceKey)}): label must be an integer, got ${String(input.label)}`,
    );
  }
  let wireBytes = SAMPLE_OVERHEAD_BYTES + Buffer.byteLength(input.sourceKey);
  const metadata: Record<string, MetadataValue> = {};
  for (const [column, value] of Object.entries(input.metadata ?? {})) {
    const converted = toMetadataValue(value);
    if (converted === undefined) {
      throw new TypeError(
        `${where} (${JSON.stringify(input.sourceKey)}): metadata ${JSON.stringify(column)} ` +
          'must be a string, number, bigint, boolean or null',
      );
    }
    if (converted === null) continue;
    metadata[column] = converted;
    wireBytes += column.length + 16 + (converted.text ? Buffer.byteLength(converted.text) : 0);
  }
  const sampleBytes = input.data.length + (input.labelBlob?.length ?? 0);
  wireBytes += sampleBytes;
  const sample: IngestSample = {
    sourceKey: input.sourceKey,
    data: input.data,
    ...(input.label !== undefined ? { label: input.label } : {}),
    ...(input.labelBlob !== undefined ? { labelBlob: input.labelBlob } : {}),
    metadata,
  };
  return { sample, sampleBytes, wireBytes };
}

/** A metadata value as the proto's oneof; null for none; undefined for a type it cannot be. */
function toMetadataValue(value: IngestMetadataValue | undefined): MetadataValue | null | undefined {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
      return { text: value };
    case 'boolean':
      return { boolean: value };
    case 'bigint':
      return { int: value.toString() };
    case 'number':
      // An integer beyond 2^63 is not an int64: it goes as the double it is.
      return Number.isInteger(value) && Math.abs(value) < 2 ** 63
        ? { int: BigInt(value).toString() }
        : { double: value };
    default:
      return undefined;
  }
}

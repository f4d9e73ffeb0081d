import type { DescribeDatasetResponse__Output } from '../generated/scylla_loader/v1/DescribeDatasetResponse.js';
import type { DatasetDescription } from './DatasetDescription.js';

/**
 * Converts a `DescribeDatasetResponse` (uint64 as decimal strings) to a plain object with
 * numbers.
 *
 * @internal
 */
export function toDatasetDescription(
  response: DescribeDatasetResponse__Output,
): DatasetDescription {
  const classCounts: Record<number, number> = {};
  for (const [label, count] of Object.entries(response.classCounts)) {
    classCounts[Number(label)] = Number(count);
  }
  return {
    dataset: response.dataset,
    sampleCount: Number(response.sampleCount),
    totalBytes: Number(response.totalBytes),
    labelNames: [...response.labelNames],
    classCounts,
    columns: { ...response.columns },
    splits: [...response.splits],
  };
}

/**
 * What the database holds for a dataset ({@link LoaderClient.describeDataset}). Counts are
 * numbers, exact up to 2^53.
 */
export interface DatasetDescription {
  /** Dataset (keyspace) name. */
  dataset: string;
  /** Number of samples. */
  sampleCount: number;
  /** Bytes of sample data. */
  totalBytes: number;
  /** Class names by label; empty when labels are plain integers. */
  labelNames: string[];
  /** Samples per label (key -1: samples without a label). */
  classCounts: Record<number, number>;
  /** Metadata columns and their CQL types. */
  columns: Record<string, string>;
  /** Splits that can be streamed. */
  splits: string[];
}

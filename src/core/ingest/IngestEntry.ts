/** A metadata value as stored: text, int/double (number), bigint, boolean, or absent. */
export type MetadataValue = string | number | bigint | boolean | null;

/** One sample to ingest, as a source describes it. */
export interface IngestEntry {
  /**
   * What the sample's id derives from, unique within the dataset: the root-relative POSIX
   * path (ImageFolder), the manifest's `path`, `<shard>/<key>` (WebDataset),
   * `<file>:<row>` or a key column (Parquet), or the key a client sent (IngestSamples).
   */
  sourceKey: string;
  /** Where to read the sample's bytes when {@link IngestEntry.data} is absent. */
  filePath?: string;
  /** The sample's bytes when already in memory (tar member, Parquet cell, RPC message). */
  data?: Buffer;
  /** Integer label, or null when the sample only has a label blob. */
  label: number | null;
  /** The label blob's bytes when already in memory (a mask, a multi-label array). */
  labelBlob?: Buffer;
  /** A file whose bytes become the label blob. */
  labelBlobPath?: string;
  /** User metadata columns by name. */
  metadata: Record<string, MetadataValue>;
  /** Where the entry came from, for messages (e.g. `manifest.csv:17`, `shard-0003.tar:000042`). */
  origin: string;
  /**
   * Why the source could not make this sample (a tar member group without an image, a Parquet
   * row with a null image): the sample is reported and skipped, or stops a `--strict` ingest.
   */
  error?: string;
}

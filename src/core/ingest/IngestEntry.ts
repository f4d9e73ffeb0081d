/** A metadata value as stored: text, int/double (number), bigint, boolean, or absent. */
export type MetadataValue = string | number | bigint | boolean | null;

/** One sample to ingest, as a source describes it. */
export interface IngestEntry {
  /** Root-relative POSIX path (ImageFolder) or the manifest's `path`: the id derives from it. */
  sourceKey: string;
  /** Where to read the sample's bytes; with {@link IngestEntry.data}, only named in messages. */
  filePath: string;
  /**
   * The sample's bytes when they are already in memory (generated data): written as they are,
   * instead of reading `filePath`, then preprocessed like a file's bytes.
   */
  data?: Buffer;
  /** Integer label, or null when the sample only has a label blob. */
  label: number | null;
  /** A file whose bytes become the label blob (a mask, a multi-label array). */
  labelBlobPath?: string;
  /** User metadata columns by name. */
  metadata: Record<string, MetadataValue>;
  /** Where the entry came from, for error messages (e.g. `manifest.csv:17`). */
  origin: string;
}

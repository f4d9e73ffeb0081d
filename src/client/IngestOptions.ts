import type { CallOptions, ReconnectInfo } from './StreamCallOptions.js';

/** What the server does with a sample against the ingest rules (proto `BadSamplePolicy`). */
export type BadSamplePolicyName = 'fail' | 'skip';

/** The CQL type of a metadata column. */
export type MetadataColumnType = 'text' | 'int' | 'bigint' | 'double' | 'boolean';

/** A metadata value; null (or a key left out) stores nothing. */
export type IngestMetadataValue = string | number | bigint | boolean | null;

/** One sample for {@link LoaderClient.ingest}. */
export interface IngestSampleInput {
  /**
   * Unique within the dataset, 1 to 1024 bytes of UTF-8 (e.g. the file's path): the sample's
   * id derives from it, so sending a key again never stores the sample twice.
   */
  sourceKey: string;
  /** The sample's bytes (e.g. an encoded image), 1 byte to 15 MiB with the label blob. */
  data: Uint8Array;
  /** Integer label (an index into `labelNames` when the dataset has class names). */
  label?: number;
  /**
   * Label bytes (a mask, a multi-label array); a sample has a label, a label blob, or both; or
   * neither, when the call's first sample has neither (an unlabelled dataset, streamed with
   * label -1; docs/ingest.md, "Unlabelled data").
   */
  labelBlob?: Uint8Array;
  /**
   * Values of metadata columns: a string is text, a boolean boolean, a bigint or an integer
   * number an int (which fits int, bigint and double columns), any other number a double.
   */
  metadata?: Record<string, IngestMetadataValue>;
}

/** Running figures of an ingest, over every call it took. */
export interface IngestProgress {
  /** Samples answered by the server (written, already present or skipped). */
  acknowledged: number;
  /** Of those, written by this ingest. */
  written: number;
  /**
   * Of those, stored already and left as they were: by an earlier ingest, or by this one in a
   * call that broke before it could acknowledge them.
   */
  alreadyPresent: number;
  /** Of those, left out under the `skip` policy. */
  skipped: number;
}

/** A sample left out under the `skip` policy, with the rule it broke. */
export interface SkippedSampleInfo {
  sourceKey: string;
  /** E.g. `is 16777300 bytes with its label blob, over the limit of 15728640 bytes (...)`. */
  reason: string;
}

/** What {@link LoaderClient.ingest} did. */
export interface IngestSummary extends IngestProgress {
  /** The samples left out under the `skip` policy, in the order they were sent. */
  skippedSamples: SkippedSampleInfo[];
  /** Samples the dataset holds after the ingest. */
  datasetSamples: number;
}

/** Options of {@link LoaderClient.ingest}. */
export interface IngestOptions extends CallOptions {
  /**
   * Class names, label i being `labelNames[i]`. Fixed by the first ingest of the dataset that
   * gives them; other names are INVALID_ARGUMENT. Default: none (plain integer labels).
   */
  labelNames?: readonly string[];
  /**
   * Metadata columns and their types; added to the dataset when absent. Default: inferred from
   * the values of the first request's samples (a string is text, a boolean boolean, a bigint
   * or an integer number bigint, any other number double); a column that appears only later
   * is not a column, and its samples are bad. Give `columns` when the first samples do not
   * show every column, or when an integer-valued column is really a double.
   */
  columns?: Readonly<Record<string, MetadataColumnType>>;
  /**
   * `fail` (default): the first sample against the rules ends the ingest with a ClientError
   * INVALID_ARGUMENT naming it, the rule and the limit (the requests acknowledged before are
   * stored); `skip`: such samples are left out and listed in the summary.
   */
  badSamplePolicy?: BadSamplePolicyName;
  /** Stored with the dataset's sources (e.g. `hf:mnist/train`). Default `rpc`. */
  source?: string;
  /**
   * Samples per request at most (default 64); a request also stops short of 4 MiB of sample
   * bytes, and a larger sample goes alone.
   */
  samplesPerRequest?: number;
  /**
   * Requests sent and not yet acknowledged at most (default 8): beyond it the samples are not
   * read further. Each is kept until acknowledged, to be sent again after a break, so this
   * times the request size bounds the client's memory. Raise it over a long round trip.
   */
  requestsInFlight?: number;
  /** Called after each acknowledged request. An exception thrown here ends the ingest. */
  onProgress?: (progress: IngestProgress) => void;
  /** Called before each new call that resumes a broken one. */
  onReconnect?: (info: ReconnectInfo) => void;
}

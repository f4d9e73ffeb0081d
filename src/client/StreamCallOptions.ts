/** Options of one call (see {@link LoaderClient.describeDataset}). */
export interface CallOptions {
  /** Aborting it cancels the call, which then rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * When the call must be over: a Date, or milliseconds since the Unix epoch (as
   * `Date.now()`), not a duration. Past it the call fails with DEADLINE_EXCEEDED.
   */
  deadline?: Date | number;
}

/** What {@link StreamCallOptions.onReconnect} is told before a stream is resumed. */
export interface ReconnectInfo {
  /** Attempt number since the last batch received, from 1. */
  attempt: number;
  /** gRPC status code that broke the stream. */
  code: number;
  /** Its name, e.g. `UNAVAILABLE`. */
  codeName: string;
  /** Its details, e.g. `Connection dropped`. */
  details: string;
  /** Wait before the new call, in milliseconds. */
  delayMs: number;
}

/** Options of a {@link LoaderClient.streamBatches} call. */
export interface StreamCallOptions extends CallOptions {
  /**
   * When the whole stream must be over, reconnections included (not each attempt): a Date,
   * or milliseconds since the Unix epoch. Past it the stream fails with DEADLINE_EXCEEDED.
   */
  deadline?: Date | number;
  /**
   * Called before each reconnection (e.g. to count them or log them). An exception thrown
   * here ends the stream with it.
   */
  onReconnect?: (info: ReconnectInfo) => void;
}

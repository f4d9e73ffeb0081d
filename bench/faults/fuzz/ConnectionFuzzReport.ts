/** What happened to the hostile connections of `fuzzConnections`. @internal */
export interface ConnectionFuzzReport {
  /** Connections that sent random bytes (some after a valid preface), then waited. */
  randomBytes: number;
  /** Of those, how many the loader closed by itself within the wait. */
  randomBytesClosedByServer: number;
  /** Raw TCP connections left half-open: a partial preface or a partial frame, then silence. */
  halfOpen: number;
  /** HTTP/2 sessions with a call whose request message never completes (slowloris). */
  partialCalls: number;
  /** Of the half-open connections and partial calls, how many the loader closed while held. */
  heldClosedByServer: number;
  /** How long they were held, in milliseconds. */
  heldMs: number;
}

/** How one raw call ended, as the client saw it. @internal */
export interface RawCallResult {
  /** gRPC status name (`OK`, `INVALID_ARGUMENT`, ...). */
  status: string;
  details: string;
  /** Response messages received before the end (a stream is cancelled after its first). */
  messages: number;
  /** The first response's bytes (a stream's first batch carries a resume token). */
  first?: Buffer;
}

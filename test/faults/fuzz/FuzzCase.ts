/**
 * What the generated requests aim at: a real dataset with a stored split set, and a resume
 * token taken from a real stream of `tokenRequest` (mutated tokens are sent with that same
 * request, so only the token is wrong). Limits are the loader's defaults unless told.
 *
 * @internal
 */
export interface FuzzTargets {
  dataset: string;
  /** A split set of `dataset` with parts `train` and `val`. */
  splitSet: string;
  /** The StreamBatches request (proto-loader object) whose stream gave `token`. */
  tokenRequest: Record<string, unknown>;
  /** The resume token of `tokenRequest`'s first batch. */
  token: Buffer;
  maxBatchSize: number;
  maxPrefetch: number;
  maxWindowSamples: number;
}

/** The RPCs the fuzzer sends requests to. @internal */
export type FuzzRpc = 'StreamBatches' | 'CreateSplits';

/**
 * One generated request and the statuses the loader may rightly answer it with. A case comes
 * from a valid request with one kind of damage (its `kind`), so its right answer is known:
 * e.g. `stream:batch-size` must be INVALID_ARGUMENT, `stream:unknown-dataset` NOT_FOUND.
 * INTERNAL and UNKNOWN are never right: even a body that does not decode (`raw:undecodable`)
 * is the client's fault, INVALID_ARGUMENT.
 *
 * @internal
 */
export interface FuzzCase {
  rpc: FuzzRpc;
  /** The class of damage, e.g. `stream:resume-token`. */
  kind: string;
  /** Statuses that are right for this case. */
  expected: readonly string[];
  /** The request body as sent (raw protobuf, possibly invalid). */
  body: Buffer;
  /** What was done to the request, for a report of a wrong answer. */
  note: string;
}

/** A request's fields as a report shows them: long strings and buffers abridged. @internal */
export function describeRequest(request: Record<string, unknown>): string {
  return JSON.stringify(request, (_k, v: unknown) =>
    typeof v === 'string' && v.length > 80
      ? `${v.slice(0, 20)}...(${v.length} chars)`
      : typeof v === 'number' && !Number.isFinite(v)
        ? String(v)
        : Buffer.isBuffer(v)
          ? `<${v.length} bytes>`
          : v,
  );
}

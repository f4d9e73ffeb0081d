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

/**
 * The TypeScript client SDK of scylla-loader: {@link LoaderClient} streams training batches
 * with transparent resumption, makes and inspects split sets, and writes samples into a
 * dataset (resuming a broken ingest exactly); failures are {@link ClientError}s.
 *
 * @packageDocumentation
 */
export { ClientError } from './ClientError.js';
export {
  DEFAULT_FLOW_CONTROL_WINDOW,
  DEFAULT_MAX_RECEIVE_MESSAGE_LENGTH,
} from './channelOptions.js';
export type {
  ClassTargetsOption,
  CreateSplitsOptions,
  SplitFilter,
} from './CreateSplitsOptions.js';
export type { ClientTlsOptions, TokenSource } from './ClientTlsOptions.js';
export type { DatasetDescription } from './DatasetDescription.js';
export type { DecodedBatch } from './DecodedBatch.js';
export type { DecodedColumn, DecodedColumnType } from './DecodedColumn.js';
export type {
  BadSamplePolicyName,
  IngestMetadataValue,
  IngestOptions,
  IngestProgress,
  IngestSampleInput,
  IngestSummary,
  MetadataColumnType,
  SkippedSampleInfo,
} from './IngestOptions.js';
export type {
  LedgerAppearanceEntry,
  LedgerBatchEntry,
  LedgerQuery,
  LedgerResult,
} from './LedgerTypes.js';
export { LoaderClient } from './LoaderClient.js';
export {
  type MergeResumeTokensOptions,
  type RankResumeState,
  mergeResumeTokens,
} from './mergeResumeTokens.js';
export type {
  KeepaliveOptions,
  LoaderClientOptions,
  ReconnectOptions,
} from './LoaderClientOptions.js';
export type {
  MissingSamplePolicyName,
  OrderingName,
  ShardRuleName,
  ShuffleModeName,
  StreamBatchesOptions,
  StreamSourceOptions,
} from './StreamBatchesOptions.js';
export type { SplitSet, SplitSetPart } from './SplitSet.js';
export type {
  BadImagePolicyName,
  InterpolationName,
  TransformOptions,
  TransformOutputName,
} from './TransformOptions.js';
export type { CallOptions, ReconnectInfo, StreamCallOptions } from './StreamCallOptions.js';

/**
 * The scylla-loader core: the library under the gRPC server, the CLI, the SDK's shared types
 * and the benchmarks. Schema, database access, ingest, splits, sampling, resume tokens and the
 * fetch engine. It knows nothing of gRPC: its errors carry an {@link ErrorCode}, which the
 * server maps to statuses in one place. Everything outside `src/core/` imports from here.
 *
 * @packageDocumentation
 */
export { connectDbPaths } from './db/connectDbPaths.js';
export { createDbClient } from './db/createDbClient.js';
export {
  type DbConfig,
  type DbTlsConfig,
  dbConfigSchema,
  dbConfigSchemaNaming,
  dbTlsConfigSchema,
  dbTlsConfigSchemaNaming,
} from './db/dbConfig.js';
export { retryableDriverError } from './db/retryableDriverError.js';
export {
  type ConsistencyName,
  type ConsistencySetting,
  QUERY_PROFILES,
  READ_CONSISTENCIES,
  WRITE_CONSISTENCIES,
  consistencyHint,
  consistencyOfError,
} from './db/consistency.js';
export {
  type ErrorCode,
  LoaderError,
  invalidArgument,
  notFound,
  unavailable,
} from './errors/LoaderError.js';
export { type AssembledBatch } from './fetch/AssembledBatch.js';
export { BatchFetcher } from './fetch/BatchFetcher.js';
export { ByteBudget } from './fetch/ByteBudget.js';
export { ReadSlots, StreamReads, READS_PAST_THE_CAP, ROUTE_MEMORY_MS } from './fetch/ReadSlots.js';
export { InFlightTarget, type RouteEstimate } from './fetch/InFlightTarget.js';
export { type FetchOptions } from './fetch/FetchOptions.js';
export { adaptiveWindowMax } from './fetch/adaptiveWindowMax.js';
export { groupByReplica } from './fetch/groupByReplica.js';
export { groupReadSize } from './fetch/groupReadSize.js';
export { ReplicaSets } from './fetch/ReplicaSets.js';
export { type FetchSource, SourceCatalog } from './fetch/SourceCatalog.js';
export { meanSampleBytes } from './schema/meanSampleBytes.js';
export { type IngestEntry, type MetadataValue } from './ingest/IngestEntry.js';
export {
  type IngestSource,
  type IngestShard,
  type ListedSource,
  listedSource,
  parseShard,
  refuseRepeatedKeys,
  shardEntries,
} from './ingest/IngestSource.js';
export {
  type IngestOptions,
  type IngestProgress,
  type IngestSkip,
  type IngestSummary,
  ingestDataset,
} from './ingest/ingestDataset.js';
export {
  DEFAULT_GROUP_BYTES,
  SampleWriter,
  type SampleWriterOptions,
  type WritableSample,
} from './ingest/SampleWriter.js';
export { MAX_SAMPLE_BYTES, sampleProblem } from './ingest/sampleProblem.js';
export { type IngestAdditions, checkIngestCaps, overIngestCap } from './ingest/checkIngestCaps.js';
export { type PreprocessOptions } from './ingest/preprocessImage.js';
export { readImageFolder } from './ingest/readImageFolder.js';
export { readManifest } from './ingest/readManifest.js';
export { type ParquetOptions, readParquet } from './ingest/readParquet.js';
export { type WebDatasetOptions, readWebDataset } from './ingest/readWebDataset.js';
export { type NameOption, ownOptionName } from './ingest/nameOption.js';
export {
  type IngestFormat,
  type IngestFormatContext,
  type IngestFormatOption,
  takesSeveral,
} from './ingest/formats/IngestFormat.js';
export {
  INGEST_FORMATS,
  type OpenIngestFormatOptions,
  ingestFormat,
  openIngestFormat,
} from './ingest/formats/ingestFormats.js';
export {
  type LoaderMetrics,
  type LoaderMetricsOptions,
  createLoaderMetrics,
} from './metrics/loaderMetrics.js';
export { parseResumeKey } from './resume/parseResumeKey.js';
export { type ResumeKeys, parseResumeKeys } from './resume/parseResumeKeys.js';
export {
  type StartRequest,
  type StartSplit,
  type StreamStart,
  resolveStart,
} from './resume/resolveStart.js';
export { type CoreSetting, type DbSetting, type SettingNames } from './config/settingNames.js';
export {
  type JobCheckpoint,
  type JobCheckpointRank,
  type ResolvedCheckpoint,
  resolveJobCheckpoint,
} from './resume/jobCheckpoint.js';
export {
  type ResumeKeyring,
  type ResumeState,
  type TokenBinding,
  NO_BASE,
  decodeResumeToken,
  encodeResumeToken,
  jobFingerprint,
  requestFingerprint,
} from './resume/resumeToken.js';
export {
  type PermutationArgs,
  type PermutationCache,
  createPermutationCache,
} from './sampling/createPermutationCache.js';
export { type RemainderCache, createRemainderCache } from './sampling/createRemainderCache.js';
export { epochRemainder } from './sampling/epochRemainder.js';
export { epochShard } from './sampling/epochShard.js';
export { permutation } from './sampling/permutation.js';
export { RandomStream } from './sampling/randomStream.js';
export { type ShardRule } from './sampling/shard.js';
export { type MeanSizeCache, createMeanSizeCache } from './stream/createMeanSizeCache.js';
export { type CheckpointSummary, type StreamPlanDeps, planStream } from './stream/planStream.js';
export {
  type OpenedStream,
  type ReadyBatch,
  type StreamDeps,
  type StreamDepsOptions,
  type StreamFigures,
  type StreamHooks,
  createStreamDeps,
  emptyStreamFigures,
  openStream,
} from './stream/openStream.js';
export { permutationKey, remainderKey } from './stream/streamCacheKeys.js';
export { type PlannedSource, type StreamPlan } from './stream/StreamPlan.js';
export { type StreamRequest } from './stream/StreamRequest.js';
export {
  COLUMN_TYPES,
  type ColumnSpec,
  type ColumnType,
  isColumnType,
} from './schema/columnTypes.js';
export {
  type DatasetInfo,
  readDatasetGeneration,
  readDatasetInfo,
  recordIngestStart,
  refreshDatasetCounts,
} from './schema/datasetInfo.js';
export { DatasetRecounts } from './schema/DatasetRecounts.js';
export { type CachedSample } from './cache/CachedSample.js';
export { cacheKey, cacheScope } from './cache/cacheKey.js';
export { type SampleCacheConfig, SampleCache } from './cache/SampleCache.js';
export { type WarmOptions, type WarmSummary, warmCache } from './warm/warmCache.js';
export { datasetExists, ensureDatasetSchema, requireDataset } from './schema/datasetSchema.js';
export { validateIdentifier } from './schema/identifiers.js';
export { MAX_MIX_SOURCES, type MixSource, describeSource } from './mixing/MixSource.js';
export { mixQuotas } from './mixing/mixQuotas.js';
export { mixSchedule } from './mixing/mixSchedule.js';
export { type MixedPart, mixedEpoch, sourceDraw, sourceSeed } from './mixing/mixedEpoch.js';
export { type MixturePlan, planMixture } from './mixing/planMixture.js';
export {
  type MixInput,
  MAX_SAMPLES_PER_EPOCH,
  samplesPerEpochOutOfRange,
  SOURCES_WITH_DATASET,
  validateMix,
} from './mixing/validateMix.js';
export { type Replication, parseReplication } from './schema/replication.js';
export { datasetNamespace, sampleId } from './schema/sampleId.js';
export { type MetadataFilter } from './splits/MetadataFilter.js';
export { type SplitIds } from './splits/SplitIds.js';
export { type SplitInput } from './splits/SplitInput.js';
export {
  type SplitIdsCache,
  type SplitIdsLoader,
  createSplitIdsCache,
} from './splits/createSplitIdsCache.js';
export { type SplitSetInfo } from './splits/SplitSetInfo.js';
export { type ClassTargets } from './splits/SplitSpec.js';
export { assignSplits } from './splits/assignSplits.js';
export { type CreateSplitSetRequest, createSplitSet } from './splits/createSplitSet.js';
export { ALL_SPLIT, loadSplitIds } from './splits/loadSplitIds.js';
export { readSplitInput } from './splits/readSplitInput.js';
export { resolveSplit } from './splits/resolveSplit.js';
export { validateSplitName } from './splits/splitNames.js';
export { splitRequestSchema } from './splits/splitRequestSchema.js';
export { describeInvalidRequest } from './errors/describeInvalidRequest.js';
export {
  ensureSplitTables,
  latestSplitVersion,
  listSplitSets,
  readPartIds,
  readSplitSetInfo,
} from './splits/splitStore.js';
export { splitTablesExist } from './splits/splitTablesExist.js';
export { type StreamLimits, streamLimitsSchema } from './config/streamLimits.js';
export {
  DEFAULT_INGEST_CAPS,
  type IngestCapRules,
  type IngestCaps,
  ingestCapsSchema,
} from './config/ingestCaps.js';
export { type DbPath, type DbPathConfig, dbPathSchema } from './db/DbPath.js';
export { type TransformLimits, transformLimitsSchema } from './config/transformLimits.js';
export {
  type CropSpec,
  type Interpolation,
  type OutputSpec,
  type TransformSpec,
  rawSampleShape,
} from './transform/TransformSpec.js';
export {
  TRANSFORM_STEPS,
  type TransformField,
  type TransformRequest,
  type TransformRequestLimits,
  type TransformStep,
  enumTable,
  transformFields,
  validateTransformRequest,
} from './transform/steps.js';
export { TransformPool, type TransformPoolOptions } from './transform/TransformPool.js';
export { StreamTransformer } from './transform/StreamTransformer.js';
export { type Decoder, transformImage, type TransformedImage } from './transform/transformImage.js';
export {
  loadNativeTransform,
  type NativePlan,
  type NativeProbe,
  type NativeTransformModule,
  type NativeTransformStatus,
} from './transform/nativeTransform.js';
export { SampleRandom } from './transform/SampleRandom.js';
export {
  UndecodableImageError,
  type UndecodableReason,
} from './transform/UndecodableImageError.js';
export {
  cpuQuotaFrom,
  defaultTransformSlots,
  readCpuQuota,
  readWorkerCpuQuota,
  threadPoolSizeFor,
} from './transform/cpuQuota.js';
export { type BatchColumn, type ColumnValue } from './columns/BatchColumn.js';
export { COLUMN_READ_IDS, ColumnReader } from './columns/ColumnReader.js';
export { type ColumnPlan, type ColumnSource, planColumns } from './columns/planColumns.js';
export { MAX_STREAM_COLUMNS, validateColumnNames } from './columns/validateColumnNames.js';
export { COLUMN_LOOKAHEAD, withColumns } from './columns/withColumns.js';
export {
  Ledger,
  LEDGER_MAX_APPEARANCES,
  LEDGER_READ_MAX_BATCHES,
  LEDGER_READ_MAX_SAMPLES,
  uuidText,
  type LedgerAppearanceRow,
  type LedgerBatchRow,
  type LedgerJob,
  type LedgerOptions,
  type LedgerSource,
} from './ledger/Ledger.js';
export {
  DEFAULT_LEDGER_KEYSPACE,
  DEFAULT_LEDGER_TTL_DAYS,
  LEDGER_BUCKETS,
} from './ledger/ledgerSchema.js';
export { JOB_ID_RULE, validateJobId } from './ledger/jobId.js';
export {
  findLedgerSample,
  readLedgerBatches,
  splitIds,
  type LedgerBatchView,
  type LedgerReadOptions,
  type LedgerSampleRef,
} from './ledger/readLedger.js';

/**
 * Internals that the benchmarks and tests measure directly and that no public entry exports:
 * the SDK's batch decoder (the batch-layout micro-benchmark times it against the encoder).
 *
 * @packageDocumentation
 */
export { decodeBatch } from '../client/decodeBatch.js';
export { loadLoaderProto, protoRoot } from '../proto/loadLoaderProto.js';
export { toGrpcStatus } from '../server/errors/toGrpcStatus.js';
export { decodeCacheEntry } from '../core/cache/cacheEntry.js';
export { DiskTier } from '../core/cache/DiskTier.js';
export { resolveWorkerCount } from '../server/cluster/resolveWorkerCount.js';
export { encodeGreyPng } from '../datasets/encodeGreyPng.js';
export { toProtoRequest } from '../client/toProtoRequest.js';
export { hashToken } from '../server/auth/hashToken.js';
export { newToken } from '../server/auth/newToken.js';
export { listSourcePhotos } from '../datasets/photos/listSourcePhotos.js';
export type { SourcePhoto } from '../datasets/photos/listSourcePhotos.js';
export { photoImageIndex } from '../datasets/photos/photoImagePath.js';
export { createCreateSplitsHandler } from '../server/rpc/createSplits.js';
export type { ServerContext } from '../server/ServerContext.js';
export { serveCommand, serveConfigFromFlags } from '../cli/commands/serve.js';
export { SERVE_SETTINGS } from '../cli/settings/serveSettings.js';
export { findJava } from '../devdb/findJava.js';
export { randomResizedRegion } from '../core/transform/planTransform.js';
export { uuidFromBytes } from '../client/uuidFromBytes.js';
export type { ReadyInfo } from '../cli/readyFile.js';

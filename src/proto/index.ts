/**
 * The wire: the loader's proto package definition and loader options, the job checkpoint
 * codec, and the message types generated from `proto/` (`npm run gen:proto`).
 *
 * @packageDocumentation
 */
export { loaderPackageDefinition } from './loadLoaderProto.js';
export { PROTO_OPTIONS } from './protoOptions.js';
export {
  decodeJobCheckpoint,
  encodeJobCheckpoint,
  type JobCheckpointMessage,
} from './jobCheckpointCodec.js';
export type { StreamBatchesRequest__Output } from '../generated/scylla_loader/v1/StreamBatchesRequest.js';
export type {
  StreamBatchesResponse,
  StreamBatchesResponse__Output,
} from '../generated/scylla_loader/v1/StreamBatchesResponse.js';
export type { Transform } from '../generated/scylla_loader/v1/Transform.js';
export type { LoaderServiceHandlers } from '../generated/scylla_loader/v1/LoaderService.js';
export type { StreamBatchesRequest } from '../generated/scylla_loader/v1/StreamBatchesRequest.js';
export type { IngestSamplesRequest } from '../generated/scylla_loader/v1/IngestSamplesRequest.js';
export type { IngestSamplesResponse__Output } from '../generated/scylla_loader/v1/IngestSamplesResponse.js';
export type { CreateSplitsRequest__Output } from '../generated/scylla_loader/v1/CreateSplitsRequest.js';
export type { CreateSplitsResponse } from '../generated/scylla_loader/v1/CreateSplitsResponse.js';

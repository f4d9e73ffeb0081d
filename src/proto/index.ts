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

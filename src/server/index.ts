/**
 * The gRPC loader server for programs beside the CLI (the benchmarks, the tests): its factory
 * and configuration schema, the wire limits it enforces, and the batch encoders it streams with.
 *
 * @packageDocumentation
 */
export {
  createLoaderServer,
  LOADER_SERVICE_NAME,
  type LoaderServer,
  type LoaderServerOptions,
} from './createLoaderServer.js';
export { serverConfigSchema, type ServerConfig } from './config/serverConfig.js';
export { FLOW_CONTROL_WINDOW_BYTES, MAX_RECEIVE_MESSAGE_BYTES } from './grpcServerOptions.js';
export { LOADER_REQUEST_LIMITS } from './limits/requestLimits.js';
export { newTokenEntry } from './auth/newTokenEntry.js';
export { buildBatchResponse } from './rpc/buildBatchResponse.js';
export { encodeBatchResponse } from './rpc/encodeBatchResponse.js';

import type { ProtoGrpcType } from '../generated/loader.js';
import { loadLoaderProto } from '../proto/loadLoaderProto.js';

type LoaderServiceConstructor = ProtoGrpcType['scylla_loader']['v1']['LoaderService'];

let constructor: LoaderServiceConstructor | undefined;

/**
 * The grpc-js client class of `scylla_loader.v1.LoaderService`, loaded from `proto/` once per
 * process and shared by every {@link LoaderClient}.
 *
 * @internal
 */
export function loaderService(): LoaderServiceConstructor {
  constructor ??= loadLoaderProto().scylla_loader.v1.LoaderService;
  return constructor;
}

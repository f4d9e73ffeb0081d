import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from '../generated/loader.js';
import { PROTO_OPTIONS } from './protoOptions.js';

/** Folder holding the `.proto` files, found from this file in `src/` or in `dist/src/`. */
export function protoRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const up = here.includes(`${path.sep}dist${path.sep}`) ? '../../../proto' : '../../proto';
  return path.resolve(here, up);
}

/**
 * The loaded package definition: what the server and the SDK encode and decode with. Server
 * reflection serves the compiled descriptors instead (see `loadReflectionDescriptors`).
 */
export function loaderPackageDefinition(): protoLoader.PackageDefinition {
  return protoLoader.loadSync('scylla_loader/v1/loader.proto', {
    ...PROTO_OPTIONS,
    includeDirs: [protoRoot()],
  });
}

/** The typed gRPC object of `scylla_loader.v1`, used by both the server and the client SDK. */
export function loadLoaderProto(
  definition: protoLoader.PackageDefinition = loaderPackageDefinition(),
): ProtoGrpcType {
  return grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
}

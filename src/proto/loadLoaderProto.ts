import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from '../generated/loader.js';
import { PROTO_OPTIONS } from './protoOptions.js';

/**
 * Folder holding the `.proto` files: the nearest `proto/` above this file that has the
 * loader's, so the same code finds it from `src/` (tsx), from `dist/src/` (the build and the
 * image) and from the SDK package's `dist/` (`@scylla-loader/client`, which ships `proto/`).
 */
export function protoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'proto');
    if (existsSync(path.join(candidate, 'scylla_loader', 'v1', 'loader.proto'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(
        `no proto/scylla_loader/v1/loader.proto above ${fileURLToPath(import.meta.url)}`,
      );
    }
    dir = parent;
  }
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

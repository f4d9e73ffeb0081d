import type * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { loadReflectionDescriptors } from '../proto/loadReflectionDescriptors.js';

/**
 * Server reflection over the compiled descriptors of proto/ (with the well-known types) and of
 * the health service, so a client with no .proto files (grpcurl, Postman) can list, describe
 * and call every method.
 *
 * ReflectionService takes a package definition but reads only the `fileDescriptorProtos` of its
 * entries, indexing them by file name and symbol; it never uses the entry itself. So one entry
 * carries the real files, instead of the definitions proto-loader made, whose descriptors are
 * rebuilt by protobufjs (camel-cased, without imports, with misnamed map entries).
 */
export function createReflectionService(): ReflectionService {
  const files: protoLoader.EnumTypeDefinition = {
    format: 'Protocol Buffer 3 EnumDescriptorProto',
    type: {},
    fileDescriptorProtos: loadReflectionDescriptors(),
  };
  return new ReflectionService({ 'scylla_loader.reflection.files': files });
}

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LoaderError } from '../core/index.js';
import { splitFileDescriptorSet } from './splitFileDescriptorSet.js';

/**
 * Descriptor sets `npm run gen:proto` compiles with buf into `src/generated/` (`npm run build`
 * copies them to `dist/src/generated/`): proto/ with the well-known types it imports, and the
 * health service's proto from grpc-health-check, the one its implementation serves.
 */
const DESCRIPTOR_SETS = ['loader.binpb', 'health.binpb'];

/**
 * The encoded `FileDescriptorProto`s server reflection serves, as the proto compiler made them:
 * original (snake_case) field names, real file names and imports, proper map entries, proto3
 * `optional`, and the comments. The loaded definitions cannot stand in for them: protobufjs
 * rebuilds descriptors camel-cased, without imports and with map entries clients reject.
 * Throws FAILED_PRECONDITION, saying how to make them, when a set is missing.
 */
export function loadReflectionDescriptors(): Buffer[] {
  return DESCRIPTOR_SETS.flatMap((name) => {
    // The same relative path from src/proto/ (tsx) and from dist/src/proto/ (the build).
    const file = fileURLToPath(new URL(`../generated/${name}`, import.meta.url));
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (err) {
      throw new LoaderError(
        'FAILED_PRECONDITION',
        `cannot read the descriptor set ${file} that server reflection serves: ` +
          `${(err as Error).message}; run \`npm run gen:proto\` (npm run build runs it)`,
        { cause: err },
      );
    }
    return splitFileDescriptorSet(bytes);
  });
}

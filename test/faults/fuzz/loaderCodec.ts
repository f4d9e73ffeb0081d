import type { MethodDefinition } from '@grpc/proto-loader';
import { loaderPackageDefinition } from '../../../src/proto/index.js';

type Method = MethodDefinition<object, object>;

/** The loader's request and response codecs, as the server loads them from `proto/`. @internal */
export interface LoaderCodec {
  /** Encodes a request object of `method` (proto-loader's `fromObject`: lenient). */
  encode(method: 'StreamBatches' | 'CreateSplits', request: object): Buffer;
  /** Decodes a request body as the server does; throws where the server's decoding would. */
  decode(method: 'StreamBatches' | 'CreateSplits', body: Buffer): Record<string, unknown>;
  /** The resume token of an encoded StreamBatches response. */
  resumeTokenOf(response: Buffer): Buffer;
}

let codec: LoaderCodec | undefined;

/**
 * Codecs built with `@grpc/proto-loader` from `proto/` with the server's own options, so a
 * fuzzed object is encoded exactly as a proto-loader client would send it and a body can be
 * checked for decodability the way the server will decode it.
 *
 * @internal
 */
export function loaderCodec(): LoaderCodec {
  if (codec) return codec;
  const service = loaderPackageDefinition()['scylla_loader.v1.LoaderService'] as Record<
    string,
    Method
  >;
  const method = (name: string): Method => {
    const m = service[name];
    if (!m) throw new Error(`LoaderService has no method ${name}`);
    return m;
  };
  codec = {
    encode: (name, request) => method(name).requestSerialize(request),
    decode: (name, body) => method(name).requestDeserialize(body) as Record<string, unknown>,
    resumeTokenOf: (response) => {
      const decoded = method('StreamBatches').responseDeserialize(response) as {
        batch?: { resumeToken?: Buffer };
      };
      const token = decoded.batch?.resumeToken;
      if (!token || token.length === 0) throw new Error('the batch carries no resume token');
      return token;
    },
  };
  return codec;
}

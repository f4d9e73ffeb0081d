import * as grpc from '@grpc/grpc-js';

/** Marks a request whose body did not decode; the reason is the decoder's message. */
const UNDECODABLE = Symbol('undecodable request');

interface Undecodable {
  [UNDECODABLE]: string;
}

/**
 * The decoder's reason when a request did not decode (see {@link withTolerantDeserializers}),
 * else undefined: for a streaming handler, whose later requests no wrapper sees.
 */
export function undecodableReason(request: unknown): string | undefined {
  return typeof request === 'object' && request !== null && UNDECODABLE in request
    ? (request as Undecodable)[UNDECODABLE]
    : undefined;
}

/**
 * A service definition whose request deserializers never throw: a body that does not decode
 * becomes a marked request for {@link refuseUndecodable} to answer. grpc-js answers a throwing
 * deserializer with INTERNAL ("Error deserializing request") before any loader code runs,
 * which blames the server for the client's bytes and is counted nowhere.
 */
export function withTolerantDeserializers<S extends grpc.ServiceDefinition>(service: S): S {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(service)) {
    const decode = method.requestDeserialize;
    out[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer): unknown => {
        try {
          return decode(bytes);
        } catch (err) {
          const marked: Undecodable = { [UNDECODABLE]: (err as Error).message };
          return marked;
        }
      },
    };
  }
  return out as S;
}

/**
 * Wraps every handler of a service made tolerant by {@link withTolerantDeserializers}: a
 * request whose body did not decode is answered INVALID_ARGUMENT with the decoder's reason
 * and `onRefused` is told, before the handler (or the authorization in front of it) sees it.
 */
export function refuseUndecodable<I extends grpc.UntypedServiceImplementation>(
  service: string,
  implementation: I,
  onRefused: (rpc: string, reason: string, peer: string) => void,
): I {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [rpc, handler] of Object.entries(implementation)) {
    const run = handler as (call: grpc.ServerUnaryCall<unknown, unknown>, cb?: unknown) => void;
    out[rpc] = ((
      call: grpc.ServerUnaryCall<unknown, unknown>,
      callback?: grpc.sendUnaryData<unknown>,
    ) => {
      const reason = undecodableReason(call.request);
      if (reason === undefined) return run(call, callback);
      onRefused(rpc, reason, call.getPeer());
      const refusal: grpc.StatusObject = {
        code: grpc.status.INVALID_ARGUMENT,
        details: undecodableDetails(service, rpc, reason),
        metadata: new grpc.Metadata(),
      };
      if (callback) callback(refusal);
      else call.emit('error', refusal);
      return undefined;
    }) as grpc.UntypedHandleCall;
  }
  return out as I;
}

/** The details of the INVALID_ARGUMENT status a request that did not decode gets. */
export function undecodableDetails(service: string, rpc: string, reason: string): string {
  return (
    `the request body is not a ${service}.${rpc} request (${reason}); ` +
    'client and loader must be built from the same proto (scylla_loader.v1)'
  );
}

import * as grpc from '@grpc/grpc-js';
import { countDecodedFields, type ShapeOf } from '../limits/countDecodedFields.js';

/** Marks a request whose body did not decode; the reason is the decoder's message. */
const UNDECODABLE = Symbol('undecodable request');
/** Marks a request refused for its size, not its bytes (RESOURCE_EXHAUSTED). */
const TOO_LARGE = Symbol('request too large');

interface Undecodable {
  [UNDECODABLE]: string;
  [TOO_LARGE]?: true;
}

/** Whether a request marked undecodable was refused for its decoded size. */
export function refusedForSize(request: unknown): boolean {
  return typeof request === 'object' && request !== null && TOO_LARGE in request;
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
 *
 * With `budget`, a body that would decode into more fields and messages than its method's
 * budget (see `countDecodedFields`) is marked too, without being decoded, and refused with
 * RESOURCE_EXHAUSTED: a few MiB of empty sub-messages decode into gigabytes of objects.
 */
export function withTolerantDeserializers<S extends grpc.ServiceDefinition>(
  service: S,
  budget?: { fieldsOf: (rpc: string) => number; shapeOf: ShapeOf },
): S {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(service)) {
    const decode = method.requestDeserialize;
    const typeName = requestTypeName(method);
    const limit = budget?.fieldsOf(name);
    out[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer): unknown => {
        if (budget !== undefined && limit !== undefined && typeName !== undefined) {
          const fields = countDecodedFields(bytes, typeName, budget.shapeOf, limit);
          if (fields > limit) {
            const marked: Undecodable = {
              [UNDECODABLE]: `it holds more than ${limit} fields and messages, this method's limit`,
              [TOO_LARGE]: true,
            };
            return marked;
          }
        }
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

/** The request type's full name of a method loaded by proto-loader, if it says. */
function requestTypeName(method: grpc.MethodDefinition<unknown, unknown>): string | undefined {
  const type = (method as { requestType?: { type?: { name?: unknown } } }).requestType;
  const original = (method as { originalName?: unknown; path?: unknown }).path;
  const name = type?.type?.name;
  if (typeof name !== 'string' || typeof original !== 'string') return undefined;
  // The path is /package.Service/Method; the request type lives in the same package.
  const pkg = original.slice(1, original.lastIndexOf('.', original.lastIndexOf('/')));
  return `${pkg}.${name}`;
}

/**
 * Wraps every handler of a service made tolerant by {@link withTolerantDeserializers}: a
 * request whose body did not decode is answered INVALID_ARGUMENT with the decoder's reason
 * and `onRefused` is told, before the handler (or the authorization in front of it) sees it.
 */
export function refuseUndecodable<I extends grpc.UntypedServiceImplementation>(
  service: string,
  implementation: I,
  onRefused: (
    rpc: string,
    reason: string,
    peer: string,
    code: 'INVALID_ARGUMENT' | 'RESOURCE_EXHAUSTED',
  ) => void,
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
      onRefused(
        rpc,
        reason,
        call.getPeer(),
        refusedForSize(call.request) ? 'RESOURCE_EXHAUSTED' : 'INVALID_ARGUMENT',
      );
      const refusal: grpc.StatusObject = refusedForSize(call.request)
        ? {
            code: grpc.status.RESOURCE_EXHAUSTED,
            details: `the ${service}.${rpc} request is too large: ${reason}`,
            metadata: new grpc.Metadata(),
          }
        : {
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

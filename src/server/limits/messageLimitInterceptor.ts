import { ServerInterceptingCall, type ServerInterceptor } from '@grpc/grpc-js';
import { requestLimitOf } from './requestLimits.js';

/** The part of grpc-js's server call this relies on (build/src/server-interceptors.js, 1.10 to 1.14). */
interface BaseCallInternals {
  decoder?: { maxReadMessageLength?: unknown };
  maxReceiveMessageSize?: unknown;
}

/**
 * A grpc-js server interceptor that gives each call its method's byte limit
 * ({@link requestLimitOf}) in place of the server-wide `grpc.max_receive_message_length`: the
 * call's frame decoder refuses a request with RESOURCE_EXHAUSTED as soon as its length prefix
 * says it is larger, before its bytes are buffered. grpc-js has one limit per server, and the
 * 32 MiB IngestSamples needs would otherwise let every method take 32 MiB per call.
 *
 * It must come first in the server's `interceptors`: it reaches into the call grpc-js made
 * (the first interceptor is handed that call itself). When a grpc-js version lacks the
 * internals, the call keeps the server-wide limit and `onUnsupported` is told (once per call).
 */
export function messageLimitInterceptor(onUnsupported: () => void): ServerInterceptor {
  return (method, call) => {
    const limit = requestLimitOf(method.path).bytes;
    const internals = call as unknown as BaseCallInternals;
    if (
      internals.decoder !== undefined &&
      typeof internals.decoder.maxReadMessageLength === 'number' &&
      typeof internals.maxReceiveMessageSize === 'number'
    ) {
      internals.decoder.maxReadMessageLength = limit;
      internals.maxReceiveMessageSize = limit;
    } else {
      onUnsupported();
    }
    return new ServerInterceptingCall(call);
  };
}

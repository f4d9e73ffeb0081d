import { Metadata, status, type Interceptor, InterceptingCall } from '@grpc/grpc-js';
import type { TokenSource } from './ClientTlsOptions.js';

/**
 * A client interceptor that sends `authorization: Bearer <token>` with every call, the token
 * taken from `source` at the start of each call. An interceptor rather than call credentials:
 * grpc-js sends call credentials only over TLS, and a loader behind a TLS-terminating mesh
 * or proxy is reached in plain text. A token function that fails or returns nothing ends the
 * call with UNAUTHENTICATED, naming the function (and never a token).
 *
 * @internal
 */
export function bearerInterceptor(source: TokenSource): Interceptor {
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata: Metadata, listener, next) {
        const fail = (why: string): void =>
          listener.onReceiveStatus?.({
            code: status.UNAUTHENTICATED,
            details: `the client's token function ${why}`,
            metadata: new Metadata(),
          });
        resolveToken(source).then(
          (token) => {
            if (typeof token !== 'string' || token === '') {
              fail('returned no token');
              return;
            }
            metadata.set('authorization', `Bearer ${token}`);
            next(metadata, listener);
          },
          (err: unknown) => fail(`failed: ${(err as Error)?.message ?? String(err)}`),
        );
      },
    });
}

async function resolveToken(source: TokenSource): Promise<unknown> {
  return typeof source === 'string' ? source : source();
}

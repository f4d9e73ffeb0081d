import type { CallOptions as GrpcCallOptions, ClientUnaryCall, ServiceError } from '@grpc/grpc-js';
import type { CallOptions } from './StreamCallOptions.js';
import { toClientError } from './toClientError.js';

/**
 * Runs one unary call as a promise: `signal` cancels it (the promise then rejects with the
 * signal's reason), a status other than OK rejects with a ClientError naming `path`, and the
 * response goes through `convert`.
 *
 * @internal
 */
export function unaryCall<Res, T>(
  start: (
    options: GrpcCallOptions,
    callback: (error: ServiceError | null, response?: Res) => void,
  ) => ClientUnaryCall,
  path: string,
  callOptions: CallOptions,
  convert: (response: Res) => T,
): Promise<T> {
  const { signal, deadline } = callOptions;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => call.cancel();
    const call = start(deadline === undefined ? {} : { deadline }, (error, response) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) {
        reject(signal.reason);
      } else if (error || !response) {
        reject(toClientError(error, path));
      } else {
        try {
          resolve(convert(response));
        } catch (err) {
          reject(err);
        }
      }
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

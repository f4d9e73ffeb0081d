import { status, type Metadata } from '@grpc/grpc-js';

/**
 * A call of the SDK that ended with a gRPC status other than OK, or a response the SDK could
 * not decode. The message names the method and the status, e.g.
 * `/scylla_loader.v1.LoaderService/StreamBatches UNAVAILABLE: Connection dropped`.
 *
 * @example
 * ```ts
 * try {
 *   for await (const batch of client.streamBatches(request)) train(batch);
 * } catch (error) {
 *   if (error instanceof ClientError && error.codeName === 'NOT_FOUND') console.error(error.details);
 *   else throw error;
 * }
 * ```
 */
export class ClientError extends Error {
  override readonly name = 'ClientError';
  /** The status code's name, e.g. `UNAVAILABLE`. */
  readonly codeName: string;
  /** Trailing metadata sent with the status, when there was any. */
  readonly metadata: Metadata | undefined;

  /**
   * @param path - Method path, e.g. `/scylla_loader.v1.LoaderService/StreamBatches`.
   * @param code - gRPC status code.
   * @param details - The status details (the server's message, or grpc-js's own).
   * @param options - `cause`: the underlying error; `metadata`: the trailing metadata.
   */
  constructor(
    readonly path: string,
    readonly code: status,
    readonly details: string,
    options?: { cause?: unknown; metadata?: Metadata },
  ) {
    const codeName = status[code] ?? `CODE_${code}`;
    super(`${path} ${codeName}: ${details}`, { cause: options?.cause });
    this.codeName = codeName;
    this.metadata = options?.metadata;
  }
}

import * as grpc from '@grpc/grpc-js';

/** How one raw call ended, as the client saw it. @internal */
export interface RawCallResult {
  /** gRPC status name (`OK`, `INVALID_ARGUMENT`, ...). */
  status: string;
  details: string;
  /** The first response's bytes (a stream's first batch carries a resume token). */
  first?: Buffer;
}

const identity = (b: Buffer): Buffer => b;
const SERVICE = '/scylla_loader.v1.LoaderService';
const statusName = (code: number): string => grpc.status[code] ?? String(code);

/**
 * A gRPC client of the loader that sends request bodies as given and returns response bodies
 * as received (identity serializers): fuzzed requests reach the server byte for byte, invalid
 * encodings included, and nothing on the client side can refuse or repair them. A stream is
 * cancelled after its first response, which counts as `OK` (the loader served it).
 *
 * @internal
 */
export class RawLoaderClient {
  readonly #client: grpc.Client;

  constructor(address: string) {
    this.#client = new grpc.Client(address, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': -1,
      // A connection of its own: with `serve --workers N` each connection lands on one
      // worker, so several clients reach several workers only if they do not share one.
      'grpc.use_local_subchannel_pool': 1,
    });
  }

  /** Calls a unary method (`CreateSplits`, `DescribeDataset`, ...) with a raw body. */
  unary(method: string, body: Buffer, timeoutMs: number): Promise<RawCallResult> {
    return new Promise((resolve) => {
      this.#client.makeUnaryRequest<Buffer, Buffer>(
        `${SERVICE}/${method}`,
        identity,
        identity,
        body,
        { deadline: Date.now() + timeoutMs },
        (err, response) =>
          resolve(
            err
              ? { status: statusName(err.code), details: err.details }
              : { status: 'OK', details: '', ...(response ? { first: response } : {}) },
          ),
      );
    });
  }

  /** Calls StreamBatches with a raw body; reads its first batch, then cancels. */
  stream(body: Buffer, timeoutMs: number): Promise<RawCallResult> {
    return new Promise((resolve) => {
      const call = this.#client.makeServerStreamRequest<Buffer, Buffer>(
        `${SERVICE}/StreamBatches`,
        identity,
        identity,
        body,
        { deadline: Date.now() + timeoutMs },
      );
      // The first of these wins (a promise resolves once).
      call.once('data', (first: Buffer) => {
        resolve({ status: 'OK', details: 'cancelled by the client after its batch', first });
        call.cancel();
      });
      const end = (st: grpc.StatusObject): void =>
        resolve({ status: statusName(st.code), details: st.details });
      call.on('error', end);
      call.on('status', end);
    });
  }

  close(): void {
    this.#client.close();
  }
}

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/**
 * A `StreamBatchesRequest` as the checker sends it: field names as in `proto/` (the checker
 * loads the proto with `keepCase`, so it shares no naming or decoding choice with the SDK).
 *
 * @internal
 */
export interface CheckerRequest {
  dataset: string;
  split: string;
  batch_size: number;
  seed: string;
  first_epoch: number;
  epochs: number;
  rank: number;
  world_size: number;
  shard_rule: 'SHARD_RULE_UNEVEN';
  prefetch?: number;
  resume_token?: Buffer;
}

/** The fields of a `Batch` the checker reads. @internal */
export interface CheckerBatch {
  epoch: number;
  index: number;
  ids: Buffer;
  resume_token: Buffer;
  last_in_epoch: boolean;
}

/** A `LoaderService` client made from `proto/` by proto-loader, for one call. @internal */
export interface CheckerServiceClient extends grpc.Client {
  StreamBatches(
    request: CheckerRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<{ batch: CheckerBatch | null }>;
}

let constructor:
  | (new (
      address: string,
      creds: grpc.ChannelCredentials,
      options?: object,
    ) => CheckerServiceClient)
  | undefined;

/**
 * Opens a client of `scylla_loader.v1.LoaderService` at `address`, built from the `.proto`
 * files by proto-loader: the fault checker's own client, independent of the SDK in
 * `src/client` (whose reconnect and resume logic is what is under test). Each call gets its
 * own subchannel, so a new client after a fault never waits on a broken connection's backoff.
 *
 * @internal
 */
export function checkerClient(address: string): CheckerServiceClient {
  if (!constructor) {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');
    const definition = protoLoader.loadSync('scylla_loader/v1/loader.proto', {
      keepCase: true,
      longs: String,
      enums: String,
      bytes: Buffer,
      defaults: true,
      includeDirs: [root],
    });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      scylla_loader: { v1: { LoaderService: NonNullable<typeof constructor> } };
    };
    constructor = loaded.scylla_loader.v1.LoaderService;
  }
  return new constructor(address, grpc.credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
    'grpc.max_receive_message_length': 256 * 1024 * 1024,
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
  });
}

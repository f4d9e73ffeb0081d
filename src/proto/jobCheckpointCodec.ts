import path from 'node:path';
import protobuf from 'protobufjs';
import { protoRoot } from './loadLoaderProto.js';

/** A `scylla_loader.v1.JobCheckpoint` as plain data (see proto/ for the meaning of each field). */
export interface JobCheckpointMessage {
  worldSize: number;
  ranks: { rank: number; epoch: number; resumeToken: Buffer }[];
  base?: JobCheckpointMessage;
}

let type: protobuf.Type | undefined;

/** The message type, loaded from `proto/` once (the same file the gRPC service is built from). */
function checkpointType(): protobuf.Type {
  if (!type) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) =>
      target.startsWith('google/protobuf/') ? target : path.join(protoRoot(), target);
    root.loadSync('scylla_loader/v1/loader.proto', { keepCase: false });
    type = root.lookupType('scylla_loader.v1.JobCheckpoint');
  }
  return type;
}

/** Most nested bases a checkpoint may hold (one per change of world size within an epoch). */
const MAX_DEPTH = 32;

/** Serializes a job checkpoint for StreamBatchesRequest.job_checkpoint. */
export function encodeJobCheckpoint(cp: JobCheckpointMessage): Buffer {
  const t = checkpointType();
  const message = {
    worldSize: cp.worldSize,
    ranks: cp.ranks,
    ...(cp.base ? { base: encodeJobCheckpoint(cp.base) } : {}),
  };
  return Buffer.from(t.encode(t.fromObject(message)).finish());
}

/**
 * Parses a serialized job checkpoint. Bytes that are not one throw an Error saying so (the
 * caller decides the status), and so do more than 32 nested bases.
 */
export function decodeJobCheckpoint(bytes: Uint8Array, depth = 0): JobCheckpointMessage {
  if (depth > MAX_DEPTH) {
    throw new Error(`job_checkpoint nests more than ${MAX_DEPTH} bases`);
  }
  const t = checkpointType();
  let decoded: protobuf.Message;
  try {
    decoded = t.decode(bytes);
  } catch (err) {
    throw new Error(
      `job_checkpoint is not a serialized JobCheckpoint (${(err as Error).message})`,
      {
        cause: err,
      },
    );
  }
  const o = t.toObject(decoded, { longs: Number, bytes: Buffer, defaults: true });
  const ranks = (o['ranks'] as { rank: number; epoch: number; resumeToken: Buffer }[]).map((r) => ({
    rank: r.rank,
    epoch: r.epoch,
    resumeToken: Buffer.from(r.resumeToken),
  }));
  const base = o['base'] as Buffer;
  return {
    worldSize: o['worldSize'] as number,
    ranks,
    ...(base.length > 0 ? { base: decodeJobCheckpoint(base, depth + 1) } : {}),
  };
}

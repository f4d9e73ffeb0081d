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

/** Serializes a job checkpoint for StreamBatchesRequest.job_checkpoint. */
export function encodeJobCheckpoint(cp: JobCheckpointMessage): Buffer {
  const t = checkpointType();
  return Buffer.from(t.encode(t.fromObject(cp)).finish());
}

/**
 * Parses a serialized job checkpoint. Bytes that are not one throw an Error saying so (the
 * caller decides the status); nesting is bounded by the message's size.
 */
export function decodeJobCheckpoint(bytes: Uint8Array): JobCheckpointMessage {
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
  return toPlain(t.toObject(decoded, { longs: Number, bytes: Buffer, defaults: true }));
}

function toPlain(o: Record<string, unknown>): JobCheckpointMessage {
  const ranks = (o['ranks'] as { rank: number; epoch: number; resumeToken: Buffer }[]).map((r) => ({
    rank: r.rank,
    epoch: r.epoch,
    resumeToken: Buffer.from(r.resumeToken),
  }));
  const base = o['base'] as Record<string, unknown> | null | undefined;
  return {
    worldSize: o['worldSize'] as number,
    ranks,
    ...(base ? { base: toPlain(base) } : {}),
  };
}

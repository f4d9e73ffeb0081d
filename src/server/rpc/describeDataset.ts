import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { DescribeDatasetRequest__Output } from '../../generated/scylla_loader/v1/DescribeDatasetRequest.js';
import type { DescribeDatasetResponse } from '../../generated/scylla_loader/v1/DescribeDatasetResponse.js';
import { logCallError } from '../errors/logCallError.js';
import { toGrpcStatus } from '../errors/toGrpcStatus.js';
import {
  readDatasetInfo,
  validateIdentifier,
  listSplitSets,
  splitTablesExist,
} from '../../core/index.js';
import type { ServerContext } from '../ServerContext.js';
import { streamableSplits } from './streamableSplits.js';

/**
 * The DescribeDataset handler: what the database holds for a dataset, read from its info row
 * and its split sets over the primary path. A bad name is INVALID_ARGUMENT (checked before it
 * reaches CQL, where it is spliced in as a keyspace name) and an unknown dataset NOT_FOUND.
 */
export function createDescribeDatasetHandler(
  ctx: ServerContext,
): grpc.handleUnaryCall<DescribeDatasetRequest__Output, DescribeDatasetResponse> {
  return (call, callback) => {
    const dataset = call.request.dataset;
    describeDataset(ctx, dataset).then(
      (response) => callback(null, response),
      (err: unknown) => {
        const callId = randomUUID();
        const sent = toGrpcStatus(err, { callId });
        logCallError(
          ctx.logger.child({ callId, rpc: 'DescribeDataset', dataset }),
          err,
          sent,
          'DescribeDataset failed',
        );
        callback(sent);
      },
    );
  };
}

async function describeDataset(
  ctx: ServerContext,
  dataset: string,
): Promise<DescribeDatasetResponse> {
  validateIdentifier(dataset, 'dataset');
  const primary = ctx.paths[0];
  if (primary === undefined) throw new Error('server context has no database path');
  const info = await readDatasetInfo(primary.client, dataset);
  const sets = (await splitTablesExist(primary.client, dataset))
    ? await listSplitSets(primary.client, dataset)
    : [];
  // Counts go out as decimal strings: uint64 on the wire, and a JS number is exact only to 2^53.
  const classCounts: Record<number, string> = {};
  for (const [label, count] of info.classCounts) classCounts[label] = String(count);
  return {
    dataset: info.dataset,
    sampleCount: String(info.sampleCount),
    totalBytes: String(info.totalBytes),
    labelNames: info.labelNames,
    classCounts,
    columns: info.columns,
    // `all`, and the parts of each split set's latest version (older ones stay streamable as
    // `set@version/part`).
    splits: streamableSplits(sets),
  };
}

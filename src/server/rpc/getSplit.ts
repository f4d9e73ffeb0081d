import type * as grpc from '@grpc/grpc-js';
import type { GetSplitRequest__Output } from '../../generated/scylla_loader/v1/GetSplitRequest.js';
import type { GetSplitResponse } from '../../generated/scylla_loader/v1/GetSplitResponse.js';
import {
  notFound,
  requireDataset,
  validateIdentifier,
  validateSplitName,
  readSplitSetInfo,
  splitTablesExist,
} from '../../core/index.js';
import type { ServerContext } from '../ServerContext.js';
import { toSplitSetMessage } from './toSplitSetMessage.js';
import { primaryClient, unaryHandler } from './unaryHandler.js';

/**
 * The GetSplit handler: one stored split set, its latest version when the request names
 * version 0. Bad names are INVALID_ARGUMENT; an unknown dataset, set or version NOT_FOUND.
 */
export function createGetSplitHandler(
  ctx: ServerContext,
): grpc.handleUnaryCall<GetSplitRequest__Output, GetSplitResponse> {
  return unaryHandler(
    ctx,
    'GetSplit',
    async (call) => {
      const dataset = validateIdentifier(call.request.dataset, 'dataset');
      const name = validateSplitName(call.request.name, 'split set');
      const client = primaryClient(ctx);
      await requireDataset(client, dataset);
      if (!(await splitTablesExist(client, dataset))) {
        throw notFound(
          `split set ${name} of dataset ${dataset} does not exist: the dataset has no split ` +
            `sets yet; make one with \`splits create ${dataset} ${name}\``,
        );
      }
      const version = call.request.version === 0 ? undefined : call.request.version;
      const info = await readSplitSetInfo(client, dataset, name, version);
      return { splitSet: toSplitSetMessage(info) };
    },
    (r) => ({ dataset: r.dataset, splitSet: r.name, version: r.version }),
  );
}

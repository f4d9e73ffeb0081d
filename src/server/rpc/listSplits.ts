import type * as grpc from '@grpc/grpc-js';
import type { ListSplitsRequest__Output } from '../../generated/scylla_loader/v1/ListSplitsRequest.js';
import type { ListSplitsResponse } from '../../generated/scylla_loader/v1/ListSplitsResponse.js';
import {
  requireDataset,
  validateIdentifier,
  listSplitSets,
  splitTablesExist,
} from '../../core/index.js';
import type { ServerContext } from '../ServerContext.js';
import { toSplitSetMessage } from './toSplitSetMessage.js';
import { primaryClient, unaryHandler } from './unaryHandler.js';

/**
 * The ListSplits handler: every stored split set of a dataset, every version, sorted by name
 * and newest version first. A bad dataset name is INVALID_ARGUMENT, an unknown one NOT_FOUND;
 * a dataset without split sets gives an empty list.
 */
export function createListSplitsHandler(
  ctx: ServerContext,
): grpc.handleUnaryCall<ListSplitsRequest__Output, ListSplitsResponse> {
  return unaryHandler(
    ctx,
    'ListSplits',
    async (call) => {
      const dataset = validateIdentifier(call.request.dataset, 'dataset');
      const client = primaryClient(ctx);
      await requireDataset(client, dataset);
      if (!(await splitTablesExist(client, dataset))) return { splitSets: [] };
      const sets = await listSplitSets(client, dataset);
      return { splitSets: sets.map(toSplitSetMessage) };
    },
    (r) => ({ dataset: r.dataset }),
  );
}

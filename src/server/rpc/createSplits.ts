import * as grpc from '@grpc/grpc-js';
import type { CreateSplitsRequest__Output } from '../../generated/scylla_loader/v1/CreateSplitsRequest.js';
import type { CreateSplitsResponse } from '../../generated/scylla_loader/v1/CreateSplitsResponse.js';
import { LoaderError, createSplitSet } from '../../core/index.js';
import type { ServerContext } from '../ServerContext.js';
import { toCreateSplitSetRequest } from './toCreateSplitSetRequest.js';
import { toSplitSetMessage } from './toSplitSetMessage.js';
import { requestFieldOf } from './requestFieldOf.js';
import { primaryClient, unaryHandler } from './unaryHandler.js';

/**
 * The CreateSplits handler: makes and stores a split set over the primary path (see
 * `createSplitSet`) and logs one line with its figures. The metadata scan of a large dataset
 * takes tens of seconds, so a cancelled or expired call aborts it (no further reads, nothing
 * stored). An existing name is ALREADY_EXISTS unless a new version is asked for; unmet
 * targets are INVALID_ARGUMENT saying what is possible.
 */
export function createCreateSplitsHandler(
  ctx: ServerContext,
): grpc.handleUnaryCall<CreateSplitsRequest__Output, CreateSplitsResponse> {
  return unaryHandler(
    ctx,
    'CreateSplits',
    async (call) => {
      const abort = new AbortController();
      const onCancel = (): void => abort.abort(new LoaderError('CANCELLED', 'call cancelled'));
      call.once('cancelled', onCancel);
      if (call.cancelled) onCancel();
      try {
        const req = toCreateSplitSetRequest(call.request);
        const started = performance.now();
        let rowsScanned = 0;
        const info = await createSplitSet(primaryClient(ctx), req, {
          signal: abort.signal,
          // An RPC caller is told the request's field (`allow_shortfall`), not a flag.
          nameOption: requestFieldOf,
          onScanProgress: (rows) => (rowsScanned = rows),
        });
        ctx.logger.info(
          {
            event: 'splits_created',
            rpc: 'CreateSplits',
            dataset: req.dataset,
            splitSet: info.name,
            version: info.version,
            folds: info.folds,
            parts: Object.fromEntries(info.parts.map((p) => [p.name, p.size])),
            samples: info.parts.reduce((a, p) => a + p.size, 0),
            rowsScanned,
            samplesConsidered: info.params['samplesConsidered'],
            groupsConsidered: info.params['groupsConsidered'],
            worstDeviation: info.worstDeviation,
            contentHash: info.contentHash,
            seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
            peer: call.getPeer(),
          },
          'splits created',
        );
        return { splitSet: toSplitSetMessage(info) };
      } finally {
        call.off('cancelled', onCancel);
      }
    },
    (r) => ({ dataset: r.dataset, splitSet: r.name }),
  );
}

import type { Transform__Output } from '../../generated/scylla_loader/v1/Transform.js';
import {
  type TransformLimits,
  type TransformSpec,
  validateTransformRequest,
} from '../../core/index.js';

/**
 * The request's transform, checked field by field by the transform's steps
 * (`core/transform/steps.ts`): INVALID_ARGUMENT names the field, the value and the allowed
 * range, and a server limit by the variable that sets it.
 */
export function validateTransform(
  t: Transform__Output,
  batchSize: number,
  limits: Pick<TransformLimits, 'maxTransformSide'> & { maxMessageBytes: number },
): TransformSpec {
  return validateTransformRequest(t, {
    batchSize,
    maxTransformSide: limits.maxTransformSide,
    maxMessageBytes: limits.maxMessageBytes,
    settingNames: {
      maxTransformSide: 'SCYLLA_LOADER_MAX_TRANSFORM_SIDE',
      maxMessageBytes: 'SCYLLA_LOADER_MAX_MESSAGE_BYTES',
    },
  });
}

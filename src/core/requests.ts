/**
 * The core's request validators, a second entry beside `index.ts` that loads neither the
 * database driver nor the image library: what the TypeScript SDK imports to refuse a request
 * before sending it, with the same rules and words the server applies (one validator, not a
 * copy per front-end).
 *
 * @packageDocumentation
 */
export { describeInvalidRequest } from './errors/describeInvalidRequest.js';
export { MAX_FOLDS, splitRequestSchema } from './splits/splitRequestSchema.js';
export type { CreateSplitSetRequest } from './splits/CreateSplitSetRequest.js';
export { MAX_SAMPLE_BYTES, sampleProblem } from './ingest/sampleProblem.js';
export {
  type MixInput,
  MAX_SAMPLES_PER_EPOCH,
  SOURCES_WITH_DATASET,
  validateMix,
} from './mixing/validateMix.js';
export { MAX_MIX_SOURCES } from './mixing/MixSource.js';
export { LoaderError } from './errors/LoaderError.js';
export {
  TRANSFORM_STEPS,
  type TransformField,
  type TransformSubField,
  enumTable,
  transformFields,
} from './transform/steps.js';
export { MAX_STREAM_COLUMNS, validateColumnNames } from './columns/validateColumnNames.js';
export { JOB_ID_RULE, validateJobId } from './ledger/jobId.js';

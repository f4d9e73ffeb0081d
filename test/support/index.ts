/**
 * The test helpers the benchmarks' own tests share with the product's: the shared node's
 * configuration and keyspaces of their own.
 *
 * @packageDocumentation
 */
export {
  createTestKeyspace,
  dropKeyspace,
  selectAll,
  testDbConfig,
  uniqueKeyspace,
} from './dbHelpers.js';

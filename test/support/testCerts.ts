/**
 * The tests' test CA: made by `src/devdb/makeTestCa.ts`, where the benchmarks can import it
 * too (bench/ may not import test/).
 */
export { makeTestCa, type TestCa, type TestCert } from '../../src/devdb/index.js';

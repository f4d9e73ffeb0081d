/**
 * The tests' test CA: made by `src/devdb/makeTestCa.ts` (the dev database's, which `db start
 * --tls` uses too), taken through the devdb entry.
 */
export { makeTestCa, type TestCa, type TestCert } from '../../src/devdb/index.js';

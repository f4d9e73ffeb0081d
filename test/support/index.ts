/**
 * The test infrastructure the benchmarks share with the tests and the fault harness: the shared
 * node's configuration and keyspaces of their own, the benchmark datasets' preparation, the
 * machine's description, process figures from /proc, pinned child processes, toxiproxy, report
 * JSON files and the paths of the scripts children run. test/ never imports bench/.
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
export {
  type BenchDataset,
  type BenchDatasetSpec,
  type BenchProgressFactory,
  dropBenchDataset,
  ensureBenchDataset,
  ensureGeneratedDataset,
  withDbClient,
} from './benchDataset.js';
export { benchEnvironment, type BenchEnvironment, machineEnvironment } from './benchEnvironment.js';
export { BENCH_PYTHON_ENV, benchPython } from './benchPython.js';
export * from './procfs.js';
export { reportPath, writeReportJson } from './reportJson.js';
export { benchStateDir, cliMainArgs, packageRoot, scriptArgs } from './scripts.js';
export { endChild, spawnPinned, type SpawnPinnedOptions, tail } from './spawnPinned.js';
export { startToxiproxy, type Toxic, type Toxiproxy } from './toxiproxy.js';

/**
 * The fault harness: a fleet of real `serve` processes, fault scenarios (loader kills and
 * hand-offs, admission limits, toxiproxy between loader and database, ring node stops), an
 * independent exactly-once checker of every epoch, and the robustness runs (fuzz, slow and
 * stuck consumers, soak). The fault tests use it, and the benchmarks that print its figures
 * (`npm run bench -- faults | fuzz | consumers | soak`) import it through this entry.
 *
 * @packageDocumentation
 */
export { checkHistory, emptyHistory, type FaultHistory, type Verdict } from './checkHistory.js';
export {
  DB_TOXIC_KINDS,
  FAULT_SCENARIOS,
  runFaultScenario,
  WARM_CACHE_DIR,
} from './faultScenarios.js';
export { LoaderFleet, type FleetLoader, type LoaderFleetOptions } from './LoaderFleet.js';
export { prepareFaultDataset, type FaultDataset } from './prepareFaultDataset.js';
export { readSplitIds } from './readSplitIds.js';
export { overlapMs, runScenario, type FaultBed, type ScenarioResult } from './runScenario.js';
export {
  formatFaultsReport,
  runFaultsBench,
  type FaultsBenchOptions,
  type FaultsBenchReport,
} from './runFaultsBench.js';
export {
  formatConsumersReport,
  runConsumersBench,
  type ConsumersReport,
} from './consumers/runConsumersBench.js';
export { formatFuzzReport, runFuzzBench, type FuzzReport } from './fuzz/runFuzzBench.js';
export { loaderCodec } from './fuzz/loaderCodec.js';
export { scrapeMetrics } from './probe/scrapeMetrics.js';
export { formatSoakReport, runSoakBench, type SoakReport } from './soak/runSoakBench.js';

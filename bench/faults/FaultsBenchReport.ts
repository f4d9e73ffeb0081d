import type { ScenarioResult } from './ScenarioResult.js';

/** What `bench faults` measured. @internal */
export interface FaultsBenchReport {
  quick: boolean;
  startedAt: string;
  cores: number;
  node: string;
  scenarios: ScenarioResult[];
  /** Scenarios that could not run (e.g. toxiproxy missing), with why. */
  skipped: { scenario: string; reason: string }[];
}

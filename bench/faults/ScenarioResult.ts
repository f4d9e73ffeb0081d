import type { Verdict } from './Verdict.js';

/** What a fault scenario did and what the checker made of it. @internal */
export interface ScenarioResult {
  scenario: string;
  /** Faults injected, by kind (e.g. `node SIGKILL`, `toxic reset_peer`). */
  faults: Record<string, number>;
  /** Sum of {@link ScenarioResult.faults}. */
  faultCount: number;
  verdict: Verdict;
  /** Loader exits that were not injected. */
  loaderCrashes: number;
  /** Why the loaders exited by themselves, for a person to read. */
  crashDetails: string[];
  /** Distinct loader processes the run used. */
  loaders: number;
  /** Worker processes of each loader (`serve --workers N`; 1 when it serves alone). */
  workersPerLoader: number;
  /** Workers (or ports) that outlived their loader's exit; see `LoaderFleet.orphans`. */
  orphans: number;
  orphanDetails: string[];
  /** The three longest waits between batches (when, which rank): where the stalls were. */
  longestWaits: { rank: number; epoch: number; atMs: number; ms: number }[];
  seconds: number;
}

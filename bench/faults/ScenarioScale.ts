/**
 * How long a scenario runs: `quick` for the integration tests and `bench faults --quick`
 * (each well under a minute), `long` for the benchmark's figures.
 *
 * @internal
 */
export type ScenarioScale = 'quick' | 'long';

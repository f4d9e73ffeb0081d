/**
 * The CLI's building blocks for another command-line program run from a checkout (the
 * benchmarks): the database flags, progress bars, the action wrapper that prints a
 * `LoaderError`, and a `serve` child's environment and readiness. The `scylla-loader` command
 * itself is `main.ts`.
 *
 * @packageDocumentation
 */
export { addDbOptions, dbConfigFromEnv, dbConfigFromFlags, type DbFlags } from './dbOptions.js';
export { createProgress, type Progress } from './progress.js';
export { runAction } from './runAction.js';
export { serveChildEnv, waitUntilReady, waitUntilServing } from './serveChild.js';

/**
 * Internals that the benchmarks and tests measure directly and that no public entry exports:
 * the SDK's batch decoder (the batch-layout micro-benchmark times it against the encoder).
 *
 * @packageDocumentation
 */
export { decodeBatch } from '../client/decodeBatch.js';

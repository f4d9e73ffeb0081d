/**
 * The MNIST sample dataset's files for development machines. The photo datasets have their
 * own entry, `photos/index.ts`, since the runtime image leaves that folder out.
 *
 * @packageDocumentation
 */
export { prepareMnist, type PreparedMnist, type PrepareMnistOptions } from './prepareMnist.js';
export { cacheBaseDir } from './cacheBaseDir.js';

/**
 * The sample datasets for development machines: MNIST's files and the photo presets (see
 * `photos/index.ts`; the runtime image leaves the photos out, so nothing shipped imports this).
 *
 * @packageDocumentation
 */
export { prepareMnist, type PreparedMnist, type PrepareMnistOptions } from './prepareMnist.js';
export { PHOTO_PRESET_NAMES, PHOTO_PRESETS, type PhotoPresetName } from './photos/PhotoPreset.js';
export { readPhotoFolder } from './photos/readPhotoFolder.js';
export { writePhotoJpegs } from './photos/writePhotoJpegs.js';

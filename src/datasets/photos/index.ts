/**
 * The photo sample datasets: JPEGs cropped from real photographs fetched with `apt-get
 * download`, the benchmarks' payloads. For development machines only: the runtime image
 * leaves this folder out, and the CLI loads it through `loadPhotos()`.
 *
 * @packageDocumentation
 */
export { PHOTO_PRESETS, PHOTO_PRESET_NAMES, type PhotoPresetName } from './PhotoPreset.js';
export { fetchPhotoPackages } from './fetchPhotoPackages.js';
export { readPhotoFolder } from './readPhotoFolder.js';
export { writePhotoJpegs } from './writePhotoJpegs.js';

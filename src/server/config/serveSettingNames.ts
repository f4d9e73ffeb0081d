import type { SettingNames } from '../../core/index.js';

/**
 * How the core's messages name the settings of `serve` (as the CLI's declarations name them:
 * flag, then variable; a unit test keeps the two equal). A worker of `serve --workers N` has
 * no command line of its own, so the server holds them.
 */
export const SERVE_SETTING_NAMES: Required<SettingNames> = {
  resumeKey: 'SCYLLA_LOADER_RESUME_KEY',
  cacheDir: '--cache-dir (SCYLLA_LOADER_CACHE_DIR)',
  maxHeldBytes: '--max-held-bytes (SCYLLA_LOADER_MAX_HELD_BYTES)',
  maxMixedEpoch: '--max-mixed-epoch (SCYLLA_LOADER_MAX_MIXED_EPOCH)',
  maxImagePixels: '--max-image-pixels (SCYLLA_LOADER_MAX_IMAGE_PIXELS)',
};

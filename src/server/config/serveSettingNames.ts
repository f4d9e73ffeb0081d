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
  contactPoints: '--contact-points (SCYLLA_LOADER_CONTACT_POINTS)',
  port: '--port (SCYLLA_LOADER_CQL_PORT)',
  username: 'SCYLLA_LOADER_DB_USERNAME',
  password: 'SCYLLA_LOADER_DB_PASSWORD (or SCYLLA_LOADER_DB_PASSWORD_FILE)',
  tls: '--db-tls (SCYLLA_LOADER_DB_TLS=true)',
  'tls.caFile': '--db-tls-ca (SCYLLA_LOADER_DB_TLS_CA)',
  'tls.certFile': '--db-tls-cert (SCYLLA_LOADER_DB_TLS_CERT)',
  'tls.keyFile': '--db-tls-key (SCYLLA_LOADER_DB_TLS_KEY)',
  'tls.verifyHostname': '--db-tls-no-verify-hostname (SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME=false)',
};

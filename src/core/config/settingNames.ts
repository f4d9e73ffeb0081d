/**
 * The core's settings that its messages may tell a person to change. The core reads no flags
 * nor variables: a message names a setting as its caller calls it (the CLI: `--cache-dir
 * (SCYLLA_LOADER_CACHE_DIR)`; a library user: the option's field, `cacheDir`).
 */
export type CoreSetting =
  'resumeKey' | 'cacheDir' | 'maxHeldBytes' | 'maxMixedEpoch' | 'maxImagePixels' | DbSetting;

/**
 * The database settings (`DbConfig`'s fields, by their paths) that the messages of a
 * refused configuration or a failed connection name. A switch's name says how to set it the
 * way the message asks (the CLI: `--db-tls (SCYLLA_LOADER_DB_TLS=true)`).
 */
export type DbSetting =
  | 'contactPoints'
  | 'port'
  | 'username'
  | 'password'
  | 'tls'
  | 'tls.caFile'
  | 'tls.certFile'
  | 'tls.keyFile'
  | 'tls.verifyHostname';

/** How the caller names the core's settings; a setting left out is named by its field. */
export type SettingNames = Partial<Record<CoreSetting, string>>;

/** How a message names `setting`: the caller's name for it, else its field. */
export function settingName(names: SettingNames | undefined, setting: CoreSetting): string {
  return names?.[setting] ?? setting;
}

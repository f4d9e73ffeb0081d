import os from 'node:os';
import path from 'node:path';

/**
 * Where downloaded tools are cached: `$SCYLLA_LOADER_CACHE_DIR`, else
 * `${XDG_CACHE_HOME ?? ~/.cache}/scylla-loader`. Outside the repository on purpose, so every
 * checkout and worktree shares one ~80 MB download.
 */
export function cacheBaseDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SCYLLA_LOADER_CACHE_DIR) return path.resolve(env.SCYLLA_LOADER_CACHE_DIR);
  const xdg = env.XDG_CACHE_HOME ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(xdg, 'scylla-loader');
}

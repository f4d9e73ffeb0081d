import os from 'node:os';
import path from 'node:path';

/**
 * Where downloaded tools are cached (Cassandra's jars, the photo datasets' packages):
 * `${XDG_CACHE_HOME ?? ~/.cache}/scylla-loader`, where the setup scripts keep the other tools
 * and the Python environment too. Outside the repository on purpose, so every checkout and
 * worktree shares one ~80 MB download. Not `SCYLLA_LOADER_CACHE_DIR`: that names the folder of
 * the sample cache's disk tier (`serve --cache-dir`), and tools downloaded there would count
 * against its bound, or be cleared with it.
 */
export function cacheBaseDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(xdg, 'scylla-loader');
}

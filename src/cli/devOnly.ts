import { existsSync } from 'node:fs';
import { LoaderError } from '../core/index.js';

/**
 * Fails with FAILED_PRECONDITION, saying what to do instead, when a development-only part of
 * the CLI is not installed: the runtime image leaves `src/devdb` (a JVM launcher that downloads
 * Cassandra from Maven Central) and `src/datasets/photos` (an `apt-get download` of photos) out.
 */
function requirePart(folder: URL, what: string, instead: string): void {
  if (existsSync(folder)) return;
  throw new LoaderError(
    'FAILED_PRECONDITION',
    `${what} is not part of this installation (the runtime image leaves it out); ${instead}`,
  );
}

/** The local development database (`db start`, `db stop`...), loaded when first needed. */
export async function loadDevDb(
  instead = 'point SCYLLA_LOADER_CONTACT_POINTS at a cluster instead',
): Promise<typeof import('../devdb/index.js')> {
  requirePart(new URL('../devdb/', import.meta.url), 'the local development database', instead);
  return import('../devdb/index.js');
}

/** The photo sample datasets (`prepare photos`), loaded when first needed. */
export async function loadPhotos(): Promise<typeof import('../datasets/photos/index.js')> {
  requirePart(
    new URL('../datasets/photos/', import.meta.url),
    'the photo sample datasets',
    'run `prepare photos` from a checkout of the repository',
  );
  return import('../datasets/photos/index.js');
}

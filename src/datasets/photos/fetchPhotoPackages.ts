import { execFile } from 'node:child_process';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { cacheBaseDir } from '../cacheBaseDir.js';
import { LoaderError } from '../../core/index.js';

const run = promisify(execFile);

/**
 * Debian packages that carry real photographs: `opencv-doc` (OpenCV's sample pictures, ~96 MB)
 * and `mate-backgrounds` (MATE's nature wallpapers, ~47 MB).
 *
 * @internal
 */
export const PHOTO_PACKAGES = ['opencv-doc', 'mate-backgrounds'] as const;

/** Options of {@link fetchPhotoPackages}. */
export interface FetchPhotoPackagesOptions {
  /** Folder of the .deb files and their extracted trees; default `<cacheBaseDir>/debs`. */
  cacheDir?: string;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Makes sure {@link PHOTO_PACKAGES} are downloaded (`apt-get download`, which needs no root
 * and installs nothing) and extracted (`dpkg-deb -x`) under the cache folder, and returns the
 * extracted root of each, by package name. A package already extracted is not looked at again;
 * extraction goes to a temporary folder renamed at the end, so a present folder is complete.
 */
export async function fetchPhotoPackages(
  options: FetchPhotoPackagesOptions = {},
): Promise<Record<(typeof PHOTO_PACKAGES)[number], string>> {
  const dir = options.cacheDir ?? path.join(cacheBaseDir(), 'debs');
  await mkdir(dir, { recursive: true });
  const roots = {} as Record<(typeof PHOTO_PACKAGES)[number], string>;
  for (const pkg of PHOTO_PACKAGES) {
    const root = path.join(dir, `x_${pkg}`);
    roots[pkg] = root;
    if (await stat(root).catch(() => null)) continue;
    let deb = await findDeb(dir, pkg);
    if (!deb) {
      options.log?.(`downloading ${pkg} with apt-get download into ${dir}`);
      await tool('apt-get', ['download', pkg], dir, options.signal, {
        missing: 'apt-get is not installed: this needs Debian or Ubuntu',
        failed:
          `could not download ${pkg}; run \`sudo apt-get update\` and check the network, or ` +
          `put ${pkg}_*.deb into ${dir} yourself`,
      });
      deb = await findDeb(dir, pkg);
      if (!deb) throw precondition(`apt-get download ${pkg} left no ${pkg}_*.deb in ${dir}`);
    }
    options.log?.(`extracting ${path.basename(deb)}`);
    const tmp = `${root}.${process.pid}.tmp`;
    await rm(tmp, { recursive: true, force: true });
    await tool('dpkg-deb', ['-x', deb, tmp], dir, options.signal, {
      missing: 'dpkg-deb is not installed: install the `dpkg` package (Debian or Ubuntu)',
      failed: `could not extract ${deb}; delete it so that it is downloaded again`,
    });
    await rename(tmp, root);
  }
  return roots;
}

async function findDeb(dir: string, pkg: string): Promise<string | undefined> {
  const names = (await readdir(dir)).filter((n) => n.startsWith(`${pkg}_`) && n.endsWith('.deb'));
  // Newest version last in a plain sort is good enough: there is normally one.
  const name = names.sort().at(-1);
  return name ? path.join(dir, name) : undefined;
}

async function tool(
  command: string,
  args: string[],
  cwd: string,
  signal: AbortSignal | undefined,
  help: { missing: string; failed: string },
): Promise<void> {
  try {
    await run(command, args, { cwd, maxBuffer: 16 * 1024 * 1024, ...(signal ? { signal } : {}) });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.name === 'AbortError') throw err;
    if (e.code === 'ENOENT') throw precondition(help.missing, err);
    const detail = (e.stderr ?? e.message).trim().split('\n').slice(-3).join('; ');
    throw precondition(`${command} ${args.join(' ')} failed (${detail}): ${help.failed}`, err);
  }
}

/** Something this machine lacks: the CLI prints the message alone (no stack). */
function precondition(message: string, cause?: unknown): LoaderError {
  return new LoaderError('FAILED_PRECONDITION', message, { cause });
}

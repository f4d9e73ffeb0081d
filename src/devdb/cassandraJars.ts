import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cacheBaseDir } from '../datasets/cacheBaseDir.js';
import { DEFAULT_CASSANDRA_VERSION } from './cassandraVersion.js';
import { isProcessAlive } from './processAlive.js';

/** Written last into a finished download; a folder without it is never used. */
const COMPLETE_MARKER = 'COMPLETE';

/** Options of {@link ensureCassandraJars}. */
export interface EnsureCassandraJarsOptions {
  /** Cassandra release, e.g. `5.0.9`. */
  version?: string;
  /** Base cache folder; defaults to {@link cacheBaseDir}. */
  cacheDir?: string;
  /** Receives progress lines meant for a person. */
  log?: (line: string) => void;
}

/**
 * Makes sure the jars of Apache Cassandra `version` and its runtime dependencies are in the
 * cache, downloading them with Maven on first use, and returns the folder holding them
 * (`<cache>/cassandra-<version>/lib`).
 *
 * The binary tarball of 5.x is not on Maven Central, so the node is assembled from
 * `cassandra-all` and its dependencies. Maven writes into a temporary folder that is renamed
 * into place only after it succeeded, so an interrupted download is never mistaken for a
 * complete one, and two processes downloading at once cannot corrupt each other.
 */
export async function ensureCassandraJars(opts: EnsureCassandraJarsOptions = {}): Promise<string> {
  const version = opts.version ?? DEFAULT_CASSANDRA_VERSION;
  const base = opts.cacheDir ? path.resolve(opts.cacheDir) : cacheBaseDir();
  const finalDir = path.join(base, `cassandra-${version}`);
  const libDir = path.join(finalDir, 'lib');
  if (existsSync(path.join(finalDir, COMPLETE_MARKER))) return libDir;

  await mkdir(base, { recursive: true });
  await removeAbandonedDownloads(base, version);
  const tmpDir = path.join(
    base,
    `.tmp-cassandra-${version}-${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  await mkdir(tmpDir);
  try {
    await writeFile(path.join(tmpDir, 'pom.xml'), pomXml(version));
    opts.log?.(
      `downloading Apache Cassandra ${version} jars with Maven into ${finalDir} (first run only)`,
    );
    const started = Date.now();
    await runMaven(tmpDir, path.join(tmpDir, 'lib'));
    await checkLibDir(path.join(tmpDir, 'lib'), version);
    await writeFile(path.join(tmpDir, COMPLETE_MARKER), `${new Date().toISOString()}\n`);
    await moveIntoPlace(tmpDir, finalDir);
    opts.log?.(`downloaded Cassandra jars in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return libDir;
  } finally {
    await rm(tmpDir, { recursive: true, force: true });
  }
}

/** A pom whose only purpose is to let `dependency:copy-dependencies` resolve the jars. */
function pomXml(version: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.scylla-loader</groupId>
  <artifactId>cassandra-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>${version}</version>
    </dependency>
  </dependencies>
</project>
`;
}

function runMaven(projectDir: string, outputDir: string): Promise<void> {
  const args = [
    '-B',
    '-q',
    // Its output ends up in our error messages: no colour escapes.
    '-Dstyle.color=never',
    '-f',
    path.join(projectDir, 'pom.xml'),
    'dependency:copy-dependencies',
    `-DoutputDirectory=${outputDir}`,
    '-DincludeScope=runtime',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('mvn', args, { cwd: projectDir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer): void => {
      // Only the tail is ever shown, so the buffer must not grow with a chatty Maven.
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'ENOENT'
          ? new Error(
              'Maven (`mvn`) was not found on PATH. It is needed once to download the Apache ' +
                'Cassandra jars for the local development node: install Maven 3 (e.g. ' +
                '`apt-get install maven`), or point the tool at an existing cluster with ' +
                'SCYLLA_LOADER_CONTACT_POINTS.',
              { cause: err },
            )
          : new Error(`could not run mvn: ${err.message}`, { cause: err }),
      );
    });
    child.on('close', (code, signal) => {
      if (code === 0) {
        resolve();
        return;
      }
      // eslint-disable-next-line no-control-regex -- removing ANSI colour codes on purpose
      const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
      const tail = plain.trimEnd().split('\n').slice(-30).join('\n');
      reject(
        new Error(
          `mvn failed (${signal ? `signal ${signal}` : `exit code ${code}`}) while downloading ` +
            `Cassandra jars with: mvn ${args.join(' ')}\n${tail}`,
        ),
      );
    });
  });
}

async function checkLibDir(libDir: string, version: string): Promise<void> {
  const names = await readdir(libDir);
  const missing = [
    names.includes(`cassandra-all-${version}.jar`) ? null : `cassandra-all-${version}.jar`,
    names.some((n) => /^jamm-.*\.jar$/.test(n)) ? null : 'jamm-*.jar',
  ].filter((n) => n !== null);
  if (missing.length > 0) {
    throw new Error(`Maven finished but ${libDir} lacks ${missing.join(', ')}`);
  }
}

async function moveIntoPlace(tmpDir: string, finalDir: string): Promise<void> {
  try {
    await rename(tmpDir, finalDir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
    // Another process finished first: use its copy. A folder without the marker cannot come
    // from this code (the rename is atomic), so it is debris and is replaced.
    if (existsSync(path.join(finalDir, COMPLETE_MARKER))) return;
    await rm(finalDir, { recursive: true, force: true });
    await rename(tmpDir, finalDir);
  }
}

/** Deletes temporary folders left by downloads whose process died (e.g. Ctrl-C). */
async function removeAbandonedDownloads(base: string, version: string): Promise<void> {
  const prefix = `.tmp-cassandra-${version}-`;
  for (const name of await readdir(base)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid !== process.pid && !isProcessAlive(pid)) {
      await rm(path.join(base, name), { recursive: true, force: true });
    }
  }
}

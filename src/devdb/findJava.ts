import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Debian's path of OpenJDK 17, the JDK this project is developed against. */
const DEBIAN_JAVA_17 = '/usr/lib/jvm/java-17-openjdk-amd64/bin/java';

/**
 * Picks the `java` executable for Cassandra 5.0, which supports Java 11 and 17 only: newer
 * JDKs installed alongside (e.g. 25) would fail at start-up. Order: `$JAVA_HOME` when it is a
 * 17, then Debian's OpenJDK 17, then whatever `java` is on PATH.
 *
 * @internal
 */
export function findJava(env: NodeJS.ProcessEnv = process.env): string {
  if (env.JAVA_HOME) {
    const candidate = path.join(env.JAVA_HOME, 'bin', 'java');
    if (existsSync(candidate) && javaHomeMajor(env.JAVA_HOME) === 17) return candidate;
  }
  if (existsSync(DEBIAN_JAVA_17)) return DEBIAN_JAVA_17;
  return 'java';
}

/** Reads the major version from the JDK's `release` file, which every JDK since 9 ships. */
function javaHomeMajor(javaHome: string): number | undefined {
  try {
    const release = readFileSync(path.join(javaHome, 'release'), 'utf8');
    const match = /^JAVA_VERSION="(\d+)/m.exec(release);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The modules nodetool's file utilities reach into on Java 17 (as Cassandra's own scripts open). */
const JAVA_OPENS = [
  '--add-exports',
  'java.base/jdk.internal.ref=ALL-UNNAMED',
  '--add-opens',
  'java.base/jdk.internal.ref=ALL-UNNAMED',
  '--add-opens',
  'java.base/sun.nio.ch=ALL-UNNAMED',
];

/** Only warnings, on stderr: stdout then holds nodetool's answer alone (JSON for `-F json`). */
const QUIET_LOGBACK =
  '<configuration><appender name="E" class="ch.qos.logback.core.ConsoleAppender">' +
  '<target>System.err</target><encoder><pattern>%msg%n</pattern></encoder></appender>' +
  '<root level="WARN"><appender-ref ref="E"/></root></configuration>\n';

/** Runs nodetool against one node and returns its stdout. */
export type Nodetool = (args: string[]) => Promise<string>;

/**
 * `nodetool` of the local node whose pid is `pid`, made from that node's own command line: its
 * `java`, its class path (the Cassandra jars) and its local JMX port. Its home (where nodetool
 * keeps a history) is a scratch folder, removed by `close`. Fails, naming what it missed, when
 * the pid is not a Cassandra node started with a local JMX port (Linux `/proc` only). @internal
 */
export async function localNodetool(
  pid: number,
): Promise<{ nodetool: Nodetool; close(): Promise<void> }> {
  const proc = `/proc/${pid}`;
  const args = (await readFile(`${proc}/cmdline`, 'utf8')).split('\0');
  const java = await readlink(`${proc}/exe`);
  const port = args
    .map((a) =>
      /^-D(?:cassandra\.jmx\.local\.port|com\.sun\.management\.jmxremote\.port)=(\d+)$/.exec(a),
    )
    .find((m) => m !== null)?.[1];
  const cp = args[args.indexOf('-cp') + 1];
  if (port === undefined || !args.includes('-cp') || cp === undefined) {
    throw new Error(
      `process ${pid} is not a Cassandra node with a local JMX port and a class path`,
    );
  }
  const home = await mkdtemp(path.join(os.tmpdir(), 'sl-nodetool-'));
  const logback = path.join(home, 'logback.xml');
  await writeFile(logback, QUIET_LOGBACK);
  return {
    nodetool: async (command) => {
      const { stdout } = await run(
        java,
        [
          `-Duser.home=${home}`,
          `-Dlogback.configurationFile=${logback}`,
          ...JAVA_OPENS,
          '-cp',
          cp,
          'org.apache.cassandra.tools.NodeTool',
          '-h',
          '127.0.0.1',
          '-p',
          port,
          ...command,
        ],
        { timeout: 180_000, maxBuffer: 16 * 2 ** 20 },
      );
      return stdout;
    },
    close: () => rm(home, { recursive: true, force: true }),
  };
}

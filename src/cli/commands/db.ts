import { Command, InvalidArgumentError } from 'commander';
import { loadDevDb } from '../devOnly.js';
import { createDbClient } from '../../core/index.js';
import { dbConfigFromEnv, dbSettingNames } from '../dbOptions.js';
import { runAction } from '../runAction.js';

interface StartFlags {
  nodes?: number;
  firstAddress?: string;
  stateDir?: string;
  heapMb?: number;
  auth?: boolean;
  tls?: boolean;
  tlsClientAuth?: boolean;
}

/**
 * Registers `db start|stop|status|fetch`: the local Apache Cassandra node (or ring) used for
 * development and tests. With `SCYLLA_LOADER_CONTACT_POINTS` set, `db start` only checks that
 * cluster (e.g. ScyllaDB) instead of starting anything.
 */
export function registerDbCommand(program: Command): void {
  const db = program
    .command('db')
    .description('start, stop or inspect the local development database (Apache Cassandra)');

  db.command('start')
    .description(
      'start the local node (or reuse the running one); with SCYLLA_LOADER_CONTACT_POINTS ' +
        'set, check that cluster instead',
    )
    .option('--nodes <n>', 'number of nodes (a new cluster only)', positiveInt)
    .option('--first-address <ip>', 'address of node 1; node i gets the next addresses')
    .option('--state-dir <dir>', 'folder of the cluster (default: <repo>/.state/db)')
    .option('--heap-mb <mb>', 'Java heap of each node in MiB', positiveInt)
    .option(
      '--auth',
      'password authentication, with a login role whose password is kept in the state folder ' +
        '(a new cluster only)',
    )
    .option(
      '--tls',
      'CQL over TLS only, with a test CA made in the state folder (a new cluster only)',
    )
    .option(
      '--tls-client-auth',
      'with --tls, clients must present a certificate signed by the test CA; one for clients ' +
        'is made in the state folder (a new cluster only)',
    )
    .action(userErrors(start));

  db.command('stop')
    .description('stop the local nodes (data is kept)')
    .option('--state-dir <dir>', 'folder of the cluster (default: <repo>/.state/db)')
    .action(
      userErrors(async (flags: { stateDir?: string }) => {
        const { defaultStateDir, stopLocalCluster } = await loadDevDb();
        const stateDir = flags.stateDir ?? defaultStateDir();
        const { stopped } = await stopLocalCluster(stateDir);
        say(
          stopped > 0
            ? `stopped ${stopped} node(s) in ${stateDir}`
            : `nothing running in ${stateDir}`,
        );
      }),
    );

  db.command('status')
    .description('show whether the local nodes run and answer CQL')
    .option('--state-dir <dir>', 'folder of the cluster (default: <repo>/.state/db)')
    .action(userErrors(status));

  // Downloads without starting anything (the set-up's `db start` downloads on first use too).
  db.command('fetch')
    .description(
      "download the local node's jars (Apache Cassandra, from Maven Central) into the cache " +
        'if they are not there yet; nothing is started',
    )
    .action(
      userErrors(async () => {
        const { ensureCassandraJars } = await loadDevDb();
        const libDir = await ensureCassandraJars({ log: say });
        say(`Cassandra jars in ${libDir}`);
      }),
    );
}

async function start(flags: StartFlags): Promise<void> {
  const started = Date.now();
  const config = dbConfigFromEnv();
  if (config.contactPoints.length > 0) {
    // Pointing at an existing cluster (ScyllaDB in production): nothing to start, only check.
    const client = await createDbClient(config, { settingNames: dbSettingNames() });
    try {
      const rs = await client.execute('SELECT release_version FROM system.local');
      const version: unknown = rs.first()?.['release_version'];
      say(`using the cluster at SCYLLA_LOADER_CONTACT_POINTS (nothing started)`);
      say(`  release version: ${String(version)}`);
      say(`  datacenter:      ${config.localDataCenter}`);
      for (const host of client.hosts.values()) {
        say(`  host ${host.address} dc=${host.datacenter} ${host.isUp() ? 'up' : 'DOWN'}`);
      }
    } finally {
      await client.shutdown();
    }
    return;
  }
  const { defaultStateDir, startLocalCluster } = await loadDevDb();
  const cluster = await startLocalCluster({
    stateDir: flags.stateDir ?? defaultStateDir(),
    ...(flags.nodes !== undefined ? { nodes: flags.nodes } : {}),
    ...(flags.firstAddress !== undefined ? { firstAddress: flags.firstAddress } : {}),
    ...(flags.heapMb !== undefined ? { heapMb: flags.heapMb } : {}),
    ...(flags.auth ? { auth: true } : {}),
    ...(flags.tls || flags.tlsClientAuth ? { tls: true } : {}),
    ...(flags.tlsClientAuth ? { tlsClientAuth: true } : {}),
    log: say,
  });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  say(
    cluster.reused
      ? `local Cassandra already running (${secs} s)`
      : `local Cassandra ready in ${secs} s`,
  );
  say(`  contact points: ${cluster.contactPoints.join(',')}`);
  say(`  port:           ${cluster.port}`);
  say(`  datacenter:     ${cluster.localDataCenter}`);
  say(`  state dir:      ${cluster.stateDir}`);
  for (const file of cluster.logFiles) say(`  log file:       ${file}`);
  say(`  reused:         ${cluster.reused ? 'yes' : 'no'}`);
  if (cluster.tls) say(`  TLS CA file:    ${cluster.tls.caFile} (CQL speaks TLS only)`);
  if (cluster.tls?.clientCertFile) {
    say(`  client cert:    ${cluster.tls.clientCertFile} (the nodes require one)`);
  }
  if (cluster.auth) {
    say(`  user:           ${cluster.auth.username}`);
    say(`  password file:  ${cluster.auth.passwordFile}`);
  }
  if (cluster.tls || cluster.auth) {
    // The settings every other command needs for this cluster, ready to paste.
    say('  connect with:');
    say(`    export SCYLLA_LOADER_CONTACT_POINTS=${cluster.contactPoints.join(',')}`);
    if (cluster.tls) say(`    export SCYLLA_LOADER_DB_TLS_CA=${cluster.tls.caFile}`);
    if (cluster.tls?.clientCertFile && cluster.tls.clientKeyFile) {
      say(`    export SCYLLA_LOADER_DB_TLS_CERT=${cluster.tls.clientCertFile}`);
      say(`    export SCYLLA_LOADER_DB_TLS_KEY=${cluster.tls.clientKeyFile}`);
    }
    if (cluster.auth) {
      say(`    export SCYLLA_LOADER_DB_USERNAME=${cluster.auth.username}`);
      say(`    export SCYLLA_LOADER_DB_PASSWORD_FILE=${cluster.auth.passwordFile}`);
    }
  }
}

async function status(flags: { stateDir?: string }): Promise<void> {
  const { defaultStateDir, localClusterStatus } = await loadDevDb();
  const stateDir = flags.stateDir ?? defaultStateDir();
  const contactPoints = dbConfigFromEnv().contactPoints;
  if (contactPoints.length > 0) {
    say(
      `note: SCYLLA_LOADER_CONTACT_POINTS=${contactPoints.join(',')} is set: commands use that cluster`,
    );
  }
  const { nodes } = await localClusterStatus(stateDir);
  if (nodes.length === 0) {
    say(`no local cluster in ${stateDir} (start one with \`scylla-loader db start\`)`);
    return;
  }
  say(`local cluster in ${stateDir}`);
  for (const n of nodes) {
    const state = n.running ? `running (pid ${n.pid})` : 'stopped';
    const cql = n.running ? (n.cqlUp ? ', CQL up' : ', CQL not answering') : '';
    say(`  node ${n.index} ${n.address}:${n.port} ${state}${cql}  log ${n.logFile}`);
  }
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/**
 * Like {@link runAction}, and also prints the message alone for the plain `Error`s the local
 * database code throws: they are written for a person (a node failed to start, with its log
 * tail; Maven is missing), not bugs, so a stack trace would only bury the message.
 */
function userErrors<A extends unknown[]>(
  action: (...args: A) => Promise<void>,
): (...args: A) => Promise<void> {
  return runAction(async (...args: A) => {
    try {
      await action(...args);
    } catch (err) {
      if (!(err instanceof Error) || err.constructor !== Error) throw err;
      process.exitCode = 1;
      process.stderr.write(`error: ${err.message}\n`);
    }
  });
}

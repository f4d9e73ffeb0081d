import { pathToFileURL } from 'node:url';
import path from 'node:path';
import type { NodeLayout } from './nodeLayout.js';

/** Modules Cassandra reaches into, from 5.0's `conf/jvm17-server.options`. */
const ADD_EXPORTS = [
  'java.base/jdk.internal.misc',
  'java.management.rmi/com.sun.jmx.remote.internal.rmi',
  'java.rmi/sun.rmi.registry',
  'java.rmi/sun.rmi.server',
  'java.sql/java.sql',
  'java.base/java.lang.ref',
  'jdk.unsupported/sun.misc',
  'jdk.compiler/com.sun.tools.javac.file',
  'jdk.attach/sun.tools.attach',
];

const ADD_OPENS = [
  'java.base/java.lang.module',
  'java.base/jdk.internal.loader',
  'java.base/jdk.internal.ref',
  'java.base/jdk.internal.reflect',
  'java.base/jdk.internal.math',
  'java.base/jdk.internal.module',
  'java.base/jdk.internal.util.jar',
  'java.base/sun.nio.ch',
  'java.base/java.io',
  'java.base/java.lang.reflect',
  'java.base/java.lang',
  'java.base/java.util',
  'jdk.management/com.sun.management.internal',
  'jdk.compiler/com.sun.tools.javac',
];

/** Inputs of {@link cassandraJvmArgs}. @internal */
export interface CassandraJvmArgsInput {
  node: NodeLayout;
  libDir: string;
  /** File name of the jamm agent jar inside `libDir`. */
  jammJar: string;
  heapMb: number;
  jmxPort: number;
  /** Password authentication is on: create the default superuser at once, not after 10 s. */
  auth?: boolean;
}

/**
 * The full `java` argument list that runs one node in the foreground, equivalent to what
 * `bin/cassandra` of the 5.0 tarball assembles from `jvm17-server.options` and
 * `cassandra-env.sh`, which are not on Maven Central.
 *
 * @internal
 */
export function cassandraJvmArgs(input: CassandraJvmArgsInput): string[] {
  const { node, libDir, heapMb } = input;
  return [
    // Cassandra measures object sizes with jamm and refuses to start without the agent.
    `-javaagent:${path.join(libDir, input.jammJar)}`,
    '-ea',
    '-da:net.openhft...',
    `-Xms${heapMb}m`,
    `-Xmx${heapMb}m`,
    '-Xss256k',
    '-XX:+UseG1GC',
    '-XX:+ParallelRefProcEnabled',
    '-XX:MaxGCPauseMillis=300',
    '-XX:+UseThreadPriorities',
    // hsperfdata in /tmp is shared by every JVM of the machine; nothing here reads it.
    '-XX:+PerfDisableSharedMem',
    // A node out of heap is broken for good: exit so the failure shows, instead of limping.
    '-XX:+ExitOnOutOfMemoryError',
    `-XX:ErrorFile=${path.join(node.logDir, 'hs_err_pid%p.log')}`,
    '-Djava.net.preferIPv4Stack=true',
    '-Djdk.attach.allowAttachSelf=true',
    '-Dio.netty.tryReflectionSetAccessible=true',
    ...ADD_EXPORTS.flatMap((m) => ['--add-exports', `${m}=ALL-UNNAMED`]),
    ...ADD_OPENS.flatMap((m) => ['--add-opens', `${m}=ALL-UNNAMED`]),
    // A bare path would be looked up on the classpath: it must be a URL.
    `-Dcassandra.config=${pathToFileURL(node.yamlFile).href}`,
    `-Dlogback.configurationFile=${pathToFileURL(node.logbackFile).href}`,
    `-Dcassandra.storagedir=${node.dir}`,
    `-Dcassandra.logdir=${node.logDir}`,
    '-Dcassandra-foreground=yes',
    // Binds 127.0.0.1 only; without it nodetool cannot connect (not needed by the loader).
    `-Dcassandra.jmx.local.port=${input.jmxPort}`,
    // Start-up waits meant for large production rings; a dev ring has nothing to settle.
    '-Dcassandra.skip_wait_for_gossip_to_settle=0',
    '-Dcassandra.ring_delay_ms=1000',
    // A stopping node tells its peers and then sleeps 2 s so the news spreads; over loopback
    // it arrives at once, and every stop (tests stop rings often) would pay the 2 s.
    '-Dcassandra.shutdown_announce_in_ms=500',
    // Nodes of a ring start together. Without this a non-seed that comes up before the seed
    // gives up after a "shadow" gossip round of 2 x ring_delay ("Unable to gossip with any
    // peers"). The check it skips guards against two live nodes sharing one address, which
    // cannot happen here: every node of a state folder has its own address.
    '-Dcassandra.allow_unsafe_join=true',
    ...(input.auth ? ['-Dcassandra.superuser_setup_delay_ms=0'] : []),
    `-Dcassandra.triggers_dir=${node.triggersDir}`,
    // JNA unpacks its native library; /tmp may be mounted noexec.
    `-Djna.tmpdir=${node.tmpDir}`,
    `-Djava.io.tmpdir=${node.tmpDir}`,
    '-cp',
    `${node.confDir}${path.delimiter}${path.join(libDir, '*')}`,
    'org.apache.cassandra.service.CassandraDaemon',
  ];
}

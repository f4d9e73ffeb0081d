/**
 * A real local Apache Cassandra node or ring for development and tests, assembled from Maven
 * jars and run as detached JVMs. Production targets ScyllaDB; Cassandra speaks the same CQL.
 *
 * @packageDocumentation
 */
export { ensureCassandraJars, type EnsureCassandraJarsOptions } from './cassandraJars.js';
export { cacheBaseDir } from '../datasets/cacheBaseDir.js';
export { DEFAULT_CASSANDRA_VERSION } from './cassandraVersion.js';
export { defaultStateDir } from './defaultStateDir.js';
export {
  startLocalCluster,
  type LocalCluster,
  type StartLocalClusterOptions,
} from './localCluster.js';
export { localClusterStatus, type LocalNodeStatus } from './localClusterStatus.js';
export { stopLocalCluster } from './stopLocalCluster.js';
export { stopLocalNode } from './stopLocalNode.js';
export type { TerminateOptions } from './terminateNode.js';
export { renderCassandraYaml } from './cassandraYaml.js';
export { clusterSpecSchema, readClusterSpec, type ClusterSpec } from './clusterSpec.js';
export { makeTestCa, type TestCa, type TestCert } from './makeTestCa.js';
export { nodeLayouts, type NodeLayout } from './nodeLayout.js';
export { isPortOpen } from './portOpen.js';
export { isProcessAlive } from './processAlive.js';

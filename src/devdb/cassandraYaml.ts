import type { ClusterSpec } from './clusterSpec.js';
import type { NodeLayout } from './nodeLayout.js';

/**
 * Renders the `cassandra.yaml` of one development node (Cassandra 5.0 key names).
 *
 * Only the new unit-suffixed names are used (`commitlog_segment_size: 64MiB`, not
 * `commitlog_segment_size_in_mb`): 5.0 still accepts the old ones, but refuses a file that sets
 * both spellings of one key. Any key Cassandra does not know makes it refuse to start, which
 * surfaces typos at once.
 *
 * @internal
 */
export function renderCassandraYaml(
  spec: ClusterSpec,
  node: NodeLayout,
  keystore?: DevKeystores,
): string {
  const q = (s: string): string => JSON.stringify(s);
  if (spec.tls && !keystore) throw new Error('a cluster with TLS needs a keystore');
  return `# Written by scylla-loader (src/devdb/cassandraYaml.ts); rewritten at every start.
cluster_name: ${q(spec.clusterName)}
num_tokens: 1
initial_token: ${q(node.initialToken)}
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
# A fresh dev cluster has nothing to stream from, and bootstrap would add minutes.
auto_bootstrap: false
endpoint_snitch: SimpleSnitch

# Explicit addresses: several clusters share this machine on distinct loopback addresses with
# the same ports, so nothing may bind 0.0.0.0.
listen_address: ${node.address}
rpc_address: ${node.address}
storage_port: ${spec.storagePort}
native_transport_port: ${spec.nativePort}
start_native_transport: true
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: ${q(node.seeds)}

data_file_directories:
  - ${q(node.dataDir)}
commitlog_directory: ${q(node.commitlogDir)}
hints_directory: ${q(node.hintsDir)}
saved_caches_directory: ${q(node.savedCachesDir)}
cdc_raw_directory: ${q(node.cdcRawDir)}

# A new cluster has no older nodes to stay compatible with: use 5.0's own formats.
storage_compatibility_mode: NONE

commitlog_sync: periodic
commitlog_sync_period: 10000ms
# The largest mutation accepted is half a segment: 64 MiB segments admit 32 MiB mutations, so
# a 16 MiB sample (plus its row and batchlog overhead) fits.
commitlog_segment_size: 64MiB
# Bounds disk use and replay time at start; reaching it just flushes memtables sooner.
commitlog_total_space: 1024MiB

# Protocol v4 (what the Node.js driver speaks) sends a request as one frame: room for a
# 16 MiB sample with its metadata.
native_transport_max_frame_size: 32MiB
# The defaults are heap/10 and heap/40, i.e. under 16 MiB per client on a 512 MiB heap, which
# would stall a single large insert; these also cap native_transport_max_message_size.
native_transport_max_request_data_in_flight: 64MiB
native_transport_max_request_data_in_flight_per_ip: 64MiB

# Ingest writes a sample and its metadata row in one logged batch: no warning for ordinary
# samples, and a hard limit just under the largest mutation.
batch_size_warn_threshold: 4096KiB
batch_size_fail_threshold: 32768KiB

# Large blobs on a small heap: keep memtable cells off the Java heap.
memtable_allocation_type: offheap_objects

# Dropping or truncating dev tables should not leave snapshots filling the disk.
auto_snapshot: false
# Two cores: one compaction at a time leaves room for queries.
concurrent_compactors: 1

# A loaded 2-core laptop pauses longer than production hardware; fail later, not spuriously,
# but still before the driver's 12 s client-side timeout so the server's error is what we see.
read_request_timeout: 10000ms
range_request_timeout: 10000ms
write_request_timeout: 10000ms
request_timeout: 10000ms

# Keep hints: a test stops a ring node mid-epoch and expects the data once it is back.
hinted_handoff_enabled: true
max_hint_window: 3h
${spec.auth ? AUTH_SECTION : ''}${keystore ? tlsSection(keystore, spec.tlsOptional, q) : ''}`;
}

/** `--auth`: passwords checked, every logged-in role may do everything (no authorizer). */
const AUTH_SECTION = `
# Password authentication (db start --auth); the default superuser is cassandra/cassandra.
authenticator: PasswordAuthenticator
authorizer: AllowAllAuthorizer
role_manager: CassandraRoleManager
`;

/**
 * The node's PKCS12 keystore and, with `--tls-client-auth`, the truststore holding the CA that
 * clients' certificates must chain to (both with the same password).
 *
 * @internal
 */
export interface DevKeystores {
  file: string;
  password: string;
  truststore?: string;
}

/**
 * `--tls`: the CQL port speaks TLS only (or, `optional`, TLS and plaintext on the same port);
 * clients are asked for a certificate only with a truststore (`--tls-client-auth`).
 */
function tlsSection(keystore: DevKeystores, optional: boolean, q: (s: string) => string): string {
  return `
${
  optional
    ? '# CQL over TLS, plaintext clients accepted too (tlsOptional: bench tls compares both).'
    : '# CQL over TLS only (db start --tls): a plaintext client is refused at its first frame.'
}
client_encryption_options:
  enabled: true
  optional: ${optional}
  keystore: ${q(keystore.file)}
  keystore_password: ${q(keystore.password)}
  store_type: PKCS12
${
  keystore.truststore === undefined
    ? '  require_client_auth: false'
    : `  # --tls-client-auth: a client without a certificate signed by the test CA is refused.
  require_client_auth: true
  truststore: ${q(keystore.truststore)}
  truststore_password: ${q(keystore.password)}`
}
`;
}

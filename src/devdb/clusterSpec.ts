import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

/**
 * What a local cluster was created with, stored as `cluster.json` in its state folder so that
 * `status`, `stop` and later starts know the nodes' addresses without being told again.
 *
 * @internal
 */
export const clusterSpecSchema = z.object({
  format: z.literal(1),
  cassandraVersion: z.string().min(1),
  clusterName: z.string().min(1),
  nodes: z.number().int().min(1).max(32),
  firstAddress: z.ipv4(),
  nativePort: z.number().int().min(1).max(65535),
  storagePort: z.number().int().min(1).max(65535),
  heapMb: z.number().int().min(256),
  /** Fixed JMX ports `jmxBasePort + index - 1`; when absent each start picks free ports. */
  jmxBasePort: z.number().int().min(1).max(65535).optional(),
  /** Password authentication on (`--auth`); absent in folders made before it existed. */
  auth: z.boolean().default(false),
  /** CQL over TLS only (`--tls`), with a test CA of the folder's own. */
  tls: z.boolean().default(false),
  /**
   * With `tls`: the CQL port also accepts plaintext clients (`optional: true`), so one node can
   * serve a TLS and a plaintext client side by side (`bench tls` compares the two on the same
   * node). Not part of the identity: the yaml is rewritten at every start.
   */
  tlsOptional: z.boolean().default(false),
  /**
   * With `tls`: clients must present a certificate signed by the folder's test CA
   * (`--tls-client-auth`; `require_client_auth`). The folder keeps one for the loader.
   */
  tlsClientAuth: z.boolean().default(false),
});

/** @internal */
export type ClusterSpec = z.infer<typeof clusterSpecSchema>;

/** @internal */
export function clusterSpecPath(stateDir: string): string {
  return path.join(stateDir, 'cluster.json');
}

/**
 * Reads `cluster.json`, or returns undefined when the folder never held a cluster.
 *
 * @internal
 */
export async function readClusterSpec(stateDir: string): Promise<ClusterSpec | undefined> {
  const file = clusterSpecPath(stateDir);
  if (!existsSync(file)) return undefined;
  try {
    return clusterSpecSchema.parse(JSON.parse(await readFile(file, 'utf8')));
  } catch (err) {
    throw new Error(`${file} is not a valid local cluster description; delete the folder`, {
      cause: err,
    });
  }
}

/**
 * Writes `cluster.json` through a rename, so a reader never sees half a file.
 *
 * @internal
 */
export async function writeClusterSpec(stateDir: string, spec: ClusterSpec): Promise<void> {
  const file = clusterSpecPath(stateDir);
  await writeFile(`${file}.tmp`, `${JSON.stringify(spec, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
}

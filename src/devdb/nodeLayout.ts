import path from 'node:path';
import type { ClusterSpec } from './clusterSpec.js';

/**
 * Where everything of one node lives, all under `<stateDir>/node<index>/`, plus the addresses
 * and token it uses. Pure: derived from the cluster spec alone.
 *
 * @internal
 */
export interface NodeLayout {
  /** 1-based, matching the folder name `node<index>`. */
  index: number;
  address: string;
  /** Single token (num_tokens 1), evenly spaced around the Murmur3 ring. */
  initialToken: string;
  /** `address:storagePort` of node 1, the only seed. */
  seeds: string;
  dir: string;
  confDir: string;
  yamlFile: string;
  logbackFile: string;
  dataDir: string;
  commitlogDir: string;
  hintsDir: string;
  savedCachesDir: string;
  cdcRawDir: string;
  tmpDir: string;
  /** Empty; exists only so Cassandra does not warn about a missing triggers folder. */
  triggersDir: string;
  logDir: string;
  /** Cassandra's own log (written by logback). */
  systemLog: string;
  /** The JVM's stdout and stderr: start-up failures before logging works end up here. */
  stdoutLog: string;
  pidFile: string;
}

/**
 * Lays out every node of the cluster described by `spec`.
 *
 * @internal
 */
export function nodeLayouts(stateDir: string, spec: ClusterSpec): NodeLayout[] {
  const tokens = evenTokens(spec.nodes);
  const firstAddress = spec.firstAddress;
  return tokens.map((initialToken, i) => {
    const dir = path.join(stateDir, `node${i + 1}`);
    const confDir = path.join(dir, 'conf');
    const logDir = path.join(dir, 'logs');
    return {
      index: i + 1,
      address: nthAddress(firstAddress, i),
      initialToken,
      seeds: `${firstAddress}:${spec.storagePort}`,
      dir,
      confDir,
      yamlFile: path.join(confDir, 'cassandra.yaml'),
      logbackFile: path.join(confDir, 'logback.xml'),
      dataDir: path.join(dir, 'data'),
      commitlogDir: path.join(dir, 'commitlog'),
      hintsDir: path.join(dir, 'hints'),
      savedCachesDir: path.join(dir, 'saved_caches'),
      cdcRawDir: path.join(dir, 'cdc_raw'),
      tmpDir: path.join(dir, 'tmp'),
      triggersDir: path.join(dir, 'triggers'),
      logDir,
      systemLog: path.join(logDir, 'system.log'),
      stdoutLog: path.join(logDir, 'stdout.log'),
      pidFile: path.join(dir, 'cassandra.pid'),
    };
  });
}

/** The IPv4 address `offset` after `first` (127.0.0.11 + 2 = 127.0.0.13). */
function nthAddress(first: string, offset: number): string {
  const n = first.split('.').reduce((acc, part) => acc * 256 + Number(part), 0) + offset;
  if (n > 0xffffffff) throw new Error(`no IPv4 address ${offset} after ${first}`);
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/**
 * Murmur3 tokens splitting the ring into `n` equal parts, as ccm assigns them, so that data is
 * spread evenly with one token per node (vnodes only slow a tiny cluster down).
 */
function evenTokens(n: number): string[] {
  const min = -(2n ** 63n);
  const step = 2n ** 64n / BigInt(n);
  return Array.from({ length: n }, (_, i) => (min + BigInt(i) * step).toString());
}

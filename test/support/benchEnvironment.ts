import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { clockTicksPerSecond } from './procfs.js';

/** This machine: cores, CPU model, memory, load average, kernel and Node. @internal */
export function machineEnvironment() {
  return {
    cores: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: os.loadavg().map((x) => Number(x.toFixed(2))),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
  };
}

/** The machine and software a benchmark ran on. */
export interface BenchEnvironment extends ReturnType<typeof machineEnvironment> {
  cassandraDriver: string;
  grpcJs: string;
  protobufjs: string;
  /** `release_version` of the node the driver is connected to. */
  database: string;
  clockTicks: number;
}

/** Describes this machine, the library versions in use and the database's version. @internal */
export async function benchEnvironment(client: cassandra.Client): Promise<BenchEnvironment> {
  const row = (await client.execute('SELECT release_version FROM system.local')).first();
  return {
    ...machineEnvironment(),
    cassandraDriver: packageVersion('cassandra-driver'),
    grpcJs: packageVersion('@grpc/grpc-js'),
    protobufjs: packageVersion('protobufjs', '@grpc/proto-loader'),
    database: `Cassandra ${String(row?.['release_version'] ?? 'unknown')}`,
    clockTicks: clockTicksPerSecond(),
  };
}

/**
 * Version of an installed package, found by walking up from its entry point (packages with an
 * `exports` map do not expose their `package.json` to `require`). `from` names a package whose
 * own dependency it is, for a package that is only installed as one.
 */
function packageVersion(name: string, from = ''): string {
  try {
    let require = createRequire(import.meta.url);
    if (from) require = createRequire(require.resolve(from));
    let dir = path.dirname(require.resolve(name));
    for (;;) {
      const file = path.join(dir, 'package.json');
      if (existsSync(file)) {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === name) return pkg.version ?? 'unknown';
      }
      const parent = path.dirname(dir);
      if (parent === dir) return 'unknown';
      dir = parent;
    }
  } catch {
    return 'unknown';
  }
}

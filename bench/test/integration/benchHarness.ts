import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect } from 'vitest';
import { createDbClient } from '../../../src/core/index.js';
import { isProcessAlive } from '../../../src/devdb/index.js';
import { testDbConfig, uniqueKeyspace } from '../../../test/support/index.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const main = path.join(repo, 'bench/cli/main.ts');

/** A finished `scylla-loader-bench` run: its output and the JSON report it wrote. */
export interface BenchRun<R> {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The report of the `figures:` (or `JSON:`) line; undefined when there is none. */
  report: R;
  jsonPath?: string;
  /** The scratch page `--docs` wrote, when asked for. */
  page?: string;
}

/** How {@link BenchHarness.run} starts the benchmark. */
export interface BenchRunOptions {
  /** Passes `--quick` (default true). */
  quick?: boolean;
  /** The exit code the run must end with (default 0). */
  exitCode?: number;
  /** Passes `--dataset <the harness's keyspace>` (default true). */
  dataset?: boolean;
  /** Passes `--out-dir <a scratch folder>` (default true). */
  outDir?: boolean;
  /** Passes `--docs <a scratch page>` holding this table's markers and returns the page. */
  docs?: string;
  /** Names the shared node in the environment (the bench then knows no database pid). */
  dbEnv?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** One test file's benchmarks: a keyspace and a scratch folder of its own, both removed after. */
export interface BenchHarness {
  dataset: string;
  /** The scratch folder (made on first use). */
  outDir(): Promise<string>;
  /** Runs `npm run bench -- <name> --quick ...args` against the shared node. */
  run<R>(name: string, args?: string[], options?: BenchRunOptions): Promise<BenchRun<R>>;
}

/**
 * The bench tests' shared set-up: call once at the top of a file. Each run is the real program
 * (`bench/cli/main.ts` through tsx) at its `--quick` size against the node the integration
 * tests share; the harness fails the test unless it exits 0, and removes its keyspaces
 * (`<dataset>` and `<dataset>_*`) and folder after the file.
 */
export function benchHarness(label: string): BenchHarness {
  const dataset = uniqueKeyspace();
  let dir: string | undefined;
  /** Reports a bench wrote outside the harness's folder (those run with `outDir: false`). */
  const reports: string[] = [];
  const outDir = async (): Promise<string> =>
    (dir ??= await mkdtemp(path.join(os.tmpdir(), `sl-bench-${label}-`)));
  afterAll(async () => {
    const client = await createDbClient(testDbConfig());
    try {
      const rs = await client.execute('SELECT keyspace_name FROM system_schema.keyspaces');
      for (const row of rs.rows) {
        const name = String(row['keyspace_name']);
        // A schema change on a busy shared node can outlast the driver's default 12 s.
        if (name === dataset || name.startsWith(`${dataset}_`)) {
          await client.execute(`DROP KEYSPACE IF EXISTS ${name}`, [], { readTimeout: 120_000 });
        }
      }
    } finally {
      await client.shutdown();
    }
    if (dir) await rm(dir, { recursive: true, force: true });
    await Promise.all(reports.map((f) => rm(f, { force: true })));
  });
  return {
    dataset,
    outDir,
    async run<R>(name: string, args: string[] = [], options: BenchRunOptions = {}) {
      const argv = [name, ...(options.quick === false ? [] : ['--quick']), ...args];
      if (options.dataset !== false) argv.push('--dataset', dataset);
      if (options.outDir !== false) argv.push('--out-dir', await outDir());
      let page: string | undefined;
      if (options.docs) {
        page = path.join(await outDir(), 'performance.md');
        await writeFile(page, docsPage(options.docs, 'old\n'));
        argv.push('--docs', page);
      }
      const db = testDbConfig();
      const env = {
        ...process.env,
        ...(options.dbEnv
          ? {
              SCYLLA_LOADER_CONTACT_POINTS: db.contactPoints.join(','),
              SCYLLA_LOADER_CQL_PORT: String(db.port),
              SCYLLA_LOADER_LOCAL_DC: db.localDataCenter,
            }
          : {}),
        ...options.env,
      };
      const { code, stdout, stderr } = await runChild([main, ...argv], env);
      expect(code, stderr.slice(-3000)).toBe(options.exitCode ?? 0);
      const json = /^(?:figures|JSON): (.+)$/m.exec(stdout)?.[1];
      const report = (json ? JSON.parse(await readFile(json, 'utf8')) : undefined) as R;
      if (json) reports.push(json);
      return {
        code,
        stdout,
        stderr,
        report,
        ...(json ? { jsonPath: json } : {}),
        ...(page ? { page: await readFile(page, 'utf8') } : {}),
      };
    },
  };
}

function runChild(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: repo,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A page with `table`'s markers around `inside`, text before and after. */
function docsPage(table: string, inside: string): string {
  return `# Performance\n\n<!-- bench:${table}:begin -->\n${inside}<!-- bench:${table}:end -->\n\nThe rest.\n`;
}

/**
 * `--docs` replaced only what was between `table`'s markers, with the measured line (the
 * command that ran it) and the report's tables, each of `headers` among them.
 */
export function expectDocsWritten(
  page: string | undefined,
  table: string,
  command: string,
  headers: RegExp[],
): void {
  expect(page?.startsWith(`# Performance\n\n<!-- bench:${table}:begin -->\nMeasured `)).toBe(true);
  expect(page?.endsWith(`<!-- bench:${table}:end -->\n\nThe rest.\n`)).toBe(true);
  expect(page).not.toContain('\nold\n');
  expect(page).toMatch(
    new RegExp(
      `^Measured \\d{4}-\\d\\d-\\d\\d by \`npm run bench -- ${command} --quick .*--docs .*\` ` +
        'at commit \\w+( with uncommitted changes)? on .+, \\d+ cores, \\d+ GiB, Node v.+\\.$',
      'm',
    ),
  );
  for (const header of headers) expect(page).toMatch(header);
}

/** Every child process a benchmark started has ended. */
export function expectNoChildLeft(pids: readonly number[], count: number): void {
  expect(pids).toHaveLength(count);
  expect(pids.filter(isProcessAlive)).toEqual([]);
}

/**
 * Throughput figures that agree with each other: MB/s over samples/s is the mean sample size
 * (every sample of the epoch delivered once), both positive and finite.
 */
export function expectRatesAgree(
  row: { samplesPerSecond: number; megabytesPerSecond: number },
  meanBytes: number,
): void {
  expect(Number.isFinite(row.samplesPerSecond) && row.samplesPerSecond > 0).toBe(true);
  const bytesPerSample = (row.megabytesPerSecond * 1e6) / row.samplesPerSecond;
  expect(Math.abs(bytesPerSample / meanBytes - 1)).toBeLessThan(0.02);
}

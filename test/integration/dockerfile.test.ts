import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { existsSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { dbEnv } from '../support/dbEnv.js';
import { toolPath } from '../support/toolPath.js';
import { testDbConfig } from '../support/dbHelpers.js';
import { runCommand as run } from '../support/runCommand.js';
import { pruneAsImage } from '../support/runtimeLayout.js';
import { collect, spawnCli } from '../support/runCli.js';
import { newestSourceMtime, TEST_CLI_ENV } from '../support/scripts.js';
import { newReadyFile, waitForReadyFile } from '../support/readyFile.js';
import { makeTestCa } from '../support/testCerts.js';

/**
 * The Dockerfile, checked without a container engine: hadolint, the files its COPY lines take
 * from the build context, and its exact ENTRYPOINT/CMD run from a production-only install laid
 * out as the runtime image holds it, until the health check that HEALTHCHECK runs says SERVING.
 */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dockerfilePath = path.join(repo, 'Dockerfile');

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

interface Stage {
  name: string | undefined;
  image: string;
  instructions: Instruction[];
}

/** Instructions of a Dockerfile: comments dropped, continuation lines joined. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd();
    if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) return;
    if (pending !== '' && line.trimStart().startsWith('#')) return; // comment inside a continuation
    if (pending === '') start = i + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = (pending + line).trim();
    pending = '';
    const keyword = full.split(/\s+/)[0]!;
    out.push({
      keyword: keyword.toUpperCase(),
      args: full.slice(keyword.length).trim(),
      line: start,
    });
  });
  return out;
}

function stagesOf(instructions: Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const words = ins.args.split(/\s+/).filter((w) => !w.startsWith('--'));
      const as = words.findIndex((w) => w.toUpperCase() === 'AS');
      stages.push({
        image: words[0]!,
        name: as >= 0 ? words[as + 1] : undefined,
        instructions: [],
      });
    } else {
      stages.at(-1)?.instructions.push(ins);
    }
  }
  return stages;
}

/** `--flag=value` options and the remaining words (JSON array form or whitespace separated). */
function splitFlags(args: string): { flags: Record<string, string>; words: string[] } {
  const flags: Record<string, string> = {};
  let rest = args;
  for (
    let m = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest);
    m;
    m = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest)
  ) {
    flags[m[1]!] = m[2] ?? '';
    rest = rest.slice(m[0].length);
  }
  const words = rest.startsWith('[') ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
  return { flags, words };
}

/** The exec-form array of CMD/ENTRYPOINT/HEALTHCHECK CMD; the shell form is refused. */
function execForm(args: string, what: string): string[] {
  if (!args.startsWith('[')) throw new Error(`${what} must use the JSON (exec) form: ${args}`);
  const parsed = JSON.parse(args) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) {
    throw new Error(`${what} is not an array of strings: ${args}`);
  }
  return parsed as string[];
}

/**
 * Whether `.dockerignore` keeps a context path out of the build, by its rules (later rules win,
 * `!` re-includes, `*` and `?` stay within one path element, `**` spans any number, and a rule
 * that matches a parent folder covers everything below it).
 */
function dockerIgnored(rel: string, rules: string[]): boolean {
  const toRegex = (pattern: string): RegExp => {
    let re = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (c === '*' && pattern[i + 1] === '*') {
        re += '.*';
        i++;
        if (pattern[i + 1] === '/') i++;
      } else if (c === '*') re += '[^/]*';
      else if (c === '?') re += '[^/]';
      else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    return new RegExp(`^${re}$`);
  };
  const parts = path.posix.normalize(rel).split('/');
  let ignored = false;
  for (const raw of rules) {
    const negate = raw.startsWith('!');
    const pattern = path.posix
      .normalize((negate ? raw.slice(1) : raw).replace(/^\/+/, ''))
      .replace(/\/+$/, '');
    const re = toRegex(pattern);
    for (let n = 1; n <= parts.length; n++) {
      if (re.test(parts.slice(0, n).join('/'))) {
        ignored = !negate;
        break;
      }
    }
  }
  return ignored;
}

function dockerignoreRules(): string[] {
  const file = path.join(repo, '.dockerignore');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

const instructions = parseDockerfile(readFileSync(dockerfilePath, 'utf8'));
const stages = stagesOf(instructions);
const runtime = stages.at(-1)!;

function runtimeInstruction(keyword: string): Instruction | undefined {
  return runtime.instructions.findLast((i) => i.keyword === keyword);
}

describe('Dockerfile', () => {
  it('passes hadolint with no findings', () => {
    const result = spawnSync(toolPath('hadolint'), ['--no-color', dockerfilePath], {
      encoding: 'utf8',
    });
    expect(result.error).toBeUndefined();
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });

  it('copies only files that exist and that .dockerignore lets into the context', () => {
    const rules = dockerignoreRules();
    const names = new Set<string>();
    let copies = 0;
    for (const stage of stages) {
      for (const ins of stage.instructions.filter((i) => ['COPY', 'ADD'].includes(i.keyword))) {
        const { flags, words } = splitFlags(ins.args);
        const sources = words.slice(0, -1);
        expect(sources.length, `line ${ins.line}: ${ins.keyword} without a source`).toBeGreaterThan(
          0,
        );
        if (flags.from !== undefined) {
          expect(names, `line ${ins.line}: --from=${flags.from} names no earlier stage`).toContain(
            flags.from,
          );
          continue;
        }
        for (const source of sources) {
          copies++;
          expect(source, `line ${ins.line}: globs are not checked`).not.toMatch(/[*?[]/);
          expect(
            existsSync(path.join(repo, source)),
            `line ${ins.line}: ${source} is missing`,
          ).toBe(true);
          expect(
            dockerIgnored(source, rules),
            `line ${ins.line}: ${source} is excluded by .dockerignore`,
          ).toBe(false);
        }
      }
      if (stage.name) names.add(stage.name);
    }
    expect(copies).toBeGreaterThan(0);
    // Secrets and local state never reach the build context.
    for (const kept of ['node_modules', 'dist', '.state', '.git', 'test', '.env']) {
      expect(dockerIgnored(kept, rules), `${kept} must be in .dockerignore`).toBe(true);
    }
  });

  it('builds a runtime stage that is Node 20 slim, non-root, and exposes both ports', () => {
    expect(runtime.image.startsWith('node:') || stages.some((s) => s.name === runtime.image)).toBe(
      true,
    );
    const base = stages.find((s) => s.name === runtime.image)?.image ?? runtime.image;
    expect(base).toMatch(/^node:20(\.\d+)*-.*slim$/);
    const user = runtimeInstruction('USER')?.args ?? '';
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    const exposed = (runtimeInstruction('EXPOSE')?.args ?? '').split(/\s+/);
    expect(exposed).toEqual(expect.arrayContaining(['50051', '9464']));
    // HEALTHCHECK runs the script the runtime stage copies in, and that script the probe.
    expect(healthcheckScript()).toBe(path.join(repo, 'scripts/docker/healthcheck.sh'));
    expect(readFileSync(healthcheckScript(), 'utf8')).toContain('exec grpc_health_probe');
    const copied = runtime.instructions
      .filter((i) => i.keyword === 'COPY')
      .map((i) =>
        splitFlags(i.args)
          .words.slice(0, -1)
          .map((s) => path.posix.basename(s)),
      )
      .flat()
      .sort();
    expect(copied).toEqual([
      'dist',
      'grpc_health_probe',
      'healthcheck.sh',
      'node_modules',
      'package.json',
      'proto',
      'scylla_loader_native.node',
    ]);
  });

  describe('its CMD, run from a production-only install', () => {
    let work: string | undefined;
    let child: ChildProcess | undefined;

    afterAll(async () => {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (work) await rm(work, { recursive: true, force: true });
    });

    it(
      'serves the gRPC health check, reflection and /metrics, then exits 0 on SIGTERM',
      { timeout: 300_000 },
      async () => {
        const entrypoint = execForm(runtimeInstruction('ENTRYPOINT')?.args ?? '[]', 'ENTRYPOINT');
        const cmd = execForm(runtimeInstruction('CMD')?.args ?? '[]', 'CMD');
        const command = [...entrypoint, ...cmd];
        expect(command.length).toBeGreaterThan(0);
        const healthCmd = execForm(
          /\bCMD\s+(.*)$/.exec(runtimeInstruction('HEALTHCHECK')?.args ?? '')?.[1] ?? '',
          'HEALTHCHECK CMD',
        );

        await ensureBuilt();
        work = await mkdtemp(path.join(os.tmpdir(), 'sl-dockerfile-'));
        for (const f of ['package.json', 'package-lock.json']) {
          await cp(path.join(repo, f), path.join(work, f));
        }
        await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], work);
        // What the build stage's tsc -p tsconfig.build.json writes: dist/src only.
        await cp(path.join(repo, 'dist/src'), path.join(work, 'dist/src'), { recursive: true });
        await pruneAsImage(work);
        await cp(path.join(repo, 'proto'), path.join(work, 'proto'), { recursive: true });
        // What the native stage builds (scripts/setup.sh built it here): the image requires it.
        await cp(
          path.join(repo, 'native/scylla_loader_native.node'),
          path.join(work, 'native/scylla_loader_native.node'),
        );
        expect(existsSync(path.join(work, 'node_modules/typescript'))).toBe(false);
        const before = await snapshot(work);

        const [grpcPort, metricsPort] = await freePorts(2);
        const db = testDbConfig();
        const env: NodeJS.ProcessEnv = {
          // The image's environment: its ENV lines, no HOME to write to, node on PATH.
          PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
          HOME: '/nonexistent',
          ...runtimeEnv(),
          SCYLLA_LOADER_GRPC_PORT: String(grpcPort),
          SCYLLA_LOADER_METRICS_PORT: String(metricsPort),
          ...dbEnv(db),
          SCYLLA_LOADER_RESUME_KEY: randomBytes(32).toString('hex'),
          ...(db.username ? { SCYLLA_LOADER_DB_USERNAME: db.username } : {}),
          ...(db.password ? { SCYLLA_LOADER_DB_PASSWORD: db.password } : {}),
        };
        // As built, the image listens on every address, so without a tokens file it refuses to
        // start until told an open loader is meant; this run listens on loopback instead.
        const bare = spawnSync(command[0]!, command.slice(1), { cwd: work, env, encoding: 'utf8' });
        expect(bare.status).toBe(1);
        expect(bare.stderr).toMatch(
          /--allow-unauthenticated \(SCYLLA_LOADER_ALLOW_UNAUTHENTICATED/,
        );
        env['SCYLLA_LOADER_HOST'] = '127.0.0.1';
        let output = '';
        const started = spawn(command[0]!, command.slice(1), {
          cwd: work,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child = started;
        started.stdout.on('data', (d: Buffer) => (output += d.toString()));
        started.stderr.on('data', (d: Buffer) => (output += d.toString()));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
          (resolve, reject) => {
            started.on('error', reject);
            started.on('exit', (code, signal) => resolve({ code, signal }));
          },
        );

        const probe = toolPath('grpc_health_probe');
        const deadline = Date.now() + 90_000;
        let last: { code: number | null; output: string };
        for (;;) {
          if (started.exitCode !== null || started.signalCode !== null) {
            throw new Error(`the server exited before answering the health check:\n${output}`);
          }
          last = await run(probe, [`-addr=127.0.0.1:${grpcPort}`], repo, {}, false);
          if (last.code === 0) break;
          if (Date.now() > deadline) {
            throw new Error(
              `no SERVING within 90 s (${last.output.trim()}); server output:\n${output}`,
            );
          }
          await sleep(500);
        }
        expect(last.output).toContain('SERVING');

        // The HEALTHCHECK line itself, as Docker runs it (with the image's environment).
        const viaHealthcheck = await run(
          healthcheckScript(),
          healthCmd.slice(1),
          work,
          {
            PATH: `${path.dirname(probe)}${path.delimiter}${process.env.PATH ?? ''}`,
            SCYLLA_LOADER_GRPC_PORT: String(grpcPort),
          },
          false,
        );
        expect(viaHealthcheck, viaHealthcheck.output).toMatchObject({ code: 0 });

        // Reflection serves the descriptor sets the build put into dist/: a client with no
        // .proto files resolves the imported Timestamp and the original field names.
        const described = await run(
          toolPath('grpcurl'),
          ['-plaintext', `127.0.0.1:${grpcPort}`, 'describe', 'scylla_loader.v1.SplitSet'],
          work,
          {},
          false,
        );
        expect(described, described.output).toMatchObject({ code: 0 });
        expect(described.output).toContain('.google.protobuf.Timestamp created_at = 9;');

        const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
        expect(metrics.status).toBe(200);
        expect(await metrics.text()).toMatch(/^# HELP /m);

        started.kill('SIGTERM');
        const result = await exited;
        expect(result, output).toEqual({ code: 0, signal: null });
        // Nothing was written next to the code: the image's root filesystem can be read-only.
        expect(await snapshot(work)).toEqual(before);
      },
    );
  });
});

describe('the image health check with gRPC TLS', () => {
  const ca = makeTestCa('healthcheck');
  const server = ca.issue('scylla-loader', 'server');
  afterAll(async () => {
    await rm(ca.dir, { recursive: true, force: true });
  });

  /** Starts `serve` with `env`, runs the health check with the same environment, stops it. */
  async function healthcheckAgainst(env: NodeJS.ProcessEnv): Promise<{
    script: { code: number | null; output: string };
    plainProbe: { code: number | null; output: string };
  }> {
    const db = testDbConfig();
    const readyFile = newReadyFile();
    const loaderEnv: NodeJS.ProcessEnv = {
      SCYLLA_LOADER_HOST: '127.0.0.1',
      SCYLLA_LOADER_GRPC_PORT: '0',
      SCYLLA_LOADER_METRICS_PORT: '0',
      SCYLLA_LOADER_READY_FILE: readyFile,
      ...dbEnv(db),
      SCYLLA_LOADER_WORKERS: '1',
      ...env,
    };
    const child = spawnCli(['serve'], loaderEnv);
    const done = collect(child);
    try {
      const ready = await waitForReadyFile(child, readyFile);
      const probe = toolPath('grpc_health_probe');
      // What Docker gives the check: the container's environment, ports as the loader bound them.
      const checkEnv = {
        ...loaderEnv,
        PATH: `${path.dirname(probe)}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
        SCYLLA_LOADER_GRPC_PORT: String(ready.port),
        SCYLLA_LOADER_METRICS_PORT: String(ready.metricsPort),
      };
      const script = await run(healthcheckScript(), [], repo, checkEnv, false);
      const plainProbe = await run(probe, [`-addr=127.0.0.1:${ready.port}`], repo, {}, false);
      return { script, plainProbe };
    } finally {
      child.kill('SIGTERM');
      await done;
    }
  }

  it(
    'is healthy over TLS, where a plaintext probe (the former HEALTHCHECK) is refused',
    { timeout: 120_000 },
    async () => {
      const r = await healthcheckAgainst({
        SCYLLA_LOADER_TLS_CERT: server.certFile,
        SCYLLA_LOADER_TLS_KEY: server.keyFile,
      });
      expect(r.script, r.script.output).toMatchObject({ code: 0 });
      expect(r.script.output).toContain('SERVING');
      expect(r.plainProbe.code).not.toBe(0);
    },
  );

  it(
    'is healthy with mutual TLS, through /healthz, having no client certificate to present',
    { timeout: 120_000 },
    async () => {
      const r = await healthcheckAgainst({
        SCYLLA_LOADER_TLS_CERT: server.certFile,
        SCYLLA_LOADER_TLS_KEY: server.keyFile,
        SCYLLA_LOADER_TLS_CLIENT_CA: ca.certFile,
      });
      expect(r.script, r.script.output).toMatchObject({ code: 0 });
      expect(r.plainProbe.code).not.toBe(0);
    },
  );
});

/**
 * The file in this repository that the runtime stage copies to where HEALTHCHECK's CMD runs it
 * (`COPY scripts/docker/healthcheck.sh /usr/local/bin/...`); throws when no COPY puts it there.
 */
function healthcheckScript(): string {
  const command = execForm(
    /\bCMD\s+(.*)$/.exec(runtimeInstruction('HEALTHCHECK')?.args ?? '')?.[1] ?? '',
    'HEALTHCHECK CMD',
  )[0];
  const copy = runtime.instructions
    .filter((i) => i.keyword === 'COPY')
    .map((i) => splitFlags(i.args))
    .find(({ flags, words }) => flags.from === undefined && words.at(-1) === command);
  if (copy === undefined) throw new Error(`no COPY in the runtime stage puts ${command} in place`);
  return path.join(repo, copy.words[0]!);
}

/** ENV of the runtime stage (`KEY=value` pairs; quotes around values removed). */
function runtimeEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const ins of runtime.instructions.filter((i) => i.keyword === 'ENV')) {
    for (const m of ins.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) {
      env[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
    }
  }
  return env;
}

/**
 * Builds dist/ when it is missing, older than a source or proto file, or lacks the descriptor
 * sets reflection serves (a dist/ built before they existed).
 */
async function ensureBuilt(): Promise<void> {
  const main = path.join(repo, 'dist/src/cli/main.js');
  const complete = ['cli/main.js', 'generated/loader.binpb', 'generated/health.binpb'].every((f) =>
    existsSync(path.join(repo, 'dist/src', f)),
  );
  const built = complete ? statSync(main).mtimeMs : 0;
  const newest = Math.max(
    newestSourceMtime(),
    await newestMtime(path.join(repo, 'proto'), () => true),
  );
  if (built < newest) {
    // Other tests start their children from dist/ then: rebuilding it under them would break them.
    if (process.env[TEST_CLI_ENV] === 'build') {
      throw new Error(`${TEST_CLI_ENV}=build but dist/ is older than src/ or proto/: rebuild it`);
    }
    await run('npm', ['run', 'build'], repo);
  }
}

async function newestMtime(dir: string, keep: (p: string) => boolean): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const p = path.join(entry.parentPath, entry.name);
    if (entry.isFile() && keep(p)) newest = Math.max(newest, (await stat(p)).mtimeMs);
  }
  return newest;
}

/** Every file and folder below `dir` with its size and modification time. */
async function snapshot(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const p = path.join(entry.parentPath, entry.name);
    const s = await stat(p);
    out.push(`${path.relative(dir, p)} ${s.size} ${s.mtimeMs}`);
  }
  return out.sort();
}

function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => net.createServer());
  return Promise.all(
    servers.map(
      (s) =>
        new Promise<number>((resolve, reject) => {
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve((s.address() as net.AddressInfo).port));
        }),
    ),
  ).finally(() => servers.forEach((s) => s.close()));
}

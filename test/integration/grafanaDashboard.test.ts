import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoaderClient } from '../../src/client/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { createDbClient } from '../../src/core/index.js';
import { ingestImageDataset } from '../support/imageDataset.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { toolPath } from '../support/toolPath.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

/**
 * The Grafana dashboard in deploy/grafana: its structure checked against the rules Grafana's
 * dashboard-linter enforces (the linter cannot be installed here: the Go module proxy refuses
 * it), its queries parsed by promtool, and every metric its queries name checked against a
 * live loader's /metrics.
 */

const run = promisify(execFile);
const DASHBOARD = path.resolve('deploy/grafana/scylla-loader.json');

interface Target {
  expr: string;
  refId: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title?: string;
  description?: string;
  datasource?: { type?: string; uid?: string };
  fieldConfig?: { defaults?: { unit?: string } };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  label?: string;
  type: string;
  query: string | { query: string };
  datasource?: { uid?: string };
  multi?: boolean;
  includeAll?: boolean;
  allValue?: string;
  refresh?: number;
}
interface Dashboard {
  title: string;
  schemaVersion: number;
  templating: { list: Variable[] };
  panels: Panel[];
}

/** Panels with queries, rows' nested panels included. */
function queryPanels(d: Dashboard): Panel[] {
  return d.panels
    .flatMap((p) => (p.type === 'row' ? (p.panels ?? []) : [p]))
    .filter((p) => p.type !== 'row');
}

/** Every panel target as "panel title / refId" with its expression. */
function targetsOf(d: Dashboard): { where: string; expr: string }[] {
  return queryPanels(d).flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `${p.title} / ${t.refId}`, expr: t.expr })),
  );
}

const PROMQL_KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/**
 * Metric names a PromQL expression selects: identifiers that are neither function names
 * (followed by `(`), keywords, label names (inside `{...}` or a `by (...)` grouping) nor part
 * of a number, a string or a `[...]` range. Also takes `{__name__="..."}`.
 */
function metricNames(expr: string): string[] {
  const names = new Set<string>();
  for (const m of expr.matchAll(/__name__\s*=\s*"([^"]+)"/g)) names.add(m[1]!);
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\boffset\s+-?[\w$]+/g, ' ')
    .replace(/(?<![\w:])\d+(?:\.\d+)?(?:e[+-]?\d+)?/gi, ' ');
  for (const m of stripped.matchAll(/(?<![\w:$])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const [, name, call] = m;
    if (call || PROMQL_KEYWORDS.has(name!.toLowerCase())) continue;
    names.add(name!);
  }
  return [...names];
}

/** Queries naming a metric that is not in `known`, one line each. */
function unknownMetrics(targets: { where: string; expr: string }[], known: Set<string>): string[] {
  return targets.flatMap(({ where, expr }) =>
    metricNames(expr)
      .filter((n) => !known.has(n))
      .map((n) => `${where}: ${n} (in ${expr})`),
  );
}

/**
 * Names the live exposition exports: every sample line's name, plus, for each `# TYPE`, the
 * family (and `_bucket`/`_sum`/`_count` for histograms and summaries), since a labelled metric
 * with no observation yet has no sample line but is still exported.
 */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) {
      const [, family, kind] = type;
      names.add(family!);
      if (kind === 'histogram')
        for (const s of ['_bucket', '_sum', '_count']) names.add(family + s);
      if (kind === 'summary') for (const s of ['_sum', '_count']) names.add(family + s);
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)[{ ]/.exec(line);
    if (sample) names.add(sample[1]!);
  }
  return names;
}

/** Sample names only (series that really exist right now). */
function sampleNames(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .map((l) => /^([a-zA-Z_:][\w:]*)[{ ]/.exec(l)?.[1])
      .filter((n): n is string => n !== undefined),
  );
}

let dashboard: Dashboard;
let db: cassandra.Client;
let ks: string;
/** A dataset of images, good and bad, for a transformed stream. */
let imagesKs: string;
let server: LoaderServer;
let client: LoaderClient;

beforeAll(async () => {
  dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  await ingestSmallDataset(db, ks, 200);
  imagesKs = uniqueKeyspace();
  await ingestImageDataset(db, imagesKs, 12, true);
  server = await startTestServer({
    // The image dataset's 2,500 x 2,500 PNG is then refused unread (reason pixel_limit).
    maxImagePixels: 4_000_000,
  });
  client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
});

afterAll(async () => {
  client?.close();
  await server?.shutdown();
  if (db) {
    await dropKeyspace(db, ks);
    if (imagesKs) await dropKeyspace(db, imagesKs);
    await db.shutdown();
  }
});

describe('deploy/grafana/scylla-loader.json', () => {
  // Grafana's dashboard-linter itself cannot be installed here: the Go module proxy answers
  // 403 for github.com/grafana/dashboard-linter. Its main rules are checked here instead.
  it('follows the dashboard-linter rules: datasource, job and instance variables, titles, descriptions, units', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const vars = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    const ds = vars.get('datasource');
    expect(ds?.type).toBe('datasource');
    expect(ds?.query).toBe('prometheus');
    for (const name of ['job', 'instance']) {
      const v = vars.get(name);
      expect(v, `${name} variable`).toBeDefined();
      expect(v!.type).toBe('query');
      expect(v!.datasource?.uid).toBe('${datasource}');
      expect(v!.multi && v!.includeAll).toBe(true);
      expect(v!.allValue).toBe('.+');
      expect(v!.refresh, `${name} reloads on time range change`).toBe(2);
    }
    const problems: string[] = [];
    const panels = queryPanels(dashboard);
    expect(panels.length).toBeGreaterThanOrEqual(12);
    for (const p of panels) {
      const name = p.title ?? `panel ${p.id}`;
      if (!p.title) problems.push(`panel ${p.id}: no title`);
      if (!p.description) problems.push(`${name}: no description`);
      if (!p.fieldConfig?.defaults?.unit) problems.push(`${name}: no unit`);
      if (p.datasource?.uid !== '${datasource}') problems.push(`${name}: panel datasource`);
      if (!p.targets?.length) problems.push(`${name}: no targets`);
      for (const t of p.targets ?? []) {
        if (t.datasource?.uid !== '${datasource}') problems.push(`${name}/${t.refId}: datasource`);
        const selectors = t.expr.match(/[\w:]+\{[^}]*\}/g) ?? [];
        if (selectors.length === 0) problems.push(`${name}/${t.refId}: no selector`);
        for (const s of selectors) {
          if (!s.includes('job=~"$job"') || !s.includes('instance=~"$instance"')) {
            problems.push(`${name}/${t.refId}: ${s} lacks the job or instance matcher`);
          }
        }
        for (const r of t.expr.match(/\[[^\]]*\]/g) ?? []) {
          if (r !== '[$__rate_interval]') problems.push(`${name}/${t.refId}: range ${r}`);
        }
        for (const c of t.expr.match(/[\w:]+_total\{[^}]*\}(\[[^\]]*\])?/g) ?? []) {
          if (!c.endsWith(']')) problems.push(`${name}/${t.refId}: counter ${c} without rate`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('has queries that promtool parses as PromQL', async () => {
    // Grafana's variables replaced by values of the right kind, one recording rule per query.
    const rules = targetsOf(dashboard).map(({ expr }, i) => ({
      record: `dashboard:query_${i}`,
      expr: expr
        .replaceAll('$__rate_interval', '1m')
        .replaceAll('$job', '.+')
        .replaceAll('$instance', '.+'),
    }));
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-dashboard-'));
    try {
      const file = path.join(dir, 'rules.json');
      // JSON is YAML, so promtool reads this as a rule file.
      await writeFile(file, JSON.stringify({ groups: [{ name: 'dashboard', rules }] }));
      const out = await run(toolPath('promtool'), ['check', 'rules', file]).catch(
        (err: { stdout?: string; stderr?: string }) => {
          throw new Error(`promtool check rules:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
        },
      );
      expect(out.stdout).toMatch(new RegExp(`SUCCESS: ${rules.length} rules found`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the metric-name extractor reads selectors, and catches a misspelt metric', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, path) (rate(scylla_loader_db_read_duration_seconds_bucket{job=~"$job", instance=~"$instance"}[$__rate_interval])))',
      ),
    ).toEqual(['scylla_loader_db_read_duration_seconds_bucket']);
    expect(
      metricNames('sum by (instance) (process_resident_memory_bytes) / 1e6 offset 5m'),
    ).toEqual(['process_resident_memory_bytes']);
    expect(metricNames('{__name__="up", job="x"} and on (job) foo:bar')).toEqual(['up', 'foo:bar']);
    const known = new Set(['scylla_loader_samples_sent_total']);
    expect(
      unknownMetrics(
        [{ where: 'synthetic / A', expr: 'rate(scylla_loader_samples_snt_total[1m])' }],
        known,
      ),
    ).toEqual([
      'synthetic / A: scylla_loader_samples_snt_total (in rate(scylla_loader_samples_snt_total[1m]))',
    ]);
  });

  it('names only metrics the live loader exports', async () => {
    // Stream a few batches, so counters and histograms have series, one failing stream, so
    // the error counter has a series with a code, and one transformed stream.
    let samples = 0;
    for await (const b of client.streamBatches({ dataset: ks, split: 'all', batchSize: 16 })) {
      samples += b.ids.length;
    }
    expect(samples).toBe(200);
    const failing = async (): Promise<number> => {
      let n = 0;
      for await (const b of client.streamBatches({
        dataset: `${ks}_absent`,
        split: 'all',
        batchSize: 16,
      })) {
        n += b.ids.length;
      }
      return n;
    };
    await expect(failing()).rejects.toThrow();
    // A transformed stream over good and bad images, so that the transform histogram and the
    // failure counter (labelled: no series before an observation) have series.
    let transformed = 0;
    let undecodable = 0;
    for await (const b of client.streamBatches({
      dataset: imagesKs,
      split: 'all',
      batchSize: 8,
      transform: {
        channels: 3,
        randomResizedCrop: { height: 32, width: 32 },
        badImagePolicy: 'skip',
      },
    })) {
      transformed += b.ids.length;
      undecodable += b.skippedUndecodable;
    }
    expect([transformed, undecodable]).toEqual([12, 3]);
    const text = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
    const live = sampleNames(text);
    for (const n of [
      'scylla_loader_samples_sent_total',
      'scylla_loader_db_read_duration_seconds_bucket',
      'scylla_loader_batch_assembly_duration_seconds_count',
      'scylla_loader_stream_errors_total',
      'scylla_loader_transform_duration_seconds_bucket',
      'scylla_loader_transform_duration_seconds_count',
      'scylla_loader_transform_failures_total',
      'scylla_loader_transform_pixels_total',
      'scylla_loader_transforms_waiting',
      'process_cpu_seconds_total',
    ]) {
      expect(live, `${n} has a series`).toContain(n);
    }

    const targets = targetsOf(dashboard);
    expect(targets.length).toBeGreaterThanOrEqual(15);
    const used = new Set(targets.flatMap((t) => metricNames(t.expr)));
    // Every metric family the loader defines appears on the dashboard.
    for (const family of [
      'scylla_loader_samples_sent_total',
      'scylla_loader_sent_bytes_total',
      'scylla_loader_batches_sent_total',
      'scylla_loader_db_read_duration_seconds_bucket',
      'scylla_loader_batch_assembly_duration_seconds_bucket',
      'scylla_loader_client_blocked_seconds_total',
      'scylla_loader_db_requests_in_flight',
      'scylla_loader_active_streams',
      'scylla_loader_db_retries_total',
      'scylla_loader_missing_samples_total',
      'scylla_loader_stream_errors_total',
      'scylla_loader_transform_duration_seconds_bucket',
      'scylla_loader_transform_duration_seconds_count',
      'scylla_loader_transform_failures_total',
      'scylla_loader_transform_pixels_total',
      'scylla_loader_transforms_waiting',
    ]) {
      expect(used, `dashboard shows ${family}`).toContain(family);
    }
    expect(unknownMetrics(targets, exportedNames(text))).toEqual([]);
    // The variables' queries too.
    const varQueries = dashboard.templating.list
      .filter((v) => v.type === 'query')
      .map((v) => {
        const q = typeof v.query === 'string' ? v.query : v.query.query;
        return {
          where: `variable ${v.name}`,
          expr: q.replace(/^label_values\((.*),\s*\w+\)$/, '$1'),
        };
      });
    expect(unknownMetrics(varQueries, exportedNames(text))).toEqual([]);
  });
});

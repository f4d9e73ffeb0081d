import type cassandra from 'cassandra-driver';
import { Command, Option } from 'commander';
import {
  createDbClient,
  invalidArgument,
  splitTablesExist,
  readDatasetInfo,
  requireDataset,
  validateIdentifier,
  createSplitSet,
  type CreateSplitSetRequest,
  type MetadataFilter,
  type SplitSetInfo,
  type ClassTargets,
  validateSplitName,
  latestSplitVersion,
  listSplitSets,
  readSplitSetInfo,
  splitRequestSchema,
  type NameOption,
} from '../../core/index.js';
import { addDbOptions, dbConfigFromFlags, type DbFlags, dbSettingNames } from '../dbOptions.js';
import { createProgress, type Progress } from '../progress.js';
import { runAction } from '../runAction.js';

/** Flags of `splits create`. */
export interface SplitsCreateFlags extends DbFlags {
  parts?: string;
  folds?: string;
  groupBy: string[];
  balanced: boolean;
  classRatios?: string;
  maxTotal?: string;
  filter: string[];
  seed: string;
  newVersion: boolean;
  allowShortfall: boolean;
}

const collectValues = (v: string, acc: string[]): string[] => [...acc, v];

/**
 * Registers `splits create`, `splits list` and `splits show`: split sets made from the
 * metadata and stored in the database, read and written directly (no loader needed).
 */
export function registerSplitsCommand(program: Command): void {
  const splits = program
    .command('splits')
    .description('create and inspect split sets (train/val/test parts or k folds)');

  const create = splits
    .command('create')
    .description(
      'make a split set from the metadata and store it; stream its parts as <name>/<part>',
    )
    .argument('<dataset>', 'dataset name')
    .argument('<name>', 'split set name (lower-case letters, digits, "_", "-")')
    .addOption(
      new Option('--parts <spec>', 'parts and weights, e.g. train=7,val=2,test=1').conflicts(
        'folds',
      ),
    )
    .option('--folds <k>', 'k-fold mode: k disjoint folds, streamed as train-<i> / val-<i>')
    .option(
      '--group-by <columns>',
      'metadata columns whose samples stay in one part, e.g. patient_id[,slide]; repeatable',
      collectValues,
      [] as string[],
    )
    .addOption(
      new Option('--balanced', 'as many samples of every class as the rarest has')
        .default(false)
        .conflicts('classRatios'),
    )
    .option('--class-ratios <spec>', 'per-class proportions, e.g. 0=1,1=1 (labels or names)')
    .option('--max-total <n>', 'at most this many samples in all parts together')
    .option(
      '--filter <expr>',
      'keep samples where col=v (equals), col=v1,v2 (one of), col=lo..hi (numeric, inclusive, ' +
        'either end may be empty); repeatable, all must hold',
      collectValues,
      [] as string[],
    )
    .option('--seed <n>', 'seed of the assignment (same seed, same split)', '0')
    .option('--new-version', 'write the next version when the name exists', false)
    .option(
      '--allow-shortfall',
      'store the best feasible split when a target cannot be met (deviations are reported)',
      false,
    );
  addDbOptions(create).action(
    runAction(async (dataset: string, name: string, flags: SplitsCreateFlags) => {
      process.stdout.write(await runSplitsCreate(dataset, name, flags));
    }),
  );

  const list = splits
    .command('list')
    .description("list a dataset's split sets: versions, parts, sizes, creation time")
    .argument('<dataset>', 'dataset name');
  addDbOptions(list).action(
    runAction(async (dataset: string, flags: DbFlags) => {
      validateIdentifier(dataset, 'dataset');
      await withClient(flags, async (client) => {
        await requireDataset(client, dataset);
        const sets = (await splitTablesExist(client, dataset))
          ? await listSplitSets(client, dataset)
          : [];
        process.stdout.write(formatSplitList(dataset, sets));
      });
    }),
  );

  const show = splits
    .command('show')
    .description('show a split set: parameters and per-part, per-class counts')
    .argument('<dataset>', 'dataset name')
    .argument('<set>', 'split set, <name> (latest version) or <name>@<version>');
  addDbOptions(show).action(
    runAction(async (dataset: string, setRef: string, flags: DbFlags) => {
      validateIdentifier(dataset, 'dataset');
      const ref = parseSetRef(setRef);
      await withClient(flags, async (client) => {
        const dataInfo = await readDatasetInfo(client, dataset);
        if (!(await splitTablesExist(client, dataset))) {
          throw invalidArgument(
            `dataset ${dataset} has no split sets; make one with \`splits create ${dataset} ` +
              `${ref.name} --parts train=8,val=2\``,
          );
        }
        const info = await readSplitSetInfo(client, dataset, ref.name, ref.version);
        const latest = await latestSplitVersion(client, dataset, ref.name);
        process.stdout.write(formatSplitShow(dataset, info, dataInfo.labelNames, latest));
      });
    }),
  );
}

async function withClient(
  flags: DbFlags,
  run: (client: cassandra.Client) => Promise<void>,
): Promise<void> {
  const client = await createDbClient(dbConfigFromFlags(flags), { settingNames: dbSettingNames() });
  try {
    await run(client);
  } finally {
    await client.shutdown();
  }
}

/**
 * Runs `splits create`: reads the dataset's size for the progress display, makes and stores
 * the set, and returns the report to print. Ctrl-C stops the metadata scan.
 */
export async function runSplitsCreate(
  dataset: string,
  name: string,
  flags: SplitsCreateFlags,
): Promise<string> {
  validateIdentifier(dataset, 'dataset');
  validateSplitName(name, 'split set');
  if (flags.parts === undefined && flags.folds === undefined) {
    throw invalidArgument('give --parts (e.g. train=7,val=2,test=1) or --folds <k>');
  }
  const parts = flags.parts === undefined ? [] : parseParts(flags.parts);
  const folds = flags.folds === undefined ? 0 : parseCount('--folds', flags.folds);
  const maxTotal =
    flags.maxTotal === undefined ? undefined : parseCount('--max-total', flags.maxTotal);
  const seed = parseSeed(flags.seed);
  const filters = flags.filter.map(parseFilter);
  const groupBy = flags.groupBy.flatMap((g) => g.split(',')).map((c) => c.trim());
  if (groupBy.some((c) => c === '')) {
    throw invalidArgument(`--group-by ${flags.groupBy.join(',')}: a column name is empty`);
  }

  const client = await createDbClient(dbConfigFromFlags(flags), { settingNames: dbSettingNames() });
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let progress: Progress | undefined;
  try {
    const dataInfo = await readDatasetInfo(client, dataset);
    const classTargets: ClassTargets = flags.balanced
      ? { mode: 'balanced' }
      : flags.classRatios !== undefined
        ? { mode: 'ratios', ratios: parseClassRatios(flags.classRatios, dataInfo.labelNames) }
        : { mode: 'natural' };
    const req = checkSplitsCreate(flags, {
      dataset,
      name,
      parts,
      folds,
      groupBy,
      classTargets,
      ...(maxTotal !== undefined ? { maxTotal } : {}),
      filters,
      seed,
      newVersion: flags.newVersion,
      allowShortfall: flags.allowShortfall,
    });
    const started = performance.now();
    const info = await createSplitSet(client, req, {
      signal: abort.signal,
      nameOption: splitsFlagOf,
      onScanProgress: (rows) => {
        progress ??= createProgress(`scan ${dataset}`, dataInfo.sampleCount, { unit: 'rows' });
        progress.update(rows);
      },
    });
    progress?.stop();
    progress = undefined;
    const seconds = (performance.now() - started) / 1000;
    return formatCreateReport(dataset, info, dataInfo.labelNames, seconds);
  } finally {
    progress?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await client.shutdown();
  }
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/**
 * Parses `train=7,val=2,test=1` into parts and weights, in order. Only the syntax is checked
 * here; names and weights are the core's `splitRequestSchema`'s to judge. @internal
 */
export function parseParts(spec: string): Array<[string, number]> {
  return spec.split(',').map((item) => {
    const m = /^([^=]+)=(.+)$/.exec(item.trim());
    if (!m || !NUMBER.test(m[2]!)) {
      throw invalidArgument(
        `--parts ${spec}: "${item}" is not <name>=<positive weight>; e.g. train=7,val=2,test=1`,
      );
    }
    return [m[1]!.trim(), Number(m[2])];
  });
}

/**
 * Checks a `splits create` request with the core's one validator, before the metadata scan,
 * and words each problem after the flag it came from (`--parts train=0,val=1: part train needs
 * a positive weight, got 0`) instead of the request's field path. @internal
 */
export function checkSplitsCreate(
  flags: SplitsCreateFlags,
  req: CreateSplitSetRequest,
): CreateSplitSetRequest {
  const checked = splitRequestSchema.safeParse(req);
  if (checked.success) return checked.data;
  const lines = checked.error.issues.map((issue) => {
    const flag = flagOf(flags, req, issue.path);
    return flag === undefined ? issue.message : `${flag}: ${issue.message}`;
  });
  throw invalidArgument(lines.join('\n'));
}

/**
 * The flag of a `splits create` option (`allowShortfall` -> `--allow-shortfall`): what the
 * core's refusals name an option with under this command. @internal
 */
export const splitsFlagOf: NameOption = (option) =>
  `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** The flag (with its value) that a field of the request was made from. */
function flagOf(
  flags: SplitsCreateFlags,
  req: CreateSplitSetRequest,
  path: readonly PropertyKey[],
): string | undefined {
  switch (path[0]) {
    case 'parts':
      return flags.parts !== undefined ? `--parts ${flags.parts}` : `--folds ${flags.folds}`;
    case 'folds':
      return `--folds ${flags.folds}`;
    case 'groupBy':
      return `--group-by ${req.groupBy.join(',')}`;
    case 'classTargets':
      return `--class-ratios ${flags.classRatios}`;
    case 'maxTotal':
      return `--max-total ${flags.maxTotal}`;
    case 'filters':
      return `--filter ${flags.filter[Number(path[1])]}`;
    case 'seed':
      return `--seed ${flags.seed}`;
    default:
      // The dataset and set names: their messages quote the name already.
      return undefined;
  }
}

/**
 * Parses a `--filter`: `col=v` (equals), `col=v1,v2,...` (one of), `col=lo..hi` (numeric,
 * inclusive; either end may be empty, e.g. `x=100..`). @internal
 */
export function parseFilter(expr: string): MetadataFilter {
  const eq = expr.indexOf('=');
  const column = eq < 0 ? '' : expr.slice(0, eq).trim();
  const value = eq < 0 ? '' : expr.slice(eq + 1);
  if (column === '' || value === '') {
    throw invalidArgument(
      `--filter ${expr}: use col=value, col=v1,v2,... or col=lo..hi (e.g. patient_id=p7, ` +
        'slide=s1,s2 or x=0..1000)',
    );
  }
  const dots = value.indexOf('..');
  if (dots >= 0) {
    const lo = value.slice(0, dots);
    const hi = value.slice(dots + 2);
    if ((lo === '' || NUMBER.test(lo)) && (hi === '' || NUMBER.test(hi))) {
      if (lo === '' && hi === '') {
        throw invalidArgument(`--filter ${expr}: a range needs at least one end (e.g. x=0..)`);
      }
      return {
        column,
        ...(lo !== '' ? { min: Number(lo) } : {}),
        ...(hi !== '' ? { max: Number(hi) } : {}),
      };
    }
  }
  if (value.includes(',')) {
    const values = value.split(',');
    if (values.some((v) => v === '')) {
      throw invalidArgument(`--filter ${expr}: a value of the list is empty`);
    }
    return { column, in: values };
  }
  return { column, equals: value };
}

/**
 * Parses `--class-ratios 0=1,1=1` into per-label ratios; a key is a label or, when the
 * dataset names its classes, a class name (`normal=1,tumor=1`). @internal
 */
export function parseClassRatios(spec: string, labelNames: string[]): Record<number, number> {
  const ratios: Record<number, number> = {};
  for (const item of spec.split(',')) {
    const m = /^([^=]+)=(.+)$/.exec(item.trim());
    if (!m || !NUMBER.test(m[2]!)) {
      throw invalidArgument(
        `--class-ratios ${spec}: "${item}" is not <label>=<positive ratio>; e.g. 0=1,1=1`,
      );
    }
    const key = m[1]!.trim();
    let label: number;
    if (/^-?\d+$/.test(key)) {
      label = Number(key);
    } else {
      label = labelNames.indexOf(key);
      if (label < 0) {
        const names = labelNames.length
          ? `its classes: ${labelNames.map((n, i) => `${i}=${n}`).join(', ')}`
          : 'its labels are plain integers';
        throw invalidArgument(`--class-ratios ${spec}: the dataset has no class ${key}; ${names}`);
      }
    }
    if (ratios[label] !== undefined) {
      throw invalidArgument(`--class-ratios ${spec}: label ${label} is named twice`);
    }
    ratios[label] = Number(m[2]);
  }
  return ratios;
}

/** Parses `<name>` or `<name>@<version>`. @internal */
export function parseSetRef(ref: string): { name: string; version?: number } {
  const m = /^([^@]+)(?:@(\d+))?$/.exec(ref);
  if (!m || (m[2] !== undefined && Number(m[2]) < 1)) {
    throw invalidArgument(`split set ${ref}: use <name> or <name>@<version> (e.g. main@2)`);
  }
  const name = validateSplitName(m[1]!, 'split set');
  return m[2] === undefined ? { name } : { name, version: Number(m[2]) };
}

/** A whole number; its range is the schema's to check. */
function parseCount(flag: string, value: string): number {
  if (!/^\d+$/.test(value)) throw invalidArgument(`${flag} ${value}: give a positive integer`);
  return Number(value);
}

/** A whole number as a bigint; its range is the schema's to check. */
function parseSeed(value: string): bigint {
  if (!/^\d+$/.test(value)) {
    throw invalidArgument(`--seed ${value}: give an integer in [0, 2^64 - 1]`);
  }
  return BigInt(value);
}

/** The report printed after `splits create`. @internal */
export function formatCreateReport(
  dataset: string,
  info: SplitSetInfo,
  labelNames: string[],
  seconds: number,
): string {
  const total = info.parts.reduce((a, p) => a + p.size, 0);
  const considered = info.params['samplesConsidered'];
  const groups = info.params['groupsConsidered'];
  const groupBy = (info.params['groupBy'] as string[] | undefined) ?? [];
  const lines = [
    `split set ${info.name} version ${info.version} of dataset ${dataset}: ${total} samples in ` +
      `${info.parts.length} parts, ${seconds.toFixed(1)} s`,
    `  from         ${String(considered)} samples after filters, ${String(groups)} ` +
      (groupBy.length ? `groups by ${groupBy.join(',')}` : 'groups (one per sample)'),
    `  deviation    worst ${percent(info.worstDeviation)} from targets`,
    `  content hash ${info.contentHash}`,
    `  stream as    ${streamNames(info, true).join(', ')}`,
    '',
    ...formatPartsTable(info, labelNames),
  ];
  return `${lines.join('\n')}\n`;
}

/** The table printed by `splits list`. @internal */
export function formatSplitList(dataset: string, sets: readonly SplitSetInfo[]): string {
  if (sets.length === 0) {
    return (
      `dataset ${dataset} has no split sets; make one with ` +
      `\`splits create ${dataset} <name> --parts train=8,val=2\`\n`
    );
  }
  const rows = sets.map((s) => [
    s.name,
    String(s.version),
    s.folds > 0 ? `${s.folds} folds` : `${s.parts.length} parts`,
    s.parts.map((p) => `${p.name}=${p.size}`).join(' '),
    String(s.parts.reduce((a, p) => a + p.size, 0)),
    s.createdAt.toISOString(),
  ]);
  const table = formatTable(['set', 'version', 'kind', 'sizes', 'samples', 'created'], rows);
  return `split sets of dataset ${dataset}\n${table.map((l) => `  ${l}`).join('\n')}\n`;
}

/** The description printed by `splits show`. @internal */
export function formatSplitShow(
  dataset: string,
  info: SplitSetInfo,
  labelNames: string[],
  latestVersion: number,
): string {
  const p = info.params;
  const targets = p['classTargets'] as ClassTargets | undefined;
  const groupBy = (p['groupBy'] as string[] | undefined) ?? [];
  const filters = (p['filters'] as MetadataFilter[] | undefined) ?? [];
  const partsParam = (p['parts'] as Array<[string, number]> | undefined) ?? [];
  const isLatest = info.version === latestVersion;
  const lines = [
    `split set ${info.name} version ${info.version} of dataset ${dataset}` +
      (isLatest ? ' (latest)' : ` (latest is version ${latestVersion})`),
    `  created          ${info.createdAt.toISOString()}`,
    info.folds > 0
      ? `  folds            ${info.folds}`
      : `  parts            ${partsParam.map(([n, w]) => `${n}=${w}`).join(',')}`,
    `  group by         ${groupBy.length ? groupBy.join(',') : '(none: every sample alone)'}`,
    `  class targets    ${formatTargets(targets, labelNames)}`,
    `  max total        ${p['maxTotal'] === null || p['maxTotal'] === undefined ? '(none)' : String(p['maxTotal'])}`,
    `  filters          ${filters.length ? filters.map(formatFilter).join(' ') : '(none)'}`,
    `  seed             ${info.seed}`,
    `  allow shortfall  ${p['allowShortfall'] ? 'yes' : 'no'}`,
    `  considered       ${String(p['samplesConsidered'])} samples, ${String(p['groupsConsidered'])} groups`,
    `  deviation        worst ${percent(info.worstDeviation)} from targets`,
    `  content hash     ${info.contentHash}`,
    `  stream as        ${streamNames(info, isLatest).join(', ')}`,
    '',
    ...formatPartsTable(info, labelNames),
  ];
  return `${lines.join('\n')}\n`;
}

/** Classes beyond which the per-class columns give way to a summary of the worst ones. */
const MAX_CLASS_COLUMNS = 8;

/**
 * Per part: size, groups, and per class achieved/target (with the deviation when they
 * differ). With many classes, each part lists its largest deviations instead.
 */
function formatPartsTable(info: SplitSetInfo, labelNames: string[]): string[] {
  const labels = [
    ...new Set(
      info.parts.flatMap((p) => [...Object.keys(p.targets), ...Object.keys(p.classCounts)]),
    ),
  ]
    .map(Number)
    .sort((a, b) => a - b);
  const labelName = (l: number): string =>
    labelNames[l] !== undefined ? `${l} (${labelNames[l]})` : String(l);
  const cell = (p: SplitSetInfo['parts'][number], l: number): string => {
    const got = p.classCounts[l] ?? 0;
    const want = p.targets[l] ?? 0;
    const dev = want > 0 && got !== want ? ` (${signedPercent((got - want) / want)})` : '';
    return `${got}/${want}${dev}`;
  };
  if (labels.length <= MAX_CLASS_COLUMNS) {
    const header = ['part', 'samples', 'groups', ...labels.map((l) => `label ${labelName(l)}`)];
    const rows = info.parts.map((p) => [
      p.name,
      String(p.size),
      String(p.groups),
      ...labels.map((l) => cell(p, l)),
    ]);
    return ['  per class: achieved/target', ...formatTable(header, rows).map((l) => `  ${l}`)];
  }
  const out = [`  ${labels.length} classes; per part, the largest per-class deviations`];
  const rows = info.parts.map((p) => {
    const worst = labels
      .map((l) => {
        const want = p.targets[l] ?? 0;
        const got = p.classCounts[l] ?? 0;
        return { l, dev: want > 0 ? Math.abs(got - want) / want : got > 0 ? Infinity : 0 };
      })
      .filter((x) => x.dev > 0)
      .sort((a, b) => b.dev - a.dev)
      .slice(0, 3);
    return [
      p.name,
      String(p.size),
      String(p.groups),
      worst.length ? worst.map((w) => `${labelName(w.l)}: ${cell(p, w.l)}`).join('; ') : 'none',
    ];
  });
  return [
    ...out,
    ...formatTable(['part', 'samples', 'groups', 'worst classes (achieved/target)'], rows).map(
      (l) => `  ${l}`,
    ),
  ];
}

function streamNames(info: SplitSetInfo, latest: boolean): string[] {
  const prefix = latest ? info.name : `${info.name}@${info.version}`;
  const names = info.parts.map((p) => `${prefix}/${p.name}`);
  for (let i = 0; i < info.folds; i++) names.push(`${prefix}/train-${i}`, `${prefix}/val-${i}`);
  if (names.length > 12) return [...names.slice(0, 12), `... (${names.length} in all)`];
  return names;
}

function formatTargets(targets: ClassTargets | undefined, labelNames: string[]): string {
  if (targets === undefined || targets.mode === 'natural') return 'natural';
  if (targets.mode === 'balanced') return 'balanced';
  return `ratios ${Object.entries(targets.ratios)
    .map(([l, r]) => `${labelNames[Number(l)] ?? l}=${r}`)
    .join(',')}`;
}

function formatFilter(f: MetadataFilter): string {
  if ('equals' in f) return `${f.column}=${f.equals}`;
  if ('in' in f) return `${f.column}=${f.in.join(',')}`;
  return `${f.column}=${f.min ?? ''}..${f.max ?? ''}`;
}

function percent(x: number): string {
  return `${(100 * x).toFixed(2)}%`;
}

function signedPercent(x: number): string {
  return `${x > 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;
}

function formatTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

import { Command } from 'commander';
import {
  createDbClient,
  readDatasetInfo,
  type DatasetInfo,
  validateIdentifier,
} from '../../core/index.js';
import { addDbOptions, dbConfigFromFlags, type DbFlags, dbSettingNames } from '../dbOptions.js';
import { runAction } from '../runAction.js';

/** Registers `describe <dataset>`: what the database holds for a dataset. */
export function registerDescribeCommand(program: Command): void {
  const cmd = program
    .command('describe')
    .description('show what the database holds for a dataset')
    .argument('<dataset>', 'dataset name')
    .option('--json', 'print JSON instead of text', false);
  addDbOptions(cmd).action(
    runAction(async (dataset: string, flags: DbFlags & { json: boolean }) => {
      validateIdentifier(dataset, 'dataset');
      const client = await createDbClient(dbConfigFromFlags(flags), {
        settingNames: dbSettingNames(),
      });
      try {
        const info = await readDatasetInfo(client, dataset);
        process.stdout.write(
          flags.json ? `${JSON.stringify(toJson(info), null, 2)}\n` : formatInfo(info),
        );
      } finally {
        await client.shutdown();
      }
    }),
  );
}

function toJson(info: DatasetInfo): Record<string, unknown> {
  return { ...info, classCounts: Object.fromEntries(info.classCounts) };
}

/** Human-readable dataset summary. @internal */
export function formatInfo(info: DatasetInfo): string {
  // Samples without a label are counted under -1: shown apart, not as a class.
  const classes = [...info.classCounts].filter(([l]) => l !== -1).sort((a, b) => a[0] - b[0]);
  const unlabelled = info.classCounts.get(-1) ?? 0;
  const name = (label: number): string =>
    info.labelNames[label] !== undefined ? `${label} (${info.labelNames[label]})` : String(label);
  const lines = [
    `dataset ${info.dataset}`,
    `  samples       ${info.sampleCount}`,
    `  bytes         ${info.totalBytes} (${(info.totalBytes / 1e6).toFixed(1)} MB)`,
    `  classes       ${classes.length}: ${classes.map(([l, n]) => `${name(l)}=${n}`).join(', ')}`,
    ...(unlabelled > 0 ? [`  unlabelled    ${unlabelled} samples without a label`] : []),
    `  columns       ${
      Object.entries(info.columns)
        .map(([c, t]) => `${c}:${t}`)
        .join(', ') || '(none)'
    }`,
    `  sources       ${info.sources.join(', ')}`,
    `  created at    ${info.createdAt?.toISOString() ?? '-'}`,
    `  updated at    ${info.updatedAt?.toISOString() ?? '-'}`,
    `  generation    ${info.generation ?? '-'} (made with the dataset; the sample cache's key)`,
  ];
  return `${lines.join('\n')}\n`;
}

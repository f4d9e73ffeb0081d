import { Command } from 'commander';
import { z } from 'zod';
import { prepareMnist } from '../../datasets/prepareMnist.js';
import { createProgress, type Progress } from '../progress.js';
import { runAction } from '../runAction.js';

/** Registers `prepare mnist`: writes the MNIST sample dataset as PNG files plus a manifest. */
export function registerPrepareCommand(program: Command): void {
  const prepare = program.command('prepare').description('make sample datasets to ingest');
  prepare
    .command('mnist')
    .description('write MNIST (70,000 labelled digits) as PNG files and a manifest.csv')
    .requiredOption('--out <dir>', 'folder to write into')
    .option('--limit <n>', 'only the first n images of each subset')
    .action(
      runAction(async (flags: { out: string; limit?: string }) => {
        const limit =
          flags.limit === undefined ? undefined : z.coerce.number().int().min(1).parse(flags.limit);
        let progress: Progress | undefined;
        const result = await prepareMnist({
          outDir: flags.out,
          ...(limit ? { limit } : {}),
          onProgress: (done, total) => {
            progress ??= createProgress('prepare mnist', total, { unit: 'images' });
            progress.update(done);
          },
        });
        progress?.stop();
        process.stdout.write(
          result.reused
            ? `MNIST already prepared: ${result.manifest}\n`
            : `wrote ${result.images} PNG images and ${result.manifest}\n`,
        );
      }),
    );
}

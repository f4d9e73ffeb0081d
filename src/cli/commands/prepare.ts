import path from 'node:path';
import { Command } from 'commander';
import { z } from 'zod';
import { loadPhotos } from '../devOnly.js';
import { createProgress, type Progress } from '../progress.js';
import { prepareMnistWithProgress } from '../prepareMnistWithProgress.js';
import { runAction } from '../runAction.js';

/**
 * Registers `prepare mnist` (the MNIST sample dataset as PNG files plus a manifest) and
 * `prepare photos` (JPEGs cropped from real photographs, the benchmarks' payloads).
 */
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
        const result = await prepareMnistWithProgress({
          outDir: flags.out,
          ...(limit ? { limit } : {}),
        });
        process.stdout.write(
          result.reused
            ? `MNIST already prepared: ${result.manifest}\n`
            : `wrote ${result.written} PNG images (${result.images - result.written} already ` +
                `there) and ${result.manifest}\n`,
        );
      }),
    );

  prepare
    .command('photos')
    .description(
      'write JPEGs cropped from real photographs (Debian opencv-doc and mate-backgrounds, ' +
        'fetched with apt-get download) as an ImageFolder tree; only missing files are written',
    )
    .option(
      '--preset <name>',
      'imagenet (500-800 px, ~104 kB) or small (224x224, quality 90, ~15 kB)',
      'imagenet',
    )
    .option('--count <n>', 'images 0..n-1 to make', '3000')
    .option('--out <dir>', 'folder to write into (required unless --sources-only)')
    .option(
      '--sources-only',
      'only download and extract the source photographs into the cache (the set-up of the ' +
        'test command does this, so that no test waits on the download)',
    )
    .action(
      runAction(
        async (raw: { preset: string; count: string; out?: string; sourcesOnly?: boolean }) => {
          const { PHOTO_PRESET_NAMES, PHOTO_PRESETS, fetchPhotoPackages, writePhotoJpegs } =
            await loadPhotos();
          if (raw.sourcesOnly) {
            const roots = await fetchPhotoPackages({
              log: (line) => process.stderr.write(`${line}\n`),
            });
            process.stdout.write(`source photographs in ${Object.values(roots).join(', ')}\n`);
            return;
          }
          const flags = z
            .object({
              preset: z.enum(PHOTO_PRESET_NAMES),
              count: z.coerce.number().int().min(1).max(10_000_000),
              out: z.string({ error: '--out <dir> is required (unless --sources-only)' }).min(1),
            })
            .parse(raw);
          const root = path.resolve(flags.out);
          const preset = PHOTO_PRESETS[flags.preset];
          const abort = new AbortController();
          const onSignal = (): void => abort.abort();
          process.once('SIGINT', onSignal);
          // Made at the first image, so that the download and extraction stay out of its rate.
          let progress: Progress | undefined;
          try {
            const result = await writePhotoJpegs({
              root,
              count: flags.count,
              preset: preset.name,
              onProgress: (done, bytes) => {
                progress ??= createProgress(`prepare photos (${preset.name})`, flags.count, {
                  unit: 'images',
                });
                progress.update(done, bytes);
              },
              log: (line) => process.stderr.write(`${line}\n`),
              signal: abort.signal,
            });
            progress?.stop();
            progress = undefined;
            process.stdout.write(
              `${result.images} ${preset.name} JPEGs from ${result.sourcePhotos} photos in ${root} ` +
                `(${result.written} written now), mean ${(result.meanBytes / 1000).toFixed(1)} kB\n` +
                `ingest them with: npx tsx src/cli/main.ts ingest <dataset> --image-folder ${root}\n`,
            );
          } finally {
            progress?.stop();
            process.off('SIGINT', onSignal);
          }
        },
      ),
    );
}

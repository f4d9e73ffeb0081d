import { prepareMnist } from '../datasets/prepareMnist.js';
import { createProgress, type Progress } from './progress.js';

/**
 * Writes MNIST as PNG files plus a manifest (see {@link prepareMnist}) with a progress bar on a
 * terminal, plain lines elsewhere. Shared by `prepare mnist` and `demo`.
 */
export async function prepareMnistWithProgress(
  options: Omit<Parameters<typeof prepareMnist>[0], 'onProgress'>,
): ReturnType<typeof prepareMnist> {
  let progress: Progress | undefined;
  try {
    return await prepareMnist({
      ...options,
      onProgress: (done, total) => {
        progress ??= createProgress('prepare mnist', total, { unit: 'images' });
        progress.update(done);
      },
    });
  } finally {
    progress?.stop();
  }
}

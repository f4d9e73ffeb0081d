import { open } from 'node:fs/promises';

/**
 * The last `lines` lines of a text file, read from its end so a large log costs little; an
 * empty string when the file does not exist.
 *
 * @internal
 */
export async function logTail(file: string, lines = 20): Promise<string> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return '';
  }
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(length);
    await handle.read(buf, 0, length, size - length);
    return buf.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } finally {
    await handle.close();
  }
}

/**
 * A file-system error in a few words (`no such file`, `permission denied`), for start-up and
 * reload messages that name the file themselves. Never includes the file's content.
 *
 * @internal
 */
export function describeFileError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return (err as Error | null)?.message ?? String(err);
}

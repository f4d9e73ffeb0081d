import { execFile } from 'node:child_process';

/** Runs a command; with `check`, a non-zero exit fails with its output. */
export function runCommand(
  file: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  check = true,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      if (err && (check || typeof err.code !== 'number')) {
        reject(new Error(`${file} ${args.join(' ')} failed (${err.message}):\n${output}`));
        return;
      }
      resolve({ code, output });
    });
  });
}

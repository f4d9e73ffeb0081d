import { ZodError } from 'zod';
import { LoaderError } from '../core/index.js';

/**
 * Wraps a command's action so user errors print one clear line and set a non-zero exit code
 * instead of a stack trace. Unexpected errors print their stack: those are our bugs.
 */
export function runAction<A extends unknown[]>(
  action: (...args: A) => Promise<void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (err) {
      process.exitCode = 1;
      if (err instanceof LoaderError) {
        process.stderr.write(`error: ${err.message}\n`);
      } else if (err instanceof ZodError) {
        const lines = err.issues.map((i) => `  ${i.path.join('.') || 'value'}: ${i.message}`);
        process.stderr.write(`error: invalid configuration\n${lines.join('\n')}\n`);
      } else if ((err as Error)?.name === 'AbortError') {
        process.stderr.write('interrupted\n');
      } else {
        process.stderr.write(`internal error: ${(err as Error)?.stack ?? String(err)}\n`);
      }
    }
  };
}

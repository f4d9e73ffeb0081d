import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { LoaderError } from '../../core/index.js';
import type { RpcMetrics } from '../metrics/serverMetrics.js';
import { describeFileError } from '../describeFileError.js';
import { parseTokensFile } from './parseTokensFile.js';
import type { TokenGrant } from './TokenGrant.js';

/** Settings of a {@link TokenStore}. */
export interface TokenStoreOptions {
  /** Path of the tokens file. */
  file: string;
  /** How often the file is read again to pick up changes. */
  reloadIntervalMs: number;
  logger: Logger;
  /** Where a failed read shows (absent: in the log only). */
  metrics?: Pick<RpcMetrics, 'authTokensFileStale' | 'authTokensReloadFailures'>;
}

/**
 * The grants of the tokens file, kept current. The file is read once at construction (a
 * missing, unreadable or invalid file stops the start with an error naming it), then read
 * again every `reloadIntervalMs`: a Kubernetes Secret is updated in place by swapping a
 * symlink, which file watchers miss, and a read of a small file costs nothing. A changed file
 * that is invalid, or missing for a moment during the swap, leaves the last good grants in
 * force and is logged (without its content), so a typo cannot lock every trainer out. Since
 * such a loader keeps serving on grants nobody can see any more (a revoked token still works),
 * the failure is also a gauge and a `/healthz` line ({@link TokenStore.staleness}) until a
 * read succeeds, which an alert or a person can find without reading logs.
 */
export class TokenStore {
  #grants: readonly TokenGrant[];
  #text: string;
  readonly #timer: NodeJS.Timeout;
  readonly #options: TokenStoreOptions;
  #reading = false;
  /** The last reload problem logged, so a file that stays bad is logged once, not every poll. */
  #problem: string | undefined;
  /** When the file was last read successfully. */
  #readAt: Date;
  /** When reads began failing (absent: the last read succeeded). */
  #staleSince: Date | undefined;

  constructor(options: TokenStoreOptions) {
    this.#options = options;
    this.#text = readTokensFileSync(options.file);
    this.#grants = parseTokensFile(this.#text, options.file);
    this.#readAt = new Date();
    options.metrics?.authTokensFileStale.set(0);
    if (this.#grants.length === 0) {
      options.logger.warn(
        { tokensFile: options.file },
        'the tokens file has no tokens: every call except health checks is refused',
      );
    }
    this.#timer = setInterval(() => void this.#reload(), options.reloadIntervalMs);
    this.#timer.unref();
  }

  /** The grants in force. */
  get grants(): readonly TokenGrant[] {
    return this.#grants;
  }

  /**
   * Why the grants in force may not be those of the file, as a line for `/healthz`: the last
   * read failed (with the reason, never the file's content), since when, and which grants stay
   * in force. Undefined while the last read succeeded.
   */
  staleness(): string | undefined {
    if (this.#staleSince === undefined) return undefined;
    // One line: the schema's messages put each bad field on a line of its own.
    const why = (this.#problem ?? '').replace(/\s*\n\s*/g, '; ');
    return (
      `tokens file stale since ${this.#staleSince.toISOString()}: ${why}; the tokens read ` +
      `at ${this.#readAt.toISOString()} stay in force`
    );
  }

  /** Stops watching the file. */
  close(): void {
    clearInterval(this.#timer);
  }

  async #reload(): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    const { file, logger } = this.#options;
    try {
      const text = await readFile(file, 'utf8');
      if (text !== this.#text) {
        this.#grants = parseTokensFile(text, file);
        this.#text = text;
        logger.info(
          { tokensFile: file, tokens: this.#grants.map((g) => g.name) },
          'tokens file reloaded',
        );
      } else if (this.#staleSince !== undefined) {
        // The file is back as it was when last read: the grants in force are its own again.
        logger.info({ tokensFile: file }, 'tokens file readable again, unchanged');
      }
      this.#problem = undefined;
      this.#staleSince = undefined;
      this.#readAt = new Date();
      this.#options.metrics?.authTokensFileStale.set(0);
    } catch (err) {
      const reason =
        err instanceof LoaderError ? err.message : `cannot read ${file}: ${describeFileError(err)}`;
      this.#staleSince ??= new Date();
      this.#options.metrics?.authTokensFileStale.set(1);
      this.#options.metrics?.authTokensReloadFailures.inc();
      if (reason === this.#problem) return;
      this.#problem = reason;
      logger.error(
        { tokensFile: file, reason },
        'cannot reload the tokens file; the previous tokens stay in force',
      );
    } finally {
      this.#reading = false;
    }
  }
}

function readTokensFileSync(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new LoaderError(
      'INVALID_ARGUMENT',
      `cannot read the tokens file ${file} (--auth-tokens, SCYLLA_LOADER_AUTH_TOKENS_FILE): ` +
        describeFileError(err),
      { cause: err },
    );
  }
}

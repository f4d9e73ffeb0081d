import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { LoaderError } from '../../core/index.js';
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
}

/**
 * The grants of the tokens file, kept current. The file is read once at construction (a
 * missing, unreadable or invalid file stops the start with an error naming it), then read
 * again every `reloadIntervalMs`: a Kubernetes Secret is updated in place by swapping a
 * symlink, which file watchers miss, and a read of a small file costs nothing. A changed file
 * that is invalid, or missing for a moment during the swap, leaves the last good grants in
 * force and is logged (without its content), so a typo cannot lock every trainer out.
 */
export class TokenStore {
  #grants: readonly TokenGrant[];
  #text: string;
  readonly #timer: NodeJS.Timeout;
  readonly #options: TokenStoreOptions;
  #reading = false;
  /** The last reload problem logged, so a file that stays bad is logged once, not every poll. */
  #problem: string | undefined;

  constructor(options: TokenStoreOptions) {
    this.#options = options;
    this.#text = readTokensFileSync(options.file);
    this.#grants = parseTokensFile(this.#text, options.file);
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
      if (text === this.#text) {
        this.#problem = undefined;
        return;
      }
      this.#grants = parseTokensFile(text, file);
      this.#text = text;
      this.#problem = undefined;
      logger.info(
        { tokensFile: file, tokens: this.#grants.map((g) => g.name) },
        'tokens file reloaded',
      );
    } catch (err) {
      const reason = err instanceof LoaderError ? err.message : describeFileError(err);
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

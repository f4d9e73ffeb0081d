import { readFile, readFileSync, stat, statSync } from 'node:fs';
import { promisify } from 'node:util';

const readFileAsync = promisify(readFile);
const statAsync = promisify(stat);

/** A synchronous read slower than this counts as slow storage. */
const SLOW_READ_MS = 2;
/** Slow synchronous reads after which a reader goes asynchronous for good. */
const SLOW_READS_TO_SWITCH = 8;

/**
 * Reads the files of an ingest source. On local storage a synchronous read of a small file
 * costs a few microseconds, where an asynchronous one costs four thread-pool round trips
 * (open, stat, read, close) and their promises: for 70,000 MNIST PNGs that was the largest
 * share of the ingest's CPU (bench ingest: 9,300 samples/s asynchronous, 16,600 synchronous).
 * But a synchronous read stalls everything else while it waits, which on network storage
 * (NFS, a FUSE bucket) would make reads serial. So reads start synchronous, and after a few
 * slow ones the reader switches to asynchronous reads, which overlap, for the rest of the run.
 */
export class SourceFileReader {
  private slowReads = 0;

  /** Whether reads are asynchronous now (slow storage was seen). */
  get asynchronous(): boolean {
    return this.slowReads >= SLOW_READS_TO_SWITCH;
  }

  /**
   * Reads a file; a file over `maxBytes` is refused before it is read (with the sample limit's
   * wording), so a manifest naming multi-gigabyte files does not fill memory.
   */
  read(file: string, maxBytes = Infinity): Promise<Buffer> {
    if (this.asynchronous) return this.readAsync(file, maxBytes);
    const started = performance.now();
    try {
      if (maxBytes !== Infinity) checkSize(statSync(file).size, maxBytes);
      return Promise.resolve(readFileSync(file));
    } catch (err) {
      return Promise.reject(err);
    } finally {
      if (performance.now() - started > SLOW_READ_MS) this.slowReads++;
    }
  }

  private async readAsync(file: string, maxBytes: number): Promise<Buffer> {
    if (maxBytes !== Infinity) checkSize((await statAsync(file)).size, maxBytes);
    return readFileAsync(file);
  }
}

function checkSize(size: number, maxBytes: number): void {
  if (size > maxBytes) {
    throw new Error(
      `is ${size} bytes, over the limit of ${maxBytes} bytes (one sample is one database ` +
        'write; the database refuses writes over 16 MiB)',
    );
  }
}

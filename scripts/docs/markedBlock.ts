import { invalidArgument } from '../../src/core/index.js';

/**
 * `markdown` with the lines between `<!-- KEY:begin -->` and `<!-- KEY:end -->` replaced by
 * `block`; everything else is kept byte for byte. Missing, repeated or misordered markers
 * are INVALID_ARGUMENT naming them. Generated parts of docs/ (settings, benchmark tables) go through here.
 */
export function replaceMarkedBlock(markdown: string, key: string, block: string): string {
  const begin = `<!-- ${key}:begin -->`;
  const end = `<!-- ${key}:end -->`;
  const b = lineOf(markdown, begin);
  const e = lineOf(markdown, end);
  if (e < b) throw invalidArgument(`${end} comes before ${begin}`);
  const afterBegin = markdown.indexOf('\n', b) + 1;
  const eol = markdown.slice(b, afterBegin).endsWith('\r\n') ? '\r\n' : '\n';
  const body = eol === '\n' ? block : block.replace(/\n/g, '\r\n');
  return markdown.slice(0, afterBegin) + body + markdown.slice(e);
}

/** The text between the markers of `key` (without them). */
export function markedBlock(markdown: string, key: string): string {
  const begin = `<!-- ${key}:begin -->`;
  const b = lineOf(markdown, begin);
  const e = lineOf(markdown, `<!-- ${key}:end -->`);
  return markdown.slice(markdown.indexOf('\n', b) + 1, e);
}

function lineOf(markdown: string, marker: string): number {
  const escaped = marker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const hits = [...markdown.matchAll(new RegExp(`^${escaped}[ \\t]*\\r?$`, 'gm'))];
  if (hits.length !== 1) {
    throw invalidArgument(
      `${marker} must be on a line of its own exactly once, found ${hits.length} times`,
    );
  }
  return hits[0]!.index;
}

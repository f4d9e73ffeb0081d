/**
 * `text` cut to at most `max` characters followed by `... (<note>)`, or `text` itself when it
 * fits. It never splits a surrogate pair: a lone surrogate cannot be percent-encoded in a
 * grpc-message trailer, nor written as valid UTF-8 to a log. `note` says how much was left out.
 *
 * @internal
 */
export function cutText(text: string, max: number, note: (left: number) => string): string {
  if (text.length <= max) return text;
  const high = text.charCodeAt(max - 1);
  const end = high >= 0xd800 && high <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}... (${note(text.length - end)})`;
}

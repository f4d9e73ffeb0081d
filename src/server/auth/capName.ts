/** Characters of a client-chosen name quoted in a denial or a log field. */
export const MAX_QUOTED_NAME_CHARS = 200;

/**
 * A name from a request cut to {@link MAX_QUOTED_NAME_CHARS}, for the details and log lines
 * that quote it: a 2 MB dataset name must not become a 2 MB log line or trailer. The cut says
 * how much is missing, and never splits a surrogate pair.
 */
export function capName(name: string): string {
  if (name.length <= MAX_QUOTED_NAME_CHARS) return name;
  const high = name.charCodeAt(MAX_QUOTED_NAME_CHARS - 1);
  const end = high >= 0xd800 && high <= 0xdbff ? MAX_QUOTED_NAME_CHARS - 1 : MAX_QUOTED_NAME_CHARS;
  return `${name.slice(0, end)}... (${name.length - end} more characters)`;
}

import { cutText } from '../errors/cutText.js';

/** Characters of a client-chosen name quoted in a denial or a log field. */
export const MAX_QUOTED_NAME_CHARS = 200;

/**
 * A name from a request cut to {@link MAX_QUOTED_NAME_CHARS}, for the details and log lines
 * that quote it: a 2 MB dataset name must not become a 2 MB log line or trailer.
 */
export function capName(name: string): string {
  return cutText(name, MAX_QUOTED_NAME_CHARS, (left) => `${left} more characters`);
}

import { invalidArgument } from '../core/index.js';

/** An extra database path as given on the command line, before schema validation. */
export interface ExtraPathSpec {
  name: string;
  contactPoints: string[];
  port?: number;
}

/**
 * Parses extra database paths: `name=host1,host2[:port]`, several separated by `;` (the form
 * of `SCYLLA_LOADER_EXTRA_PATHS`). The port, when given, applies to every host of the path;
 * IPv6 hosts go in brackets (`[fd00::1]`), since their colons would read as a port.
 */
export function parseExtraPaths(text: string): ExtraPathSpec[] {
  return text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map(parseOne);
}

function parseOne(spec: string): ExtraPathSpec {
  const bad = (why: string): Error =>
    invalidArgument(
      `extra path ${JSON.stringify(spec)}: ${why}; use name=host1,host2[:port], e.g. ` +
        'route2=10.0.1.5,10.0.1.6:9042',
    );
  const eq = spec.indexOf('=');
  if (eq <= 0) throw bad('missing name=');
  const name = spec.slice(0, eq).trim();
  let hosts = spec.slice(eq + 1).trim();
  let port: number | undefined;
  const portMatch = /^(.*[^:]):(\d{1,5})$/.exec(hosts);
  if (portMatch && !unbracketedColon(portMatch[1]!)) {
    hosts = portMatch[1]!;
    port = Number(portMatch[2]);
  }
  const contactPoints = hosts
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h.length > 0)
    .map((h) => (h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h));
  if (contactPoints.length === 0) throw bad('no hosts');
  for (const h of contactPoints) {
    if (h.includes('[') || h.includes(']') || (h.includes(':') && !hosts.includes(`[${h}]`))) {
      throw bad(`host ${JSON.stringify(h)} is not a host name or address (IPv6 goes in brackets)`);
    }
  }
  return port === undefined ? { name, contactPoints } : { name, contactPoints, port };
}

/** True when `s` has a colon outside brackets, i.e. a bare IPv6 address. */
function unbracketedColon(s: string): boolean {
  let depth = 0;
  for (const c of s) {
    if (c === '[') depth++;
    else if (c === ']') depth--;
    else if (c === ':' && depth === 0) return true;
  }
  return false;
}

import { z } from 'zod';
import { invalidArgument } from '../errors/LoaderError.js';

/** Keyspace replication: SimpleStrategy for a local node, NetworkTopologyStrategy in production. */
export const replicationSchema = z.discriminatedUnion('class', [
  z.object({
    class: z.literal('SimpleStrategy'),
    replicationFactor: z.number().int().min(1).max(15),
  }),
  z.object({
    class: z.literal('NetworkTopologyStrategy'),
    dataCenters: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/), z.number().int().min(1).max(15)),
  }),
]);

/** Validated replication settings. */
export type Replication = z.infer<typeof replicationSchema>;

/**
 * Parses the command-line form: `simple:<rf>` or `nts:<dc>=<rf>[,<dc>=<rf>...]`.
 */
export function parseReplication(text: string): Replication {
  const [kind, rest = ''] = text.split(':', 2);
  let candidate: unknown;
  if (kind === 'simple') {
    candidate = { class: 'SimpleStrategy', replicationFactor: Number(rest) };
  } else if (kind === 'nts') {
    const pairs = rest.split(',').map((pair) => pair.split('=', 2));
    candidate = {
      class: 'NetworkTopologyStrategy',
      dataCenters: Object.fromEntries(pairs.map(([dc = '', rf = '']) => [dc.trim(), Number(rf)])),
    };
  }
  const parsed = replicationSchema.safeParse(candidate);
  if (!parsed.success) {
    throw invalidArgument(
      `invalid replication ${JSON.stringify(text)}: use simple:<rf> (e.g. simple:1) or ` +
        'nts:<dc>=<rf>[,<dc>=<rf>...] (e.g. nts:dc1=3), with factors from 1 to 15',
    );
  }
  return parsed.data;
}

/** The CQL map literal for a replication setting (values were validated, so safe to inline). */
export function replicationCql(replication: Replication): string {
  if (replication.class === 'SimpleStrategy') {
    return `{'class': 'SimpleStrategy', 'replication_factor': ${replication.replicationFactor}}`;
  }
  const dcs = Object.entries(replication.dataCenters)
    .map(([dc, rf]) => `'${dc}': ${rf}`)
    .join(', ');
  return `{'class': 'NetworkTopologyStrategy', ${dcs}}`;
}

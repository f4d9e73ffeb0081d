import type cassandra from 'cassandra-driver';
import { z } from 'zod';

/** A route to the database: a driver client of its own. */
export interface DbPath {
  name: string;
  client: cassandra.Client;
}

/** An extra route to the database: its own driver client with its own contact points. */
export const dbPathSchema = z.object({
  name: z.string().regex(/^[a-z0-9_-]{1,32}$/),
  contactPoints: z.array(z.string().min(1)).min(1),
  port: z.number().int().min(1).max(65535).default(9042),
});

/** Validated settings of an extra route. */
export type DbPathConfig = z.infer<typeof dbPathSchema>;

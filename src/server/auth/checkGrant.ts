import { capName } from './capName.js';
import type { Role } from './tokensFileSchema.js';
import type { TokenGrant } from './TokenGrant.js';

/** The LoaderService calls and the least role each needs. */
export const RPC_ROLES = {
  StreamBatches: 'reader',
  DescribeDataset: 'reader',
  ListSplits: 'reader',
  GetSplit: 'reader',
  GetLedger: 'reader',
  IngestSamples: 'writer',
  CreateSplits: 'admin',
} as const satisfies Record<string, Role>;

/** A LoaderService call an authorization decision is about. */
export type LoaderRpc = keyof typeof RPC_ROLES;

/** A role may make the calls of every role ranked below it. */
const RANK: Record<Role, number> = { reader: 0, writer: 1, admin: 2 };

/**
 * Whether a grant allows a call on a dataset: undefined when it does, else the reason, a
 * sentence for the PERMISSION_DENIED details that names the token (by name), the call and the
 * dataset, and says what grant would be needed.
 */
export function checkGrant(grant: TokenGrant, rpc: LoaderRpc, dataset: string): string | undefined {
  const role = checkRole(grant, rpc);
  if (role !== undefined) return role;
  if (!grant.datasets.has('*') && !grant.datasets.has(dataset)) {
    return (
      `token "${grant.name}" may not use dataset ${JSON.stringify(capName(dataset))} (${rpc}); ` +
      `its grant covers ${[...grant.datasets].join(', ')}`
    );
  }
  return undefined;
}

/**
 * The role half of {@link checkGrant}: undefined when the grant's role allows the call, else
 * the reason. For a call whose dataset is known only from its first message (IngestSamples),
 * so a token of too low a role is refused before anything is read.
 */
export function checkRole(grant: TokenGrant, rpc: LoaderRpc): string | undefined {
  const needed = RPC_ROLES[rpc];
  if (RANK[grant.role] >= RANK[needed]) return undefined;
  return (
    `token "${grant.name}" has role ${grant.role}, and ${rpc} needs role ${needed}; ` +
    'ask for a token with that role'
  );
}

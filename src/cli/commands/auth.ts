import { Command, Option } from 'commander';
import { ROLES, type Role } from '../../server/auth/tokensFileSchema.js';
import { newTokenEntry } from '../../server/auth/newTokenEntry.js';
import { runAction } from '../runAction.js';

/** Flags of `auth new-token`. */
interface NewTokenFlags {
  name: string;
  role: Role;
  datasets: string;
}

/**
 * Registers `auth new-token`: makes a bearer token and the entry of the loader's tokens file
 * that grants it. The token goes to stdout and the JSON entry to stderr, each alone on its
 * line, so `TOKEN=$(scylla-loader auth new-token ... 2>entry.json)` keeps them apart: the
 * token for the trainer's Secret, the entry (a hash, no secret) for the loader's.
 */
export function registerAuthCommand(program: Command): void {
  const auth = program.command('auth').description('bearer tokens of the gRPC service');
  auth
    .command('new-token')
    .description(
      'make a token (printed once, on stdout) and its tokens-file entry (JSON, on stderr); ' +
        'add the entry to the "tokens" list of the file given to serve --auth-tokens',
    )
    .requiredOption('--name <name>', 'who holds the token (shown in logs and denials)')
    .addOption(
      new Option(
        '--role <role>',
        'reader: stream, describe, list/get splits; writer: also ingest samples (IngestSamples); ' +
          'admin: also create splits',
      )
        .choices(ROLES)
        .makeOptionMandatory(),
    )
    .requiredOption('--datasets <names>', 'comma-separated dataset names, or * for all')
    .action(
      runAction(async (flags: NewTokenFlags) => {
        const datasets = flags.datasets
          .split(',')
          .map((d) => d.trim())
          .filter((d) => d !== '');
        const { token, entry } = newTokenEntry({ name: flags.name, role: flags.role, datasets });
        process.stdout.write(`${token}\n`);
        process.stderr.write(`${JSON.stringify(entry)}\n`);
        return Promise.resolve();
      }),
    );
}

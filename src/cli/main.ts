#!/usr/bin/env node
// First: sizes libuv's thread pool before any module can use it.
import './sizeThreadPool.js';
import { Command } from 'commander';
import { registerAuthCommand } from './commands/auth.js';
import { registerCacheCommand } from './commands/cache.js';
import { registerDbCommand } from './commands/db.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDescribeCommand } from './commands/describe.js';
import { registerIngestCommand } from './commands/ingest.js';
import { registerLedgerCommand } from './commands/ledger.js';
import { registerPrepareCommand } from './commands/prepare.js';
import { registerServeCommand } from './commands/serve.js';
import { registerSplitsCommand } from './commands/splits.js';

const program = new Command()
  .name('scylla-loader')
  .description('Stream training batches from ScyllaDB/Cassandra to deep-learning trainers')
  .showHelpAfterError();

registerDbCommand(program);
registerIngestCommand(program);
registerDescribeCommand(program);
registerSplitsCommand(program);
registerLedgerCommand(program);
registerPrepareCommand(program);
registerServeCommand(program);
registerCacheCommand(program);
registerAuthCommand(program);
registerDemoCommand(program);

await program.parseAsync(process.argv);

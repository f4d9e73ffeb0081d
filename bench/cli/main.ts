#!/usr/bin/env -S node --import tsx
// `scylla-loader-bench` (`npm run bench -- <name> [options]` in a checkout): the benchmarks,
// a program of their own so that the shipped `scylla-loader` command knows nothing of them.
import { Command } from 'commander';
import { registerBenchCommands } from './bench.js';

const program = new Command()
  .name('scylla-loader-bench')
  .description('measure the loader (figures, not tests)')
  .showHelpAfterError();
registerBenchCommands(program);
await program.parseAsync(process.argv);

import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  addFlags,
  choice,
  flag,
  flagInput,
  names,
  onOff,
  parseFlags,
  text,
  wholeNumber,
  wholeNumbers,
} from '../../cli/benchOptions.js';
import { LoaderError } from '../../../src/core/index.js';

const FLAGS = {
  samples: flag('--samples <n>', 'samples', wholeNumber('--samples', 1, 1000), 300, 30),
  concurrencies: flag(
    '--concurrency <list>',
    'in flight',
    wholeNumbers('--concurrency', 1, 64),
    [8, 16],
  ),
  legs: flag('--legs <list>', 'legs', names('--legs', ['a', 'b', 'c'] as const, 'leg')),
  payload: flag('--payload <p>', 'payload', choice('--payload', ['big', 'small'] as const), 'big'),
  mnist: flag('--no-mnist', 'skip MNIST', onOff, true),
  dataset: flag('--dataset <name>', 'dataset', text),
};

/** The INVALID_ARGUMENT message of parsing `input`. */
function refusal(input: Parameters<typeof parseFlags<typeof FLAGS>>[1]): string {
  try {
    parseFlags(FLAGS, input);
  } catch (err) {
    expect(err).toBeInstanceOf(LoaderError);
    expect((err as LoaderError).code).toBe('INVALID_ARGUMENT');
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('parseFlags', () => {
  it('fills in the full or the quick defaults, and given values win', () => {
    expect(parseFlags(FLAGS, {})).toEqual({
      samples: 300,
      concurrencies: [8, 16],
      legs: undefined,
      payload: 'big',
      mnist: true,
      dataset: undefined,
    });
    expect(parseFlags(FLAGS, {}, true).samples).toBe(30);
    expect(parseFlags(FLAGS, { samples: 7 }, true).samples).toBe(7);
  });

  it('takes the flag text of the command line and the values of code alike', () => {
    const fromText = parseFlags(FLAGS, { samples: '12', concurrencies: '4,2', legs: 'c, a,c' });
    const fromCode = parseFlags(FLAGS, { samples: 12, concurrencies: [4, 2], legs: ['c', 'a'] });
    expect(fromText).toEqual(fromCode);
    expect(fromText).toMatchObject({ samples: 12, concurrencies: [4, 2], legs: ['c', 'a'] });
  });

  it('names the flag, its range and the value refused', () => {
    expect(refusal({ samples: 0 })).toBe('--samples must be a whole number from 1 to 1000, not 0');
    expect(refusal({ samples: 1.5 })).toMatch(/^--samples must be a whole number .* not 1\.5$/);
    expect(refusal({ samples: 'x' })).toBe(
      '--samples must be a whole number from 1 to 1000, not "x"',
    );
    expect(refusal({ concurrencies: '8,65' })).toBe(
      '--concurrency must be a whole number from 1 to 64, not "65"',
    );
    expect(refusal({ concurrencies: [] })).toBe('--concurrency needs at least one value');
    expect(refusal({ legs: 'a,z' })).toBe('--legs "a,z": use a comma-separated subset of a, b, c');
    expect(refusal({ legs: [] })).toBe('--legs: at least one leg is needed');
    expect(refusal({ payload: 'huge' })).toBe('--payload "huge": use one of big, small');
  });
});

describe('addFlags and flagInput', () => {
  it('shows the defaults in the help and reads commander values under the settings names', () => {
    const cmd = new Command('x').exitOverride();
    addFlags(cmd, FLAGS);
    const help = cmd.helpInformation();
    expect(help).toContain('samples (default 300; quick 30)');
    expect(help).toContain('in flight (default 8,16)');
    cmd.parse(['--concurrency', '4', '--no-mnist', '--dataset', 'd'], { from: 'user' });
    const input = flagInput(FLAGS, cmd.opts());
    expect(input).toEqual({ concurrencies: '4', mnist: false, dataset: 'd' });
    expect(parseFlags(FLAGS, input)).toMatchObject({ concurrencies: [4], mnist: false });
  });
});

import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  checkSplitsCreate,
  registerSplitsCommand,
  splitsFlagOf,
  formatSplitList,
  parseClassRatios,
  parseFilter,
  parseParts,
  parseSetRef,
  type SplitsCreateFlags,
} from '../../src/cli/commands/splits.js';
import type { CreateSplitSetRequest } from '../../src/core/splits/createSplitSet.js';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import type { SplitSetInfo } from '../../src/core/splits/SplitSetInfo.js';

const userError = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(LoaderError);
    return (err as LoaderError).message;
  }
  throw new Error('expected a user error');
};

describe("splits create flags in the core's messages", () => {
  it("are the command's declared flags", () => {
    const program = new Command();
    registerSplitsCommand(program);
    const create = program.commands
      .find((c) => c.name() === 'splits')!
      .commands.find((c) => c.name() === 'create')!;
    const declared = create.options.map((o) => o.long);
    for (const option of ['newVersion', 'allowShortfall', 'maxTotal', 'groupBy']) {
      expect(declared, option).toContain(splitsFlagOf(option));
    }
  });
});

describe('splits CLI parsing', () => {
  it('parses parts with weights, in order', () => {
    expect(parseParts('train=7,val=2,test=1')).toEqual([
      ['train', 7],
      ['val', 2],
      ['test', 1],
    ]);
    expect(parseParts('a=0.5, b=1e1')).toEqual([
      ['a', 0.5],
      ['b', 10],
    ]);
    // Only the syntax: a zero or negative weight is the schema's to refuse (below).
    expect(parseParts('train=0,val=-1')).toEqual([
      ['train', 0],
      ['val', -1],
    ]);
    for (const bad of ['train', 'train=', 'train=x', 'a=1,,b=2', '=3']) {
      expect(userError(() => parseParts(bad))).toMatch(/^--parts .*<name>=<positive weight>/);
    }
  });

  it('parses the three filter forms', () => {
    expect(parseFilter('patient_id=p001')).toEqual({ column: 'patient_id', equals: 'p001' });
    expect(parseFilter('slide=1,2,3')).toEqual({ column: 'slide', in: ['1', '2', '3'] });
    expect(parseFilter('x=0..100')).toEqual({ column: 'x', min: 0, max: 100 });
    expect(parseFilter('x=-1.5..')).toEqual({ column: 'x', min: -1.5 });
    expect(parseFilter('x=..1e3')).toEqual({ column: 'x', max: 1000 });
    // Only numbers make a range; anything else with dots is a value.
    expect(parseFilter('path=a..b')).toEqual({ column: 'path', equals: 'a..b' });
    expect(parseFilter('note=x=y')).toEqual({ column: 'note', equals: 'x=y' });
    expect(userError(() => parseFilter('x=..'))).toMatch(/at least one end/);
    expect(parseFilter('x=5..1')).toEqual({ column: 'x', min: 5, max: 1 }); // refused below
    expect(userError(() => parseFilter('slide=1,,2'))).toMatch(/empty/);
    for (const bad of ['x', 'x=', '=3']) {
      expect(userError(() => parseFilter(bad))).toMatch(/use col=value/);
    }
  });

  it('parses class ratios by label or class name', () => {
    expect(parseClassRatios('0=1,1=1', [])).toEqual({ 0: 1, 1: 1 });
    expect(parseClassRatios('tumor=1,normal=3', ['normal', 'tumor'])).toEqual({ 0: 3, 1: 1 });
    expect(userError(() => parseClassRatios('cat=1', ['normal', 'tumor']))).toMatch(
      /no class cat; its classes: 0=normal, 1=tumor/,
    );
    expect(userError(() => parseClassRatios('0=1,0=2', []))).toMatch(/named twice/);
    expect(userError(() => parseClassRatios('0=x', []))).toMatch(/positive ratio/);
    expect(parseClassRatios('0=0', [])).toEqual({ 0: 0 }); // refused below
  });

  it('checks the request with the core schema, naming the flag each problem came from', () => {
    const flags: SplitsCreateFlags = {
      parts: 'train=7,val=0,val=1,train-0=1',
      groupBy: ['patient_id,patient_id'],
      balanced: false,
      classRatios: '0=1,1=0',
      maxTotal: '0',
      filter: ['x=5..1', 'Bad=1'],
      seed: '18446744073709551616',
      newVersion: false,
      allowShortfall: false,
    };
    const req: CreateSplitSetRequest = {
      dataset: 'ds',
      name: 'main',
      parts: parseParts(flags.parts!),
      folds: 0,
      groupBy: ['patient_id', 'patient_id'],
      classTargets: { mode: 'ratios', ratios: parseClassRatios(flags.classRatios!, []) },
      maxTotal: 0,
      filters: flags.filter.map(parseFilter),
      seed: BigInt(flags.seed),
      newVersion: false,
      allowShortfall: false,
    };
    const lines = userError(() => checkSplitsCreate(flags, req)).split('\n');
    const parts = `--parts ${flags.parts}: `;
    expect(lines).toHaveLength(9);
    expect(lines).toEqual(
      expect.arrayContaining([
        `${parts}part val needs a positive weight, got 0`,
        `${parts}part val is named twice`,
        `${parts}part name train-0 is reserved for the views of k-fold sets; pick another`,
        '--group-by patient_id,patient_id: group-by column patient_id is named twice',
        '--class-ratios 0=1,1=0: class ratio of label 1 must be positive, got 0',
        '--max-total 0: max total must be at least 1',
        '--filter x=5..1: range min 5 is above max 1, so no sample would pass',
        expect.stringMatching(/^--filter Bad=1: invalid metadata column name "Bad"/),
        '--seed 18446744073709551616: seed must fit in 64 bits (at most 2^64 - 1)',
      ]),
    );
    const folds = { ...flags, parts: undefined, folds: '1' };
    const one = { ...req, parts: [], folds: 1, groupBy: [], filters: [], maxTotal: undefined };
    const k = { ...one, classTargets: { mode: 'natural' as const }, seed: 0n };
    expect(userError(() => checkSplitsCreate(folds, k))).toMatch(
      /^--folds 1: k-fold needs at least 2 folds/,
    );
    const fine = { ...k, folds: 5 };
    expect(checkSplitsCreate(folds, fine)).toEqual(fine);
  });

  it('parses set and set@version', () => {
    expect(parseSetRef('main')).toEqual({ name: 'main' });
    expect(parseSetRef('main@3')).toEqual({ name: 'main', version: 3 });
    expect(userError(() => parseSetRef('main@0'))).toMatch(/<name>@<version>/);
    expect(userError(() => parseSetRef('main@x'))).toMatch(/<name>@<version>/);
    expect(userError(() => parseSetRef('Main'))).toMatch(/invalid split set name/);
  });

  it('lists sets as a table, or says how to make one', () => {
    expect(formatSplitList('ds', [])).toMatch(/has no split sets; make one with `splits create ds/);
    const set: SplitSetInfo = {
      name: 'main',
      version: 2,
      params: {},
      seed: 1n,
      folds: 0,
      parts: [
        { name: 'train', size: 70, classCounts: {}, targets: {}, groups: 7, chunks: 1 },
        { name: 'val', size: 30, classCounts: {}, targets: {}, groups: 3, chunks: 1 },
      ],
      contentHash: 'h',
      writeId: 'w',
      worstDeviation: 0,
      createdAt: new Date('2025-01-02T03:04:05Z'),
    };
    expect(formatSplitList('ds', [set])).toBe(
      'split sets of dataset ds\n' +
        '  set   version  kind     sizes            samples  created\n' +
        '  main  2        2 parts  train=70 val=30  100      2025-01-02T03:04:05.000Z\n',
    );
  });
});

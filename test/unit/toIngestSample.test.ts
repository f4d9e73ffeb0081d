import { describe, expect, it } from 'vitest';
import type { IngestSample__Output } from '../../src/generated/scylla_loader/v1/IngestSample.js';
import type { IngestTarget__Output } from '../../src/generated/scylla_loader/v1/IngestTarget.js';
import type { MetadataValue__Output } from '../../src/generated/scylla_loader/v1/MetadataValue.js';
import {
  datasetNamespace,
  LoaderError,
  MAX_SAMPLE_BYTES,
  sampleId,
  type ColumnType,
} from '../../src/core/index.js';
import { toIngestSample, type IngestSampleRules } from '../../src/server/rpc/toIngestSample.js';
import { toIngestTarget } from '../../src/server/rpc/toIngestTarget.js';

const ns = datasetNamespace('photos');
const rules = (
  columns: Record<string, ColumnType> = {},
  labelNames: string[] = [],
): IngestSampleRules => ({ columns: new Map(Object.entries(columns)), labelNames, namespace: ns });

/** A decoded sample as grpc-js hands it over (defaults filled, `label` absent when unset). */
function sample(fields: Partial<IngestSample__Output> = {}): IngestSample__Output {
  return {
    sourceKey: 'cats/1.jpg',
    data: Buffer.from('jpeg bytes'),
    label: 0,
    labelBlob: Buffer.alloc(0),
    metadata: {},
    ...fields,
  };
}

const text = (v: string): MetadataValue__Output => ({ kind: 'text', text: v });
const int = (v: string): MetadataValue__Output => ({ kind: 'int', int: v });
const dbl = (v: number): MetadataValue__Output => ({ kind: 'double', double: v });
const bool = (v: boolean): MetadataValue__Output => ({ kind: 'boolean', boolean: v });

function problemOf(s: IngestSample__Output, r: IngestSampleRules = rules()): string {
  const result = toIngestSample(s, r);
  if ('sample' in result) throw new Error('expected a problem');
  return result.problem;
}

describe('toIngestSample', () => {
  it('makes the writable sample: id from key and dataset, label, blob, typed metadata', () => {
    const columns = { who: 'text', n: 'int', big: 'bigint', x: 'double', ok: 'boolean' } as const;
    const result = toIngestSample(
      sample({
        label: 1,
        labelBlob: Buffer.from([1, 2]),
        metadata: {
          who: text('ana'),
          n: int('-2147483648'),
          big: int('9223372036854775807'),
          x: int('3'),
          ok: bool(false),
        },
      }),
      rules(columns, ['cat', 'dog']),
    );
    expect(result).toEqual({
      sample: {
        id: sampleId('cats/1.jpg', ns),
        sourceKey: 'cats/1.jpg',
        data: Buffer.from('jpeg bytes'),
        label: 1,
        labelBlob: Buffer.from([1, 2]),
        metadata: { who: 'ana', n: -2147483648, big: 9223372036854775807n, x: 3, ok: false },
      },
    });
  });

  it('takes an unset label as none, an empty blob as none, and a value without a kind as null', () => {
    const result = toIngestSample(
      sample({ label: undefined, labelBlob: Buffer.from([7]), metadata: { who: {} } }),
      rules({ who: 'text' }),
    );
    expect(result).toMatchObject({ sample: { label: null, metadata: { who: null } } });
    expect('labelBlob' in (toIngestSample(sample(), rules()) as { sample: object }).sample).toBe(
      false,
    );
    expect(
      toIngestSample(sample({ metadata: { x: dbl(2.5) } }), rules({ x: 'double' })),
    ).toMatchObject({
      sample: { metadata: { x: 2.5 } },
    });
  });

  it('refuses an empty source key and one over 1024 bytes of UTF-8', () => {
    expect(problemOf(sample({ sourceKey: '' }))).toBe(
      'has an empty source key; give every sample a key',
    );
    expect(toIngestSample(sample({ sourceKey: 'k'.repeat(1024) }), rules())).toHaveProperty(
      'sample',
    );
    // 342 three-byte characters: 1026 bytes, though only 342 characters.
    expect(problemOf(sample({ sourceKey: '€'.repeat(342) }))).toBe(
      'has a source key of 1026 bytes, over the limit of 1024 bytes (UTF-8)',
    );
  });

  it('refuses metadata of a column the target does not declare, naming the columns', () => {
    expect(problemOf(sample({ metadata: { colour: text('red') } }), rules({ who: 'text' }))).toBe(
      'has metadata "colour", which is not a column of the target (its columns: who)',
    );
    expect(problemOf(sample({ metadata: { colour: text('red') } }))).toBe(
      'has metadata "colour", which is not a column of the target (it declares none)',
    );
  });

  it('refuses a value whose kind does not fit the column type', () => {
    const cases: Array<[ColumnType, MetadataValue__Output, string]> = [
      ['text', int('1'), 'is an int value, but the column is text (it takes text values)'],
      ['int', text('1'), 'is a text value, but the column is int (it takes int values)'],
      ['int', dbl(1), 'is a double value, but the column is int (it takes int values)'],
      ['bigint', dbl(1), 'is a double value, but the column is bigint (it takes int values)'],
      [
        'double',
        text('1.5'),
        'is a text value, but the column is double (it takes int and double values)',
      ],
      ['boolean', int('1'), 'is an int value, but the column is boolean (it takes boolean values)'],
      [
        'int',
        int('2147483648'),
        "is 2147483648, outside the int column's range (-2147483648 to 2147483647); declare it bigint",
      ],
      ['double', dbl(Number.NaN), 'is NaN; a double column takes finite numbers'],
      ['double', dbl(Infinity), 'is Infinity; a double column takes finite numbers'],
    ];
    for (const [type, value, why] of cases) {
      expect(problemOf(sample({ metadata: { c: value } }), rules({ c: type }))).toBe(
        `has metadata "c" ${why}`,
      );
    }
  });

  it('applies the rules every ingest shares: size with its limit, data, label range', () => {
    const big = Buffer.alloc(MAX_SAMPLE_BYTES + 1);
    expect(problemOf(sample({ data: big }))).toBe(
      `is ${MAX_SAMPLE_BYTES + 1} bytes with its label blob, over the limit of ` +
        `${MAX_SAMPLE_BYTES} bytes (one sample is one database write; the database refuses ` +
        'writes over 16 MiB)',
    );
    expect(problemOf(sample({ data: Buffer.alloc(0) }))).toBe('has no data (0 bytes)');
    expect(problemOf(sample({ label: 2 }), rules({}, ['cat', 'dog']))).toBe(
      'has label 2, but the dataset has 2 classes (labels 0 to 1)',
    );
    expect(problemOf(sample({ label: -1 }))).toMatch(/^has label -1; a label is an integer/);
    expect(problemOf(sample({ label: undefined }))).toBe('has neither a label nor a label blob');
    // In a call whose first sample had a label, and in one whose first sample had none.
    expect(problemOf(sample({ label: undefined }), { ...rules(), unlabelled: false })).toMatch(
      /^has neither a label nor a label blob, but this call's first sample had one/,
    );
    const bare = toIngestSample(sample({ label: undefined }), { ...rules(), unlabelled: true });
    expect(bare).toMatchObject({ sample: { label: null } });
    expect(problemOf(sample({ label: 3 }), { ...rules(), unlabelled: true })).toMatch(
      /^has a label or a label blob, but this call's first sample had neither/,
    );
  });

  it('counts metadata text towards the size limit', () => {
    const data = Buffer.alloc(MAX_SAMPLE_BYTES - 10);
    const ok = sample({ data, metadata: { who: text('x'.repeat(10)) } });
    expect(toIngestSample(ok, rules({ who: 'text' }))).toHaveProperty('sample');
    const over = sample({ data, metadata: { who: text('x'.repeat(11)) } });
    expect(problemOf(over, rules({ who: 'text' }))).toBe(
      `is ${MAX_SAMPLE_BYTES + 1} bytes with its label blob and metadata, over the limit of ` +
        `${MAX_SAMPLE_BYTES} bytes (one sample is one database write; the database refuses ` +
        'writes over 16 MiB)',
    );
  });
});

describe('toIngestTarget', () => {
  const target = (fields: Partial<IngestTarget__Output> = {}): IngestTarget__Output => ({
    dataset: 'photos',
    labelNames: [],
    columns: {},
    badSamplePolicy: 'BAD_SAMPLE_POLICY_UNSPECIFIED',
    source: '',
    ...fields,
  });
  const refusal = (t: IngestTarget__Output | null): string => {
    try {
      toIngestTarget(t);
    } catch (err) {
      expect(err).toBeInstanceOf(LoaderError);
      expect((err as LoaderError).code).toBe('INVALID_ARGUMENT');
      return (err as LoaderError).message;
    }
    throw new Error('expected INVALID_ARGUMENT');
  };

  it('reads the dataset, columns, class names, policy and source (default rpc, fail)', () => {
    expect(toIngestTarget(target())).toEqual({
      dataset: 'photos',
      labelNames: [],
      columns: [],
      policy: 'fail',
      source: 'rpc',
    });
    expect(
      toIngestTarget(
        target({
          labelNames: ['cat', 'dog'],
          columns: { who: 'text', year: 'int' },
          badSamplePolicy: 'BAD_SAMPLE_POLICY_SKIP',
          source: 'hf:pets/train',
        }),
      ),
    ).toEqual({
      dataset: 'photos',
      labelNames: ['cat', 'dog'],
      columns: [
        { name: 'who', type: 'text' },
        { name: 'year', type: 'int' },
      ],
      policy: 'skip',
      source: 'hf:pets/train',
    });
    expect(toIngestTarget(target({ badSamplePolicy: 'BAD_SAMPLE_POLICY_FAIL' })).policy).toBe(
      'fail',
    );
  });

  it('refuses a missing target, a bad dataset or column name, a type that is no column type', () => {
    expect(refusal(null)).toMatch(/^the first request of an IngestSamples call must carry target/);
    expect(refusal(target({ dataset: 'Photos' }))).toMatch(/^invalid dataset name "Photos"/);
    expect(refusal(target({ dataset: '' }))).toMatch(/^invalid dataset name ""/);
    expect(refusal(target({ columns: { 'bad-name': 'text' } }))).toMatch(
      /^invalid metadata column name "bad-name"/,
    );
    expect(refusal(target({ columns: { who: 'varchar' } }))).toBe(
      'target column "who" has type "varchar"; use one of text, int, bigint, double, boolean',
    );
  });

  it('refuses empty or repeated class names and an overlong source', () => {
    expect(refusal(target({ labelNames: ['cat', ''] }))).toBe(
      'target label_names[1] is empty; name every class',
    );
    expect(refusal(target({ labelNames: ['cat', 'dog', 'cat'] }))).toBe(
      'target label_names lists "cat" twice (again at 2); class names are distinct',
    );
    expect(refusal(target({ source: 's'.repeat(1025) }))).toBe(
      'target source is 1025 characters, over the limit of 1024',
    );
  });
});

import { describe, expect, it } from 'vitest';
import { v5 as uuidv5 } from 'uuid';
import { datasetNamespace, SAMPLE_ID_NAMESPACE, sampleId } from '../../src/core/schema/sampleId.js';
import { tokenBounds } from '../../src/core/db/scanTokenRanges.js';

describe('sampleId', () => {
  it('is uuidv5(sourceKey, uuidv5(dataset, NS)) and stable', () => {
    const ns = datasetNamespace('mnist');
    expect(ns).toBe(uuidv5('mnist', SAMPLE_ID_NAMESPACE));
    expect(sampleId('train/00001.png', ns)).toBe(uuidv5('train/00001.png', ns));
    expect(sampleId('train/00001.png', ns)).toBe(
      sampleId('train/00001.png', datasetNamespace('mnist')),
    );
  });

  it('differs across datasets and keys', () => {
    const a = sampleId('x.png', datasetNamespace('a'));
    expect(a).not.toBe(sampleId('x.png', datasetNamespace('b')));
    expect(a).not.toBe(sampleId('y.png', datasetNamespace('a')));
  });
});

describe('tokenBounds', () => {
  it('covers the whole Murmur3 ring in increasing slices', () => {
    const b = tokenBounds(7).map((l) => BigInt(l.toString()));
    expect(b).toHaveLength(8);
    expect(b[0]).toBe(-(2n ** 63n));
    expect(b[7]).toBe(2n ** 63n - 1n);
    for (let i = 1; i < b.length; i++) expect(b[i]! > b[i - 1]!).toBe(true);
  });
});

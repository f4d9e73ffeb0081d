import { describe, expect, it } from 'vitest';
import type { SplitInput } from '../../src/core/splits/SplitInput.js';
import { refuseUnlabelled } from '../../src/core/splits/refuseUnlabelled.js';

function input(labels: number[]): SplitInput {
  return {
    count: labels.length,
    ids: Buffer.alloc(labels.length * 16),
    labels: Int32Array.from(labels),
    groups: Int32Array.from(labels.map((_, i) => i)),
    groupCount: labels.length,
  };
}

describe('refuseUnlabelled', () => {
  const none = input([-1, -1, -1]);
  const some = input([0, 1, -1, -1]);
  const all = input([0, 1, 1]);

  it('lets natural splits of any samples, and class targets of labelled ones, pass', () => {
    for (const i of [none, some, all]) {
      expect(() => refuseUnlabelled('d', i, { mode: 'natural' })).not.toThrow();
    }
    expect(() => refuseUnlabelled('d', all, { mode: 'balanced' })).not.toThrow();
    // Ratios leave out every label they do not name, unlabelled samples too.
    expect(() => refuseUnlabelled('d', some, { mode: 'ratios', ratios: { 0: 1 } })).not.toThrow();
  });

  it('refuses a balanced or ratio split of an unlabelled dataset, naming it', () => {
    expect(() => refuseUnlabelled('captions', none, { mode: 'balanced' })).toThrow(
      'dataset captions is unlabelled: none of its 3 samples (after the filters) has a label, ' +
        'so a balanced split (as many samples of every class as the rarest class has) cannot ' +
        'be made; split it without class targets (natural proportions, the default), or ' +
        'ingest the samples with labels into a dataset of their own',
    );
    expect(() => refuseUnlabelled('captions', none, { mode: 'ratios', ratios: { 0: 1 } })).toThrow(
      /^dataset captions is unlabelled: .* so a split by class ratios cannot be made/,
    );
  });

  it('refuses a balanced split of a partly labelled dataset, and ratios naming -1', () => {
    expect(() => refuseUnlabelled('mixed', some, { mode: 'balanced' })).toThrow(
      /^dataset mixed: 2 of its 4 samples \(after the filters\) have no label, and a balanced split .* needs a label on every sample; leave them out with a range filter on column label from 0 \(label=0\.\.\)/,
    );
    expect(() => refuseUnlabelled('d', all, { mode: 'ratios', ratios: { [-1]: 1 } })).toThrow(
      /name label -1, which is not a class/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import {
  metadataColumnName,
  metadataColumnNames,
} from '../../src/core/ingest/metadataColumnName.js';
import { validateIdentifier } from '../../src/core/schema/identifiers.js';

describe('metadataColumnName', () => {
  it.each([
    ['width', 'width'],
    ['patient_id', 'patient_id'],
    ['NSFW', 'nsfw'],
    ['LICENSE', 'license'],
    ['original-width', 'original_width'],
    ['caption.en', 'caption_en'],
    ['Patient ID', 'patient_id'],
    ['a -- b', 'a_b'],
    ['a__b', 'a__b'], // runs of underscores are kept: only other characters are replaced
    ['__key__', 'key'],
    ['-score-', 'score'],
    ['2x', 'c_2x'],
    ['_1', 'c_1'],
    ['größe', 'gr_e'],
    ['id', 'src_id'],
    ['ID', 'src_id'],
    ['label', 'src_label'],
    ['Source-Key', 'src_source_key'],
    ['size_bytes', 'src_size_bytes'],
    ['constructor', 'constructor'], // not a built-in, whatever Object.prototype holds
    ['x'.repeat(60), 'x'.repeat(48)],
    ['9'.repeat(60), `c_${'9'.repeat(46)}`],
  ])('%j -> %j', (original, expected) => {
    expect(metadataColumnName(original)).toBe(expected);
  });

  it.each(['', '_', '---', '日本語', ' . '])('%j maps to none', (original) => {
    expect(metadataColumnName(original)).toBeUndefined();
  });

  it('always gives a valid column name', () => {
    const samples = ['A', 'a-', '0', '$x$', 'x'.repeat(100), '_'.repeat(50) + 'y', 'Éa', 'a.b.c'];
    for (const original of samples) {
      const name = metadataColumnName(original);
      expect(name).toBeDefined();
      expect(validateIdentifier(name!, 'metadata column')).toBe(name);
    }
  });
});

describe('metadataColumnNames', () => {
  it('maps every name', () => {
    const { names, problems } = metadataColumnNames(['NSFW', 'caption.en', 'width', 'NSFW']);
    expect(problems).toEqual([]);
    expect([...names]).toEqual([
      ['NSFW', 'nsfw'],
      ['caption.en', 'caption_en'],
      ['width', 'width'],
    ]);
  });

  it('names the originals that map to no name or to one column between them', () => {
    const { names, problems } = metadataColumnNames(
      ['nsfw', 'NSFW', '%%', 'a.b', 'A-B', 'a_b', 'id', 'src_id', 'ok'],
      (name) => `field ${JSON.stringify(name)}`,
    );
    expect(problems).toEqual([
      'field "%%" maps to no column name (it has no letter or digit)',
      'field "a.b", field "A-B" and field "a_b" all map to metadata column a_b',
      'field "nsfw" and field "NSFW" both map to metadata column nsfw',
      'field "id" and field "src_id" both map to metadata column src_id',
    ]);
    expect(names.get('ok')).toBe('ok');
    expect(names.has('%%')).toBe(false);
  });

  it('quotes the originals by default', () => {
    expect(metadataColumnNames(['Caption', 'caption']).problems).toEqual([
      '"Caption" and "caption" both map to metadata column caption',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import {
  DEFAULT_INGEST_CAPS,
  type IngestCapRules,
  ingestCapsSchema,
} from '../../src/core/config/ingestCaps.js';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import { checkIngestCaps } from '../../src/core/ingest/checkIngestCaps.js';
import {
  addIngestCapOptions,
  ingestCapsFromFlags,
} from '../../src/cli/settings/ingestCapSettings.js';
import { ingestCapRules } from '../../src/server/ingest/ingestSettingNames.js';

const columns = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `c${i}`, type: 'int' as const }));
const names = (n: number) => Array.from({ length: n }, (_, i) => `class ${i}`);

function refusal(fn: () => void): LoaderError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(LoaderError);
    return err as LoaderError;
  }
  throw new Error('not refused');
}

describe('ingest caps', () => {
  it('have defaults that a large real dataset stays within', () => {
    expect(DEFAULT_INGEST_CAPS).toEqual({
      maxMetadataColumns: 256,
      maxLabelNames: 100_000,
      maxLabelNameChars: 128,
      maxSources: 1_000,
    });
    // At both label caps, the list of ASCII names fits in one 16 MiB database write.
    expect(DEFAULT_INGEST_CAPS.maxLabelNames * DEFAULT_INGEST_CAPS.maxLabelNameChars).toBeLessThan(
      16 * 1024 * 1024,
    );
  });

  it('let an ingest at each cap through', () => {
    const caps: IngestCapRules = ingestCapsSchema.parse({
      maxMetadataColumns: 3,
      maxLabelNames: 2,
      maxLabelNameChars: 4,
    });
    expect(() =>
      checkIngestCaps(
        { dataset: 'd', columns: columns(3), labelNames: ['abcd', '🦊🦊🦊🦊'] },
        caps,
      ),
    ).not.toThrow();
  });

  it('refuse too many columns, class names or characters, naming the cap and its setting', () => {
    const caps = ingestCapRules(DEFAULT_INGEST_CAPS);
    const cols = refusal(() =>
      checkIngestCaps({ dataset: 'd', columns: columns(5000), labelNames: [] }, caps),
    );
    expect(cols.code).toBe('INVALID_ARGUMENT');
    expect(cols.message).toBe(
      'this ingest declares 5000 metadata columns for dataset d, over the cap of 256 metadata ' +
        'columns per dataset (the maxMetadataColumns cap, set by ' +
        'SCYLLA_LOADER_MAX_METADATA_COLUMNS); ingest within it, or raise the cap if the ' +
        'dataset really needs more',
    );
    const many = refusal(() =>
      checkIngestCaps({ dataset: 'd', columns: [], labelNames: names(100_001) }, caps),
    );
    expect(many.message).toMatch(
      /^this ingest gives dataset d 100001 class names, over the cap of 100000 .*maxLabelNames cap, set by SCYLLA_LOADER_MAX_LABEL_NAMES/,
    );
    const long = refusal(() =>
      checkIngestCaps({ dataset: 'd', columns: [], labelNames: ['ok', 'x'.repeat(129)] }, caps),
    );
    expect(long.message).toMatch(
      /^class name 1 \("x{64}\.\.\."\) is 129 characters, over the cap of 128 .*maxLabelNameChars cap, set by SCYLLA_LOADER_MAX_LABEL_NAME_CHARS/,
    );
  });

  it('without setting names, name the cap alone', () => {
    const err = refusal(() =>
      checkIngestCaps({ dataset: 'd', columns: columns(257), labelNames: [] }, DEFAULT_INGEST_CAPS),
    );
    expect(err.message).toContain('(the maxMetadataColumns cap); ');
  });

  it('are flags of ingest with variables, named in refusals', () => {
    const cmd = addIngestCapOptions(new Command().exitOverride());
    cmd.parse(['--max-metadata-columns', '10'], { from: 'user' });
    const caps = ingestCapsFromFlags(cmd.opts());
    expect(caps).toMatchObject({ maxMetadataColumns: 10, maxSources: 1_000 });
    const err = refusal(() =>
      checkIngestCaps({ dataset: 'd', columns: columns(11), labelNames: [] }, caps),
    );
    expect(err.message).toContain(
      'set by --max-metadata-columns (SCYLLA_LOADER_MAX_METADATA_COLUMNS)',
    );
    expect(() => ingestCapsFromFlags({ maxLabelNames: '0' })).toThrow(
      /--max-label-names \(SCYLLA_LOADER_MAX_LABEL_NAMES\)/,
    );
  });
});

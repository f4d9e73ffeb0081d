import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LoaderError } from '../../src/core/index.js';
import { loadFrom, loadNativeTransform } from '../../src/core/transform/nativeTransform.js';
import { resolveNativeTransforms } from '../../src/server/resolveNativeTransforms.js';

describe('resolveNativeTransforms', () => {
  // A package root without native/ built: what a checkout that skipped native/build.sh finds.
  const missing = loadFrom(mkdtempSync(path.join(os.tmpdir(), 'sl-no-native-')));

  it('finds nothing where the module was not built, and says how to build it', () => {
    expect(missing.module).toBeUndefined();
    expect(missing.error).toMatch(/scylla_loader_native\.node is not built \(native\/build\.sh/);
  });

  it('auto without the module: sharp, said as the fast path being off (for the log and /healthz)', () => {
    const choice = resolveNativeTransforms('auto', missing);
    expect(choice.native).toBeUndefined();
    expect(choice.asConfigured).toBe(false);
    expect(choice.summary).toMatch(
      /^transforms: sharp only, the native fast path is off: .*not built/,
    );
  });

  it('on without the module refuses to start, naming the setting', () => {
    let error: unknown;
    try {
      resolveNativeTransforms('on', missing);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(LoaderError);
    expect((error as LoaderError).code).toBe('FAILED_PRECONDITION');
    expect((error as Error).message).toContain('SCYLLA_LOADER_NATIVE_TRANSFORMS=auto');
  });

  it('uses the built module under auto and on, and never under off', () => {
    const built = loadNativeTransform();
    expect(built.error).toBeUndefined();
    for (const mode of ['auto', 'on'] as const) {
      const choice = resolveNativeTransforms(mode, built);
      expect(choice.native).toBe(built.module);
      expect(choice.summary).toMatch(/^transforms: native for JPEG and 8-bit PNG \(.*\.node\)/);
    }
    const off = resolveNativeTransforms('off', built);
    expect(off.native).toBeUndefined();
    expect(off.asConfigured).toBe(true);
    expect(off.summary).toBe('transforms: sharp only (native transforms off)');
  });
});

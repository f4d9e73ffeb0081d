import {
  LoaderError,
  type NativeTransformModule,
  type NativeTransformStatus,
  loadNativeTransform,
} from '../core/index.js';

/** What a loader process decodes with, and the line `/healthz` and the log say it with. */
export interface NativeTransformsChoice {
  /** The native module, when it serves JPEG and 8-bit PNG samples. */
  native?: NativeTransformModule;
  /** E.g. `transforms: native (/app/native/...node), sharp for other formats`. */
  summary: string;
  /** False when `auto` found no module: the fast path is off, which is worth a warning. */
  asConfigured: boolean;
}

/**
 * Applies the `nativeTransforms` setting to what {@link loadNativeTransform} found: `auto` uses
 * the module when it is built and says so when it is not, `on` refuses to start without it (a
 * deployment that counts on its CPU figures), `off` keeps every sample on sharp.
 *
 * @throws LoaderError FAILED_PRECONDITION for `on` without a module.
 */
export function resolveNativeTransforms(
  mode: 'auto' | 'on' | 'off',
  status: NativeTransformStatus = loadNativeTransform(),
): NativeTransformsChoice {
  if (mode === 'off') {
    return { summary: 'transforms: sharp only (native transforms off)', asConfigured: true };
  }
  if (status.module) {
    return {
      native: status.module,
      summary: `transforms: native for JPEG and 8-bit PNG (${status.file}), sharp for the rest`,
      asConfigured: true,
    };
  }
  if (mode === 'on') {
    throw new LoaderError(
      'FAILED_PRECONDITION',
      `native transforms are on but ${status.error ?? 'the module is missing'}; build it or ` +
        'set SCYLLA_LOADER_NATIVE_TRANSFORMS=auto to run on sharp',
    );
  }
  return {
    summary: `transforms: sharp only, the native fast path is off: ${status.error ?? 'no module'}`,
    asConfigured: false,
  };
}

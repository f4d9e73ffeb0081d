import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TransformPlan } from './geometry.js';
import type { Interpolation } from './TransformSpec.js';

/** What the native module reads of an image's header (no pixel is decoded). */
export interface NativeProbe {
  format: string;
  /** Stored size; EXIF orientations 5-8 swap it. */
  width: number;
  height: number;
  /** EXIF orientation, 1 (none) to 8. */
  orientation: number;
  channels: number;
  /** True when the native path does the whole transform; otherwise sharp does it. */
  native: boolean;
  reason?: string;
}

/** A {@link TransformPlan} with what the native module needs besides the geometry. */
export interface NativePlan extends TransformPlan {
  channels: 1 | 3;
  interpolation: Interpolation;
  /** The pixel limit, checked again natively against the header and every buffer of the plan. */
  maxPixels: number;
  /**
   * Most scans of a progressive JPEG libjpeg-turbo decodes (its `TJPARAM_SCANLIMIT`); absent:
   * no limit. The caller counts them first (`countJpegScans`): this is the decoder's own stop.
   */
  maxScans?: number;
}

/**
 * The native transform module (`native/`, Rust through N-API): JPEG region decoding with
 * libjpeg-turbo, 8-bit PNG, antialiased resize, flip, written into a caller's buffer. Errors
 * of an image's bytes start with `corrupt:`, `truncated:`, `pixel_limit:`, `too_many_scans:`
 * or `unsupported_format:`. Every buffer it allocates is sized from the image's header or the
 * plan, and both are checked against the plan's `maxPixels` first.
 */
export interface NativeTransformModule {
  probe(data: Buffer): NativeProbe;
  transform(data: Buffer, plan: NativePlan, out: Buffer, offset: number): void;
  /** As {@link transform}, on libuv's thread pool; `out` must not be touched until it settles. */
  transformAsync(data: Buffer, plan: NativePlan, out: Buffer, offset: number): Promise<void>;
  /**
   * Applies `plan` (and the image's EXIF `orientation`) to an 8-bit grey or palette PNG mask of
   * the image's stored size by nearest neighbour: `plan.width * plan.height` bytes (grey
   * levels or palette indices) into `out` at `offset`. Absent from an addon built before it.
   */
  transformMask?(
    data: Buffer,
    plan: NativePlan,
    orientation: number,
    out: Buffer,
    offset: number,
  ): void;
  /** As {@link transformMask}, on libuv's thread pool; `out` untouched until it settles. */
  transformMaskAsync?(
    data: Buffer,
    plan: NativePlan,
    orientation: number,
    out: Buffer,
    offset: number,
  ): Promise<void>;
}

/** Where the module was looked for, and what was found. */
export interface NativeTransformStatus {
  file: string;
  module?: NativeTransformModule;
  /** Why there is no module (not built, or it failed to load). */
  error?: string;
}

/** The addon's path inside the package, written by `native/build.sh`. */
export const NATIVE_ADDON = path.join('native', 'scylla_loader_native.node');

let loaded: NativeTransformStatus | undefined;

/**
 * Loads the native transform module once per process, from `native/` of the package this file
 * belongs to (a checkout or the image's /app). A checkout where it was not built gets a status
 * with `error` and no module: transforms then run on sharp alone.
 */
export function loadNativeTransform(): NativeTransformStatus {
  loaded ??= loadFrom(packageRootOf(path.dirname(fileURLToPath(import.meta.url))));
  return loaded;
}

/** @internal */
export function loadFrom(root: string): NativeTransformStatus {
  const file = path.join(root, NATIVE_ADDON);
  if (!existsSync(file)) {
    return { file, error: `${file} is not built (native/build.sh builds it)` };
  }
  try {
    const module = createRequire(import.meta.url)(file) as NativeTransformModule;
    return { file, module };
  } catch (err) {
    return { file, error: `${file} failed to load: ${(err as Error).message}` };
  }
}

/** The nearest folder above `dir` holding a package.json. */
function packageRootOf(dir: string): string {
  for (let d = dir; ; d = path.dirname(d)) {
    if (existsSync(path.join(d, 'package.json'))) return d;
    if (path.dirname(d) === d) return dir;
  }
}

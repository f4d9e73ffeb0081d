import { describe, expect, it } from 'vitest';
import { PHOTO_PRESETS, photoOutputSize } from '../../src/datasets/photos/PhotoPreset.js';
import { photoImageIndex, photoImagePath } from '../../src/datasets/photos/photoImagePath.js';
import { cropWindow, MIN_AREA, photoVariant } from '../../src/datasets/photos/photoVariant.js';

describe('photoVariant', () => {
  it('is a pure function of the index', () => {
    expect(photoVariant(1234, 48)).toEqual(photoVariant(1234, 48));
    // Pinned: a change here changes every benchmark image (and the datasets made from them).
    const v = photoVariant(49, 48);
    expect(v.source).toBe(1);
    expect(v.area).toBeCloseTo(0.605835, 6);
    expect(v.aspect).toBeCloseTo(1.282229, 6);
    expect(v.flip).toBe(false);
    expect(photoVariant(0, 48).x).toBeCloseTo(0.85643, 5);
  });

  it('takes source i mod S and gives every index its own crop', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const v = photoVariant(i, 48);
      expect(v.source).toBe(i % 48);
      const w = cropWindow(v, 1280, 853);
      seen.add(`${v.source} ${w.left} ${w.top} ${w.width} ${w.height} ${v.flip}`);
    }
    expect(seen.size).toBe(3000);
  });

  it('stays within its ranges', () => {
    for (let i = 0; i < 2000; i++) {
      const v = photoVariant(i, 7);
      expect(v.area).toBeGreaterThanOrEqual(MIN_AREA);
      expect(v.area).toBeLessThanOrEqual(1);
      expect(v.aspect).toBeGreaterThanOrEqual(3 / 4 - 1e-12);
      expect(v.aspect).toBeLessThanOrEqual(4 / 3 + 1e-12);
      for (const u of [v.x, v.y, v.size]) {
        expect(u).toBeGreaterThanOrEqual(0);
        expect(u).toBeLessThan(1);
      }
      for (const m of [v.brightness, v.saturation]) {
        expect(m).toBeGreaterThanOrEqual(0.9);
        expect(m).toBeLessThanOrEqual(1.1);
      }
    }
  });

  it('rejects a bad index or source count', () => {
    expect(() => photoVariant(-1, 5)).toThrow(RangeError);
    expect(() => photoVariant(1.5, 5)).toThrow(RangeError);
    expect(() => photoVariant(1, 0)).toThrow(RangeError);
  });
});

describe('cropWindow', () => {
  it('lies inside the photo, at the asked aspect unless the photo is too narrow', () => {
    for (const [width, height] of [
      [1280, 800],
      [300, 900],
      [512, 512],
      [2560, 320],
    ] as const) {
      for (let i = 0; i < 500; i++) {
        const v = photoVariant(i, 3);
        for (const aspect of [v.aspect, 1]) {
          const c = cropWindow(v, width, height, aspect);
          expect(c.left).toBeGreaterThanOrEqual(0);
          expect(c.top).toBeGreaterThanOrEqual(0);
          expect(c.width).toBeGreaterThanOrEqual(1);
          expect(c.height).toBeGreaterThanOrEqual(1);
          expect(c.left + c.width).toBeLessThanOrEqual(width);
          expect(c.top + c.height).toBeLessThanOrEqual(height);
          // Shrunk to fit keeps the aspect; only rounding (or a 1 px side) moves it.
          if (c.width > 20 && c.height > 20) {
            expect(Math.abs(c.width / c.height / aspect - 1)).toBeLessThan(0.1);
          }
          // The area share holds whenever the window fits without shrinking.
          const fits =
            Math.sqrt(v.area * width * height * aspect) <= width &&
            Math.sqrt((v.area * width * height) / aspect) <= height;
          if (fits) {
            expect(Math.abs((c.width * c.height) / (width * height) / v.area - 1)).toBeLessThan(
              0.05,
            );
          }
        }
      }
    }
  });
});

describe('photo presets and paths', () => {
  it('sizes small at 224x224 and imagenet within 500-800 on the long side', () => {
    expect(photoOutputSize(PHOTO_PRESETS.small, 4 / 3, 0.7)).toEqual({ width: 224, height: 224 });
    expect(photoOutputSize(PHOTO_PRESETS.imagenet, 4 / 3, 0)).toEqual({ width: 500, height: 375 });
    expect(photoOutputSize(PHOTO_PRESETS.imagenet, 3 / 4, 1)).toEqual({ width: 600, height: 800 });
  });

  it('names files so that the index reads back', () => {
    const file = photoImagePath('/r', 1234, 7);
    expect(file).toBe('/r/photo_007/img_001234.jpg');
    expect(photoImageIndex(file)).toBe(1234);
    expect(photoImageIndex('/r/photo_007/.img_001234.jpg.9.tmp')).toBeUndefined();
  });
});

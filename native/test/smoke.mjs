// Smoke test of the native addon: probe, transform (sync and async), determinism, errors.
// Run after ./build.sh: node native/test/smoke.mjs
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { makeFixtures, rng } from './fixtures.mjs';

const native = createRequire(import.meta.url)('../scylla_loader_native.node');
const fx = await makeFixtures();
let failures = 0;
const check = async (name, fn) => {
  try {
    await fn();
    console.log(`ok    ${name}`);
  } catch (err) {
    failures++;
    console.log(`FAIL  ${name}: ${err.message}`);
  }
};

const rrc = (source, region, flip = false, channels = 3, size = 224) => ({
  source,
  region,
  output: { width: size, height: size },
  flip,
  width: size,
  height: size,
  channels,
  interpolation: 'bilinear',
  maxPixels: 1e8,
});

const expectProbe = {
  'photo.jpg': {
    format: 'jpeg',
    width: 500,
    height: 375,
    orientation: 1,
    channels: 3,
    native: true,
  },
  'progressive.jpg': {
    format: 'jpeg',
    width: 500,
    height: 375,
    orientation: 1,
    channels: 3,
    native: true,
  },
  'grey.jpg': {
    format: 'jpeg',
    width: 500,
    height: 375,
    orientation: 1,
    channels: 1,
    native: true,
  },
  'cmyk.jpg': {
    format: 'jpeg',
    width: 500,
    height: 375,
    orientation: 1,
    channels: 4,
    native: true,
  },
  'exif6.jpg': {
    format: 'jpeg',
    width: 375,
    height: 500,
    orientation: 6,
    channels: 3,
    native: true,
  },
  'grey28.png': { format: 'png', width: 28, height: 28, orientation: 1, channels: 1, native: true },
  'rgba.png': { format: 'png', width: 120, height: 90, orientation: 1, channels: 4, native: true },
  'rgb.png': { format: 'png', width: 200, height: 150, orientation: 1, channels: 3, native: true },
  'photo.webp': { format: 'webp', native: false },
};
for (const [name, want] of Object.entries(expectProbe)) {
  await check(`probe ${name}`, () => {
    const got = native.probe(fx[name]);
    for (const [k, v] of Object.entries(want))
      assert.equal(got[k], v, `${k}: ${JSON.stringify(got)}`);
  });
}

// Every native fixture through a random-resized crop, 3 and 1 channels, sync and async.
for (const name of Object.keys(expectProbe).filter((n) => expectProbe[n].native)) {
  for (const channels of [3, 1]) {
    await check(`transform ${name} -> 224x224x${channels}`, async () => {
      const p = native.probe(fx[name]);
      const [w, h] = p.orientation >= 5 ? [p.height, p.width] : [p.width, p.height];
      const region = {
        left: Math.floor(w / 5),
        top: Math.floor(h / 6),
        width: Math.ceil(w / 2),
        height: Math.ceil(h / 2),
      };
      const plan = rrc({ width: w, height: h }, region, true, channels);
      const n = 224 * 224 * channels;
      const out = Buffer.alloc(n + 20, 0xab);
      native.transform(fx[name], plan, out, 10);
      assert.equal(out[9], 0xab, 'wrote before offset');
      assert.equal(out[n + 10], 0xab, 'wrote past the plan');
      const again = Buffer.alloc(n + 20, 0xab);
      await native.transformAsync(fx[name], plan, again, 10);
      assert.ok(out.equals(again), 'async differs from sync');
      const third = Buffer.alloc(n + 20, 0xab);
      native.transform(fx[name], plan, third, 10);
      assert.ok(out.equals(third), 'not deterministic');
      const mean = out.subarray(10, n + 10).reduce((a, b) => a + b, 0) / n;
      assert.ok(mean > 5 && mean < 250, `implausible mean ${mean}`);
    });
  }
}

await check('resize 256 + center crop 224 (and pad case) + nearest', () => {
  const src = { width: 500, height: 375 };
  const plans = [
    {
      source: src,
      resize: { width: 341, height: 256 },
      region: { left: 59, top: 16, width: 224, height: 224 },
      flip: false,
      width: 224,
      height: 224,
    },
    // center crop 400 of a 341x256 image: padded 30/29 left/right, 72 top and bottom
    {
      source: src,
      resize: { width: 341, height: 256 },
      region: { left: 0, top: 0, width: 341, height: 256 },
      pad: { top: 72, bottom: 72, left: 29, right: 30 },
      flip: true,
      width: 400,
      height: 400,
    },
    {
      source: src,
      resize: { width: 341, height: 256 },
      region: { left: 10, top: 20, width: 200, height: 150 },
      output: { width: 224, height: 224 },
      flip: true,
      width: 224,
      height: 224,
    },
    {
      source: src,
      region: { left: 138, top: 75, width: 224, height: 224 },
      flip: false,
      width: 224,
      height: 224,
    },
    { source: src, flip: true, width: 500, height: 375 },
  ];
  for (const [i, plan] of plans.entries()) {
    for (const interpolation of ['bilinear', 'bicubic', 'lanczos3', 'nearest']) {
      const out = Buffer.alloc(plan.width * plan.height * 3);
      native.transform(
        fx['photo.jpg'],
        { ...plan, channels: 3, interpolation, maxPixels: 1e8 },
        out,
        0,
      );
      if (plan.pad) {
        assert.equal(out[0], 0, `plan ${i}: padding not zero`);
        const mid = (200 * 400 + 200) * 3;
        assert.notEqual(out[mid] + out[mid + 1] + out[mid + 2], 0, `plan ${i}: centre is zero`);
      }
    }
  }
});

const expectError = async (name, data, plan, prefix) =>
  check(name, async () => {
    const out = Buffer.alloc(plan.width * plan.height * plan.channels);
    assert.throws(
      () => native.transform(data, plan, out, 0),
      (e) => e.message.startsWith(prefix) || assert.fail(e.message),
    );
    await assert.rejects(
      native.transformAsync(data, plan, out, 0),
      (e) => e.message.startsWith(prefix) || assert.fail(e.message),
    );
  });
const full = rrc({ width: 500, height: 375 }, { left: 0, top: 0, width: 500, height: 375 });
const jpg = fx['photo.jpg'];
await expectError(
  'truncated JPEG (60%)',
  jpg.subarray(0, Math.floor(jpg.length * 0.6)),
  full,
  'truncated:',
);
// The crop only needs the top rows, which are all present: refused all the same.
await expectError(
  'truncated JPEG, crop of intact rows',
  jpg.subarray(0, Math.floor(jpg.length * 0.9)),
  rrc({ width: 500, height: 375 }, { left: 0, top: 0, width: 100, height: 50 }),
  'truncated:',
);
await expectError('JPEG header only', jpg.subarray(0, 300), full, 'truncated:');
const png = fx['rgb.png'];
const pngPlan = rrc({ width: 200, height: 150 }, { left: 0, top: 0, width: 200, height: 150 });
await expectError(
  'truncated PNG',
  png.subarray(0, Math.floor(png.length * 0.7)),
  pngPlan,
  'truncated:',
);
const badCrc = Buffer.from(png);
badCrc[png.length - 40] ^= 0xff; // inside the last IDAT's data
await expectError('corrupt PNG data', badCrc, pngPlan, 'corrupt:');
const badJpeg = Buffer.from(jpg);
for (let i = 2000; i < 2200; i++) badJpeg[i] = 0xff; // entropy data overwritten with markers
await expectError('corrupt JPEG data', badJpeg, full, 'corrupt:');
await expectError('empty buffer', Buffer.alloc(0), full, 'corrupt:');
const r = rng(7);
await expectError(
  'random bytes',
  Buffer.from(Array.from({ length: 4096 }, () => Math.floor(r() * 256))),
  full,
  'unsupported_format:',
);
await expectError('webp (not native)', fx['photo.webp'], full, 'unsupported_format:');
await expectError(
  'over the pixel limit',
  jpg,
  { ...full, maxPixels: 500 * 375 - 1 },
  'pixel_limit:',
);
await check('over-limit PNG claims 60000x60000 and is refused before any allocation', () => {
  const big = Buffer.from(fx['grey28.png']);
  big.writeUInt32BE(60000, 16);
  big.writeUInt32BE(60000, 20);
  assert.throws(
    () =>
      native.transform(
        big,
        rrc({ width: 60000, height: 60000 }, { left: 0, top: 0, width: 10, height: 10 }),
        Buffer.alloc(224 * 224 * 3),
        0,
      ),
    (e) => e.message.startsWith('pixel_limit:'),
  );
});
await check('plan errors are not image errors', () => {
  assert.throws(
    () =>
      native.transform(
        jpg,
        { ...full, source: { width: 375, height: 500 } },
        Buffer.alloc(224 * 224 * 3),
        0,
      ),
    (e) => e.message.startsWith('invalid argument:'),
  );
  assert.throws(
    () => native.transform(jpg, full, Buffer.alloc(100), 0),
    (e) => e.message.startsWith('invalid argument:'),
  );
});

console.log(failures ? `${failures} FAILED` : 'all passed');
process.exit(failures ? 1 : 0);

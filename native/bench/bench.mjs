// CPU cost per image of the native transform vs sharp, measured with process.cpuUsage (all
// threads of the process): node native/bench/bench.mjs
//  1. 50 distinct 500x375 q90 photo-like JPEGs, RandomResizedCrop 224 (scale 0.08-1, ratio
//     3/4-4/3) + random flip to raw RGB.
//  2. A 28x28 grey PNG to raw grey.
import { createRequire } from 'node:module';
import { photo, rng, sharp } from '../test/fixtures.mjs';

const native = createRequire(import.meta.url)('../scylla_loader_native.node');
sharp.concurrency(1);
sharp.cache(false);

const PASSES = Number(process.env.PASSES ?? 4);
const random = rng(42);

/** torchvision RandomResizedCrop.get_params (without the fallback, rarely taken). */
function randomRegion(width, height) {
  const area = width * height;
  for (;;) {
    const target = area * (0.08 + random() * 0.92);
    const aspect = Math.exp(Math.log(3 / 4) + random() * (Math.log(4 / 3) - Math.log(3 / 4)));
    const w = Math.round(Math.sqrt(target * aspect));
    const h = Math.round(Math.sqrt(target / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      return {
        left: Math.floor(random() * (width - w + 1)),
        top: Math.floor(random() * (height - h + 1)),
        width: w,
        height: h,
      };
    }
  }
}

async function measure(label, count, fn) {
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  for (let i = 0; i < count; i++) await fn(i);
  const cpu = process.cpuUsage(t0);
  const wall = performance.now() - w0;
  const ms = (cpu.user + cpu.system) / 1000 / count;
  console.log(
    `${label.padEnd(44)} ${ms.toFixed(3).padStart(8)} ms CPU/image  (${(wall / count).toFixed(3)} ms wall)`,
  );
  return ms;
}

console.log('generating 50 JPEGs...');
const jpegs = [];
for (let i = 0; i < 50; i++)
  jpegs.push(
    await photo(500, 375, 100 + i)
      .jpeg({ quality: 90 })
      .toBuffer(),
  );
const jobs = [];
for (let p = 0; p < PASSES; p++) {
  for (const data of jpegs)
    jobs.push({ data, region: randomRegion(500, 375), flip: random() < 0.5 });
}
const out = Buffer.alloc(224 * 224 * 3);
const runNative = (j) => {
  const header = native.probe(j.data);
  native.transform(
    j.data,
    {
      source: { width: header.width, height: header.height },
      region: j.region,
      output: { width: 224, height: 224 },
      flip: j.flip,
      width: 224,
      height: 224,
      channels: 3,
      interpolation: 'bilinear',
      maxPixels: 1e8,
    },
    out,
    0,
  );
};
const runSharp = async (j) => {
  let img = sharp(j.data, { failOn: 'warning' })
    .extract(j.region)
    .resize(224, 224, { fit: 'fill', kernel: 'linear', fastShrinkOnLoad: false });
  if (j.flip) img = img.flop();
  await img.raw().toBuffer();
};
// Warm up both (code paths, allocator, thread-locals).
for (const j of jobs.slice(0, 20)) {
  runNative(j);
  await runSharp(j);
}
const n1 = await measure('JPEG 500x375 RRC 224 + flip: native (sync)', jobs.length, (i) =>
  runNative(jobs[i]),
);
const s1 = await measure('JPEG 500x375 RRC 224 + flip: sharp', jobs.length, (i) =>
  runSharp(jobs[i]),
);
const s1m = await measure('  sharp incl. metadata() as transformImage', jobs.length, async (i) => {
  await sharp(jobs[i].data).metadata();
  await runSharp(jobs[i]);
});
await measure('JPEG 500x375 RRC 224 + flip: native (async)', jobs.length, async (i) => {
  const j = jobs[i];
  await native.transformAsync(
    j.data,
    {
      source: { width: 500, height: 375 },
      region: j.region,
      output: { width: 224, height: 224 },
      flip: j.flip,
      width: 224,
      height: 224,
      channels: 3,
      interpolation: 'bilinear',
      maxPixels: 1e8,
    },
    out,
    0,
  );
});
console.log(
  `  -> native is ${(s1 / n1).toFixed(1)}x cheaper than the sharp pipeline (${(s1m / n1).toFixed(1)}x with metadata)`,
);

const png = await photo(28, 28, 16).toColourspace('b-w').png().toBuffer();
const grey = Buffer.alloc(28 * 28);
const N = 2000;
const pngPlan = {
  source: { width: 28, height: 28 },
  flip: false,
  width: 28,
  height: 28,
  channels: 1,
  interpolation: 'bilinear',
  maxPixels: 1e8,
};
for (let i = 0; i < 50; i++) {
  native.transform(png, pngPlan, grey, 0);
  await sharp(png).toColourspace('b-w').raw().toBuffer();
}
const n2 = await measure('PNG 28x28 grey -> raw: native (sync)', N, () => {
  native.probe(png);
  native.transform(png, pngPlan, grey, 0);
});
const s2 = await measure('PNG 28x28 grey -> raw: sharp', N, () =>
  sharp(png).toColourspace('b-w').raw().toBuffer(),
);
console.log(`  -> native is ${(s2 / n2).toFixed(1)}x cheaper`);

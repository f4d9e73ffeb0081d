// Runs plans through the addon for parity.py: node run-plan.mjs jobs.json
// jobs.json: [{ "input": path, "plan": Plan, "output": path }]; writes raw HWC bytes.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';

const native = createRequire(import.meta.url)('../scylla_loader_native.node');
for (const job of JSON.parse(readFileSync(process.argv[2], 'utf8'))) {
  const { plan } = job;
  const out = Buffer.alloc(plan.width * plan.height * plan.channels);
  native.transform(readFileSync(job.input), plan, out, 0);
  writeFileSync(job.output, out);
}

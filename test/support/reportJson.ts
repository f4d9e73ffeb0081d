import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** `<outDir>/<name>-<start time>.json`: where a run's JSON report goes. */
export function reportPath(outDir: string, name: string, startedAt: Date): string {
  return path.join(outDir, `${name}-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
}

/** Writes a report as indented JSON, making its folder first. */
export async function writeReportJson(file: string, report: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}

/**
 * Writes the settings tables of docs/configuration.md from the commands' declarations
 * (`npm run docs:settings`); with `--check`, fails instead when the page is stale. The unit
 * test `settingsDocs.test.ts` runs the same comparison.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serverConfigSchema } from '../../src/server/config/serverConfig.js';
import { SERVE_SETTINGS } from '../../src/cli/settings/serveSettings.js';
import { schemaFacts } from '../../src/cli/settings/schemaFacts.js';
import { settingsTable } from '../../src/cli/settings/settingsTable.js';
import { markedBlock, replaceMarkedBlock } from './markedBlock.js';

/** The page and its generated blocks: marker key → content. */
export const CONFIGURATION_PAGE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../docs/configuration.md',
);

export function settingsBlocks(): Record<string, string> {
  return {
    'settings:serve': `${settingsTable(SERVE_SETTINGS, schemaFacts(serverConfigSchema))}\n`,
  };
}

/** The page with every block regenerated. */
export function regenerate(markdown: string): string {
  let out = markdown;
  for (const [key, block] of Object.entries(settingsBlocks())) {
    out = replaceMarkedBlock(out, key, block);
  }
  return out;
}

/** The keys of the blocks that differ from what the code declares. */
export function staleBlocks(markdown: string): string[] {
  return Object.entries(settingsBlocks())
    .filter(([key, block]) => markedBlock(markdown, key) !== block)
    .map(([key]) => key);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const markdown = await readFile(CONFIGURATION_PAGE, 'utf8');
  if (process.argv.includes('--check')) {
    const stale = staleBlocks(markdown);
    if (stale.length > 0) {
      process.stderr.write(
        `stale in ${CONFIGURATION_PAGE}: ${stale.join(', ')}; run npm run docs:settings\n`,
      );
      process.exit(1);
    }
  } else {
    await writeFile(CONFIGURATION_PAGE, regenerate(markdown));
    process.stdout.write(`wrote ${CONFIGURATION_PAGE}\n`);
  }
}

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scriptArgs } from '../../test/support/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Node arguments that run a script of this folder (`tightLoopChild`, `sdkClientChild`): through
 * tsx from source, directly from the build. @internal
 */
export function childScriptArgs(name: string): string[] {
  return scriptArgs(path.join(here, name));
}

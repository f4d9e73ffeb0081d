import type { NameOption } from '../../core/index.js';

/**
 * The field of a request message that carries a core option (`allowShortfall` ->
 * `allow_shortfall`), as the proto spells it: what the core's refusals name an option with
 * when an RPC caller, who has no flags, can change it.
 */
export const requestFieldOf: NameOption = (option) =>
  option.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

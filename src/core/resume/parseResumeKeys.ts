import { type SettingNames, settingName } from '../config/settingNames.js';
import { invalidArgument } from '../errors/LoaderError.js';
import { parseResumeKey } from './parseResumeKey.js';

/**
 * The resume keys of a loader: the first signs new tokens, and every one (the first
 * included) is accepted when a token or job checkpoint is read back. Keeping the previous
 * keys after the current one lets an operator rotate the key without invalidating the tokens
 * and checkpoints in flight (see {@link parseResumeKeys}).
 */
export type ResumeKeys = readonly [current: Buffer, ...previous: Buffer[]];

/**
 * Decodes the resume key setting: one key, or the current key followed by previous ones,
 * separated by commas (`NEW,OLD`), each as {@link parseResumeKey} reads it. Commas are
 * neither hex digits nor base64, so the list cannot be mistaken for a longer key, and a
 * single key reads exactly as before. An empty entry or a bad key is INVALID_ARGUMENT naming
 * its position, never its text: the setting is a secret. Messages name the setting as `names`
 * does (default: `resumeKey`).
 *
 * Rotation, each step a rolling restart (docs/security.md): `OLD,NEW` so every replica
 * accepts NEW before any signs with it, then `NEW,OLD`, then `NEW` once no token signed with
 * OLD is still needed.
 */
export function parseResumeKeys(text: string, names?: SettingNames): ResumeKeys {
  const setting = settingName(names, 'resumeKey');
  const parts = text.split(',');
  const [current, ...previous] = parts.map((part, i) => {
    const which = `key ${i + 1} of ${parts.length} in ${setting}`;
    if (parts.length > 1 && part.trim() === '') {
      throw invalidArgument(
        `${which} is empty: give the current key, then any previous keys still accepted, ` +
          'separated by commas',
      );
    }
    try {
      return parseResumeKey(part, names);
    } catch (err) {
      if (parts.length === 1 || !(err instanceof Error)) throw err;
      throw invalidArgument(err.message.replace(setting, which));
    }
  });
  return [current!, ...previous];
}

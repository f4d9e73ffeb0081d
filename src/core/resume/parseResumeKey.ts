import { type SettingNames, settingName } from '../config/settingNames.js';
import { invalidArgument } from '../errors/LoaderError.js';

/** Shortest resume-token key accepted: the HMAC-SHA256 key should be as long as its output. */
export const MIN_RESUME_KEY_BYTES = 32;

const HEX_DIGITS = /^[0-9a-fA-F]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/;

/**
 * Decodes the configured resume-token key: hex (64 or more digits) or base64 (standard or
 * URL-safe) of at least 32 bytes. Anything else is an INVALID_ARGUMENT error that says how to
 * make one, never a silently short or mis-decoded key: every replica must derive the very
 * same bytes, or tokens made by one are refused by the others. The message names the setting as
 * `names` does (default: `resumeKey`).
 */
export function parseResumeKey(text: string, names?: SettingNames): Buffer {
  const s = text.trim();
  // Text of hex digits only is hex, even when too short: read as base64 it would decode to
  // other bytes than its author meant (a random base64 key is all hex digits with negligible
  // probability).
  if (HEX_DIGITS.test(s)) {
    if (s.length % 2 === 0 && s.length >= MIN_RESUME_KEY_BYTES * 2) return Buffer.from(s, 'hex');
  } else if (BASE64.test(s) && s.replace(/=+$/, '').length % 4 !== 1) {
    const key = Buffer.from(s, s.includes('-') || s.includes('_') ? 'base64url' : 'base64');
    if (key.length >= MIN_RESUME_KEY_BYTES) return key;
  }
  throw invalidArgument(
    `${settingName(names, 'resumeKey')} must be at least ${MIN_RESUME_KEY_BYTES} bytes as hex ` +
      `(${MIN_RESUME_KEY_BYTES * 2}+ hex digits) or base64; make one with ` +
      '`openssl rand -hex 32` and give every replica the same one',
  );
}

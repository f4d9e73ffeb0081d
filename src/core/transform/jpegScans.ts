/**
 * Most scans a JPEG may have to be decoded. Every scan of a progressive JPEG makes the decoder
 * walk the whole image's coefficients again, so a few kilobytes of near-empty scans cost
 * seconds of CPU (the attack of libjpeg-turbo's "Two Issues with the JPEG Standard", which its
 * `TJPARAM_SCANLIMIT` and djpeg's `-maxscans` guard against, with 500 as their suggestion).
 * Encoders write about 10 (libjpeg's default progression) and rarely more than 20 (mozjpeg's
 * optimised scans), so 100 refuses only files made to burn CPU. @internal
 */
export const MAX_JPEG_SCANS = 100;

/** True when `data` starts as a JPEG does (SOI, then a marker). @internal */
export function isJpeg(data: Buffer): boolean {
  return data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff;
}

/**
 * The number of scans (SOS markers) of a JPEG up to its end marker, counted without decoding:
 * marker segments are skipped by their length (an EXIF thumbnail's own scans are not counted),
 * entropy-coded data up to the next marker that is not a stuffed byte or a restart. Counting
 * stops at `limit + 1`, so a file of a million scans costs no more than one of `limit + 1`:
 * the walk is one `indexOf` per marker or stuffed 0xFF of the file, whatever its scans hold.
 *
 * @internal
 */
export function countJpegScans(data: Buffer, limit: number): number {
  let scans = 0;
  let i = 2; // after SOI
  while (i + 1 < data.length) {
    if (data[i] !== 0xff) {
      // Bytes between segments: decoders skip them to the next marker, and so does the count.
      i = data.indexOf(0xff, i);
      if (i < 0) break;
      continue;
    }
    const marker = data[i + 1]!;
    if (marker === 0xff) {
      i++; // fill byte before a marker
      continue;
    }
    if (marker === 0xd9) break; // EOI: whatever follows is not decoded
    if (marker === 0x00 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2; // markers without a length (TEM, RSTn) and a stray stuffed byte
      continue;
    }
    if (i + 3 >= data.length) break;
    const next = i + 2 + data.readUInt16BE(i + 2);
    if (marker !== 0xda) {
      i = next;
      continue;
    }
    if (++scans > limit) break;
    i = endOfEntropyData(data, next);
  }
  return scans;
}

/** Where the entropy-coded data from `from` ends: its first real marker, or the end. */
function endOfEntropyData(data: Buffer, from: number): number {
  let i = from;
  for (;;) {
    i = data.indexOf(0xff, i);
    if (i < 0 || i + 1 >= data.length) return data.length;
    const next = data[i + 1]!;
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) i += 2;
    else if (next === 0xff) i++;
    else return i;
  }
}

const JPEG_EOI = Buffer.from([0xff, 0xd9]);
const JPEG_SOS = Buffer.from([0xff, 0xda]);
const PNG_IDAT = Buffer.from('IDAT', 'latin1');
const PNG_IEND = Buffer.from('IEND', 'latin1');

/**
 * True when a JPEG or PNG lacks its end: no end-of-image marker after the last scan (JPEG; a
 * stuffed entropy stream cannot contain one, and an EXIF thumbnail's comes before), or no IEND
 * chunk after the last IDAT (PNG). A crop reads only the rows it needs, so a truncated file
 * would otherwise decode for one crop and fail for another, and a sample's fate would change
 * from epoch to epoch; this check gives it one fate whatever the crop. Other formats are
 * decoded whole by their libraries. @internal
 */
export function isTruncated(data: Buffer, format: string | undefined): boolean {
  if (format === 'jpeg') return data.lastIndexOf(JPEG_EOI) < data.lastIndexOf(JPEG_SOS);
  if (format === 'png') return data.lastIndexOf(PNG_IEND) < data.lastIndexOf(PNG_IDAT);
  return false;
}

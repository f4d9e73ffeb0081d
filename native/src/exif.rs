//! The EXIF orientation tag, read from a TIFF structure (the payload of a JPEG APP1 "Exif"
//! segment or of a PNG eXIf chunk). Only IFD0 is walked: that is where orientation lives.

/// Orientation 1-8 of a TIFF blob, 1 when absent or malformed (as decoders treat a bad tag).
pub fn orientation(tiff: &[u8]) -> u8 {
    parse(tiff).filter(|o| (1..=8).contains(o)).unwrap_or(1)
}

fn parse(tiff: &[u8]) -> Option<u8> {
    let little = match tiff.get(0..4)? {
        [b'I', b'I', 42, 0] => true,
        [b'M', b'M', 0, 42] => false,
        _ => return None,
    };
    let u16_at = |at: usize| -> Option<u16> {
        let b = tiff.get(at..at + 2)?;
        Some(if little { u16::from_le_bytes([b[0], b[1]]) } else { u16::from_be_bytes([b[0], b[1]]) })
    };
    let u32_at = |at: usize| -> Option<u32> {
        let b: [u8; 4] = tiff.get(at..at + 4)?.try_into().ok()?;
        Some(if little { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) })
    };
    let ifd = u32_at(4)? as usize;
    let count = u16_at(ifd)? as usize;
    for i in 0..count {
        let entry = ifd + 2 + i * 12;
        if u16_at(entry)? == 0x0112 {
            // SHORT (type 3), count 1: the value sits in the first two bytes of the value field.
            return if u16_at(entry + 2)? == 3 { u16_at(entry + 8).map(|v| v.min(255) as u8) } else { None };
        }
    }
    None
}

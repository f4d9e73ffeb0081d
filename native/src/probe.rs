//! Header-only inspection: format, size, EXIF orientation and whether this module decodes the
//! image itself. No pixel is decoded and nothing proportional to the image is allocated.

use crate::error::{ImageError, Result};
use crate::exif;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jpeg,
    Png,
    Webp,
    Gif,
    Tiff,
    Avif,
    Other,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Jpeg => "jpeg",
            Format::Png => "png",
            Format::Webp => "webp",
            Format::Gif => "gif",
            Format::Tiff => "tiff",
            Format::Avif => "avif",
            Format::Other => "other",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Header {
    pub format: Format,
    /// Stored size, before EXIF orientation.
    pub width: u32,
    pub height: u32,
    pub orientation: u8,
    /// Components as stored (4 for CMYK, 2 for grey + alpha...).
    pub channels: u32,
    /// Why the image is not decoded natively; `None` when it is.
    pub not_native: Option<String>,
}

impl Header {
    /// Size after EXIF orientation (orientations 5-8 swap the axes).
    pub fn oriented_size(&self) -> (u32, u32) {
        if self.orientation >= 5 {
            (self.height, self.width)
        } else {
            (self.width, self.height)
        }
    }
}

pub fn sniff(data: &[u8]) -> Format {
    match data {
        [0xFF, 0xD8, 0xFF, ..] => Format::Jpeg,
        [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, ..] => Format::Png,
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Format::Webp,
        [b'G', b'I', b'F', b'8', ..] => Format::Gif,
        [b'I', b'I', 42, 0, ..] | [b'M', b'M', 0, 42, ..] => Format::Tiff,
        [_, _, _, _, b'f', b't', b'y', b'p', b'a', b'v', b'i', b's' | b'f', ..] => Format::Avif,
        _ => Format::Other,
    }
}

/// Reads the header. Formats other than JPEG and PNG are only named (size 0): sharp decodes them.
pub fn probe(data: &[u8]) -> Result<Header> {
    let format = sniff(data);
    match format {
        Format::Jpeg => jpeg_header(data),
        Format::Png => png_header(data),
        _ => Ok(Header {
            format,
            width: 0,
            height: 0,
            orientation: 1,
            channels: 0,
            not_native: Some(if data.is_empty() {
                "the buffer is empty".into()
            } else {
                format!("{} is not decoded natively", format.name())
            }),
        }),
    }
}

/// True when the last scan of a JPEG has no end-of-image marker after it (the rule of the
/// TypeScript `isTruncated`: stuffed entropy data cannot contain FF D9 or FF DA, and an EXIF
/// thumbnail's markers all come before the main image's scans). A crop decodes only some rows,
/// so without this a truncated file would decode for some crops and fail for others.
pub fn jpeg_truncated(data: &[u8]) -> bool {
    last_index_of(data, &[0xFF, 0xD9]) < last_index_of(data, &[0xFF, 0xDA])
}

/// Same rule for PNG: an IEND chunk after the last IDAT.
pub fn png_truncated(data: &[u8]) -> bool {
    last_index_of(data, b"IEND") < last_index_of(data, b"IDAT")
}

fn last_index_of(data: &[u8], needle: &[u8]) -> isize {
    data.windows(needle.len()).rposition(|w| w == needle).map_or(-1, |i| i as isize)
}

/// Walks the marker segments up to the first scan: SOFn gives size, precision, components and
/// coding process; APP1 "Exif" gives orientation.
fn jpeg_header(data: &[u8]) -> Result<Header> {
    let mut pos = 2;
    let mut orientation = 1;
    let mut frame: Option<(u8, u8, u32, u32, u8)> = None; // (sof, precision, w, h, components)
    loop {
        // Fill bytes (FF FF ...) may precede a marker.
        while data.get(pos) == Some(&0xFF) && data.get(pos + 1) == Some(&0xFF) {
            pos += 1;
        }
        let (Some(&ff), Some(&marker)) = (data.get(pos), data.get(pos + 1)) else {
            return Err(ImageError::Truncated("the JPEG ends inside its header".into()));
        };
        if ff != 0xFF {
            return Err(ImageError::Corrupt(format!("no JPEG marker at byte {pos}")));
        }
        pos += 2;
        if marker == 0xD8 || (0xD0..=0xD7).contains(&marker) || marker == 0x01 {
            continue; // standalone markers
        }
        if marker == 0xD9 {
            return Err(ImageError::Corrupt("the JPEG ends before any scan".into()));
        }
        let Some(len) = data.get(pos..pos + 2).map(|b| u16::from_be_bytes([b[0], b[1]]) as usize)
        else {
            return Err(ImageError::Truncated("the JPEG ends inside its header".into()));
        };
        if len < 2 {
            return Err(ImageError::Corrupt(format!("bad length of JPEG segment {marker:#04x}")));
        }
        let Some(body) = data.get(pos + 2..pos + len) else {
            return Err(ImageError::Truncated("the JPEG ends inside its header".into()));
        };
        match marker {
            0xE1 if body.starts_with(b"Exif\0\0") && orientation == 1 => {
                orientation = exif::orientation(&body[6..]);
            }
            // SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC).
            0xC0..=0xCF if marker != 0xC4 && marker != 0xC8 && marker != 0xCC => {
                if body.len() < 6 {
                    return Err(ImageError::Corrupt("short JPEG frame header".into()));
                }
                let h = u16::from_be_bytes([body[1], body[2]]) as u32;
                let w = u16::from_be_bytes([body[3], body[4]]) as u32;
                frame = Some((marker, body[0], w, h, body[5]));
            }
            0xDA => break,
            _ => {}
        }
        pos += len;
    }
    let Some((sof, precision, width, height, components)) = frame else {
        return Err(ImageError::Corrupt("the JPEG has no frame header before its scan".into()));
    };
    if width == 0 || height == 0 {
        // A height of 0 defers it to a DNL marker, which libjpeg does not support either.
        return Err(ImageError::Corrupt(format!("the JPEG frame is {width}x{height}")));
    }
    let not_native = match sof {
        // Baseline, extended, progressive; Huffman or arithmetic coded.
        0xC0 | 0xC1 | 0xC2 | 0xC9 | 0xCA if precision == 8 => match components {
            1 | 3 | 4 => None,
            n => Some(format!("JPEG with {n} components")),
        },
        0xC0 | 0xC1 | 0xC2 | 0xC9 | 0xCA => Some(format!("{precision}-bit JPEG")),
        0xC3 | 0xCB => Some("lossless JPEG".into()),
        _ => Some("hierarchical JPEG".into()),
    };
    Ok(Header {
        format: Format::Jpeg,
        width,
        height,
        orientation,
        channels: components as u32,
        not_native,
    })
}

/// IHDR, then the chunks before the first IDAT for an eXIf (PNG 1.5's EXIF chunk; libvips and
/// torchvision apply its orientation too).
fn png_header(data: &[u8]) -> Result<Header> {
    let Some(ihdr) = data.get(8..33) else {
        return Err(ImageError::Truncated("the PNG ends inside its header".into()));
    };
    if &ihdr[4..8] != b"IHDR" || u32::from_be_bytes(ihdr[0..4].try_into().unwrap()) != 13 {
        return Err(ImageError::Corrupt("the PNG does not start with IHDR".into()));
    }
    let width = u32::from_be_bytes(ihdr[8..12].try_into().unwrap());
    let height = u32::from_be_bytes(ihdr[12..16].try_into().unwrap());
    let (depth, color, interlace) = (ihdr[16], ihdr[17], ihdr[20]);
    if width == 0 || height == 0 {
        return Err(ImageError::Corrupt(format!("the PNG is {width}x{height}")));
    }
    let channels = match color {
        0 => 1,
        2 | 3 => 3,
        4 => 2,
        6 => 4,
        c => return Err(ImageError::Corrupt(format!("PNG colour type {c}"))),
    };
    let not_native = if depth != 8 {
        Some(format!("{depth}-bit PNG"))
    } else if interlace != 0 {
        Some("interlaced PNG".into())
    } else {
        None
    };
    let mut orientation = 1;
    let mut pos = 33;
    while let Some(head) = data.get(pos..pos + 8) {
        let len = u32::from_be_bytes(head[0..4].try_into().unwrap()) as usize;
        let kind = &head[4..8];
        if kind == b"IDAT" || kind == b"IEND" {
            break;
        }
        if kind == b"eXIf" {
            if let Some(body) = data.get(pos + 8..pos + 8 + len) {
                orientation = exif::orientation(body);
            }
            break;
        }
        pos = pos.saturating_add(12).saturating_add(len);
    }
    Ok(Header {
        format: Format::Png,
        width,
        height,
        orientation,
        channels,
        not_native,
    })
}

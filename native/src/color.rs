//! Conversion of decoded pixels to the requested 1 or 3 channels, the way the trainers' own
//! decoders do it (PIL's `convert('L')` / `convert('RGB')`, torchvision's `decode_jpeg`).

/// How a decoder laid out its pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Gray,
    GrayAlpha,
    Rgb,
    Rgba,
    /// Adobe (inverted) CMYK, as libjpeg returns it.
    Cmyk,
}

impl Layout {
    pub fn channels(self) -> usize {
        match self {
            Layout::Gray => 1,
            Layout::GrayAlpha => 2,
            Layout::Rgb => 3,
            Layout::Rgba | Layout::Cmyk => 4,
        }
    }
}

/// ITU-R 601-2 luma in PIL's fixed point (`L24` in libImaging/Convert.c): rounds to nearest.
#[inline]
fn luma(r: u8, g: u8, b: u8) -> u8 {
    ((r as u32 * 19595 + g as u32 * 38470 + b as u32 * 7471 + 0x8000) >> 16) as u8
}

/// One inverted CMYK sample to RGB: `k - k * (255 - cmy) / 255`, rounded as Pillow's
/// MULDIV255 and torchvision's `clamped_cmyk_rgb_convert`.
#[inline]
fn cmyk_channel(k: u8, cmy: u8) -> u8 {
    let v = k as i32 * (255 - cmy as i32) + 128;
    let v = ((v >> 8) + v) >> 8;
    (k as i32 - v).clamp(0, 255) as u8
}

/// `src` in `layout` to `channels` (1 or 3) per pixel. Alpha is dropped without compositing,
/// as PIL's `convert('RGB')` does. Returns `None` when the pixels are already as requested.
pub fn convert(src: &[u8], layout: Layout, channels: usize) -> Option<Vec<u8>> {
    let n = src.len() / layout.channels();
    let grey = channels == 1;
    if matches!((layout, grey), (Layout::Gray, true) | (Layout::Rgb, false)) {
        return None;
    }
    let mut dst = vec![0u8; n * if grey { 1 } else { 3 }];
    match (layout, grey) {
        (Layout::Gray, true) | (Layout::Rgb, false) => unreachable!(),
        (Layout::Gray, false) => {
            for (d, &l) in dst.chunks_exact_mut(3).zip(src) {
                d.fill(l);
            }
        }
        (Layout::GrayAlpha, true) => {
            for (d, s) in dst.iter_mut().zip(src.chunks_exact(2)) {
                *d = s[0];
            }
        }
        (Layout::GrayAlpha, false) => {
            for (d, s) in dst.chunks_exact_mut(3).zip(src.chunks_exact(2)) {
                d.fill(s[0]);
            }
        }
        (Layout::Rgb | Layout::Rgba, true) => {
            for (d, s) in dst.iter_mut().zip(src.chunks_exact(layout.channels())) {
                *d = luma(s[0], s[1], s[2]);
            }
        }
        (Layout::Rgba, false) => {
            for (d, s) in dst.chunks_exact_mut(3).zip(src.chunks_exact(4)) {
                d.copy_from_slice(&s[..3]);
            }
        }
        (Layout::Cmyk, true) => {
            for (d, s) in dst.iter_mut().zip(src.chunks_exact(4)) {
                let k = s[3];
                *d = luma(cmyk_channel(k, s[0]), cmyk_channel(k, s[1]), cmyk_channel(k, s[2]));
            }
        }
        (Layout::Cmyk, false) => {
            for (d, s) in dst.chunks_exact_mut(3).zip(src.chunks_exact(4)) {
                let k = s[3];
                d[0] = cmyk_channel(k, s[0]);
                d[1] = cmyk_channel(k, s[1]);
                d[2] = cmyk_channel(k, s[2]);
            }
        }
    }
    Some(dst)
}

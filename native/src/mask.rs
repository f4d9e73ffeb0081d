//! Masks that follow their image: an 8-bit grey or palette PNG decoded to its stored values
//! (grey levels, or palette indices rather than their colours), then the image's plan applied
//! by nearest neighbour, the image's EXIF orientation first. The TypeScript side
//! (`maskGeometry.ts`) does the same for masks this module does not read.

use zune_inflate::{DeflateDecoder, DeflateOptions};

use crate::error::{ImageError, Result};
use crate::transform::Plan;

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The PNG's header: its size.
fn header(data: &[u8]) -> Result<(u32, u32)> {
    if data.len() < 33 || data[..8] != SIGNATURE || &data[12..16] != b"IHDR" {
        return Err(ImageError::Corrupt("not a PNG".into()));
    }
    Ok((be32(data, 16), be32(data, 20)))
}

/// The PNG's stored values, one byte per pixel, of rows `0..rows` (the rows below are left 0:
/// a crop that does not reach them skips their unfiltering).
fn decode(data: &[u8], max_pixels: f64, rows: u32) -> Result<Vec<u8>> {
    let (w, h) = header(data)?;
    let (depth, colour, interlace) = (data[24], data[25], data[28]);
    if depth != 8 || !(colour == 0 || colour == 3) || interlace != 0 {
        return Err(ImageError::Unsupported(format!(
            "PNG mask of bit depth {depth}, colour type {colour}, interlace {interlace}"
        )));
    }
    if w == 0 || h == 0 || w as f64 * h as f64 > max_pixels {
        return Err(ImageError::PixelLimit(format!(
            "the mask is {w}x{h}, over the limit of {max_pixels} pixels"
        )));
    }
    let mut idat = Vec::new();
    let mut pos = 8;
    let mut ended = false;
    while pos + 8 <= data.len() {
        let length = be32(data, pos) as usize;
        let end = pos + 12 + length;
        if end > data.len() {
            break;
        }
        match &data[pos + 4..pos + 8] {
            b"IDAT" => idat.extend_from_slice(&data[pos + 8..pos + 8 + length]),
            b"IEND" => {
                ended = true;
                break;
            }
            _ => {}
        }
        pos = end;
    }
    if !ended {
        return Err(ImageError::Truncated("the PNG mask has no IEND chunk".into()));
    }
    let stride = w as usize + 1;
    let expected = stride * h as usize;
    let options = DeflateOptions::default().set_limit(expected + 1);
    let mut raw = DeflateDecoder::new_with_options(&idat, options)
        .decode_zlib()
        .map_err(|e| ImageError::Corrupt(format!("PNG mask data: {e:?}")))?;
    if raw.len() != expected {
        return Err(ImageError::Corrupt(format!(
            "the PNG mask's data is {} bytes, its {w}x{h} header makes {expected}",
            raw.len()
        )));
    }
    let row = w as usize;
    let mut out = vec![0u8; row * h as usize];
    let zeros = vec![0u8; row];
    for y in 0..(rows.min(h) as usize) {
        let (done, rest) = raw.split_at_mut(y * stride);
        let prev: &[u8] = if y > 0 { &done[(y - 1) * stride + 1..y * stride] } else { &zeros };
        let cur = &mut rest[..stride];
        let filter = cur[0];
        let cur = &mut cur[1..];
        // One loop per filter: the choice is the row's, not the pixel's.
        match filter {
            0 => {}
            1 => {
                for i in 1..row {
                    cur[i] = cur[i].wrapping_add(cur[i - 1]);
                }
            }
            2 => {
                for (v, &b) in cur.iter_mut().zip(prev) {
                    *v = v.wrapping_add(b);
                }
            }
            3 => {
                cur[0] = cur[0].wrapping_add(prev[0] >> 1);
                for i in 1..row {
                    cur[i] = cur[i].wrapping_add(((cur[i - 1] as u16 + prev[i] as u16) >> 1) as u8);
                }
            }
            4 => {
                cur[0] = cur[0].wrapping_add(prev[0]);
                for i in 1..row {
                    let (a, b, c) = (cur[i - 1] as i16, prev[i] as i16, prev[i - 1] as i16);
                    let p = a + b - c;
                    let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                    let pred = if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    };
                    cur[i] = cur[i].wrapping_add(pred as u8);
                }
            }
            f => return Err(ImageError::Corrupt(format!("the PNG mask has row filter {f}"))),
        }
        out[y * row..(y + 1) * row].copy_from_slice(cur);
    }
    Ok(out)
}

/// Where each output position of one axis reads the oriented source; `None` is padding.
#[allow(clippy::too_many_arguments)]
fn axis(size: u32, before: u32, to: u32, start: u32, len: u32, base: u32, source: u32, mirror: bool) -> Vec<Option<u32>> {
    (0..size)
        .map(|i| {
            let o = if mirror { size - 1 - i } else { i } as i64 - before as i64;
            if o < 0 || o >= to as i64 {
                return None;
            }
            let r = start as u64 + ((2 * o as u64 + 1) * len as u64 / (2 * to as u64)).min(len as u64 - 1);
            Some((((2 * r + 1) * source as u64) / (2 * base as u64)).min(source as u64 - 1) as u32)
        })
        .collect()
}

/// Decodes the PNG mask `data` (its image's stored size) and writes `plan.width *
/// plan.height` bytes of it, oriented by `orientation` and sampled by the plan, to `out`.
pub fn transform_mask(data: &[u8], plan: &Plan, orientation: u8, out: &mut [u8]) -> Result<()> {
    let (w, h) = header(data)?;
    let (ow, oh) = if orientation >= 5 { (h, w) } else { (w, h) };
    if (ow, oh) != (plan.source.width, plan.source.height) {
        return Err(ImageError::InvalidArgument(format!(
            "the plan is for a {}x{} image, the oriented mask is {ow}x{oh}",
            plan.source.width, plan.source.height
        )));
    }
    let len = plan.width as usize * plan.height as usize;
    if out.len() < len {
        return Err(ImageError::InvalidArgument(format!("the output holds {} bytes, the mask needs {len}", out.len())));
    }
    let base = plan.resize.unwrap_or(plan.source);
    let region = plan.region.unwrap_or(crate::orient::Rect { x: 0, y: 0, w: base.width, h: base.height });
    let to = plan.output.map_or((region.w, region.h), |o| (o.width, o.height));
    let (pad_left, pad_top) = plan.pad.map_or((0, 0), |p| (p.left, p.top));
    if region.w == 0 || region.h == 0 || to.0 == 0 || to.1 == 0 || base.width == 0 || base.height == 0 {
        return Err(ImageError::InvalidArgument("an empty region in the plan".into()));
    }
    let cols = axis(plan.width, pad_left, to.0, region.x, region.w, base.width, plan.source.width, plan.flip);
    let rows = axis(plan.height, pad_top, to.1, region.y, region.h, base.height, plan.source.height, false);
    let (start, step_x, step_y) = crate::orient::stored_steps(orientation, w, h);
    // The last stored row the sampled pixels reach: rows below it are not unfiltered.
    let span = |m: &[Option<u32>]| {
        let used = m.iter().flatten();
        used.clone().min().zip(used.max()).map(|(a, b)| (*a as isize, *b as isize))
    };
    let last_row = match (span(&cols), span(&rows)) {
        (Some((x0, x1)), Some((y0, y1))) => [(x0, y0), (x0, y1), (x1, y0), (x1, y1)]
            .iter()
            .map(|&(x, y)| ((start + x * step_x + y * step_y) / w as isize) as u32)
            .max()
            .unwrap_or(h - 1),
        _ => 0,
    };
    let pixels = decode(data, plan.max_pixels, last_row + 1)?;
    let out = &mut out[..len];
    for (y, line) in out.chunks_exact_mut(plan.width as usize).enumerate() {
        let Some(sy) = rows[y] else {
            line.fill(0);
            continue;
        };
        let row_start = start + sy as isize * step_y;
        for (x, px) in line.iter_mut().enumerate() {
            *px = match cols[x] {
                Some(sx) => pixels[(row_start + sx as isize * step_x) as usize],
                None => 0,
            };
        }
    }
    Ok(())
}

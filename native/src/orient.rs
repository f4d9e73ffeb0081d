//! EXIF orientation: mapping rectangles between the stored and the oriented image, and
//! orienting a decoded window's pixels.

/// An integer rectangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub w: u32,
    pub h: u32,
}

/// Size of the oriented image of a stored `w x h`.
pub fn oriented_size(orientation: u8, w: u32, h: u32) -> (u32, u32) {
    if orientation >= 5 {
        (h, w)
    } else {
        (w, h)
    }
}

/// The stored pixel shown at oriented `(x, y)`, for a stored image of `w x h`.
fn to_stored(orientation: u8, w: u32, h: u32, x: u32, y: u32) -> (u32, u32) {
    match orientation {
        2 => (w - 1 - x, y),
        3 => (w - 1 - x, h - 1 - y),
        4 => (x, h - 1 - y),
        5 => (y, x),
        6 => (y, h - 1 - x),
        7 => (w - 1 - y, h - 1 - x),
        8 => (w - 1 - y, x),
        _ => (x, y),
    }
}

/// Where stored `(x, y)` is shown in the oriented image, for a stored image of `w x h`.
fn to_oriented(orientation: u8, w: u32, h: u32, x: u32, y: u32) -> (u32, u32) {
    match orientation {
        2 => (w - 1 - x, y),
        3 => (w - 1 - x, h - 1 - y),
        4 => (x, h - 1 - y),
        5 => (y, x),
        6 => (h - 1 - y, x),
        7 => (h - 1 - y, w - 1 - x),
        8 => (y, w - 1 - x),
        _ => (x, y),
    }
}

fn map_rect(r: Rect, map: impl Fn(u32, u32) -> (u32, u32)) -> Rect {
    let (ax, ay) = map(r.x, r.y);
    let (bx, by) = map(r.x + r.w - 1, r.y + r.h - 1);
    Rect { x: ax.min(bx), y: ay.min(by), w: ax.abs_diff(bx) + 1, h: ay.abs_diff(by) + 1 }
}

/// The stored rectangle holding oriented rectangle `r` (stored image `w x h`).
pub fn rect_to_stored(orientation: u8, w: u32, h: u32, r: Rect) -> Rect {
    map_rect(r, |x, y| to_stored(orientation, w, h, x, y))
}

/// The oriented rectangle showing stored rectangle `r` (stored image `w x h`).
pub fn rect_to_oriented(orientation: u8, w: u32, h: u32, r: Rect) -> Rect {
    map_rect(r, |x, y| to_oriented(orientation, w, h, x, y))
}

/// Where oriented `(x', y')` reads a stored `w x h` image: pixel index `start + x' * step_x +
/// y' * step_y` (from `to_stored` above), as `(start, step_x, step_y)`.
pub fn stored_steps(orientation: u8, w: u32, h: u32) -> (isize, isize, isize) {
    let (ws, hs) = (w as isize, h as isize);
    match orientation {
        2 => (ws - 1, -1, ws),
        3 => ((hs - 1) * ws + ws - 1, -1, -ws),
        4 => ((hs - 1) * ws, 1, -ws),
        5 => (0, ws, 1),
        6 => ((hs - 1) * ws, -ws, 1),
        7 => ((hs - 1) * ws + ws - 1, -ws, -1),
        8 => (ws - 1, ws, -1),
        _ => (0, 1, ws),
    }
}

/// Orients a stored `w x h` image of `channels` bytes per pixel. A window of the stored image
/// orients to the matching window of the oriented image, so this also serves for crops.
pub fn orient_pixels(orientation: u8, src: &[u8], w: u32, h: u32, channels: usize) -> Vec<u8> {
    if !(2..=8).contains(&orientation) {
        return src[..w as usize * h as usize * channels].to_vec();
    }
    let (start, step_x, step_y) = stored_steps(orientation, w, h);
    let (wo, ho) = oriented_size(orientation, w, h);
    let mut dst = vec![0u8; src.len().min(w as usize * h as usize * channels)];
    let mut d = 0;
    for y in 0..ho as isize {
        let mut s = start + y * step_y;
        for _ in 0..wo {
            let at = s as usize * channels;
            dst[d..d + channels].copy_from_slice(&src[at..at + channels]);
            d += channels;
            s += step_x;
        }
    }
    dst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rects_round_trip() {
        for o in 1..=8 {
            let (w, h) = (7, 5);
            let r = Rect { x: 1, y: 2, w: 3, h: 2 };
            let (ow, oh) = oriented_size(o, w, h);
            assert!(r.x + r.w <= ow && r.y + r.h <= oh);
            let s = rect_to_stored(o, w, h, r);
            assert_eq!(rect_to_oriented(o, w, h, s), r, "orientation {o}");
        }
    }

    #[test]
    fn pixels_follow_the_map() {
        let (w, h) = (4u32, 3u32);
        let src: Vec<u8> = (0..(w * h) as u8).collect();
        for o in 1..=8 {
            let dst = orient_pixels(o, &src, w, h, 1);
            let (ow, oh) = oriented_size(o, w, h);
            for y in 0..oh {
                for x in 0..ow {
                    let (sx, sy) = to_stored(o, w, h, x, y);
                    assert_eq!(dst[(y * ow + x) as usize], src[(sy * w + sx) as usize]);
                }
            }
        }
    }
}

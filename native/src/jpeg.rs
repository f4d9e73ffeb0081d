//! JPEG through TurboJPEG 3: only the rows and (iMCU-aligned) columns a crop needs, at a DCT
//! scale when the crop is much larger than its output.

use std::cell::RefCell;
use std::ffi::CStr;
use std::os::raw::c_int;

use turbojpeg_sys as tj;

use crate::color::{self, Layout};
use crate::error::{ImageError, Result};
use crate::orient::{self, Rect};
use crate::probe::Header;

/// A decoded, oriented window of an image, in the requested channels.
pub struct Window {
    pub pixels: Vec<u8>,
    /// Where the window lies in the oriented (and DCT-scaled) image.
    pub rect: Rect,
}

/// A TurboJPEG decompressor, one per thread: creating one allocates libjpeg's state, which
/// is worth reusing across the many small images of a dataset.
struct Handle(tj::tjhandle);

impl Drop for Handle {
    fn drop(&mut self) {
        unsafe { tj::tj3Destroy(self.0) }
    }
}

thread_local! {
    static HANDLE: RefCell<Option<Handle>> = const { RefCell::new(None) };
}

fn with_handle<T>(f: impl FnOnce(tj::tjhandle) -> Result<T>) -> Result<T> {
    HANDLE.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let raw = unsafe { tj::tj3Init(tj::TJINIT_TJINIT_DECOMPRESS as _) };
            if raw.is_null() {
                return Err(ImageError::Corrupt("cannot create a TurboJPEG decompressor".into()));
            }
            *slot = Some(Handle(raw));
        }
        f(slot.as_ref().unwrap().0)
    })
}

/// The failure TurboJPEG reports, by prefix. With STOPONWARNING libjpeg's "Premature end of
/// JPEG file" warning (data ends inside a scan) is an error too: it would otherwise grey-fill.
fn failure(handle: tj::tjhandle) -> ImageError {
    let message = unsafe { CStr::from_ptr(tj::tj3GetErrorStr(handle)) }
        .to_string_lossy()
        .trim()
        .to_owned();
    if message.contains("Premature end") {
        ImageError::Truncated(message)
    } else if message.contains("more than") && message.contains("scans") {
        // TJPARAM_SCANLIMIT's "Progressive JPEG image has more than N scans".
        ImageError::TooManyScans(message)
    } else if message.contains("Unsupported") {
        ImageError::Unsupported(message)
    } else {
        ImageError::Corrupt(message)
    }
}

fn check(handle: tj::tjhandle, status: c_int) -> Result<()> {
    if status == 0 {
        Ok(())
    } else {
        Err(failure(handle))
    }
}

/// iMCU width by TJSAMP (444, 422, 420, GRAY, 440, 411, 441): turbojpeg.h's `tjMCUWidth`,
/// which is a static array of the header, not a symbol of the library.
const MCU_WIDTH: [u32; 7] = [8, 16, 16, 8, 8, 32, 8];

/// Scaled size as TurboJPEG computes it (`TJSCALED`).
fn scaled(size: u32, denom: u32) -> u32 {
    size.div_ceil(denom)
}

/// Size of the oriented image at DCT scale 1/`denom`.
pub fn scaled_oriented_size(header: &Header, denom: u32) -> (u32, u32) {
    orient::oriented_size(
        header.orientation,
        scaled(header.width, denom),
        scaled(header.height, denom),
    )
}

/// Decodes oriented `window` (coordinates at scale 1/`denom`) into `channels` per pixel. The
/// window may come back wider on one side: TurboJPEG crops from an iMCU boundary. A
/// progressive JPEG of more than `max_scans` scans (0: no limit) fails as `TooManyScans`.
pub fn decode(data: &[u8], header: &Header, denom: u32, window: Rect, channels: usize, max_scans: u32) -> Result<Window> {
    with_handle(|handle| unsafe {
        check(handle, tj::tj3Set(handle, tj::TJPARAM_TJPARAM_STOPONWARNING as _, 1))?;
        // Set on every call: the handle is reused, and 0 (no limit) must not inherit a limit.
        check(handle, tj::tj3Set(handle, tj::TJPARAM_TJPARAM_SCANLIMIT as _, max_scans.min(i32::MAX as u32) as _))?;
        check(handle, tj::tj3DecompressHeader(handle, data.as_ptr(), data.len() as _))?;
        let get = |p: tj::TJPARAM| tj::tj3Get(handle, p as _);
        let (jw, jh) = (get(tj::TJPARAM_TJPARAM_JPEGWIDTH), get(tj::TJPARAM_TJPARAM_JPEGHEIGHT));
        if jw != header.width as i32 || jh != header.height as i32 {
            return Err(ImageError::Corrupt(format!(
                "frame header says {}x{}, libjpeg {jw}x{jh}",
                header.width, header.height
            )));
        }
        if get(tj::TJPARAM_TJPARAM_PRECISION) != 8 || get(tj::TJPARAM_TJPARAM_LOSSLESS) != 0 {
            return Err(ImageError::Unsupported("only 8-bit lossy JPEG is decoded natively".into()));
        }
        let subsamp = get(tj::TJPARAM_TJPARAM_SUBSAMP);
        let (layout, pixel_format) = match get(tj::TJPARAM_TJPARAM_COLORSPACE) as tj::TJCS {
            tj::TJCS_TJCS_GRAY => (Layout::Gray, tj::TJPF_TJPF_GRAY),
            tj::TJCS_TJCS_CMYK | tj::TJCS_TJCS_YCCK => (Layout::Cmyk, tj::TJPF_TJPF_CMYK),
            _ => (Layout::Rgb, tj::TJPF_TJPF_RGB),
        };
        // The handle is reused: clear the previous image's crop before its scale is checked.
        check(handle, tj::tj3SetCroppingRegion(handle, tj::tjregion { x: 0, y: 0, w: 0, h: 0 }))?;
        check(handle, tj::tj3SetScalingFactor(handle, tj::tjscalingfactor { num: 1, denom: denom as _ }))?;

        let (sw, sh) = (scaled(header.width, denom), scaled(header.height, denom));
        let full = Rect { x: 0, y: 0, w: sw, h: sh };
        let mut stored = orient::rect_to_stored(header.orientation, sw, sh, window);
        if (0..7).contains(&subsamp) {
            // The left edge must sit on an iMCU boundary: widen the window leftwards.
            let imcu = scaled(MCU_WIDTH[subsamp as usize], denom);
            // Fancy upsampling of subsampled chroma reads the neighbouring chroma sample: a crop
            // edge inside the image is otherwise treated as the image's edge. Decode one iMCU
            // more on each side (the kernel still sees only `window`).
            let right = (stored.x + stored.w + imcu).min(sw);
            stored.x = stored.x.saturating_sub(imcu);
            stored.w = right - stored.x;
            let shift = stored.x % imcu;
            stored.x -= shift;
            stored.w += shift;
        } else {
            // TurboJPEG cannot crop an image of unusual subsampling: decode all of it.
            stored = full;
        }
        let region = if stored == full {
            tj::tjregion { x: 0, y: 0, w: 0, h: 0 } // uncropped
        } else {
            tj::tjregion { x: stored.x as _, y: stored.y as _, w: stored.w as _, h: stored.h as _ }
        };
        check(handle, tj::tj3SetCroppingRegion(handle, region))?;

        let mut pixels = vec![0u8; stored.w as usize * stored.h as usize * layout.channels()];
        check(
            handle,
            tj::tj3Decompress8(handle, data.as_ptr(), data.len() as _, pixels.as_mut_ptr(), 0, pixel_format as _),
        )?;
        if let Some(converted) = color::convert(&pixels, layout, channels) {
            pixels = converted;
        }
        if header.orientation != 1 {
            pixels = orient::orient_pixels(header.orientation, &pixels, stored.w, stored.h, channels);
        }
        Ok(Window { pixels, rect: orient::rect_to_oriented(header.orientation, sw, sh, stored) })
    })
}

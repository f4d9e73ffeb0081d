//! 8-bit, non-interlaced PNG through zune-png: the whole image (deflate cannot seek), then the
//! channels and orientation of the transform.

use zune_core::bytestream::ZCursor;
use zune_core::colorspace::ColorSpace;
use zune_core::options::DecoderOptions;
use zune_png::error::PngDecodeErrors;
use zune_png::PngDecoder;

use crate::color::{self, Layout};
use crate::error::{ImageError, Result};
use crate::jpeg::Window;
use crate::orient::{self, Rect};
use crate::probe::Header;

pub fn decode(data: &[u8], header: &Header, channels: usize) -> Result<Window> {
    // The pixel limit is the caller's, checked before this: no size cap of the decoder's own.
    let options = DecoderOptions::default()
        .set_max_width(usize::MAX)
        .set_max_height(usize::MAX)
        .set_strict_mode(true)
        .png_set_confirm_crc(true);
    let mut decoder = PngDecoder::new_with_options(ZCursor::new(data), options);
    decoder.decode_headers().map_err(png_error)?;
    let layout = match decoder.colorspace() {
        Some(ColorSpace::Luma) => Layout::Gray,
        Some(ColorSpace::LumaA) => Layout::GrayAlpha,
        Some(ColorSpace::RGB) => Layout::Rgb,
        Some(ColorSpace::RGBA) => Layout::Rgba,
        other => return Err(ImageError::Unsupported(format!("PNG colour space {other:?}"))),
    };
    let mut pixels = decoder.decode_raw().map_err(png_error)?;
    let (w, h) = (header.width, header.height);
    if pixels.len() != w as usize * h as usize * layout.channels() {
        return Err(ImageError::Corrupt(format!(
            "PNG decoded to {} bytes, expected {w}x{h}x{}",
            pixels.len(),
            layout.channels()
        )));
    }
    if let Some(converted) = color::convert(&pixels, layout, channels) {
        pixels = converted;
    }
    if header.orientation != 1 {
        pixels = orient::orient_pixels(header.orientation, &pixels, w, h, channels);
    }
    let (ow, oh) = orient::oriented_size(header.orientation, w, h);
    Ok(Window { pixels, rect: Rect { x: 0, y: 0, w: ow, h: oh } })
}

fn png_error(err: PngDecodeErrors) -> ImageError {
    let message = format!("{err:?}");
    // A short or missing IDAT stream shows as the inflater running out of input.
    if message.contains("EOF") || message.contains("eof") || message.contains("No more bytes") {
        ImageError::Truncated(message)
    } else {
        ImageError::Corrupt(message)
    }
}

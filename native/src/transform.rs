//! A TypeScript `TransformPlan` executed on one image: orient -> (resize whole) -> crop ->
//! pad -> resize to output -> flip, written as raw HWC bytes into the caller's buffer.

use std::cell::RefCell;

use fast_image_resize::images::{CroppedImage, Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

use crate::error::{ImageError, Result};
use crate::jpeg::{self, Window};
use crate::orient::Rect;
use crate::png;
use crate::probe::{self, Format};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    Bilinear,
    Bicubic,
    Lanczos3,
    Nearest,
}

impl Filter {
    pub fn parse(name: &str) -> Result<Filter> {
        Ok(match name {
            "bilinear" => Filter::Bilinear,
            "bicubic" => Filter::Bicubic,
            "lanczos3" => Filter::Lanczos3,
            "nearest" => Filter::Nearest,
            _ => return Err(ImageError::InvalidArgument(format!("interpolation {name:?}"))),
        })
    }

    /// Pillow's resampling filters: convolution with a kernel widened by the downscale factor
    /// (antialiasing). Bicubic is Pillow's a = -0.5, i.e. Catmull-Rom.
    fn algorithm(self) -> ResizeAlg {
        match self {
            Filter::Bilinear => ResizeAlg::Convolution(FilterType::Bilinear),
            Filter::Bicubic => ResizeAlg::Convolution(FilterType::CatmullRom),
            Filter::Lanczos3 => ResizeAlg::Convolution(FilterType::Lanczos3),
            Filter::Nearest => ResizeAlg::Nearest,
        }
    }

    /// Kernel radius in source pixels at scale 1, plus one pixel of slack for rounding.
    fn support(self) -> f64 {
        match self {
            Filter::Bilinear | Filter::Nearest => 2.0,
            Filter::Bicubic => 3.0,
            Filter::Lanczos3 => 4.0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct Pad {
    pub top: u32,
    pub bottom: u32,
    pub left: u32,
    pub right: u32,
}

/// The plan of `planTransform.ts`; coordinates are in the oriented image.
#[derive(Debug, Clone)]
pub struct Plan {
    pub source: Size,
    pub resize: Option<Size>,
    pub region: Option<Rect>,
    pub pad: Option<Pad>,
    pub output: Option<Size>,
    pub flip: bool,
    pub width: u32,
    pub height: u32,
    pub channels: usize,
    pub filter: Filter,
    pub max_pixels: f64,
    /// Most scans of a progressive JPEG (libjpeg-turbo's scan limit); 0: no limit.
    pub max_scans: u32,
}

/// DCT scaling (libjpeg decoding at 1/2, 1/4 or 1/8 size) is used only when it leaves the
/// resize kernel at least this much downscaling, so the result stays close to a full decode
/// followed by an antialiased resize (sharp's `fastShrinkOnLoad: false` makes the same trade).
const DCT_MIN_RESIDUAL: f64 = 2.0;

/// A source rectangle (fractional, oriented full-size coordinates) resampled to a size.
#[derive(Debug, Clone, Copy)]
struct Resample {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    to: Size,
    /// The rectangle is cut before it is resized (torchvision's `resized_crop`, sharp's
    /// extract + resize): the kernel sees nothing outside it. Otherwise (a resize of the whole
    /// image, then a crop) the kernel reads neighbours up to the image's edges.
    cut: bool,
}

impl Resample {
    fn is_copy(&self) -> bool {
        self.w == self.to.width as f64
            && self.h == self.to.height as f64
            && self.x.fract() == 0.0
            && self.y.fract() == 0.0
    }
}

/// The plan as at most two resamplings of the oriented image.
enum Stages {
    /// One resampling: a crop of the source to its final size (everything but the next case;
    /// a resize followed by a crop is one resampling whose centres are those of the resize).
    One(Resample),
    /// A resize of the whole image, then a crop of it resized again (resize + random crop).
    Two(Resample, Rect, Size),
}

fn invalid(message: String) -> ImageError {
    ImageError::InvalidArgument(message)
}

/// Refuses a plan with a buffer over the pixel limit. The caller's planTransform refuses them
/// too; this keeps the module's own allocations (the resized image of `Stages::Two`, the inner
/// image of a padded crop, the output) bounded whatever plan it is given. A cut region is never
/// larger than the image it is cut from (`stages` checks it), so it needs no check of its own.
fn check_plan_pixels(plan: &Plan) -> Result<()> {
    let result = Size { width: plan.width, height: plan.height };
    let buffers = [("resized image", plan.resize), ("resized crop", plan.output), ("output", Some(result))];
    for (name, size) in buffers {
        let Some(size) = size else { continue };
        if size.width as f64 * size.height as f64 > plan.max_pixels {
            return Err(ImageError::PixelLimit(format!(
                "the transform's {name} would be {}x{}, over the limit of {} pixels",
                size.width, size.height, plan.max_pixels
            )));
        }
    }
    Ok(())
}

fn stages(plan: &Plan) -> Result<Stages> {
    let (sw, sh) = (plan.source.width, plan.source.height);
    let base = plan.resize.unwrap_or(plan.source);
    if base.width == 0 || base.height == 0 {
        return Err(invalid("resize to an empty size".into()));
    }
    let region = plan.region.unwrap_or(Rect { x: 0, y: 0, w: base.width, h: base.height });
    if region.w == 0
        || region.h == 0
        || region.x as u64 + region.w as u64 > base.width as u64
        || region.y as u64 + region.h as u64 > base.height as u64
    {
        return Err(invalid(format!(
            "region {region:?} is not within the {}x{} image",
            base.width, base.height
        )));
    }
    let to = plan.output.unwrap_or(Size { width: region.w, height: region.h });
    let pad = plan.pad.unwrap_or(Pad { top: 0, bottom: 0, left: 0, right: 0 });
    if to.width as u64 + pad.left as u64 + pad.right as u64 != plan.width as u64
        || to.height as u64 + pad.top as u64 + pad.bottom as u64 != plan.height as u64
        || to.width == 0
        || to.height == 0
    {
        return Err(invalid(format!(
            "the plan's parts do not make its {}x{} result",
            plan.width, plan.height
        )));
    }
    let (fx, fy) = (sw as f64 / base.width as f64, sh as f64 / base.height as f64);
    if let (Some(resize), Some(_)) = (plan.resize, plan.output) {
        let whole = Resample { x: 0.0, y: 0.0, w: sw as f64, h: sh as f64, to: resize, cut: false };
        return Ok(Stages::Two(whole, region, to));
    }
    Ok(Stages::One(Resample {
        x: region.x as f64 * fx,
        y: region.y as f64 * fy,
        w: region.w as f64 * fx,
        h: region.h as f64 * fy,
        to,
        cut: plan.resize.is_none(),
    }))
}

/// The DCT scale denominator for a resampling of the JPEG (1: full size).
fn dct_denominator(r: &Resample, filter: Filter) -> u32 {
    if filter == Filter::Nearest {
        return 1; // nearest picks source pixels: a scaled decode would change them
    }
    let shrink = (r.w / r.to.width as f64).min(r.h / r.to.height as f64);
    [8, 4, 2].into_iter().find(|&d| shrink >= d as f64 * DCT_MIN_RESIDUAL).unwrap_or(1)
}

/// The oriented window (in an image of `w x h`) a resampling reads, its kernel included.
fn window_of(r: &Resample, filter: Filter, w: u32, h: u32) -> Rect {
    let axis = |start: f64, len: f64, to: u32, size: u32| -> (u32, u32) {
        let radius = if r.is_copy() || r.cut { 0.0 } else { filter.support() * (len / to as f64).max(1.0) };
        let lo = (start - radius).floor().max(0.0) as u32;
        let hi = ((start + len + radius).ceil() as u32).min(size);
        (lo.min(size - 1), hi.max(lo.min(size - 1) + 1))
    };
    let (x0, x1) = axis(r.x, r.w, r.to.width, w);
    let (y0, y1) = axis(r.y, r.h, r.to.height, h);
    Rect { x: x0, y: y0, w: x1 - x0, h: y1 - y0 }
}

fn pixel_type(channels: usize) -> PixelType {
    if channels == 1 {
        PixelType::U8
    } else {
        PixelType::U8x3
    }
}

thread_local! {
    // The resizer keeps its scratch buffers between calls.
    static RESIZER: RefCell<Resizer> = RefCell::new(Resizer::new());
}

/// Resamples `crop` (x, y, w, h) of the `bounds` of a `src_w x src_h` image into `dst` (`to`,
/// tightly packed). The kernel reads no pixel outside `bounds`; `crop` is relative to them.
#[allow(clippy::too_many_arguments)]
fn resample(
    src: &[u8],
    src_w: u32,
    src_h: u32,
    bounds: Rect,
    crop: (f64, f64, f64, f64),
    dst: &mut [u8],
    to: Size,
    channels: usize,
    filter: Filter,
) -> Result<()> {
    let pt = pixel_type(channels);
    let src = ImageRef::new(src_w, src_h, src, pt).map_err(|e| invalid(format!("source image: {e}")))?;
    let src = CroppedImage::new(&src, bounds.x, bounds.y, bounds.w, bounds.h)
        .map_err(|e| invalid(format!("source bounds: {e}")))?;
    let mut dst = Image::from_slice_u8(to.width, to.height, dst, pt)
        .map_err(|e| invalid(format!("destination image: {e}")))?;
    let options = ResizeOptions::new().resize_alg(filter.algorithm()).crop(crop.0, crop.1, crop.2, crop.3);
    RESIZER.with(|r| r.borrow_mut().resize(&src, &mut dst, &options)).map_err(|e| invalid(format!("resize: {e}")))
}

/// Decodes the oriented `window` (at DCT scale 1/`denom`; PNG ignores both and decodes all).
fn decode(data: &[u8], header: &probe::Header, denom: u32, window: Rect, plan: &Plan) -> Result<Window> {
    let channels = plan.channels;
    match header.format {
        Format::Jpeg => jpeg::decode(data, header, denom, window, channels, plan.max_scans),
        _ => png::decode(data, header, channels),
    }
}

/// Runs `plan` on `data`, writing `plan.width * plan.height * plan.channels` bytes to `out`.
pub fn transform(data: &[u8], plan: &Plan, out: &mut [u8]) -> Result<()> {
    if data.is_empty() {
        return Err(ImageError::Corrupt("the buffer is empty".into()));
    }
    let header = probe::probe(data)?;
    if let Some(reason) = &header.not_native {
        return Err(ImageError::Unsupported(format!("{reason} (decode it with sharp)")));
    }
    // Before any pixel buffer exists: a decompression bomb costs only its header.
    if header.width as f64 * header.height as f64 > plan.max_pixels {
        return Err(ImageError::PixelLimit(format!(
            "the image is {}x{}, over the limit of {} pixels",
            header.width, header.height, plan.max_pixels
        )));
    }
    check_plan_pixels(plan)?;
    let truncated = match header.format {
        Format::Jpeg => probe::jpeg_truncated(data),
        _ => probe::png_truncated(data),
    };
    if truncated {
        return Err(ImageError::Truncated(format!(
            "the {} image is truncated (its end marker is missing)",
            header.format.name()
        )));
    }
    let (ow, oh) = header.oriented_size();
    if (plan.source.width, plan.source.height) != (ow, oh) {
        return Err(invalid(format!(
            "the plan is for a {}x{} image, the image is {ow}x{oh}",
            plan.source.width, plan.source.height
        )));
    }
    if plan.channels != 1 && plan.channels != 3 {
        return Err(invalid(format!("{} channels", plan.channels)));
    }
    let c = plan.channels;
    let len = plan.width as usize * plan.height as usize * c;
    if out.len() < len {
        return Err(invalid(format!("the output holds {} bytes, the plan makes {len}", out.len())));
    }
    let out = &mut out[..len];
    let stages = stages(plan)?;

    // The first resampling chooses the DCT scale; its rectangle is mapped into the scaled image.
    let first = match &stages {
        Stages::One(r) | Stages::Two(r, _, _) => *r,
    };
    let denom = if header.format == Format::Jpeg { dct_denominator(&first, plan.filter) } else { 1 };
    let (sw, sh) = if header.format == Format::Jpeg { jpeg::scaled_oriented_size(&header, denom) } else { (ow, oh) };
    let (fx, fy) = (sw as f64 / ow as f64, sh as f64 / oh as f64);
    let first = Resample { x: first.x * fx, y: first.y * fy, w: first.w * fx, h: first.h * fy, ..first };
    let wanted = window_of(&first, plan.filter, sw, sh);
    let window = decode(data, &header, denom, wanted, plan)?;
    // The decoder may return more than asked (iMCU alignment, PNG's whole image): the kernel
    // sees only `wanted`, which holds the cut region, or the region and its kernel's reach.
    let (ww, wh) = (window.rect.w, window.rect.h);
    let bounds = Rect { x: wanted.x - window.rect.x, y: wanted.y - window.rect.y, ..wanted };
    let first_crop = (first.x - wanted.x as f64, first.y - wanted.y as f64, first.w, first.h);

    match stages {
        Stages::One(r) => {
            let pad = plan.pad.filter(|p| p.top + p.bottom + p.left + p.right > 0);
            match pad {
                None => resample(&window.pixels, ww, wh, bounds, first_crop, out, r.to, c, plan.filter)?,
                Some(pad) => {
                    let mut inner = vec![0u8; r.to.width as usize * r.to.height as usize * c];
                    resample(&window.pixels, ww, wh, bounds, first_crop, &mut inner, r.to, c, plan.filter)?;
                    out.fill(0);
                    let (row, stride) = (r.to.width as usize * c, plan.width as usize * c);
                    for (y, src) in inner.chunks_exact(row).enumerate() {
                        let at = (y + pad.top as usize) * stride + pad.left as usize * c;
                        out[at..at + row].copy_from_slice(src);
                    }
                }
            }
        }
        Stages::Two(r, region, to) => {
            let mut resized = vec![0u8; r.to.width as usize * r.to.height as usize * c];
            resample(&window.pixels, ww, wh, bounds, first_crop, &mut resized, r.to, c, plan.filter)?;
            // Cut, then resized: the kernel stays inside the region.
            let crop = (0.0, 0.0, region.w as f64, region.h as f64);
            resample(&resized, r.to.width, r.to.height, region, crop, out, to, c, plan.filter)?;
        }
    }
    if plan.flip {
        for row in out.chunks_exact_mut(plan.width as usize * c) {
            mirror(row, c);
        }
    }
    Ok(())
}

fn mirror(row: &mut [u8], channels: usize) {
    if channels == 1 {
        row.reverse();
    } else {
        let n = row.len() / channels;
        for i in 0..n / 2 {
            let (a, b) = (i * channels, (n - 1 - i) * channels);
            for k in 0..channels {
                row.swap(a + k, b + k);
            }
        }
    }
}

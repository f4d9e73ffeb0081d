//! scylla-loader's native image transform: decode (libjpeg-turbo, zune-png), orient, crop,
//! resize (fast_image_resize, Pillow-like antialiasing) and flip, straight into a batch buffer.
//! The TypeScript side probes first and keeps sharp for everything `probe` calls non-native.

mod color;
mod error;
mod exif;
mod jpeg;
mod mask;
mod orient;
mod png;
mod probe;
mod transform;

use napi::bindgen_prelude::{AsyncTask, Buffer, BufferSlice};
use napi::{Env, Task};
use napi_derive::napi;

use crate::error::ImageError;
use crate::transform::Filter;

#[napi(object)]
pub struct ProbeResult {
    /// jpeg | png | webp | gif | tiff | avif | other
    pub format: String,
    /// Stored size (before EXIF orientation); 0 for formats other than JPEG and PNG.
    pub width: u32,
    pub height: u32,
    /// EXIF orientation 1-8 (1 when absent).
    pub orientation: u32,
    /// Components as stored: 1 grey, 2 grey + alpha, 3 colour (and palette), 4 RGBA or CMYK.
    pub channels: u32,
    /// True when `transform` handles the image; otherwise `reason` says why not.
    pub native: bool,
    pub reason: Option<String>,
}

/// Reads an image's header: no pixel is decoded. Throws (with a `corrupt:` or `truncated:`
/// prefix) only for a JPEG or PNG whose header is unreadable.
#[napi]
pub fn probe(data: BufferSlice) -> napi::Result<ProbeResult> {
    let header = probe::probe(&data)?;
    Ok(ProbeResult {
        format: header.format.name().to_owned(),
        width: header.width,
        height: header.height,
        orientation: header.orientation as u32,
        channels: header.channels,
        native: header.not_native.is_none(),
        reason: header.not_native,
    })
}

#[napi(object)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

#[napi(object)]
pub struct Region {
    pub left: u32,
    pub top: u32,
    pub width: u32,
    pub height: u32,
}

#[napi(object)]
pub struct Pad {
    pub top: u32,
    pub bottom: u32,
    pub left: u32,
    pub right: u32,
}

/// `TransformPlan` of planTransform.ts plus the spec's channels and interpolation, the
/// server's pixel limit and the JPEG scan limit (absent or 0: none).
#[napi(object)]
pub struct Plan {
    pub source: Size,
    pub resize: Option<Size>,
    pub region: Option<Region>,
    pub pad: Option<Pad>,
    pub output: Option<Size>,
    pub flip: bool,
    pub width: u32,
    pub height: u32,
    pub channels: u32,
    /// bilinear | bicubic | lanczos3 | nearest
    pub interpolation: String,
    pub max_pixels: f64,
    pub max_scans: Option<u32>,
}

impl Plan {
    fn to_internal(&self) -> Result<transform::Plan, ImageError> {
        let size = |s: &Size| transform::Size { width: s.width, height: s.height };
        Ok(transform::Plan {
            source: size(&self.source),
            resize: self.resize.as_ref().map(size),
            region: self.region.as_ref().map(|r| orient::Rect { x: r.left, y: r.top, w: r.width, h: r.height }),
            pad: self.pad.as_ref().map(|p| transform::Pad {
                top: p.top,
                bottom: p.bottom,
                left: p.left,
                right: p.right,
            }),
            output: self.output.as_ref().map(size),
            flip: self.flip,
            width: self.width,
            height: self.height,
            channels: self.channels as usize,
            filter: Filter::parse(&self.interpolation)?,
            max_pixels: self.max_pixels,
            max_scans: self.max_scans.unwrap_or(0),
        })
    }
}

fn output_slice(out: &mut [u8], offset: i64) -> Result<&mut [u8], ImageError> {
    if offset < 0 || offset as u64 > out.len() as u64 {
        return Err(ImageError::InvalidArgument(format!(
            "offset {offset} is outside the {}-byte output",
            out.len()
        )));
    }
    Ok(&mut out[offset as usize..])
}

/// Decodes and transforms `data` by `plan` on the calling thread, writing
/// `plan.width * plan.height * plan.channels` bytes into `out` at `offset`.
#[napi]
pub fn transform(data: BufferSlice, plan: Plan, mut out: BufferSlice, offset: i64) -> napi::Result<()> {
    let plan = plan.to_internal()?;
    transform::transform(&data, &plan, output_slice(&mut out, offset)?)?;
    Ok(())
}

/// `transform` on libuv's thread pool. The task holds references to both buffers until it
/// settles; the caller must not touch `out[offset..]` before the promise settles.
pub struct TransformTask {
    data: Buffer,
    plan: transform::Plan,
    out: Buffer,
    offset: i64,
}

impl Task for TransformTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<()> {
        let out = output_slice(&mut self.out, self.offset)?;
        transform::transform(&self.data, &self.plan, out)?;
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
        Ok(())
    }
}

#[napi(ts_return_type = "Promise<void>")]
pub fn transform_async(data: Buffer, plan: Plan, out: Buffer, offset: i64) -> napi::Result<AsyncTask<TransformTask>> {
    let plan = plan.to_internal()?;
    Ok(AsyncTask::new(TransformTask { data, plan, out, offset }))
}

/// Applies a plan (and the image's EXIF `orientation`) to an 8-bit grey or palette PNG mask
/// by nearest neighbour (the plan's channels and interpolation are not read), on the calling
/// thread: `plan.width * plan.height` bytes (grey levels
/// or palette indices) into `out` at `offset`.
#[napi]
pub fn transform_mask(data: BufferSlice, plan: Plan, orientation: u32, mut out: BufferSlice, offset: i64) -> napi::Result<()> {
    let plan = plan.to_internal()?;
    mask::transform_mask(&data, &plan, orientation as u8, output_slice(&mut out, offset)?)?;
    Ok(())
}

/// `transform_mask` on libuv's thread pool; `out` must not be touched until it settles.
pub struct TransformMaskTask {
    data: Buffer,
    plan: transform::Plan,
    orientation: u8,
    out: Buffer,
    offset: i64,
}

impl Task for TransformMaskTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<()> {
        let out = output_slice(&mut self.out, self.offset)?;
        mask::transform_mask(&self.data, &self.plan, self.orientation, out)?;
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
        Ok(())
    }
}

#[napi(ts_return_type = "Promise<void>")]
pub fn transform_mask_async(data: Buffer, plan: Plan, orientation: u32, out: Buffer, offset: i64) -> napi::Result<AsyncTask<TransformMaskTask>> {
    let plan = plan.to_internal()?;
    Ok(AsyncTask::new(TransformMaskTask { data, plan, orientation: orientation as u8, out, offset }))
}

//! Why an image cannot be transformed. The message prefixes are a contract with the TypeScript
//! side, which maps them onto `UndecodableImageError` reasons.

use std::fmt;

#[derive(Debug)]
pub enum ImageError {
    /// The bytes are not a valid image (bad header, bad entropy data, bad CRC...).
    Corrupt(String),
    /// The image ends before its end marker.
    Truncated(String),
    /// The header's width x height, or a buffer of the plan, is over the caller's limit.
    PixelLimit(String),
    /// A progressive JPEG with more scans than the caller's limit (each is a pass over the
    /// whole image's coefficients: CPU out of proportion to the file's size).
    TooManyScans(String),
    /// Not a format (or a variant of one) this module decodes: the caller falls back to sharp.
    Unsupported(String),
    /// The caller's plan or output buffer is inconsistent: a bug on the calling side, not a
    /// property of the sample, so it carries none of the prefixes above.
    InvalidArgument(String),
}

pub type Result<T> = std::result::Result<T, ImageError>;

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageError::Corrupt(m) => write!(f, "corrupt: {m}"),
            ImageError::Truncated(m) => write!(f, "truncated: {m}"),
            ImageError::PixelLimit(m) => write!(f, "pixel_limit: {m}"),
            ImageError::TooManyScans(m) => write!(f, "too_many_scans: {m}"),
            ImageError::Unsupported(m) => write!(f, "unsupported_format: {m}"),
            ImageError::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
        }
    }
}

impl From<ImageError> for napi::Error {
    fn from(err: ImageError) -> Self {
        let status = match err {
            ImageError::InvalidArgument(_) => napi::Status::InvalidArg,
            _ => napi::Status::GenericFailure,
        };
        napi::Error::new(status, err.to_string())
    }
}

"""Reference pixels of crop + resize + flip as a PyTorch trainer computes them.

Used by test/unit/nativeParity.test.ts, with the test venv's Python (torch, torchvision,
Pillow): `scripts/python-env.sh --find` names it.

stdin: a JSON list of cases
    {"image": path, "top": int, "left": int, "height": int, "width": int,
     "out_h": int, "out_w": int, "channels": 1 | 3, "flip": bool}
where the window is in oriented coordinates (after EXIF orientation).
stdout: a JSON list, one object per case, in order:
    {"pixels": base64 of out_h * out_w * channels HWC uint8 bytes,
     "decoder": "torchvision" | "PIL"}

Each case is decoded with torchvision.io.decode_image(..., apply_exif_orientation=True), cut
and resized with torchvision.transforms.v2.functional.resized_crop (bilinear, antialias=True)
and mirrored with horizontal_flip when asked: what a trainer's
`RandomResizedCrop(antialias=True)` + `RandomHorizontalFlip` applies to a decoded sample.

One exception, on purpose: one channel out of a colour image. decode_image's
ImageReadMode.GRAY is not PIL's convert('L') (ITU-R 601-2 luma of the RGB pixels, rounded),
which is what the native module and the sharp path compute: for a JPEG, libjpeg returns the
stored Y plane (measured on test/fixtures/images: up to 41 levels off near colour edges), for
a PNG libpng's rgb-to-grey rounds differently (up to 1 level off). So those cases are decoded
as `ImageOps.exif_transpose(Image.open(path)).convert('L')` and still resized by torchvision.
A single-channel image decoded in GRAY mode needs no conversion and stays with torchvision
(both decoders give the same bytes there).
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Literal, TypedDict

import numpy as np
import torch
from PIL import Image, ImageOps
from torchvision.io import ImageReadMode, decode_image, read_file
from torchvision.transforms import InterpolationMode
from torchvision.transforms.v2 import functional as F

Decoder = Literal['torchvision', 'PIL']


class Case(TypedDict):
    """One crop of one image, in oriented coordinates."""

    image: str
    top: int
    left: int
    height: int
    width: int
    out_h: int
    out_w: int
    channels: Literal[1, 3]
    flip: bool


class Result(TypedDict):
    """The reference pixels of one case and which decoder produced the source image."""

    pixels: str
    decoder: Decoder


def stores_colour(path: str) -> bool:
    """Whether the file holds more than grey levels (any mode but 8-bit grey)."""
    with Image.open(path) as img:
        return img.mode not in ('L', 'LA')


def decode(path: str, channels: Literal[1, 3]) -> tuple[torch.Tensor, Decoder]:
    """The oriented image as a CHW uint8 tensor, and the decoder used (see the module doc)."""
    if channels == 1 and stores_colour(path):
        with Image.open(path) as img:
            grey = ImageOps.exif_transpose(img).convert('L')
        return torch.from_numpy(np.array(grey, dtype=np.uint8)).unsqueeze(0), 'PIL'
    mode = ImageReadMode.RGB if channels == 3 else ImageReadMode.GRAY
    return decode_image(read_file(path), mode=mode, apply_exif_orientation=True), 'torchvision'


def reference(case: Case) -> Result:
    """resized_crop (bilinear, antialiased), then the flip, as HWC bytes."""
    img, decoder = decode(case['image'], case['channels'])
    out = F.resized_crop(
        img,
        case['top'],
        case['left'],
        case['height'],
        case['width'],
        [case['out_h'], case['out_w']],
        interpolation=InterpolationMode.BILINEAR,
        antialias=True,
    )
    if case['flip']:
        out = F.horizontal_flip(out)
    hwc = out.permute(1, 2, 0).contiguous().numpy()
    return {'pixels': base64.b64encode(hwc.tobytes()).decode('ascii'), 'decoder': decoder}


def main() -> None:
    cases: list[Case] = json.load(sys.stdin)
    json.dump([reference(case) for case in cases], sys.stdout)


if __name__ == '__main__':
    main()

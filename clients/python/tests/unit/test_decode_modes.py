"""decode_mode: grey, CMYK and RGBA images in one batch (no server needed: bytes made here)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from scylla_loader.torch import collate, decode_sample


def encoded(mode: str, fmt: str) -> memoryview:
    rng = np.random.default_rng(0)
    channels = {"L": 1, "RGB": 3, "RGBA": 4, "CMYK": 4}[mode]
    pixels = rng.integers(0, 255, (12, 10, channels), dtype=np.uint8)
    image = Image.fromarray(pixels[:, :, 0] if channels == 1 else pixels, mode=mode)
    out = io.BytesIO()
    image.save(out, format=fmt)
    return memoryview(out.getvalue())


MIXED = [encoded("L", "PNG"), encoded("CMYK", "JPEG"), encoded("RGBA", "PNG"), encoded("RGB", "JPEG")]
LABELS = np.arange(4)


@pytest.mark.parametrize("decode", ["torchvision", "pil"])
def test_rgb_and_grey_modes_convert_every_kind_of_image(decode: str) -> None:
    for mode, channels in (("RGB", 3), ("L", 1)):
        images, labels = collate(MIXED, LABELS, decode, None, mode)  # type: ignore[arg-type]
        assert images.shape == (4, channels, 12, 10), (decode, mode)
        assert labels.tolist() == [0, 1, 2, 3]
    # CMYK converted, not its four planes reinterpreted.
    assert decode_sample(MIXED[1], decode, "RGB") is not None  # type: ignore[arg-type]


@pytest.mark.parametrize("decode", ["torchvision", "pil"])
def test_unchanged_mixed_channels_name_decode_mode_instead_of_torchs_error(decode: str) -> None:
    with pytest.raises(ValueError, match="decode_mode='RGB'"):
        collate(MIXED, LABELS, decode, None, "unchanged")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="decode_mode"):
        decode_sample(MIXED[0], decode, "rgb")  # type: ignore[arg-type]

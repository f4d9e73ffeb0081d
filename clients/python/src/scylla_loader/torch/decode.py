"""Turning sample bytes into tensors, and batches into ``(images, labels)``."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import torch

Decode = Literal["pil", "torchvision"]
"""``pil``: ``PIL.Image.open``, then ``transform`` (or a ``uint8`` CHW tensor when there is
none); ``torchvision``: ``torchvision.io.decode_image`` (a ``uint8`` CHW tensor), then
``transform``."""

DecodeMode = Literal["RGB", "L", "unchanged"]
"""The channels a decoded image gets: ``RGB`` (3; grey, CMYK, palette and RGBA images are
converted, alpha dropped), ``L`` (1, grey) or ``unchanged`` (as stored: a dataset mixing grey
and colour images then cannot be stacked into one batch)."""

DECODE_MODES = ("RGB", "L", "unchanged")


def decode_sample(sample: memoryview, decode: Decode, mode: DecodeMode = "unchanged") -> Any:
    """One sample's bytes decoded as ``decode`` says, converted to ``mode``."""
    if mode not in DECODE_MODES:
        raise ValueError(f"decode_mode must be 'RGB', 'L' or 'unchanged', got {mode!r}")
    if decode == "pil":
        from PIL import Image

        image = Image.open(io.BytesIO(sample))
        image.load()
        return image if mode == "unchanged" or image.mode == mode else image.convert(mode)
    if decode == "torchvision":
        from torchvision.io import ImageReadMode, decode_image

        read = {"RGB": ImageReadMode.RGB, "L": ImageReadMode.GRAY}.get(mode, ImageReadMode.UNCHANGED)
        # decode_image wants a writable 1-D uint8 tensor; the batch's bytes are read-only.
        return decode_image(torch.frombuffer(bytearray(sample), dtype=torch.uint8), mode=read)
    raise ValueError(f"decode must be None, 'pil' or 'torchvision', got {decode!r}")


def to_tensor(item: Any) -> torch.Tensor:
    """A decoded image as a tensor: tensors as they are, PIL images as ``uint8`` CHW."""
    if isinstance(item, torch.Tensor):
        return item
    array = np.asarray(item)
    if array.ndim == 2:
        array = array[None, :, :]
    else:
        array = np.ascontiguousarray(array.transpose(2, 0, 1))
    return torch.from_numpy(array.copy() if not array.flags.writeable else array)


def stack(tensors: Sequence[torch.Tensor], mode: DecodeMode = "unchanged") -> torch.Tensor:
    """The samples of a batch as one tensor; samples of different shapes are a ValueError that
    says which shapes met and what to do, rather than torch's bare size error."""
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) > 1:
        channels = {s[0] for s in shapes if len(s) == 3}
        hint = (
            "images with different channel counts (grey, colour, alpha or CMYK) met: pass "
            "decode_mode='RGB' or 'L'"
            if len(channels) > 1 and mode == "unchanged"
            else "images of different sizes met: resize them in transform (or a server "
            "transform) to one size"
        )
        raise ValueError(f"cannot stack a batch of shapes {sorted(shapes)}: {hint}")
    return torch.stack(list(tensors))


def collate(
    samples: Sequence[memoryview],
    labels: np.ndarray[Any, Any],
    decode: Decode | None,
    transform: Callable[[Any], Any] | None,
    mode: DecodeMode = "unchanged",
) -> tuple[Any, torch.Tensor]:
    """A server batch as ``(images, labels)``: ``images`` a stacked tensor when decoding (each
    sample decoded to ``mode``, then through ``transform``), else a list of ``bytes`` (copies:
    views cannot cross from a worker process); ``labels`` an ``int64`` tensor (what loss
    functions take)."""
    label_tensor = torch.from_numpy(labels.astype(np.int64))
    if decode is None:
        raw = [bytes(s) for s in samples]
        return ([transform(s) for s in raw] if transform else raw), label_tensor
    items = [decode_sample(s, decode, mode) for s in samples]
    if transform is not None:
        items = [transform(i) for i in items]
    return stack([to_tensor(i) for i in items], mode), label_tensor

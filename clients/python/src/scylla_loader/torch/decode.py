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


def decode_sample(sample: memoryview, decode: Decode) -> Any:
    """One sample's bytes decoded as ``decode`` says."""
    if decode == "pil":
        from PIL import Image

        image = Image.open(io.BytesIO(sample))
        image.load()
        return image
    if decode == "torchvision":
        from torchvision.io import decode_image

        # decode_image wants a writable 1-D uint8 tensor; the batch's bytes are read-only.
        return decode_image(torch.frombuffer(bytearray(sample), dtype=torch.uint8))
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


def collate(
    samples: Sequence[memoryview],
    labels: np.ndarray[Any, Any],
    decode: Decode | None,
    transform: Callable[[Any], Any] | None,
) -> tuple[Any, torch.Tensor]:
    """A server batch as ``(images, labels)``: ``images`` a stacked tensor when decoding (each
    sample through ``transform`` first), else a list of ``bytes`` (copies: views cannot cross
    from a worker process); ``labels`` an ``int64`` tensor (what loss functions take)."""
    label_tensor = torch.from_numpy(labels.astype(np.int64))
    if decode is None:
        raw = [bytes(s) for s in samples]
        return ([transform(s) for s in raw] if transform else raw), label_tensor
    items = [decode_sample(s, decode) for s in samples]
    if transform is not None:
        items = [transform(i) for i in items]
    return torch.stack([to_tensor(i) for i in items]), label_tensor

"""Server-side decoding and augmentation of each sample, from Python values."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, Literal

from .v1 import loader_pb2

Interpolation = Literal["bilinear", "bicubic", "lanczos3", "nearest"]
"""Resampling of resizes: ``bilinear`` (antialiased when shrinking, torchvision's default),
``bicubic``, ``lanczos3`` (sharpest, slowest), ``nearest`` (e.g. for masks)."""
TransformOutput = Literal["raw", "jpeg", "webp"]
"""``raw``: one contiguous ``uint8`` tensor per batch, (samples, height, width, channels)
(:meth:`Batch.tensor`); ``jpeg``/``webp``: each sample re-encoded, as bytes."""
BadImagePolicy = Literal["fail", "skip"]
"""``fail``: a sample that cannot be decoded ends the stream with DATA_LOSS naming it;
``skip``: it is left out and counted in ``Batch.skipped_undecodable``."""



def _load_steps() -> dict[str, Any]:
    """The transform's description, ``transform_steps.json``: its steps and their fields, as
    the server describes them (written from its ``steps.ts``; a test of the server fails when
    it is stale, and ``tests/unit/test_transform_steps.py`` checks this module against it)."""
    text = files("scylla_loader").joinpath("transform_steps.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


TRANSFORM_STEPS: dict[str, Any] = _load_steps()
""":meta private:"""
_FIELDS: Mapping[str, Mapping[str, Any]] = {
    field["python"]: field for step in TRANSFORM_STEPS["steps"] for field in step["fields"]
}


def _enum_table(python_name: str) -> Mapping[str, str]:
    """A described enum field's names to its proto value names (``bilinear`` ->
    ``INTERPOLATION_BILINEAR``)."""
    kind = _FIELDS[python_name]["type"]
    return {value: f"{kind['prefix']}{value.upper()}" for value in kind["values"]}


def _unspecified(python_name: str) -> str:
    return f"{_FIELDS[python_name]['type']['prefix']}UNSPECIFIED"


_INTERPOLATION = _enum_table("interpolation")
_OUTPUT = _enum_table("output")
_BAD_IMAGE = _enum_table("bad_image")

_UINT32_MAX = 2**32 - 1


def _size(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= _UINT32_MAX:
        raise ValueError(f"{name} must be an integer in [{minimum}, {_UINT32_MAX}], got {value!r}")
    return value


def _pair(name: str, value: object, what: str) -> tuple[float, float]:
    if (
        isinstance(value, (str, bytes))
        or not isinstance(value, Sequence)
        or len(value) != 2
        or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in value
        )
    ):
        raise ValueError(f"{name} must be a pair of finite numbers ({what}), got {value!r}")
    low, high = float(value[0]), float(value[1])
    return low, high


def _choice(name: str, table: Mapping[str, str], value: object) -> None:
    if value not in table:
        raise ValueError(f"{name} must be one of {', '.join(table)}, got {value!r}")


@dataclass(frozen=True)
class RandomResizedCrop:
    """A random area of random aspect, resized to ``height`` x ``width``, as torchvision's
    ``RandomResizedCrop``: the area is a uniform share in ``scale`` of the image's, the aspect
    (width / height) log-uniform in ``ratio``. Drawn from (seed, epoch, sample id) only, so a
    resumed or repeated epoch crops the same way.

    Raises:
        ValueError: sizes below 1, ``scale`` outside (0, 1] or decreasing, ``ratio`` not
            positive or decreasing.
    """

    height: int
    width: int
    scale: tuple[float, float] = (0.08, 1.0)
    ratio: tuple[float, float] = (3 / 4, 4 / 3)

    def __post_init__(self) -> None:
        _size("random_resized_crop.height", self.height, 1)
        _size("random_resized_crop.width", self.width, 1)
        scale = _pair("random_resized_crop.scale", self.scale, "min, max")
        ratio = _pair("random_resized_crop.ratio", self.ratio, "min, max")
        if not 0 < scale[0] <= scale[1] <= 1:
            raise ValueError(
                f"random_resized_crop.scale must satisfy 0 < min <= max <= 1, got {self.scale!r}"
            )
        if not 0 < ratio[0] <= ratio[1]:
            raise ValueError(
                f"random_resized_crop.ratio must satisfy 0 < min <= max, got {self.ratio!r}"
            )
        # Frozen: normalised through object.__setattr__ (lists become tuples, ints floats).
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "ratio", ratio)


@dataclass(frozen=True)
class Transform:
    """Asks the server to decode each sample and augment it, in this order: decode (EXIF
    orientation applied, converted to ``channels``), resize, crop, horizontal flip, output.
    Every random choice is a function of (seed, epoch, sample id): a resumed, repeated or
    re-sharded epoch gets identical pixels. Normalisation to float is left to the trainer.

    Example::

        Transform(resize=256, random_resized_crop=RandomResizedCrop(224, 224),
                  horizontal_flip=0.5, bad_image="skip")

    Obvious mistakes (a raw output without a crop, a quality with raw output, both crops)
    raise a ValueError here; the server checks its own limits (e.g. sizes up to 4096) and
    answers INVALID_ARGUMENT for what it refuses.

    Attributes:
        channels: 3 (RGB) or 1 (grey). Grey, CMYK and alpha inputs are converted (alpha is
            dropped, not composited).
        resize: Shorter side in pixels after resizing, the aspect ratio kept (the longer side
            rounds down, as torchvision's ``Resize``); 0: no resize.
        center_crop: ``(height, width)`` of a centred crop.
        random_resized_crop: A :class:`RandomResizedCrop` instead of a centre crop.
        horizontal_flip: Probability in [0, 1] that a sample is mirrored left to right.
        interpolation: Resampling of resizes; ``None``: the server's default (bilinear).
        output: ``raw`` (default; needs a crop so that every sample has one shape), ``jpeg``
            or ``webp``.
        quality: JPEG or WebP quality, 1 to 100; 0: the server's default (90). Must be 0 with
            ``raw``.
        bad_image: What an undecodable sample does; ``None``: the server's default (fail).
        masks: The samples' label blobs are segmentation masks aligned with the images (same
            stored size; 8-bit grey or palette PNG values, or any decodable image's first
            channel): every geometric step of the image (EXIF orientation, resize, crop, flip)
            is applied to them by nearest neighbour with the same random draws, and batches
            carry them as :attr:`Batch.masks` (:meth:`Batch.mask_array`), (N, H, W, 1)
            ``uint8``. Needs ``raw`` output. Without it, label blobs come as stored: a server
            crop or flip does not touch them. A sample whose mask is missing or not its
            image's size follows ``bad_image``.
    """

    channels: int = 3
    resize: int = 0
    center_crop: tuple[int, int] | None = None
    random_resized_crop: RandomResizedCrop | None = None
    horizontal_flip: float = 0.0
    interpolation: Interpolation | None = None
    output: TransformOutput = "raw"
    quality: int = 0
    bad_image: BadImagePolicy | None = None
    masks: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.channels, bool) or not isinstance(self.channels, int) or (
            self.channels not in (1, 3)
        ):
            raise ValueError(f"channels must be 1 (grey) or 3 (RGB), got {self.channels!r}")
        _size("resize", self.resize, 0)
        if self.center_crop is not None:
            crop = self.center_crop
            if isinstance(crop, (str, bytes)) or not isinstance(crop, Sequence) or len(crop) != 2:
                raise ValueError(f"center_crop must be (height, width), got {crop!r}")
            height = _size("center_crop height", crop[0], 1)
            width = _size("center_crop width", crop[1], 1)
            object.__setattr__(self, "center_crop", (height, width))
        if self.random_resized_crop is not None and not isinstance(
            self.random_resized_crop, RandomResizedCrop
        ):
            raise ValueError(
                "random_resized_crop must be a RandomResizedCrop(height, width, ...), got "
                f"{self.random_resized_crop!r}"
            )
        if self.center_crop is not None and self.random_resized_crop is not None:
            raise ValueError("give one crop: center_crop or random_resized_crop, not both")
        flip = self.horizontal_flip
        if (
            isinstance(flip, bool)
            or not isinstance(flip, (int, float))
            or not 0 <= flip <= 1  # also refuses NaN
        ):
            raise ValueError(f"horizontal_flip must be a probability in [0, 1], got {flip!r}")
        if self.interpolation is not None:
            _choice("interpolation", _INTERPOLATION, self.interpolation)
        _choice("output", _OUTPUT, self.output)
        if self.bad_image is not None:
            _choice("bad_image", _BAD_IMAGE, self.bad_image)
        if not isinstance(self.masks, bool):
            raise ValueError(f"masks must be True or False, got {self.masks!r}")
        if self.masks and self.output != "raw":
            raise ValueError(
                "masks=True needs output='raw' (with a crop), so that a batch's masks form one "
                "tensor"
            )
        if self.output == "raw":
            if self.center_crop is None and self.random_resized_crop is None:
                raise ValueError(
                    "a raw output needs center_crop or random_resized_crop, so that every "
                    "sample of a batch has the same shape (or ask for output='jpeg' or 'webp')"
                )
            if self.quality != 0:
                raise ValueError(
                    f"quality applies to jpeg and webp output only; got {self.quality!r} with raw"
                )
        elif isinstance(self.quality, bool) or not isinstance(self.quality, int) or not (
            0 <= self.quality <= 100
        ):
            raise ValueError(f"quality must be an integer in [1, 100] (0: 90), got {self.quality!r}")

    @property
    def raw(self) -> bool:
        """Whether batches come as one ``uint8`` tensor each (:meth:`Batch.tensor`)."""
        return self.output == "raw"

    @property
    def sample_shape(self) -> tuple[int, int, int] | None:
        """``(height, width, channels)`` of every sample of a raw output; ``None`` otherwise."""
        if not self.raw:
            return None
        if self.center_crop is not None:
            return (*self.center_crop, self.channels)
        assert self.random_resized_crop is not None  # a raw output has a crop (checked above)
        return (self.random_resized_crop.height, self.random_resized_crop.width, self.channels)

    def to_proto(self) -> loader_pb2.Transform:
        """The proto message, field by field as ``transform_steps.json`` describes them; every
        value explicit except the enums left as ``None``."""
        message = loader_pb2.Transform()
        for field in _FIELDS.values():
            _set_field(message, field, getattr(self, field["python"]))
        return message


def _set_field(message: loader_pb2.Transform, field: Mapping[str, Any], value: Any) -> None:
    """Sets one described field of ``message`` from a validated attribute's value."""
    kind = field["type"]
    name = field["proto"]
    if kind["kind"] == "enum":
        table = _enum_table(field["python"])
        setattr(message, name, _unspecified(field["python"]) if value is None else table[value])
    elif kind["kind"] == "double":
        setattr(message, name, float(value))
    elif kind["kind"] == "bool":
        setattr(message, name, bool(value))
    elif kind["kind"] == "uint32":
        setattr(message, name, value)
    elif value is not None:  # a nested message: a tuple of its fields, or a dataclass
        nested = getattr(message, name)
        nested.SetInParent()
        for i, sub in enumerate(kind["fields"]):
            part = value[i] if kind["python"] == "tuple" else getattr(value, sub["python"])
            if sub["type"] == "range":
                for proto_name, bound in zip(sub["proto"], part):
                    setattr(nested, proto_name, bound)
            else:
                setattr(nested, sub["proto"][0], part)

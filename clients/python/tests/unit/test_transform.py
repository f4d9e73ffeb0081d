"""Transform: Python values to the proto's Transform, and the mistakes refused early."""

import math
from typing import Any

import pytest

from scylla_loader import RandomResizedCrop, Transform
from scylla_loader.request import build_request
from scylla_loader.v1 import loader_pb2


def test_a_center_crop_raw_transform_reaches_the_request() -> None:
    t = Transform(channels=1, resize=256, center_crop=(224, 200), horizontal_flip=0.5,
                  interpolation="lanczos3", bad_image="skip")
    r = build_request(dataset="d", split="all", batch_size=8, transform=t)
    assert r.HasField("transform")
    p = r.transform
    assert (p.channels, p.resize, p.horizontal_flip) == (1, 256, 0.5)
    assert p.WhichOneof("crop") == "center_crop"
    assert (p.center_crop.height, p.center_crop.width) == (224, 200)
    assert p.interpolation == loader_pb2.INTERPOLATION_LANCZOS3
    assert p.output == loader_pb2.TRANSFORM_OUTPUT_RAW and p.quality == 0
    assert p.bad_image_policy == loader_pb2.BAD_IMAGE_POLICY_SKIP
    assert t.raw and t.sample_shape == (224, 200, 1)


def test_a_random_resized_crop_sends_explicit_bounds() -> None:
    t = Transform(random_resized_crop=RandomResizedCrop(96, 128))
    p = t.to_proto()
    assert p.WhichOneof("crop") == "random_resized_crop"
    c = p.random_resized_crop
    assert (c.height, c.width, c.scale_min, c.scale_max) == (96, 128, 0.08, 1.0)
    assert math.isclose(c.ratio_min, 3 / 4) and math.isclose(c.ratio_max, 4 / 3)
    assert p.interpolation == loader_pb2.INTERPOLATION_UNSPECIFIED
    assert p.bad_image_policy == loader_pb2.BAD_IMAGE_POLICY_UNSPECIFIED
    assert t.sample_shape == (96, 128, 3)


def test_reencoded_outputs_need_no_crop() -> None:
    p = Transform(resize=64, output="webp", quality=80).to_proto()
    assert p.output == loader_pb2.TRANSFORM_OUTPUT_WEBP and p.quality == 80
    assert p.WhichOneof("crop") is None
    assert Transform(output="jpeg").sample_shape is None


def test_no_transform_leaves_the_field_absent() -> None:
    assert not build_request(dataset="d", split="all", batch_size=1).HasField("transform")


def test_lists_are_normalised_and_transforms_compare_by_value() -> None:
    a = Transform(center_crop=[8, 9])  # type: ignore[arg-type]
    assert a.center_crop == (8, 9) and a == Transform(center_crop=(8, 9))
    crop = RandomResizedCrop(4, 4, scale=[0.5, 1])  # type: ignore[arg-type]
    assert crop.scale == (0.5, 1.0)
    assert hash(Transform(random_resized_crop=crop)) == hash(Transform(random_resized_crop=crop))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "a raw output needs center_crop or random_resized_crop"),
        ({"output": "raw", "resize": 256}, "a raw output needs center_crop"),
        ({"center_crop": (8, 8), "quality": 90}, "quality applies to jpeg and webp output only"),
        ({"center_crop": (8, 8), "random_resized_crop": RandomResizedCrop(8, 8)}, "give one crop"),
        ({"center_crop": (8, 8), "channels": 4}, "channels must be 1 \\(grey\\) or 3"),
        ({"center_crop": (8, 8), "channels": 3.0}, "channels must be 1"),
        ({"center_crop": (0, 8)}, "center_crop height must be an integer in \\[1,"),
        ({"center_crop": 224}, "center_crop must be \\(height, width\\)"),
        ({"center_crop": (8, 8), "resize": -1}, "resize must be an integer in \\[0,"),
        ({"center_crop": (8, 8), "horizontal_flip": 1.5}, "horizontal_flip must be a probability"),
        ({"center_crop": (8, 8), "horizontal_flip": float("nan")}, "horizontal_flip must be a probability"),
        ({"center_crop": (8, 8), "interpolation": "area"}, "interpolation must be one of bilinear, bicubic"),
        ({"center_crop": (8, 8), "output": "png"}, "output must be one of raw, jpeg, webp"),
        ({"center_crop": (8, 8), "bad_image": "ignore"}, "bad_image must be one of fail, skip"),
        ({"output": "jpeg", "quality": 101}, "quality must be an integer in \\[1, 100\\]"),
        ({"random_resized_crop": (8, 8)}, "random_resized_crop must be a RandomResizedCrop"),
    ],
)
def test_mistakes_are_refused_before_any_call(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Transform(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scale": (0.0, 1.0)}, "scale must satisfy 0 < min <= max <= 1"),
        ({"scale": (0.9, 0.5)}, "scale must satisfy"),
        ({"scale": (0.5, 1.5)}, "scale must satisfy"),
        ({"ratio": (2.0, 1.0)}, "ratio must satisfy 0 < min <= max"),
        ({"ratio": (0.0, 1.0)}, "ratio must satisfy"),
        ({"ratio": (1.0, float("inf"))}, "ratio must be a pair of finite numbers"),
        ({"scale": (0.5,)}, "scale must be a pair"),
        ({"height": 0}, "random_resized_crop.height must be an integer in \\[1,"),
    ],
)
def test_random_resized_crop_bounds_are_checked(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"height": 8, "width": 8, **kwargs}
    with pytest.raises(ValueError, match=message):
        RandomResizedCrop(**args)


def test_build_request_refuses_what_is_not_a_transform() -> None:
    with pytest.raises(ValueError, match="transform must be a scylla_loader.Transform"):
        build_request(dataset="d", split="all", batch_size=1, transform={"channels": 3})  # type: ignore[arg-type]

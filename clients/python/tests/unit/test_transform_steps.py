"""Transform against the server's description of the transform (``transform_steps.json``,
written from ``src/core/transform/steps.ts``): a step's field the client lacks, or one it has
that the description lacks, fails here."""

import dataclasses
from typing import Any, get_args

from scylla_loader import transform
from scylla_loader.transform import TRANSFORM_STEPS, RandomResizedCrop, Transform
from scylla_loader.v1 import loader_pb2

FIELDS: list[dict[str, Any]] = [f for step in TRANSFORM_STEPS["steps"] for f in step["fields"]]


def test_transform_has_a_field_for_every_described_field_and_no_other() -> None:
    own = {f.name for f in dataclasses.fields(Transform)}
    described = {f["python"] for f in FIELDS}
    assert own == described, (
        "clients/python/src/scylla_loader/transform.py's Transform and the steps of "
        "src/core/transform/steps.ts differ"
    )


def test_nested_messages_are_dataclasses_or_tuples_of_the_described_fields() -> None:
    for f in FIELDS:
        kind = f["type"]
        if kind["kind"] != "message":
            continue
        subfields = [s["python"] for s in kind["fields"]]
        if kind["python"] == "dataclass":
            cls = getattr(transform, kind["protoMessage"])
            assert [x.name for x in dataclasses.fields(cls)] == subfields, kind["protoMessage"]
        else:
            assert kind["python"] == "tuple"
            assert all(s["type"] == "uint32" for s in kind["fields"]), f["python"]


def test_enum_names_are_the_described_ones() -> None:
    literals = {
        "interpolation": transform.Interpolation,
        "output": transform.TransformOutput,
        "bad_image": transform.BadImagePolicy,
    }
    enums = [f for f in FIELDS if f["type"]["kind"] == "enum"]
    assert {f["python"] for f in enums} == set(literals)
    for f in enums:
        assert list(get_args(literals[f["python"]])) == f["type"]["values"], f["python"]
        for name in [f"{f['type']['prefix']}UNSPECIFIED"] + [
            f"{f['type']['prefix']}{v.upper()}" for v in f["type"]["values"]
        ]:
            loader_pb2.DESCRIPTOR.enum_types_by_name[f["type"]["protoEnum"]].values_by_name[name]


def test_the_described_numbers_are_the_generated_proto_s() -> None:
    fields = loader_pb2.Transform.DESCRIPTOR.fields_by_name
    assert set(fields) == {f["proto"] for f in FIELDS}
    for f in FIELDS:
        assert fields[f["proto"]].number == f["number"], f["proto"]


def test_to_proto_sets_every_described_field() -> None:
    every = {
        "channels": 1,
        "resize": 256,
        "center_crop": (200, 180),
        "random_resized_crop": RandomResizedCrop(224, 192, scale=(0.25, 0.75), ratio=(0.5, 2)),
        "horizontal_flip": 0.5,
        "interpolation": "bicubic",
        "output": "jpeg",
        "quality": 80,
        "bad_image": "skip",
        "masks": True,
    }
    assert set(every) == {f["python"] for f in FIELDS}, "list a value of the new field here"
    # Masks need raw output, which has no quality: checked on their own, the rest with JPEG.
    masked = Transform(random_resized_crop=RandomResizedCrop(224, 192), masks=True).to_proto()
    assert masked.masks is True
    every["masks"] = False
    crops = [f["python"] for f in FIELDS if f["type"].get("oneof") is not None]
    for kept in crops:
        values = {k: v for k, v in every.items() if k not in crops or k == kept}
        message = Transform(**values).to_proto()  # type: ignore[arg-type]
        for f in FIELDS:
            if f["python"] in crops and f["python"] != kept:
                assert not message.HasField(f["proto"]), f["proto"]
                continue
            if f["type"]["kind"] == "message":
                assert message.HasField(f["proto"]), f["proto"]
                nested = getattr(message, f["proto"])
                for sub in f["type"]["fields"]:
                    for name in sub["proto"]:
                        assert getattr(nested, name) != 0, f"{f['proto']}.{name}"
            elif f["python"] != "masks":
                assert getattr(message, f["proto"]) not in (0, 0.0), f["proto"]

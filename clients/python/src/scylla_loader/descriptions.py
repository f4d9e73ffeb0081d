"""Datasets and split sets as plain Python values."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, Union

from .request import UINT32_MAX
from .v1 import loader_pb2


@dataclass(frozen=True)
class DatasetDescription:
    """What the database holds for a dataset (:meth:`LoaderClient.describe_dataset`)."""

    dataset: str
    sample_count: int
    total_bytes: int
    label_names: list[str]
    """Class names by label; empty when labels are plain integers."""
    class_counts: dict[int, int]
    """Samples per label (key -1: samples without a label)."""
    columns: dict[str, str]
    """Metadata columns and their CQL types."""
    splits: list[str]
    """Splits that can be streamed."""


@dataclass(frozen=True)
class SplitPart:
    """One part of a stored split set."""

    name: str
    size: int
    class_counts: dict[int, int]
    targets: dict[int, int]
    groups: int


@dataclass(frozen=True)
class SplitSet:
    """A stored split set, one version. Stored sets never change."""

    name: str
    version: int
    params: dict[str, Any]
    seed: int
    folds: int
    parts: list[SplitPart]
    content_hash: str
    worst_deviation: float
    created_at: datetime

    @property
    def streamable_splits(self) -> list[str]:
        """The names a stream can ask for, pinned to this version: ``<set>@<version>/<part>``,
        and for a k-fold set ``.../train-<i>`` and ``.../val-<i>``."""
        pinned = f"{self.name}@{self.version}"
        names = [f"{pinned}/{p.name}" for p in self.parts]
        for i in range(self.folds):
            names += [f"{pinned}/train-{i}", f"{pinned}/val-{i}"]
        return names

    def part(self, name: str) -> SplitPart:
        """The part called ``name``; a KeyError naming the parts there are otherwise."""
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(f"split set {self.name} has no part {name!r} ({[p.name for p in self.parts]})")


def to_dataset_description(m: loader_pb2.DescribeDatasetResponse) -> DatasetDescription:
    return DatasetDescription(
        dataset=m.dataset,
        sample_count=m.sample_count,
        total_bytes=m.total_bytes,
        label_names=list(m.label_names),
        class_counts=dict(m.class_counts),
        columns=dict(m.columns),
        splits=list(m.splits),
    )


def to_split_set(m: loader_pb2.SplitSet) -> SplitSet:
    created = m.created_at.seconds + m.created_at.nanos / 1e9
    return SplitSet(
        name=m.name,
        version=m.version,
        params=json.loads(m.params_json) if m.params_json else {},
        seed=m.seed,
        folds=m.folds,
        parts=[
            SplitPart(p.name, p.size, dict(p.class_counts), dict(p.targets), p.groups)
            for p in m.parts
        ],
        content_hash=m.content_hash,
        worst_deviation=m.worst_deviation,
        created_at=datetime.fromtimestamp(created, tz=timezone.utc),
    )


SplitFilter = Mapping[str, Any]
"""A condition on a metadata column: ``{"column": c, "equals": v}``, ``{"column": c, "in": [...]}``
or ``{"column": c, "min": a, "max": b}`` (either end may be left out)."""
ClassTargets = Union[Literal["natural", "balanced"], Mapping[int, float]]
"""``natural`` (the dataset's distribution), ``balanced`` (as many of every class as the rarest
has), or per-label ratios such as ``{0: 1, 1: 1}``."""


def build_create_splits_request(
    *,
    dataset: str,
    name: str,
    parts: Mapping[str, float] | None,
    folds: int,
    group_by: str | Sequence[str],
    class_targets: ClassTargets | None,
    max_total: int,
    filters: Sequence[SplitFilter],
    seed: int,
    new_version: bool,
    allow_shortfall: bool,
) -> loader_pb2.CreateSplitsRequest:
    """The proto ``CreateSplitsRequest``; a ValueError for a value that cannot mean anything
    (a non-positive weight, a filter without a condition). Names and feasibility are the
    server's to check."""
    request = loader_pb2.CreateSplitsRequest(
        dataset=dataset,
        name=name,
        seed=seed,
        new_version=new_version,
        allow_shortfall=allow_shortfall,
    )
    for part, weight in (parts or {}).items():
        if not isinstance(weight, (int, float)) or not weight > 0:
            raise ValueError(f"parts[{part!r}] must be a positive number, got {weight!r}")
        request.parts.add(name=part, weight=float(weight))
    if not 0 <= folds <= UINT32_MAX:
        raise ValueError(f"folds must be 0 or more, got {folds}")
    request.folds = folds
    if max_total < 0:
        raise ValueError(f"max_total must be 0 or more, got {max_total}")
    request.max_total = max_total
    request.group_by.extend([group_by] if isinstance(group_by, str) else list(group_by))
    if class_targets is None:
        pass
    elif class_targets == "natural":
        request.class_target_mode = loader_pb2.CLASS_TARGET_MODE_NATURAL
    elif class_targets == "balanced":
        request.class_target_mode = loader_pb2.CLASS_TARGET_MODE_BALANCED
    elif isinstance(class_targets, Mapping):
        request.class_target_mode = loader_pb2.CLASS_TARGET_MODE_RATIOS
        for label, ratio in class_targets.items():
            if not ratio > 0:
                raise ValueError(f"class_targets[{label}] must be a positive number, got {ratio}")
            request.class_ratios[int(label)] = float(ratio)
    else:
        raise ValueError(f"class_targets must be 'natural', 'balanced' or ratios, got {class_targets!r}")
    for i, f in enumerate(filters):
        message = request.filters.add(column=str(f["column"]))
        if "equals" in f:
            message.equals = _text(f["equals"])
        elif "in" in f:
            message.__getattribute__("in").values.extend(_text(v) for v in f["in"])
        elif "min" in f or "max" in f:
            if f.get("min") is not None:
                message.range.min = float(f["min"])
            if f.get("max") is not None:
                message.range.max = float(f["max"])
        else:
            raise ValueError(f"filters[{i}] ({f['column']}) needs equals, in, or a min or max")
    return request


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

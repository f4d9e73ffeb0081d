"""A batch as a record: the dict ``LoaderDataset(as_dict=True, columns=..., return_masks=...)``
yields."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ..batch import Batch
from ..columns import Column

RESERVED_KEYS = ("image", "label", "id", "mask", "source")
"""Keys a record has besides its columns; a column may not be called one of them."""


def check_record_columns(columns: Sequence[str]) -> None:
    """Refuses a column whose name would overwrite a record's own key."""
    for name in columns:
        if name in RESERVED_KEYS:
            raise ValueError(
                f"columns: {name!r} is a key of every record already ({', '.join(RESERVED_KEYS)})"
            )


def column_value(column: Column) -> Any:
    """A column as a record holds it: text as a list of ``str`` (``None`` for nulls); numbers
    and booleans as a tensor of their type (``int64`` for int and bigint, ``float64``, ``bool``)
    when the batch has no null in them, else as ``float64`` with NaN for the nulls (a double
    column is always ``float64`` with NaN: declare a column ``double`` for one dtype in every
    batch)."""
    if isinstance(column.values, list):
        return list(column.values)
    if column.type == "double" or column.nulls is not None:
        return torch.from_numpy(column.to_float_array())
    if column.type == "boolean":
        return torch.from_numpy(np.asarray(column.values, dtype=np.bool_))
    return torch.from_numpy(np.asarray(column.values, dtype=np.int64))


def record(
    batch: Batch,
    images: Any,
    labels: torch.Tensor,
    masks: torch.Tensor | None,
    with_sources: bool,
) -> dict[str, Any]:
    """The batch as a dict: ``image``, ``label``, ``id`` (UUID strings), ``mask`` (with masks),
    ``source`` (in a mixture: each sample's source index, ``int64``), then each column the
    stream asked for by its name (see :func:`column_value`)."""
    out: dict[str, Any] = {"image": images, "label": labels, "id": list(batch.ids)}
    if masks is not None:
        out["mask"] = masks
    if with_sources and batch.source_indexes is not None:
        out["source"] = torch.from_numpy(batch.source_indexes)
    for name, column in batch.columns.items():
        out[name] = column_value(column)
    return out

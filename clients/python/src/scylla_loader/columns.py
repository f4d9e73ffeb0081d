"""Metadata columns in a stream: the names a request may ask for, and a batch's values."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NoReturn

import numpy as np
import numpy.typing as npt

from .v1 import loader_pb2

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_STREAM_COLUMNS = 64
"""The most metadata columns a stream may ask for (the server's ``MAX_STREAM_COLUMNS``)."""

_COLUMN_NAME = re.compile(r"[a-z][a-z0-9_]{0,47}")
_IN_THE_BATCH = {"id": "Batch.ids", "label": "Batch.labels", "size_bytes": "Batch.data_sizes"}

ColumnType = Literal["text", "int", "bigint", "double", "boolean"]
ColumnValue = str | int | float | bool | None

_TYPES: dict[int, ColumnType] = {
    loader_pb2.COLUMN_TYPE_TEXT: "text",
    loader_pb2.COLUMN_TYPE_INT: "int",
    loader_pb2.COLUMN_TYPE_BIGINT: "bigint",
    loader_pb2.COLUMN_TYPE_DOUBLE: "double",
    loader_pb2.COLUMN_TYPE_BOOLEAN: "boolean",
}
_NUMPY: dict[ColumnType, type[np.generic]] = {
    "int": np.int32,
    "bigint": np.int64,
    "double": np.float64,
    "boolean": np.bool_,
}


def validate_column_names(names: Iterable[str]) -> list[str]:
    """Checks the names of the metadata columns a stream asks for, with the server's rules and
    words (its ``validateColumnNames``): each a column name (lower case letters, digits and
    ``_``, a letter first, at most 48 characters), none twice, none a built-in column the batch
    carries already (``source_key`` may be asked for), at most 64. Raises ValueError."""
    if isinstance(names, str):
        raise ValueError(f"columns must be a list of names, not the string {names!r}")
    out = list(names)
    if len(out) > MAX_STREAM_COLUMNS:
        raise ValueError(
            f"columns names {len(out)} columns; a stream returns at most {MAX_STREAM_COLUMNS}"
        )
    seen: set[str] = set()
    for name in out:
        if not isinstance(name, str) or not _COLUMN_NAME.fullmatch(name):
            shown = _json_quote(name[:64]) if isinstance(name, str) else repr(name)
            raise ValueError(
                f"columns: {shown} is not a metadata column name (lower case letters, digits "
                "and _, a letter first, at most 48 characters)"
            )
        if name in _IN_THE_BATCH:
            raise ValueError(
                f'columns: "{name}" is in every batch already ({_IN_THE_BATCH[name]})'
            )
        if name in seen:
            raise ValueError(f'columns names "{name}" twice')
        seen.add(name)
    return out


def _json_quote(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class Column:
    """One metadata column of a batch, one value per sample in the batch's order.

    Attributes:
        name: The column's name.
        type: Its CQL type: ``"text"``, ``"int"``, ``"bigint"``, ``"double"`` or ``"boolean"``.
        values: Text as a list of ``str`` (``None`` for a null); numbers and booleans as a
            numpy array (``int32``, ``int64``, ``float64``, ``bool``) whose null slots hold 0
            or False (see ``nulls``).
        nulls: A ``bool`` array, True where the value is null; ``None`` when none is.
    """

    name: str
    type: ColumnType
    values: list[str | None] | npt.NDArray[np.generic]
    nulls: npt.NDArray[np.bool_] | None

    def __len__(self) -> int:
        return len(self.values)

    def to_list(self) -> list[ColumnValue]:
        """The values as Python objects, ``None`` for nulls."""
        if isinstance(self.values, list):
            return list(self.values)
        items: list[ColumnValue] = self.values.tolist()
        if self.nulls is not None:
            for i in np.flatnonzero(self.nulls).tolist():
                items[i] = None
        return items

    def to_float_array(self) -> npt.NDArray[np.float64]:
        """A numeric column as ``float64`` with NaN for nulls (what a tensor of it needs)."""
        if isinstance(self.values, list):
            raise ValueError(f"column {self.name} is text: it has no float array")
        out = self.values.astype(np.float64)
        if self.nulls is not None:
            out[self.nulls] = np.nan
        return out


def decode_columns(
    columns: Sequence[loader_pb2.Column], n: int, fail: Callable[[str], NoReturn]
) -> dict[str, Column]:
    """A batch's ``columns`` by name, each with exactly ``n`` values; a column of another
    length, an unknown type or a null bitmap of the wrong size goes to ``fail``."""
    out: dict[str, Column] = {}
    for c in columns:
        kind = _TYPES.get(c.type)
        if kind is None:
            fail(f"column {c.name} of unknown type {c.type} (a newer server? upgrade the client)")
        nulls: npt.NDArray[np.bool_] | None = None
        if len(c.nulls) > 0:
            if len(c.nulls) != (n + 7) // 8:
                fail(f"column {c.name}: a null bitmap of {len(c.nulls)} bytes for {n} samples")
            bits = np.unpackbits(np.frombuffer(c.nulls, dtype=np.uint8), bitorder="little")
            nulls = bits[:n].astype(np.bool_)
        fields: dict[ColumnType, Sequence[object]] = {
            "text": c.text_values,
            "int": c.int_values,
            "bigint": c.bigint_values,
            "double": c.double_values,
            "boolean": c.boolean_values,
        }
        field = fields[kind]
        if len(field) != n:
            fail(f"column {c.name}: {len(field)} values for {n} samples")
        values: list[str | None] | npt.NDArray[np.generic]
        if kind == "text":
            values = [
                None if nulls is not None and nulls[i] else v for i, v in enumerate(c.text_values)
            ]
        else:
            values = np.fromiter(field, dtype=_NUMPY[kind], count=n)
        out[c.name] = Column(c.name, kind, values, nulls)
    return out

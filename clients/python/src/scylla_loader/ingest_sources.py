"""Samples for :meth:`LoaderClient.ingest` from common dataset objects: torchvision datasets
and Hugging Face datasets (or any iterable of dicts shaped like their rows).

Neither torchvision nor ``datasets`` is imported here: the helpers look at the objects they
are given, and only Pillow is imported, lazily, when an image has to be encoded. Each helper
returns an :class:`IngestSource` that can be iterated more than once (running an interrupted
ingest again reads the dataset again) and carries the class names, metadata columns and a
source name, which ``ingest`` uses::

    from scylla_loader import LoaderClient
    from scylla_loader.ingest_sources import from_huggingface, from_torchvision

    with LoaderClient("localhost:50051") as client:
        client.ingest("cifar10", from_torchvision(CIFAR10(root, train=True), key_prefix="train"))
        client.ingest("beans", from_huggingface(load_dataset("beans", split="train")))
"""

from __future__ import annotations

import dataclasses
import io
import operator
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .ingest import IngestSample, IngestSource, scalar

__all__ = ["encode_image", "from_huggingface", "from_torchvision", "metadata_column_name"]


class _Reiterable:
    """An iterable that calls ``make`` for each iteration."""

    def __init__(self, make: Callable[[], Iterator[IngestSample]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[IngestSample]:
        return self._make()


def _png(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _array_to_png(array: np.ndarray[Any, Any], channels_first: bool) -> bytes:
    from PIL import Image  # lazily: only for arrays and tensors

    if array.ndim == 3 and channels_first and array.shape[0] in (1, 3, 4):
        array = np.transpose(array, (1, 2, 0))
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.dtype != np.uint8:
        if np.issubdtype(array.dtype, np.floating):
            array = np.clip(np.rint(array * 255.0), 0, 255).astype(np.uint8)
        elif array.min(initial=0) >= 0 and array.max(initial=0) <= 255:
            array = array.astype(np.uint8)
        else:
            raise ValueError(f"cannot encode an image of dtype {array.dtype} with values over 255")
    return _png(Image.fromarray(np.ascontiguousarray(array)))


def encode_image(image: Any) -> bytes:
    """The bytes to store for an image: ``bytes`` as they are; a Hugging Face image dict
    (``{"bytes": ..., "path": ...}``) its bytes, else its file's; a ``str``/``Path`` the
    file's bytes; a PIL image, a torch tensor (CHW, uint8 or float in [0, 1]) or a numpy
    array (HWC or HW) encoded as PNG with Pillow."""
    if isinstance(image, bytes):
        return image
    if isinstance(image, (bytearray, memoryview)):
        return bytes(image)
    if isinstance(image, Mapping):
        if image.get("bytes") is not None:
            return bytes(image["bytes"])
        if image.get("path"):
            return Path(image["path"]).read_bytes()
        raise ValueError("an image dict needs 'bytes' or 'path'")
    if isinstance(image, (str, Path)):
        return Path(image).read_bytes()
    if hasattr(image, "save") and hasattr(image, "mode"):  # a PIL image
        return _png(image)
    if type(image).__module__.startswith("torch") and hasattr(image, "detach"):
        return _array_to_png(image.detach().cpu().numpy(), channels_first=True)
    if isinstance(image, np.ndarray):
        return _array_to_png(image, channels_first=False)
    raise TypeError(
        f"cannot make image bytes of a {type(image).__name__}: give bytes, a PIL image, a "
        "tensor, a numpy array, a path or a {'bytes', 'path'} dict"
    )


def _label(value: Any, label_names: Sequence[str] | None, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        if label_names and value in label_names:
            return list(label_names).index(value)
        raise ValueError(f"{where}: label {value!r} is not one of the class names")
    try:
        return operator.index(value)
    except TypeError:
        if type(value).__module__.startswith("torch") and getattr(value, "numel", None):
            if value.numel() == 1:
                return int(value.item())
        raise TypeError(f"{where}: a label must be an int, got {type(value).__name__}") from None


def _string_list(value: Any) -> list[str] | None:
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def from_torchvision(
    dataset: Any,
    *,
    key_prefix: str,
    label_names: Sequence[str] | None = None,
    raw_files: bool = True,
    key: Callable[[int, Any], str] | None = None,
) -> IngestSource:
    """Samples of a map-style torchvision dataset whose items are ``(image, label)``: the image
    a PIL image, a tensor or bytes (encoded as :func:`encode_image` says), the label an int.

    - Source keys are ``<key_prefix>/<what identifies the sample>``; an ingest skips keys
      already stored, so a key must name the same sample on every run. A dataset with a
      ``root`` and ``samples`` (ImageFolder, any ``DatasetFolder``) uses each file's path
      relative to the root (``train/cat/001.jpg``): adding a file and ingesting again stores
      just that file. ``key(index, item)`` when given takes precedence (``item`` the
      dataset's item, or a folder's ``(path, class)`` entry when its files are stored as
      they are); else the index, which is stable only for datasets that never change
      (MNIST, CIFAR): an index key of a growing dataset would take shifted samples for stored
      ones, losing new samples and storing others twice. Give each part of a dataset (train,
      test) its own prefix, or their samples collide.
    - Class names: ``label_names``, else the dataset's ``classes`` when it has them
      (ImageFolder, MNIST, CIFAR).
    - ``raw_files``: an ImageFolder (any ``DatasetFolder``) without ``transform`` stores each
      file's bytes as they are (a JPEG stays a JPEG) instead of decoding and encoding it as
      PNG.
    """
    if not key_prefix:
        raise ValueError("key_prefix must be non-empty: e.g. 'train'")
    length = len(dataset)
    names = list(label_names) if label_names is not None else _string_list(
        getattr(dataset, "classes", None)
    )
    files: list[tuple[str, int]] | None = None
    folder_items = getattr(dataset, "samples", None)
    root = getattr(dataset, "root", None)
    paths: list[str] | None = None
    if key is None and isinstance(folder_items, list) and root is not None and len(folder_items) == length:
        paths = [Path(p).relative_to(root).as_posix() for p, _ in folder_items]
    if (raw_files and isinstance(folder_items, list) and getattr(dataset, "transform", None) is None
            and getattr(dataset, "target_transform", None) is None and len(folder_items) == length):
        files = folder_items

    def samples() -> Iterator[IngestSample]:
        for index in range(length):
            name = f"{key_prefix}/{paths[index] if paths is not None else index}"
            if files is not None:
                path, target = files[index]
                if key is not None:
                    name = f"{key_prefix}/{key(index, files[index])}"
                yield IngestSample(name, Path(path).read_bytes(), _label(target, names, name))
                continue
            item = dataset[index]
            if key is not None:
                name = f"{key_prefix}/{key(index, item)}"
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise TypeError(f"{name}: expected an (image, label) pair, got {type(item).__name__}")
            image, target = item
            yield IngestSample(name, encode_image(image), _label(target, names, name))

    return IngestSource(
        _Reiterable(samples), label_names=names,
        source=f"torchvision:{type(dataset).__name__}", length=length,
    )


_VALUE_TYPES = {
    "string": "text", "large_string": "text", "bool": "boolean",
    "int8": "bigint", "int16": "bigint", "int32": "bigint", "int64": "bigint",
    "uint8": "bigint", "uint16": "bigint", "uint32": "bigint",
    "float16": "double", "float32": "double", "float64": "double",
}


def _feature_columns(features: Mapping[str, Any], skip: set[str]) -> dict[str, str]:
    """Metadata columns of a Hugging Face dataset's scalar features (``Value`` and other
    ``ClassLabel`` columns)."""
    columns: dict[str, str] = {}
    for name, feature in features.items():
        if name in skip:
            continue
        kind = type(feature).__name__
        if kind == "Value" and getattr(feature, "dtype", None) in _VALUE_TYPES:
            columns[name] = _VALUE_TYPES[feature.dtype]
        elif kind == "ClassLabel":
            columns[name] = "bigint"
    return columns


_BUILT_IN_COLUMNS = frozenset({"id", "label", "source_key", "size_bytes"})


def metadata_column_name(original: str) -> str | None:
    """The metadata column a dataset's column name maps to, as the loader's own readers map
    them (``NSFW`` -> ``nsfw``, ``caption.en`` -> ``caption_en``, ``2x`` -> ``c_2x``, ``id``
    -> ``src_id``), or ``None`` for a name without a letter or digit: lower-cased, each run of
    other characters than ``a-z``, ``0-9`` and ``_`` one ``_``, no leading or trailing ``_``,
    ``c_`` before a name that does not start with a letter, at most 48 characters, ``src_``
    before a built-in column's name."""
    core = re.sub(r"[^a-z0-9_]+", "_", original.lower()).strip("_")
    if not core:
        return None
    name = (core if "a" <= core[0] <= "z" else "c_" + core)[:48]
    return "src_" + name if name in _BUILT_IN_COLUMNS else name


class _ColumnNames:
    """Maps a source's column names to metadata column names, refusing two that meet."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._owners: dict[str, str] = {}

    def __call__(self, original: str) -> str:
        name = self._names.get(original)
        if name is not None:
            return name
        mapped = metadata_column_name(original)
        if mapped is None:
            raise ValueError(f"column {original!r} maps to no column name (no letter or digit)")
        owner = self._owners.setdefault(mapped, original)
        if owner != original:
            raise ValueError(
                f"columns {owner!r} and {original!r} both map to metadata column {mapped}; "
                "rename one of them"
            )
        self._names[original] = mapped
        return mapped


def _image_root(image_root: str | os.PathLike[str] | None) -> Path | None:
    if image_root is None:
        return None
    root = Path(image_root).resolve()
    if not root.is_dir():
        raise ValueError(f"image_root {str(image_root)!r} is not a directory")
    return root


def _image_file(path: Any, root: Path | None, where: str) -> bytes:
    """The bytes of an image a row names by path, read only inside ``root``.

    A dataset's rows are data, possibly someone else's: a path in them must not make the
    caller read (and send to a loader) any file it can, such as ``~/.ssh/id_rsa``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{where}: an image path must be a str, not a {type(path).__name__}")
    if root is None:
        raise ValueError(
            f"{where}: the image has no bytes, only the path {os.fspath(path)!r}; files are "
            "read only when from_huggingface is given image_root= (the folder they are in), "
            "and only inside it"
        )
    # resolve() follows symbolic links and '..', so a link or a '..' out of the root is
    # caught as well as an absolute path elsewhere.
    file = (root / path).resolve()
    if not file.is_relative_to(root):
        raise ValueError(
            f"{where}: image path {os.fspath(path)!r} is outside image_root {str(root)!r}; "
            "refused"
        )
    return file.read_bytes()


def _row_image(value: Any, root: Path | None, where: str) -> bytes:
    if isinstance(value, Mapping) and value.get("bytes") is None and value.get("path"):
        return _image_file(value["path"], root, where)
    if isinstance(value, (str, os.PathLike)):
        return _image_file(value, root, where)
    return encode_image(value)


def from_huggingface(
    dataset: Iterable[Mapping[str, Any]],
    *,
    image_column: str = "image",
    label_column: str | None = "label",
    key_column: str | None = None,
    key_prefix: str | None = None,
    label_names: Sequence[str] | None = None,
    image_root: str | os.PathLike[str] | None = None,
) -> IngestSource:
    """Samples of a Hugging Face ``datasets.Dataset``, or of any iterable of dicts shaped like
    its rows (``datasets`` is not needed for those).

    - ``image_column``: a PIL image, a ``{"bytes", "path"}`` dict, bytes or a path. A
      ``Dataset`` whose column is an ``Image`` feature is read without decoding, so the
      stored bytes are the original file's.
    - ``image_root``: the folder image files may be read from. An image given by path (a
      path, or a dict whose ``bytes`` is ``None``, as ``imagefolder`` datasets have) is read
      only when this is given, and only inside it (relative paths from it; ``..``, absolute
      paths or symbolic links leading elsewhere are a ValueError): the rows are data, and
      should not make the caller read any file it can. Without it such a row is a
      ValueError saying so.
    - ``label_column``: an int (or a class name, when class names are known); ``None`` for
      none. Class names: ``label_names``, else the column's ``ClassLabel`` names.
    - Other columns holding scalars (str, bool, int, float) become metadata; the types come
      from the dataset's features when it has them, else from the values. Their names are
      mapped to valid column names as :func:`metadata_column_name` says (``NSFW`` ->
      ``nsfw``); two that map to one name are a ValueError.
    - Source keys: ``key_column``'s value, else the row index; prefixed ``<key_prefix>/``
      when given, else by the dataset's split when it has one (``train/0``, ``train/1``...).
    """
    features: Mapping[str, Any] | None = getattr(dataset, "features", None)
    names = list(label_names) if label_names is not None else None
    columns: dict[str, str] | None = None
    reserved = {image_column, label_column or "", key_column or ""}
    if features is not None:
        if names is None and label_column is not None and label_column in features:
            names = _string_list(getattr(features[label_column], "names", None))
        image_feature = features.get(image_column)
        cast = getattr(dataset, "cast_column", None)
        if (type(image_feature).__name__ == "Image" and getattr(image_feature, "decode", False)
                and cast is not None and dataclasses.is_dataclass(image_feature)
                and not isinstance(image_feature, type)):
            dataset = cast(image_column, dataclasses.replace(image_feature, decode=False))
        columns = _feature_columns(features, reserved)
    column_name = _ColumnNames()
    renamed: dict[str, str] = {}
    if columns is not None:
        renamed = {name: column_name(name) for name in columns}
        columns = {renamed[name]: kind for name, kind in columns.items()}
    split = getattr(dataset, "split", None)
    prefix = key_prefix if key_prefix is not None else (str(split) if split else "")
    info = getattr(dataset, "info", None)
    dataset_name = getattr(info, "dataset_name", None)
    source = "huggingface"
    if dataset_name:
        source = f"hf:{dataset_name}" + (f"/{split}" if split else "")
    length = len(dataset) if hasattr(dataset, "__len__") else None  # type: ignore[arg-type]
    rows = dataset
    root = _image_root(image_root)

    def samples() -> Iterator[IngestSample]:
        for index, row in enumerate(rows):
            raw_key = row[key_column] if key_column is not None else index
            key = f"{prefix}/{raw_key}" if prefix else str(raw_key)
            if image_column not in row:
                raise ValueError(f"row {index}: no column {image_column!r} (image_column)")
            label = None
            if label_column is not None:
                label = _label(row.get(label_column), names, key)
            metadata: dict[str, Any] = {}
            for name, value in row.items():
                if name in reserved:
                    continue
                if columns is not None:
                    if name in renamed:
                        metadata[renamed[name]] = value
                elif value is None or scalar(value) is not None:
                    metadata[column_name(name)] = value
            image = _row_image(row[image_column], root, f"row {index} ({key})")
            yield IngestSample(key, image, label, None, metadata or None)

    return IngestSource(
        _Reiterable(samples), label_names=names, columns=columns, source=source, length=length,
    )

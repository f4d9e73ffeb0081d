"""Batches as the client yields them."""

from __future__ import annotations

import uuid
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NoReturn

import grpc
import numpy as np
import numpy.typing as npt

from .columns import Column, decode_columns
from .errors import LoaderError
from .v1 import loader_pb2

if TYPE_CHECKING:
    import torch

_DTYPES = {loader_pb2.D_TYPE_UINT8: "uint8"}
"""Element types a raw batch may carry, by proto value."""


@dataclass(frozen=True, eq=False)
class Batch:
    """One batch of a stream, decoded.

    ``samples`` and ``label_blobs`` are views into ``data`` and the label-blob bytes of the
    response (no copy per sample): keeping one alive keeps the whole batch in memory, so copy
    (``bytes(view)``) what must outlive it. ``sample_array(i)`` is the same view as a numpy
    ``uint8`` array.

    With a raw :class:`~scylla_loader.Transform`, ``data`` is one contiguous tensor of
    ``shape`` (samples, height, width, channels), ``dtype`` ``"uint8"``: :meth:`array` and
    :meth:`tensor` view it without copying.

    Attributes:
        epoch: Epoch the batch belongs to.
        index: Index of the batch within the rank's epoch, from 0.
        id_bytes: Sample ids, 16 bytes each (UUID bytes), concatenated.
        labels: Integer label of each sample (-1: none), ``int32``.
        data: Every sample's bytes, concatenated in the batch's order.
        sizes: Each sample's size in ``data``.
        offsets: Each sample's offset in ``data``.
        samples: Each sample's bytes, a ``memoryview`` into ``data``.
        label_blobs: Each sample's label blob (a view; empty for none), or ``None`` when no
            sample of the batch has one.
        resume_token: Opaque token that resumes the stream right after this batch.
        skipped_missing: Samples of this batch's share skipped because their row was missing.
        last_in_epoch: True on the rank's last batch of the epoch.
        shape: Shape of the tensor in ``data`` (samples, height, width, channels) with a raw
            transform; ``()`` otherwise.
        dtype: Element type of that tensor (``"uint8"``); ``None`` without one.
        skipped_undecodable: Samples of this batch's share left out because they could not be
            decoded (a transform with ``bad_image="skip"``).
        source_indexes: In a mixed stream (``sources=``), each sample's source as an index
            into that list, ``int64``; ``None`` for a single-source stream. A sample's label
            is its source's kind: an integer in ``labels``, a blob in ``label_blobs``, or
            none (-1 and an empty blob), so sources of different kinds mix in one batch.
        masks: With a transform's ``masks=True``: every sample's transformed mask, one
            contiguous ``uint8`` tensor of ``mask_shape`` (samples, height, width, 1), aligned
            pixel for pixel with ``data`` (:meth:`mask_array`, :meth:`mask_tensor`); ``b""``
            otherwise (``label_blobs`` then holds the blobs as stored).
        mask_shape: Shape of ``masks``; ``()`` without masks.
        columns: The metadata columns the request asked for (``columns=``), by name, each a
            :class:`Column` with one value per sample; empty when it asked for none.
    """

    epoch: int
    index: int
    id_bytes: bytes
    labels: npt.NDArray[np.int32]
    data: bytes
    sizes: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]
    samples: list[memoryview]
    label_blobs: list[memoryview] | None
    resume_token: bytes
    skipped_missing: int
    last_in_epoch: bool
    shape: tuple[int, ...] = ()
    dtype: str | None = None
    skipped_undecodable: int = 0
    source_indexes: npt.NDArray[np.int64] | None = None
    masks: bytes = b""
    mask_shape: tuple[int, ...] = ()
    columns: dict[str, Column] = field(default_factory=dict)
    _ids: list[str] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.samples)

    @property
    def ids(self) -> list[str]:
        """Sample ids as UUID strings, in the batch's order (computed once, on first use)."""
        if len(self._ids) != len(self.samples):
            raw = self.id_bytes
            self._ids[:] = [str(uuid.UUID(bytes=raw[i : i + 16])) for i in range(0, len(raw), 16)]
        return self._ids

    def sample_array(self, i: int) -> npt.NDArray[np.uint8]:
        """Sample ``i`` as a read-only numpy ``uint8`` array over ``data`` (no copy)."""
        return np.frombuffer(
            self.data, dtype=np.uint8, count=int(self.sizes[i]), offset=int(self.offsets[i])
        )

    @property
    def is_tensor(self) -> bool:
        """Whether ``data`` is one tensor (a raw transform), not each sample's bytes."""
        return self.dtype is not None

    def _require_tensor(self, method: str) -> None:
        if self.dtype is None:
            raise ValueError(
                f"Batch.{method}() needs a batch streamed with a raw Transform (one tensor of "
                "pixels); this one holds each sample's bytes: use samples or sample_array(i)"
            )

    def array(self) -> npt.NDArray[np.uint8]:
        """The batch's pixels as a read-only numpy ``uint8`` array of ``shape`` (N, H, W, C),
        a view of ``data`` (no copy). Only for raw batches (ValueError otherwise)."""
        self._require_tensor("array")
        return np.frombuffer(self.data, dtype=np.uint8).reshape(self.shape)

    def tensor(self) -> torch.Tensor:
        """The batch's pixels as a ``torch.uint8`` tensor of ``shape`` (N, H, W, C) sharing
        ``data``'s memory (``torch.frombuffer``, no copy; the tensor keeps the bytes alive).
        Only for raw batches (ValueError otherwise); needs torch.

        The memory is the received message's immutable ``bytes``: never write the tensor in
        place (``t.add_(1)``, ``t[0] = 0``...). Out-of-place operations make new tensors, e.g.
        ``t.permute(0, 3, 1, 2).float().div_(255)`` or ``t.to("cuda", non_blocking=True)``;
        ``t.clone()`` gives a writable copy.
        """
        self._require_tensor("tensor")
        return _torch_view(self.data, self.shape)

    @property
    def has_masks(self) -> bool:
        """Whether the batch carries masks (a transform with ``masks=True``)."""
        return len(self.mask_shape) == 4

    def _require_masks(self, method: str) -> None:
        if not self.has_masks:
            raise ValueError(
                f"Batch.{method}() needs a batch streamed with Transform(masks=True); this one "
                "has none (label_blobs holds the blobs as stored)"
            )

    def mask_array(self) -> npt.NDArray[np.uint8]:
        """The batch's masks as a read-only numpy ``uint8`` array of ``mask_shape``
        (N, H, W, 1), a view of ``masks`` (no copy). ValueError without masks."""
        self._require_masks("mask_array")
        return np.frombuffer(self.masks, dtype=np.uint8).reshape(self.mask_shape)

    def mask_tensor(self) -> torch.Tensor:
        """The batch's masks as a ``torch.uint8`` tensor of ``mask_shape`` (N, H, W, 1)
        sharing ``masks``' memory (no copy; never write it in place, as :meth:`tensor`).
        ValueError without masks; needs torch."""
        self._require_masks("mask_tensor")
        return _torch_view(self.masks, self.mask_shape)


def _torch_view(data: bytes, shape: tuple[int, ...]) -> torch.Tensor:
    """``data`` as a ``torch.uint8`` tensor of ``shape``, without copying."""
    import torch

    if len(data) == 0:
        # Every sample skipped: torch.frombuffer refuses an empty buffer.
        return torch.empty(shape, dtype=torch.uint8)
    with warnings.catch_warnings():
        # torch warns that the buffer is not writable: bytes are not, by design (see above).
        warnings.filterwarnings(
            "ignore", message="The given buffer is not writable", category=UserWarning
        )
        flat = torch.frombuffer(data, dtype=torch.uint8)
    return flat.view(shape)


def _split(
    buffer: bytes, sizes: npt.NDArray[np.int64], what: str, fail: _Fail
) -> tuple[npt.NDArray[np.int64], list[memoryview]]:
    total = int(sizes.sum()) if len(sizes) else 0
    if total != len(buffer):
        fail(f"{what} sizes add up to {total} bytes but {len(buffer)} were received")
    offsets = np.zeros(len(sizes), dtype=np.int64)
    if len(sizes) > 1:
        np.cumsum(sizes[:-1], out=offsets[1:])
    view = memoryview(buffer)
    return offsets, [view[o : o + s] for o, s in zip(offsets.tolist(), sizes.tolist())]


class _Fail:
    """Raises a DATA_LOSS :class:`LoaderError`: "malformed <what><where>: <message>"."""

    def __init__(self, method: str, target: str, where: str, what: str = "batch") -> None:
        self.method, self.target, self.where, self.what = method, target, where, what

    def __call__(self, message: str) -> NoReturn:
        raise LoaderError(
            self.method,
            self.target,
            grpc.StatusCode.DATA_LOSS,
            f"malformed {self.what}{self.where}: {message}",
        )


def decode_batch(
    message: loader_pb2.Batch,
    method: str = "StreamBatches",
    target: str = "",
    sources: int = 0,
) -> Batch:
    """Turns a received ``Batch`` message into a :class:`Batch`: an ``int32`` label array and
    per-sample views (no copies) cut by ``data_sizes`` and ``label_blob_sizes``, as the
    TypeScript SDK's ``decodeBatch``. A batch whose parts disagree (sizes that do not add up to
    the bytes, counts that differ) is a :class:`LoaderError` with code DATA_LOSS.

    ``sources``: how many sources the request mixed (0: one dataset and split, or unknown).
    With sources, every sample must name one of them (an index below ``sources``) and
    ``source_indexes`` is always an array, empty for an empty batch; without, it is ``None``
    unless the message carries indexes.
    """
    fail = _Fail(method, target, f" (epoch {message.epoch}, batch {message.index})")
    n = len(message.data_sizes)
    id_bytes = message.ids
    if len(id_bytes) != n * 16:
        fail(f"{len(id_bytes)} id bytes for {n} samples (16 each)")
    if len(message.labels) != n:
        fail(f"{len(message.labels)} labels for {n} samples")
    data = message.data
    sizes = np.fromiter(message.data_sizes, dtype=np.int64, count=n)
    offsets, samples = _split(data, sizes, "data", fail)
    label_blobs: list[memoryview] | None = None
    blob_count = len(message.label_blob_sizes)
    if blob_count not in (0, n):
        fail(f"{blob_count} label blob sizes for {n} samples")
    blob_bytes = message.label_blobs
    blob_sizes = np.fromiter(message.label_blob_sizes, dtype=np.int64, count=blob_count)
    _, blobs = _split(blob_bytes, blob_sizes, "label blob", fail)
    if len(blob_bytes) > 0:
        label_blobs = blobs
    shape, dtype = _tensor_layout(message, n, len(data), sizes, fail)
    source_indexes = _source_indexes(message, n, sources, fail)
    mask_shape = _mask_shape(message, n, fail)
    return Batch(
        epoch=message.epoch,
        index=message.index,
        id_bytes=id_bytes,
        labels=np.fromiter(message.labels, dtype=np.int32, count=n),
        data=data,
        sizes=sizes,
        offsets=offsets,
        samples=samples,
        label_blobs=label_blobs,
        resume_token=message.resume_token,
        skipped_missing=message.skipped_missing,
        last_in_epoch=message.last_in_epoch,
        shape=shape,
        dtype=dtype,
        skipped_undecodable=message.skipped_undecodable,
        source_indexes=source_indexes,
        masks=message.masks,
        mask_shape=mask_shape,
        columns=decode_columns(message.columns, n, fail),
    )


def _mask_shape(message: loader_pb2.Batch, n: int, fail: _Fail) -> tuple[int, ...]:
    """The shape of a batch's masks, checked against their bytes; ``()`` without masks."""
    shape = tuple(int(d) for d in message.mask_shape)
    if not shape:
        if message.masks:
            fail(f"{len(message.masks)} mask bytes without a mask shape")
        return ()
    if len(shape) != 4 or shape[0] != n or shape[3] != 1:
        fail(f"mask shape {list(shape)} for {n} samples (want (samples, height, width, 1))")
    if len(message.masks) != n * shape[1] * shape[2]:
        fail(f"mask shape {list(shape)} needs {n * shape[1] * shape[2]} bytes but "
             f"{len(message.masks)} were received")
    return shape


def _source_indexes(
    message: loader_pb2.Batch, n: int, sources: int, fail: _Fail
) -> npt.NDArray[np.int64] | None:
    """Each sample's source index, checked against the sample count and, when the request's
    source count is known, against it (a sample of no source would be attributed to the wrong
    dataset downstream, e.g. in per-source loss weighting)."""
    count = len(message.source_indexes)
    if count == 0 and (sources == 0 or n > 0):
        if sources > 0:
            fail(f"no source indexes for {n} samples of a stream of {sources} sources")
        return None
    if count != n:
        fail(f"{count} source indexes for {n} samples")
    indexes = np.fromiter(message.source_indexes, dtype=np.int64, count=n)
    if sources > 0 and n and int(indexes.max()) >= sources:
        fail(f"source index {int(indexes.max())} in a stream of {sources} sources")
    return indexes


def _tensor_layout(
    message: loader_pb2.Batch,
    n: int,
    data_length: int,
    sizes: npt.NDArray[np.int64],
    fail: _Fail,
) -> tuple[tuple[int, ...], str | None]:
    """``(shape, dtype)`` of a raw batch, checked against its bytes and sizes; ``((), None)``
    for a batch of sample bytes."""
    shape = tuple(int(d) for d in message.shape)
    if message.dtype == loader_pb2.D_TYPE_UNSPECIFIED:
        if shape:
            fail(f"a tensor shape {list(shape)} without a dtype")
        return (), None
    dtype = _DTYPES.get(message.dtype)
    if dtype is None:
        fail(
            f"unknown tensor dtype {message.dtype} (a newer server? upgrade the scylla-loader "
            "client)"
        )
    if len(shape) != 4:
        fail(f"tensor shape {list(shape)} is not (samples, height, width, channels)")
    if shape[0] != n:
        fail(f"tensor shape {list(shape)} for {n} samples")
    per_sample = shape[1] * shape[2] * shape[3]
    if n * per_sample != data_length:
        fail(f"tensor shape {list(shape)} needs {n * per_sample} bytes but {data_length} were received")
    if n and not bool((sizes == per_sample).all()):
        fail(f"sample sizes {sorted(set(sizes.tolist()))} differ from {per_sample} (height x width x channels)")
    return shape, dtype

"""Samples written through the loader (:meth:`LoaderClient.ingest`): the values a caller passes
and gets back, and the pure logic of the call (inputs made into samples, metadata columns
inferred, requests cut by count and bytes, acknowledgements counted). The call itself is in
``ingest_call.py``."""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .v1 import loader_pb2

MIB = 1024 * 1024

DEFAULT_SAMPLES_PER_REQUEST = 64
"""Samples per request when ``samples_per_request`` is not given."""

DEFAULT_REQUEST_BYTES = 4 * MIB
"""Most bytes of one request (target included) unless a single sample is larger (the loader
takes requests of up to 32 MiB, room for one sample of its 15 MiB limit and more)."""

DEFAULT_MAX_UNACKNOWLEDGED = 8
"""Requests sent and not yet acknowledged before the client stops reading the caller's
samples; with the byte cap, at most about 32 MiB held for a resend."""

COLUMN_TYPES = ("text", "int", "bigint", "double", "boolean")
"""Types a metadata column may have."""

BadSamples = Literal["fail", "skip"]

_POLICIES = {
    "fail": loader_pb2.BAD_SAMPLE_POLICY_FAIL,
    "skip": loader_pb2.BAD_SAMPLE_POLICY_SKIP,
}

_SAMPLE_KEYS = frozenset(("source_key", "data", "label", "label_blob", "metadata"))


@dataclass(frozen=True)
class IngestSample:
    """One sample to write.

    Attributes:
        source_key: Unique within the dataset (1 to 1024 bytes of UTF-8); the sample's id
            derives from it, so writing the same key again leaves the stored sample as it is.
        data: The sample's bytes (e.g. an encoded image).
        label: Integer label (an index into the dataset's class names when it has them).
        label_blob: Label bytes (a mask, a multi-label array). A sample has a label, a label
            blob, or both; or neither, when the call's first sample has neither (an
            unlabelled dataset, streamed with label -1; docs/ingest.md, "Unlabelled data").
        metadata: Values of metadata columns (``str``, ``bool``, ``int``, ``float`` or numpy
            scalars); a column left out or ``None`` is null.
    """

    source_key: str
    data: bytes
    label: int | None = None
    label_blob: bytes | None = None
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class IngestProgress:
    """What ``on_progress`` is told after each acknowledged request (totals of the ingest)."""

    acknowledged: int
    """Samples answered by the loader: written, found stored, or skipped."""
    written: int
    already_present: int
    """Found stored and left as they were (an earlier ingest, or a call that broke after
    writing them and before acknowledging)."""
    skipped: int
    """Left out under ``bad_samples="skip"``."""


@dataclass(frozen=True)
class IngestSummary:
    """The end of :meth:`LoaderClient.ingest`."""

    acknowledged: int
    written: int
    already_present: int
    skipped: int
    skipped_samples: list[tuple[str, str]]
    """(source key, reason) of every sample left out under ``bad_samples="skip"``."""
    dataset_samples: int
    """Samples the dataset holds now."""
    reconnects: int = 0
    """Calls opened again after a break."""
    resent_requests: int = 0
    """Requests sent again in a new call because a call that broke had not acknowledged them
    (each counted once, however many calls it took)."""


@dataclass(frozen=True)
class IngestSource:
    """Samples with what the target needs to know about them: what the helpers of
    :mod:`scylla_loader.ingest_sources` return. :meth:`LoaderClient.ingest` takes
    ``label_names``, ``columns`` and ``source`` from it unless given explicitly."""

    samples: Iterable[IngestSample]
    label_names: Sequence[str] | None = None
    columns: Mapping[str, str] | None = None
    source: str | None = None
    length: int | None = None
    """Number of samples, when known."""

    def __iter__(self) -> Iterator[IngestSample]:
        return iter(self.samples)

    def __len__(self) -> int:
        if self.length is None:
            raise TypeError("this IngestSource does not know its length")
        return self.length


def bad_sample_policy(bad_samples: str) -> int:
    """The proto enum of ``bad_samples`` (``"fail"`` or ``"skip"``)."""
    try:
        return _POLICIES[bad_samples]
    except KeyError:
        raise ValueError(f"bad_samples must be 'fail' or 'skip', got {bad_samples!r}") from None


def to_sample(item: IngestSample | Mapping[str, Any], index: int) -> IngestSample:
    """An :class:`IngestSample` from one item of the caller's iterable (the dataclass itself,
    or a dict with its fields); ``index`` (from 0) names the item in errors."""
    if isinstance(item, IngestSample):
        sample = item
    elif isinstance(item, Mapping):
        unknown = set(item) - _SAMPLE_KEYS
        if unknown:
            raise ValueError(
                f"sample {index}: unknown keys {sorted(unknown)}; a sample has "
                "source_key, data, label, label_blob and metadata"
            )
        if "source_key" not in item or "data" not in item:
            raise ValueError(f"sample {index}: needs source_key and data")
        sample = IngestSample(
            source_key=item["source_key"],
            data=item["data"],
            label=item.get("label"),
            label_blob=item.get("label_blob"),
            metadata=item.get("metadata"),
        )
    else:
        raise TypeError(
            f"sample {index}: expected an IngestSample or a dict, got {type(item).__name__}"
        )
    if not isinstance(sample.source_key, str):
        raise TypeError(
            f"sample {index}: source_key must be a str, got {type(sample.source_key).__name__}"
        )
    return sample


def _as_bytes(value: Any, what: str, key: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"sample {key!r}: {what} must be bytes, got {type(value).__name__}")


def scalar(value: Any) -> str | bool | int | float | None:
    """A metadata value as a plain Python scalar (numpy scalars unwrapped), or ``None`` for a
    value that is no scalar (a list, an image...)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (str, bool, int, float)):
        return value
    return None


def _kind(value: str | bool | int | float) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "bigint"
    if isinstance(value, float):
        return "double"
    return "text"


def infer_columns(samples: Iterable[IngestSample]) -> dict[str, str]:
    """Metadata columns and their types from sample values: ``str`` -> text, ``bool`` ->
    boolean, ``int`` -> bigint, ``float`` -> double (numpy scalars alike); a column with both
    ints and floats is double, a column with only ``None`` text. Other mixes, and values that
    are no scalars, are a ValueError naming the column."""
    kinds: dict[str, str | None] = {}
    for sample in samples:
        for name, raw in (sample.metadata or {}).items():
            if raw is None:
                kinds.setdefault(name, None)
                continue
            value = scalar(raw)
            if value is None:
                raise ValueError(
                    f"sample {sample.source_key!r}: metadata {name!r} is a "
                    f"{type(raw).__name__}; values must be str, bool, int or float"
                )
            kind = _kind(value)
            seen = kinds.get(name)
            if seen is None or seen == kind:
                kinds[name] = kind
            elif {seen, kind} == {"bigint", "double"}:
                kinds[name] = "double"
            else:
                raise ValueError(
                    f"metadata {name!r} has both {seen} and {kind} values (sample "
                    f"{sample.source_key!r}): pass columns= to say its type"
                )
    return {name: kind or "text" for name, kind in kinds.items()}


def check_columns(columns: Mapping[str, str]) -> dict[str, str]:
    """``columns`` as a dict, each type one of :data:`COLUMN_TYPES`."""
    out: dict[str, str] = {}
    for name, kind in columns.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"column names must be non-empty strings, got {name!r}")
        if kind not in COLUMN_TYPES:
            raise ValueError(f"column {name!r}: type must be one of {COLUMN_TYPES}, got {kind!r}")
        out[name] = kind
    return out


def encode_target(
    dataset: str,
    label_names: Sequence[str],
    columns: Mapping[str, str],
    bad_samples: str,
    source: str,
) -> bytes:
    """A request holding only the target, serialized: put before the first request of a call
    (two serialized messages concatenated are the merged message)."""
    target = loader_pb2.IngestTarget(
        dataset=dataset,
        label_names=list(label_names),
        columns=dict(columns),
        bad_sample_policy=bad_sample_policy(bad_samples),  # type: ignore[arg-type]
        source=source,
    )
    return loader_pb2.IngestSamplesRequest(target=target).SerializeToString()


def encode_sample(sample: IngestSample) -> bytes:
    """One sample as a serialized request holding only it: requests are such pieces
    concatenated. Metadata values go as their Python kind; the loader checks that each key is
    a column and each value fits its type (a sample that does not is a bad sample, failed or
    skipped as ``bad_samples`` says)."""
    key = sample.source_key
    request = loader_pb2.IngestSamplesRequest()
    message = request.samples.add()
    message.source_key = key
    message.data = _as_bytes(sample.data, "data", key)
    if sample.label is not None:
        try:
            label = operator.index(sample.label)
        except TypeError:
            raise TypeError(
                f"sample {key!r}: label must be an int, got {type(sample.label).__name__}"
            ) from None
        if not -(2**31) <= label < 2**31:
            raise ValueError(f"sample {key!r}: label {label} is outside int32")
        message.label = label
    if sample.label_blob is not None:
        message.label_blob = _as_bytes(sample.label_blob, "label_blob", key)
    for name, raw in (sample.metadata or {}).items():
        if raw is None:
            continue
        value = scalar(raw)
        if value is None:
            raise ValueError(
                f"sample {key!r}: metadata {name!r} is a {type(raw).__name__}; values must "
                "be str, bool, int or float"
            )
        slot = message.metadata[name]
        if isinstance(value, bool):
            slot.boolean = value
        elif isinstance(value, int):
            if not -(2**63) <= value < 2**63:
                raise ValueError(f"sample {key!r}: metadata {name!r} = {value} is outside int64")
            slot.int = value
        elif isinstance(value, float):
            slot.double = value
        else:
            slot.text = value
    return request.SerializeToString()


@dataclass
class PendingRequest:
    """A request sent and not yet acknowledged (kept to be sent again after a break)."""

    payload: bytes
    """Serialized samples, without the target."""
    samples: int
    resent: bool = False
    """Sent again after a break at least once."""


def cut_requests(
    pieces: Iterable[tuple[bytes, int]],
    *,
    max_samples: int,
    max_bytes: int,
) -> Iterator[PendingRequest]:
    """Groups encoded samples (``encode_sample`` output, with a sample count of 1) into
    requests of at most ``max_samples`` samples and ``max_bytes`` bytes; a sample larger than
    ``max_bytes`` goes alone. Lazy: pulls a sample only when the request being built needs it.
    """
    if max_samples < 1:
        raise ValueError(f"samples_per_request must be 1 or more, got {max_samples}")
    parts: list[bytes] = []
    size = 0
    count = 0
    for payload, n in pieces:
        if parts and (count + n > max_samples or size + len(payload) > max_bytes):
            yield PendingRequest(b"".join(parts), count)
            parts, size, count = [], 0, 0
        parts.append(payload)
        size += len(payload)
        count += n
        if count >= max_samples:
            yield PendingRequest(b"".join(parts), count)
            parts, size, count = [], 0, 0
    if parts:
        yield PendingRequest(b"".join(parts), count)


@dataclass
class Tally:
    """The acknowledgements of an ingest across its calls. The loader's counters are per call
    and cumulative; ``pending`` holds the requests of the current call not yet acknowledged,
    oldest first, which a new call sends again after a break."""

    pending: deque[PendingRequest] = field(default_factory=deque)
    acknowledged: int = 0
    written: int = 0
    already_present: int = 0
    skipped: int = 0
    skipped_samples: list[tuple[str, str]] = field(default_factory=list)
    _call_requests: int = 0
    _call_samples: int = 0
    _call_written: int = 0
    _call_present: int = 0
    _call_skipped: int = 0

    def new_call(self) -> None:
        """A new call starts: its counters start from 0, and every pending request is sent
        again in it."""
        self._call_requests = 0
        self._call_samples = 0
        self._call_written = 0
        self._call_present = 0
        self._call_skipped = 0

    def progress(self) -> IngestProgress:
        return IngestProgress(self.acknowledged, self.written, self.already_present, self.skipped)

    def answer(self, response: loader_pb2.IngestSamplesResponse) -> int:
        """Counts a response; returns the number of requests it acknowledged (0 for a ``done``
        response that acknowledges nothing new). Raises ValueError when the response does not
        fit what was sent (acknowledging requests not sent, counters going back)."""
        newly = response.acknowledged_requests - self._call_requests
        if newly < 0 or newly > len(self.pending):
            raise ValueError(
                f"the loader acknowledged request {response.acknowledged_requests} of a call "
                f"that sent {self._call_requests + len(self.pending)}"
            )
        if not response.done and newly == 0:
            raise ValueError(
                f"the loader answered request {response.acknowledged_requests} twice"
            )
        deltas = (
            response.acknowledged_samples - self._call_samples,
            response.written - self._call_written,
            response.already_present - self._call_present,
            response.skipped - self._call_skipped,
        )
        if min(deltas) < 0:
            raise ValueError("the loader's counters went back within a call")
        expected = sum(self.pending[i].samples for i in range(newly))
        if deltas[0] != expected:
            raise ValueError(
                f"the loader acknowledged {deltas[0]} samples for requests holding {expected}"
            )
        for _ in range(newly):
            self.pending.popleft()
        self._call_requests = response.acknowledged_requests
        self._call_samples = response.acknowledged_samples
        self._call_written = response.written
        self._call_present = response.already_present
        self._call_skipped = response.skipped
        self.acknowledged += deltas[0]
        self.written += deltas[1]
        self.already_present += deltas[2]
        self.skipped += deltas[3]
        self.skipped_samples.extend((s.source_key, s.reason) for s in response.skipped_samples)
        return newly

    def summary(self, dataset_samples: int, reconnects: int, resent: int) -> IngestSummary:
        return IngestSummary(
            self.acknowledged,
            self.written,
            self.already_present,
            self.skipped,
            list(self.skipped_samples),
            dataset_samples,
            reconnects,
            resent,
        )

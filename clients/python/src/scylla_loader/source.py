"""The sources of a mixed stream (several datasets or splits weighted in one stream), from
Python values, checked before any call."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Union

from .v1 import loader_pb2

MAX_SOURCES = 64
"""Sources a mixture may have at most (the server's limit: a source index is one byte of its
mixed schedule)."""
MAX_SAMPLES_PER_EPOCH = 2**32 - 1
"""Positions of a mixed epoch at most when ``samples_per_epoch`` is set (the server's limit,
below what the proto's uint64 could carry)."""


@dataclass(frozen=True)
class Source:
    """One source of a mixed stream: a split of a dataset and its weight.

    Attributes:
        dataset: Dataset name.
        split: ``all``, ``set/part`` or ``set@version/part`` (pin the version for a job).
        weight: Positive and finite: the source's share of the mixed epoch, and of every
            window of it, is its weight over the sum of the weights (e.g. 5:3:2 gives 50%,
            30%, 20% of every batch, give or take the rounding).
        repeat: The source may be read more than once within one mixed epoch, a fresh
            permutation per pass. Without it, a share larger than the source is refused by the
            server (INVALID_ARGUMENT naming the source); a smaller share is sub-sampled, each
            epoch taking the next slice of the source's permutation.
    """

    dataset: str
    split: str
    weight: float = 1.0
    repeat: bool = False


SourceLike = Union[
    Source,
    tuple[str, str],
    tuple[str, str, float],
    tuple[str, str, float, bool],
    Mapping[str, Any],
]
"""What ``sources=`` accepts per entry: a :class:`Source`, a tuple ``(dataset, split[, weight
[, repeat]])`` or a mapping with those keys."""

_FIELDS = ("dataset", "split", "weight", "repeat")


def _js_number(value: object) -> str:
    """A weight as the server's message prints it (JavaScript's ``String(number)``), so the
    client's words and the server's are the same."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    return f"{value!r:.80}"


def describe_source(index: int, dataset: object, split: object) -> str:
    """A source's name in messages, the server's ``describeSource``: ``source 2 (dataset
    "code", split "all")``."""

    def quoted(text: object) -> str:
        return json.dumps(text) if isinstance(text, str) else f"{text!r:.80}"

    return f"source {index} (dataset {quoted(dataset)}, split {quoted(split)})"


def to_source(value: SourceLike, index: int) -> Source:
    """``value`` as a checked :class:`Source`; a ValueError naming the source (``source 2
    (dataset "code", split "all"): ...``, the server's words for the same mistakes) when it
    cannot be one. The server would refuse it too, but only after a round trip and in a
    worker process, far from the line that made it."""
    where = f"source {index}"
    if isinstance(value, Source):
        source = value
    elif isinstance(value, Mapping):
        unknown = sorted(str(k) for k in value if k not in _FIELDS)
        if unknown:
            raise ValueError(
                f"{where}: unknown keys {', '.join(unknown)} (a source has {', '.join(_FIELDS)})"
            )
        missing = [k for k in ("dataset", "split") if k not in value]
        if missing:
            raise ValueError(f"{where}: missing {' and '.join(missing)}")
        source = Source(**value)
    elif isinstance(value, tuple) and 2 <= len(value) <= 4:
        source = Source(*value)
    else:
        raise ValueError(
            f"{where} must be a scylla_loader.Source, a (dataset, split[, weight[, repeat]]) "
            f"tuple or a mapping with those keys, got {value!r:.200}"
        )
    where = describe_source(index, source.dataset, source.split)
    for name in ("dataset", "split"):
        if not isinstance(getattr(source, name), str):
            raise ValueError(f"{where}: {name} must be a string")
    if not source.dataset:
        # Other bad names (upper case, a reserved word...) are the server's to refuse, in
        # these words too.
        raise ValueError(
            f'{where}: invalid dataset name "": use 1 to 48 characters, lower-case letters, '
            'digits and underscores, starting with a letter (e.g. "mnist" or "patient_id")'
        )
    if not source.split.strip():
        raise ValueError(f'{where}: split is required (e.g. "all")')
    weight = source.weight
    if (
        isinstance(weight, bool)
        or not isinstance(weight, (int, float))
        or not math.isfinite(weight)
        or weight <= 0
    ):
        raise ValueError(f"{where}: weight {_js_number(weight)} must be a finite number above 0")
    if not isinstance(source.repeat, bool):
        raise ValueError(f"{where}: repeat must be True or False, not {source.repeat!r:.80}")
    # One spelling of each weight, so 5 and 5.0 make the same request and checkpoint key.
    # The split trimmed as the server reads it.
    return Source(source.dataset, source.split.strip(), float(weight), source.repeat)


@dataclass(frozen=True)
class StreamInput:
    """What a stream reads: ``dataset`` and ``split``, or ``sources`` (then ``dataset`` and
    ``split`` are empty, as the proto wants them)."""

    dataset: str
    split: str
    sources: tuple[Source, ...] = ()
    samples_per_epoch: int = 0

    @property
    def mixed(self) -> bool:
        return bool(self.sources)

    def key(self) -> str:
        """A text that differs whenever the stream's samples would: the part of a checkpoint's
        stream key that says what is read (dataset|split for one source, as before mixing)."""
        if not self.sources:
            return f"{self.dataset}|{self.split}"
        parts = ", ".join(
            f"{s.dataset} {s.split} w{s.weight!r}{' repeat' if s.repeat else ''}"
            for s in self.sources
        )
        return f"sources [{parts}]|samples_per_epoch {self.samples_per_epoch}"

    def to_proto(self) -> list[loader_pb2.StreamSource]:
        return [
            loader_pb2.StreamSource(
                dataset=s.dataset, split=s.split, weight=s.weight, repeat=s.repeat
            )
            for s in self.sources
        ]


def stream_input(
    dataset: str | None,
    split: str | None,
    sources: Iterable[SourceLike] | None,
    samples_per_epoch: int,
) -> StreamInput:
    """Checks that exactly one form was given, ``dataset`` and ``split`` or ``sources`` (with
    ``samples_per_epoch``, which only a mixed stream has), and each source; a ValueError that
    names the offending source otherwise."""
    if sources is None:
        if samples_per_epoch:
            raise ValueError(
                "samples_per_epoch applies to mixed streams only: pass sources=[Source(...), ...] "
                "instead of dataset and split"
            )
        if not dataset or not split:
            given = "no split" if dataset else "no dataset"
            raise ValueError(
                f"{given}: a stream reads dataset and split (e.g. 'mnist', 'main/train'), or "
                "sources=[Source(dataset, split, weight), ...] to mix several"
            )
        return StreamInput(dataset, split)
    if dataset or split:
        raise ValueError(
            "pass either dataset and split, or sources, not both (a mixed stream names its "
            "datasets and splits in its sources)"
        )
    if isinstance(sources, (str, bytes, Mapping, Source)) or not isinstance(sources, Iterable):
        raise ValueError(
            "sources must be a list of scylla_loader.Source (or (dataset, split, weight) "
            f"tuples), got {type(sources).__name__}"
        )
    sources = list(sources)
    if len(sources) == 0:
        raise ValueError("a mixture needs at least one source (sources is empty)")
    if len(sources) > MAX_SOURCES:
        raise ValueError(f"a mixture has at most {MAX_SOURCES} sources, not {len(sources)}")
    if (
        isinstance(samples_per_epoch, bool)
        or not isinstance(samples_per_epoch, int)
        or not 0 <= samples_per_epoch <= MAX_SAMPLES_PER_EPOCH
    ):
        raise ValueError(
            f"samples_per_epoch {samples_per_epoch!r:.80} is out of range: use 0 (until the "
            "source with the largest weight per sample is used once) or 1 to "
            f"{MAX_SAMPLES_PER_EPOCH}"
        )
    checked = tuple(to_source(s, i) for i, s in enumerate(sources))
    return StreamInput("", "", checked, samples_per_epoch)

"""The StreamBatches request, from Python values."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from .source import SourceLike, stream_input
from .columns import validate_column_names
from .transform import Transform
from .v1 import loader_pb2

ShardRule = Literal["uneven", "pad", "drop"]
"""How a split's N samples are divided among W ranks: ``uneven`` (exact partition, the first
N mod W ranks get one more), ``pad`` (every rank gets ceil(N/W); up to W-1 samples repeated),
``drop`` (every rank gets floor(N/W); up to W-1 samples left out of the epoch)."""
ShuffleMode = Literal["uniform", "none"]
"""``uniform``: a random permutation per (seed, epoch); ``none``: stored order."""
Ordering = Literal["out-of-order", "in-order"]
"""``out-of-order``: a batch is emitted as soon as its samples arrived; ``in-order``: batches
follow the permutation exactly."""
MissingSamplePolicy = Literal["fail", "skip"]
"""``fail``: end with DATA_LOSS; ``skip``: leave the sample out and count it."""

_SHARD_RULES = {
    "uneven": "SHARD_RULE_UNEVEN",
    "pad": "SHARD_RULE_PAD",
    "drop": "SHARD_RULE_DROP",
}
_SHUFFLE = {"uniform": "SHUFFLE_MODE_UNIFORM", "none": "SHUFFLE_MODE_NONE"}
_ORDERING = {
    "out-of-order": "ORDERING_OUT_OF_ORDER",
    "in-order": "ORDERING_IN_ORDER",
}
_MISSING = {
    "fail": "MISSING_SAMPLE_POLICY_FAIL",
    "skip": "MISSING_SAMPLE_POLICY_SKIP",
}

_UNSPECIFIED = {
    "shard_rule": "SHARD_RULE_UNSPECIFIED",
    "shuffle": "SHUFFLE_MODE_UNSPECIFIED",
    "ordering": "ORDERING_UNSPECIFIED",
    "missing_sample_policy": "MISSING_SAMPLE_POLICY_UNSPECIFIED",
}

UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1

_JOB_ID = re.compile(r"[A-Za-z0-9_.:/-]{1,128}")
JOB_ID_RULE = "1 to 128 characters of letters, digits, '_', '-', '.', ':' and '/'"
"""What a job id (``StreamBatchesRequest.job_id``, ``GetLedger``) may be: the server's rule."""


def validate_job_id(job_id: str) -> str:
    """``job_id`` when it follows the server's rule for job names (1 to 128 letters, digits,
    ``_``, ``-``, ``.``, ``:`` and ``/``); a ValueError in the server's words naming the rule
    otherwise, before any call (the same name must reach every rank, worker and reconnection
    of a job unchanged)."""
    if not isinstance(job_id, str) or not _JOB_ID.fullmatch(job_id):
        shown = (
            json.dumps(job_id[:140], ensure_ascii=False)
            if isinstance(job_id, str)
            else type(job_id).__name__
        )
        raise ValueError(f"job_id {shown} is not a job id: use {JOB_ID_RULE}")
    return job_id


def uint32(name: str, value: int) -> int:
    """``value`` when it fits a proto uint32; a ValueError otherwise (protobuf would refuse or
    wrap it with a less helpful message)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= UINT32_MAX:
        raise ValueError(f"{name} must be an integer in [0, {UINT32_MAX}], got {value!r}")
    return value


@dataclass(frozen=True)
class Replay:
    """A recorded range of a job's batches to stream again (``stream_batches(replay=...)``):
    batches ``first`` to ``last`` (both included; ``None``: ``first`` only) of stream rank
    ``rank``'s epoch ``epoch``, as the ledger holds them (:meth:`Ledger.batches` takes the same
    values). ``world_size``: the recorded stream's world size, needed only for an epoch
    continued at another world size (a job checkpoint), whose rank has rows of both worlds;
    0 takes the only one. Values no request could carry are a ValueError here."""

    epoch: int
    rank: int
    first: int
    last: int | None = None
    world_size: int = 0

    def __post_init__(self) -> None:
        uint32("replay epoch", self.epoch)
        uint32("replay rank", self.rank)
        uint32("replay first", self.first)
        uint32("replay world_size", self.world_size)
        if self.last is not None and uint32("replay last", self.last) < self.first:
            raise ValueError(
                f"replay last ({self.last}) is below first ({self.first}): a range runs upwards"
            )

    def to_proto(self) -> loader_pb2.LedgerReplay:
        return loader_pb2.LedgerReplay(
            epoch=self.epoch,
            rank=self.rank,
            first_batch=self.first,
            last_batch=self.first if self.last is None else self.last,
            world_size=self.world_size,
        )


def skip_proto(skip_batches: tuple[int, int]) -> loader_pb2.LedgerSkip:
    """``skip_batches`` (first, last: both included) as the proto's LedgerSkip; a ValueError
    for anything else, or a range that ends before it starts."""
    if not isinstance(skip_batches, tuple) or len(skip_batches) != 2:
        raise ValueError(
            f"skip_batches must be a (first, last) tuple of batch indexes, got {skip_batches!r}"
        )
    first = uint32("skip_batches first", skip_batches[0])
    last = uint32("skip_batches last", skip_batches[1])
    if last < first:
        raise ValueError(
            f"skip_batches ends (batch {last}) before it starts (batch {first}): a range runs "
            "upwards"
        )
    return loader_pb2.LedgerSkip(first_batch=first, last_batch=last)


def _enum(table: Mapping[str, str], name: str, value: str | None) -> str:
    """The proto enum value name for ``value``; the ``_UNSPECIFIED`` one (the server's
    default) for ``None``."""
    if value is None:
        return _UNSPECIFIED[name]
    if value not in table:
        raise ValueError(f"{name} must be one of {', '.join(table)}, got {value!r}")
    return table[value]


def build_request(
    *,
    dataset: str | None = None,
    split: str | None = None,
    sources: Iterable[SourceLike] | None = None,
    samples_per_epoch: int = 0,
    batch_size: int,
    seed: int = 0,
    first_epoch: int = 0,
    epochs: int = 1,
    rank: int = 0,
    world_size: int = 1,
    shard_rule: ShardRule | None = None,
    shuffle: ShuffleMode | None = None,
    drop_last: bool = False,
    ordering: Ordering | None = None,
    prefetch: int = 0,
    missing_sample_policy: MissingSamplePolicy | None = None,
    resume_token: bytes | None = None,
    transform: Transform | None = None,
    job_checkpoint: bytes | None = None,
    columns: Iterable[str] | None = None,
    job_id: str | None = None,
    skip_batches: tuple[int, int] | None = None,
    replay: Replay | None = None,
) -> loader_pb2.StreamBatchesRequest:
    """The proto request for these fields; ``None`` enums are left to the server's default.
    Values the proto cannot carry (negative counts, a seed outside uint64, an unknown rule)
    raise a ValueError here, before any call. A ``batch_size`` of 0 is sent as it is: the
    server answers INVALID_ARGUMENT with its own limits. ``transform`` (a :class:`Transform`)
    asks the server to decode and augment each sample. ``job_checkpoint`` (from
    :func:`merge_resume_tokens`) continues a job's epoch at this rank and world size.
    ``columns`` names metadata columns each batch carries (checked here with the server's
    rules: see :func:`validate_column_names`). ``job_id`` names the training job the stream
    belongs to (checked with the server's rule: see :func:`validate_job_id`).
``skip_batches`` (first, last) leaves recorded batches out of a resumed epoch (needs
``job_id`` and ``resume_token``, not with ``job_checkpoint``); ``replay`` (a :class:`Replay`)
streams a recorded range again (needs ``job_id``, not with ``job_checkpoint``); not both.

    The stream reads either ``dataset`` and ``split``, or ``sources`` (a mixed stream: each a
    :class:`Source`, a ``(dataset, split[, weight[, repeat]])`` tuple or a mapping with those
    keys) with ``samples_per_epoch``; both or neither, an empty source list, an empty dataset
    or split, or a weight that is not finite and positive is a ValueError naming the source.
    """
    what = stream_input(dataset, split, sources, samples_per_epoch)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= UINT64_MAX:
        raise ValueError(f"seed must be an integer in [0, 2^64 - 1], got {seed!r}")
    if transform is not None and not isinstance(transform, Transform):
        raise ValueError(
            "transform must be a scylla_loader.Transform (server-side decoding), got "
            f"{type(transform).__name__}"
        )
    request = loader_pb2.StreamBatchesRequest(
        dataset=what.dataset,
        split=what.split,
        sources=what.to_proto(),
        samples_per_epoch=what.samples_per_epoch,
        batch_size=uint32("batch_size", batch_size),
        seed=seed,
        first_epoch=uint32("first_epoch", first_epoch),
        epochs=uint32("epochs", epochs),
        rank=uint32("rank", rank),
        world_size=uint32("world_size", world_size),
        shard_rule=_enum(_SHARD_RULES, "shard_rule", shard_rule),
        shuffle=_enum(_SHUFFLE, "shuffle", shuffle),
        drop_last=drop_last,
        ordering=_enum(_ORDERING, "ordering", ordering),
        prefetch=uint32("prefetch", prefetch),
        missing_sample_policy=_enum(
            _MISSING, "missing_sample_policy", missing_sample_policy
        ),
        resume_token=bytes(resume_token or b""),
        job_checkpoint=bytes(job_checkpoint or b""),
        job_id=validate_job_id(job_id) if job_id is not None else "",
    )
    if transform is not None:
        request.transform.CopyFrom(transform.to_proto())
    if columns is not None:
        request.columns.extend(validate_column_names(columns))
    if skip_batches is not None or replay is not None:
        _ledger_fields(request, skip_batches, replay)
    return request


def _ledger_fields(
    request: loader_pb2.StreamBatchesRequest,
    skip_batches: tuple[int, int] | None,
    replay: Replay | None,
) -> None:
    """Sets ``skip_batches`` or ``replay`` on ``request``, refusing with a ValueError, as the
    server would with INVALID_ARGUMENT, what it lacks or cannot be combined with."""
    what = "skip_batches" if skip_batches is not None else "replay"
    if not request.job_id:
        raise ValueError(f"{what} needs job_id: the job whose ledger holds the batches")
    if skip_batches is not None and replay is not None:
        raise ValueError("a stream is a replay or skips batches, not both")
    if request.job_checkpoint:
        raise ValueError(
            "skip_batches works with a resume_token of one rank; a job_checkpoint (a job "
            "continued at another world size) cannot name batches to skip"
            if skip_batches is not None
            else "a replay reads the ledger: leave job_checkpoint empty"
        )
    if skip_batches is not None:
        if not request.resume_token:
            raise ValueError(
                "skip_batches needs a resume_token: the batches are skipped after the point it "
                "marks"
            )
        request.skip_batches.CopyFrom(skip_proto(skip_batches))
    elif replay is not None:
        if not isinstance(replay, Replay):
            raise ValueError(
                f"replay must be a scylla_loader.Replay(epoch, rank, first, last), got {replay!r}"
            )
        request.replay.CopyFrom(replay.to_proto())

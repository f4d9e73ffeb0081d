"""A job's training ledger (:meth:`LoaderClient.ledger`): which samples each batch of a job
held, in which order, and every place a sample appeared."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from .batch import _Fail
from .columns import Column, decode_columns, validate_column_names
from .errors import LoaderError
from .request import uint32, validate_job_id
from .v1 import loader_pb2

if TYPE_CHECKING:
    from google.protobuf.timestamp_pb2 import Timestamp

MAX_BATCHES_PER_CALL = 1000
"""The most batches one GetLedger call returns (the proto's limit): :meth:`Ledger.batches`
asks for a longer range in calls of this many at most."""
_OVER_ONE_READ = "one read returns"
"""In the details of the loader's INVALID_ARGUMENT for a read of more batches or samples than
one call returns (besides 1,000 batches, at most 65,536 samples, superseded rows included)."""

LedgerCall = Callable[
    [loader_pb2.GetLedgerRequest, float | None, threading.Event | None],
    loader_pb2.GetLedgerResponse,
]
"""One GetLedger call (request, timeout, cancel) through the client's unary call helper."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class LedgerSource:
    """One source of a job: what ``source_indexes`` point at (one for a job of one split)."""

    dataset: str
    split: str


@dataclass(frozen=True, eq=False)
class LedgerBatch:
    """One recorded batch of a job, as the loader sent it.

    Attributes:
        epoch: The batch's epoch.
        rank: The stream's rank (with DataLoader workers, ``rank * workers + worker``).
        world_size: The stream's world size (a job continued at another world size has rows
            of both).
        index: The batch's index in the rank's epoch (:attr:`Batch.index`).
        id_bytes: Sample ids, 16 bytes each, in the batch's order (as :attr:`Batch.id_bytes`;
            :attr:`ids` gives them as UUID strings, as :attr:`Batch.ids`).
        source_keys: Each sample's source key (its path in the ingested dataset).
        source_indexes: Each sample's source, an index into ``sources``; empty for a job of
            one source.
        columns: The metadata columns asked for (``columns=``), by name, one value per sample
            (as :attr:`Batch.columns`).
        resume_token: The resume token sent with the batch.
        sent_at: When the loader sent it (UTC).
        superseded: Written but never received by the trainer (the stream was resumed from
            an earlier token); only listed with ``include_superseded``.
        resharded_from: Hex digest of the job checkpoint the epoch was re-sharded from; empty
            for an ordinary epoch.
        skipped: Left out of the epoch by a resume that skipped recorded batches
            (``StreamBatchesRequest.skip_batches``); never superseded.
        sources: The job's sources, in the order of its streams' requests.
    """

    epoch: int
    rank: int
    world_size: int
    index: int
    id_bytes: bytes
    source_keys: list[str]
    source_indexes: list[int]
    columns: dict[str, Column]
    resume_token: bytes
    sent_at: datetime
    superseded: bool
    resharded_from: str
    skipped: bool
    sources: tuple[LedgerSource, ...]

    def __len__(self) -> int:
        return len(self.source_keys)

    @property
    def ids(self) -> list[str]:
        """Sample ids as UUID strings, in the batch's order (compare with :attr:`Batch.ids`)."""
        raw = self.id_bytes
        return [str(uuid.UUID(bytes=raw[i : i + 16])) for i in range(0, len(raw), 16)]


@dataclass(frozen=True)
class LedgerAppearance:
    """One place a sample appeared in a job: a batch of one rank's epoch, and its position."""

    epoch: int
    rank: int
    world_size: int
    batch_index: int
    position: int
    """The sample's place in the batch, from 0."""
    sent_at: datetime
    superseded: bool
    resharded_from: str
    skipped: bool
    """In a batch left out by a resume that skipped recorded batches."""


@dataclass(frozen=True)
class SampleAppearances:
    """Every appearance of one sample in a job (:meth:`Ledger.find`), by epoch, rank and
    batch. ``sample_id`` is the sample's UUID string (as in :attr:`Batch.ids`); ``None`` when
    the loader found no sample for a source key."""

    job_id: str
    sample_id: str | None
    appearances: list[LedgerAppearance]
    sources: tuple[LedgerSource, ...]

    def __len__(self) -> int:
        return len(self.appearances)


class Ledger:
    """The training ledger of one job (:meth:`LoaderClient.ledger`): what every batch of the
    job held, recorded by the loader as it sent it (streams with ``job_id=``).

    Every method is one or more GetLedger calls: it needs role reader and a grant of every
    dataset the job streamed from (PERMISSION_DENIED otherwise); an unknown job is NOT_FOUND;
    arguments the loader refuses are INVALID_ARGUMENT; all as a :class:`LoaderError`. Values no
    request could carry (negative numbers, a backwards range, a sample given twice or not at
    all) are a ValueError, before any call. ``timeout`` (seconds, per call) and ``cancel``
    work as in :meth:`LoaderClient.create_splits`. Superseded rows (batches written but
    never received by the trainer) are left out unless ``include_superseded``.

    Example::

        ledger = client.ledger("run-7")
        spike = ledger.batches(epoch=3, rank=0, first=41_100, last=41_117)
        print([b.source_keys for b in spike])
        seen = ledger.find(source_key="train/n01440764/img_42.jpeg")
        print([(a.epoch, a.rank, a.batch_index) for a in seen.appearances])
    """

    def __init__(self, job_id: str, target: str, call: LedgerCall) -> None:
        self.job_id = validate_job_id(job_id)
        self.target = target
        self._call = call

    def __repr__(self) -> str:
        return f"Ledger({self.job_id!r} on {self.target})"

    def batches(
        self,
        epoch: int,
        rank: int,
        first: int,
        last: int | None = None,
        *,
        columns: Iterable[str] = (),
        include_superseded: bool = False,
        world_size: int | None = None,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
    ) -> list[LedgerBatch]:
        """Batches ``first`` to ``last`` (both included; ``None``: ``first`` only) of stream
        rank ``rank``'s epoch ``epoch``, by index then send time. Batches not recorded (not
        sent yet, or beyond the epoch) are simply not listed. ``columns``: metadata columns to
        return for each sample (``source_key`` always comes, as :attr:`LedgerBatch.source_keys`).
        A range longer than one call returns (1,000 batches, 65,536 samples) is read in
        several calls, in order: a call the loader refuses as too large is asked again for
        half its batches. An epoch continued at another world size (a job checkpoint) has
        rows of rank ``rank`` in each world: ``world_size`` keeps those of one."""
        whole = range_request(self.job_id, epoch, rank, first, last, columns, include_superseded)
        if world_size is not None:
            uint32("world_size", world_size)
        end = whole.batches.last_batch
        out: list[LedgerBatch] = []
        start, span = first, MAX_BATCHES_PER_CALL
        while start <= end:
            stop = min(end, start + span - 1)
            request = loader_pb2.GetLedgerRequest()
            request.CopyFrom(whole)
            request.batches.first_batch, request.batches.last_batch = start, stop
            try:
                response = self._call(request, timeout, cancel)
            except LoaderError as error:
                too_many = error.code_name == "INVALID_ARGUMENT" and _OVER_ONE_READ in error.details
                if too_many and stop > start:
                    span = (stop - start + 1) // 2
                    continue
                raise
            out += [
                row for row in to_ledger_batches(response, self.target)
                if world_size is None or row.world_size == world_size
            ]
            start = stop + 1
        return out

    def batch(
        self,
        epoch: int,
        rank: int,
        index: int,
        *,
        columns: Iterable[str] = (),
        include_superseded: bool = False,
        world_size: int | None = None,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
    ) -> LedgerBatch | None:
        """Batch ``index`` of stream rank ``rank``'s epoch ``epoch``; ``None`` when not
        recorded. With ``include_superseded``, the row the trainer received when there is one,
        else the last one sent; in an epoch continued at another world size, the last sent
        unless ``world_size`` says which world's (:meth:`batches` lists every row)."""
        rows = self.batches(
            epoch, rank, index, index, columns=columns, include_superseded=include_superseded,
            world_size=world_size, timeout=timeout, cancel=cancel,
        )
        received = [row for row in rows if not row.superseded] or rows
        return received[-1] if received else None

    def find(
        self,
        *,
        sample_id: bytes | uuid.UUID | str | None = None,
        source_key: str | None = None,
        dataset: str | None = None,
        include_superseded: bool = False,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
    ) -> SampleAppearances:
        """Every appearance of one sample in the job, by epoch, rank and batch: the sample
        given by ``sample_id`` (16 bytes, a :class:`uuid.UUID` or a UUID string as in
        :attr:`Batch.ids`) or by ``source_key`` (its path in the ingested dataset; with
        ``dataset`` when the job read several datasets). A sample the job never delivered has
        no appearances."""
        request = sample_request(self.job_id, sample_id, source_key, dataset, include_superseded)
        return to_sample_appearances(self._call(request, timeout, cancel), self.target)


def range_request(
    job_id: str,
    epoch: int,
    rank: int,
    first: int,
    last: int | None,
    columns: Iterable[str],
    include_superseded: bool,
) -> loader_pb2.GetLedgerRequest:
    """The GetLedger request of batches ``first`` to ``last`` (``None``: ``first``) of one
    rank's epoch, whatever its length (:meth:`Ledger.batches` cuts it into calls); a
    ValueError for values no request can carry or a range that ends before it starts."""
    uint32("epoch", epoch)
    uint32("rank", rank)
    uint32("first", first)
    end = first if last is None else uint32("last", last)
    if end < first:
        raise ValueError(f"last ({end}) is below first ({first}): a range runs upwards")
    request = loader_pb2.GetLedgerRequest(
        job_id=job_id,
        batches=loader_pb2.LedgerBatchRange(
            epoch=epoch, rank=rank, first_batch=first, last_batch=end
        ),
        include_superseded=include_superseded,
    )
    request.columns.extend(validate_column_names(columns))
    return request


def sample_request(
    job_id: str,
    sample_id: bytes | uuid.UUID | str | None,
    source_key: str | None,
    dataset: str | None,
    include_superseded: bool,
) -> loader_pb2.GetLedgerRequest:
    """The GetLedger request for one sample's appearances: exactly one of ``sample_id`` and
    ``source_key``, ``dataset`` only with a source key (a ValueError otherwise)."""
    if (sample_id is None) == (source_key is None):
        raise ValueError("find needs exactly one of sample_id and source_key")
    query = loader_pb2.LedgerSampleQuery()
    if sample_id is not None:
        if dataset is not None:
            raise ValueError("dataset goes with source_key (a sample id names its sample alone)")
        query.id = _id_bytes(sample_id)
    else:
        if not isinstance(source_key, str) or not source_key:
            raise ValueError(f"source_key must be a non-empty string, got {source_key!r}")
        query.source_key = source_key
        if dataset is not None:
            if not isinstance(dataset, str) or not dataset:
                raise ValueError(f"dataset must be a non-empty string, got {dataset!r}")
            query.dataset = dataset
    return loader_pb2.GetLedgerRequest(
        job_id=job_id, sample=query, include_superseded=include_superseded
    )


def _id_bytes(sample_id: bytes | uuid.UUID | str) -> bytes:
    if isinstance(sample_id, uuid.UUID):
        return sample_id.bytes
    if isinstance(sample_id, str):
        try:
            return uuid.UUID(sample_id).bytes
        except ValueError:
            raise ValueError(f"sample_id {sample_id!r} is not a UUID") from None
    if isinstance(sample_id, (bytes, bytearray, memoryview)) and len(sample_id) == 16:
        return bytes(sample_id)
    raise ValueError(
        "sample_id must be 16 bytes (Batch.id_bytes), a uuid.UUID or a UUID string, got "
        f"{sample_id!r:.80}"
    )


def to_ledger_batches(response: loader_pb2.GetLedgerResponse, target: str) -> list[LedgerBatch]:
    """The batches of a GetLedger answer; a batch whose parts disagree (id bytes, keys,
    source indexes or columns of other counts, a source index of no source) is a
    :class:`LoaderError` with code DATA_LOSS."""
    sources = _sources(response)
    return [_ledger_batch(response.job_id, m, sources, target) for m in response.batches]


def _ledger_batch(
    job_id: str, m: loader_pb2.LedgerBatch, sources: tuple[LedgerSource, ...], target: str
) -> LedgerBatch:
    fail = _Fail(
        "GetLedger", target, f" (job {job_id}, epoch {m.epoch}, rank {m.rank}, batch {m.index})",
        "ledger batch",
    )
    n = len(m.source_keys)
    if len(m.ids) != 16 * n:
        fail(f"{len(m.ids)} id bytes for {n} source keys (16 bytes each)")
    if len(m.source_indexes) not in (0, n):
        fail(f"{len(m.source_indexes)} source indexes for {n} samples")
    if any(i >= len(sources) for i in m.source_indexes):
        fail(f"source index {max(m.source_indexes)} of a job of {len(sources)} sources")
    return LedgerBatch(
        epoch=m.epoch,
        rank=m.rank,
        world_size=m.world_size,
        index=m.index,
        id_bytes=m.ids,
        source_keys=list(m.source_keys),
        source_indexes=list(m.source_indexes),
        columns=decode_columns(m.columns, n, fail),
        resume_token=m.resume_token,
        sent_at=_utc(m.sent_at),
        superseded=m.superseded,
        resharded_from=m.resharded_from,
        skipped=m.skipped,
        sources=sources,
    )


def to_sample_appearances(
    response: loader_pb2.GetLedgerResponse, target: str
) -> SampleAppearances:
    """A sample's appearances from a GetLedger answer; a sample id that is not 16 bytes (or
    absent while appearances are listed) is a :class:`LoaderError` with code DATA_LOSS."""
    fail = _Fail("GetLedger", target, f" (job {response.job_id})", "ledger answer")
    raw = response.sample_id
    if len(raw) not in (0, 16) or (not raw and response.appearances):
        fail(f"a sample id of {len(raw)} bytes with {len(response.appearances)} appearances")
    return SampleAppearances(
        job_id=response.job_id,
        sample_id=str(uuid.UUID(bytes=raw)) if raw else None,
        appearances=[
            LedgerAppearance(
                epoch=a.epoch,
                rank=a.rank,
                world_size=a.world_size,
                batch_index=a.batch_index,
                position=a.position,
                sent_at=_utc(a.sent_at),
                superseded=a.superseded,
                resharded_from=a.resharded_from,
                skipped=a.skipped,
            )
            for a in response.appearances
        ],
        sources=_sources(response),
    )


def _sources(response: loader_pb2.GetLedgerResponse) -> tuple[LedgerSource, ...]:
    return tuple(LedgerSource(s.dataset, s.split) for s in response.sources)


def _utc(stamp: Timestamp) -> datetime:
    """A protobuf Timestamp as an aware UTC datetime, to the microsecond."""
    return _EPOCH + timedelta(seconds=stamp.seconds, microseconds=stamp.nanos // 1000)

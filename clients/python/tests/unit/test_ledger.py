"""The training ledger on the client side (no loader): job ids checked with the server's rule,
GetLedger requests from Python values, answers turned into plain values, and, through an
in-process gRPC server, the call itself (errors mapped, a stream's job id kept through a
reconnection)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent import futures
from datetime import datetime, timezone
from typing import Any

import grpc
import numpy as np
import pytest

from scylla_loader import Ledger, LedgerSource, LoaderClient, LoaderError, ReconnectPolicy, Replay
from scylla_loader.ledger import (
    range_request,
    sample_request,
    to_ledger_batches,
    to_sample_appearances,
)
from scylla_loader.request import build_request, validate_job_id
from scylla_loader.v1 import loader_pb2, loader_pb2_grpc

JOB = "team-a/run:7.b_2"


def ids(*numbers: int) -> bytes:
    return b"".join(uuid.UUID(int=n).bytes for n in numbers)


# -- job ids ---------------------------------------------------------------------------------


@pytest.mark.parametrize("good", ["a", "A-z_0.9:x/y", "x" * 128, JOB])
def test_job_ids_of_the_servers_alphabet_pass(good: str) -> None:
    assert validate_job_id(good) == good
    assert build_request(dataset="d", split="all", batch_size=1, job_id=good).job_id == good


@pytest.mark.parametrize("bad", ["", "x" * 129, "run 7", "run\n", "é", "a*b", "a@b", "a\\b"])
def test_other_job_ids_are_refused_naming_the_rule(bad: str) -> None:
    rule = "is not a job id: use 1 to 128 characters of letters, digits, '_', '-', '\\.', ':' and '/'"
    with pytest.raises(ValueError, match=rule):
        validate_job_id(bad)
    with pytest.raises(ValueError, match=rule):
        build_request(dataset="d", split="all", batch_size=1, job_id=bad)
    with pytest.raises(ValueError, match=rule):
        LoaderClient("127.0.0.1:1").stream_batches("d", "all", batch_size=1, job_id=bad)
    with pytest.raises(ValueError, match=rule):
        LoaderClient("127.0.0.1:1").ledger(bad)


def test_the_refusal_quotes_the_name_as_the_server_does() -> None:
    with pytest.raises(ValueError, match='^job_id "run 7 é" is not a job id: use 1 to 128'):
        validate_job_id("run 7 é")


def test_no_job_id_sends_none() -> None:
    assert build_request(dataset="d", split="all", batch_size=1).job_id == ""


# -- requests --------------------------------------------------------------------------------


def test_a_range_is_one_request_with_both_ends_and_the_options() -> None:
    r = range_request(JOB, 3, 5, 10, 20, ["caption"], True)
    assert r.job_id == JOB and r.WhichOneof("query") == "batches"
    assert (r.batches.epoch, r.batches.rank, r.batches.first_batch, r.batches.last_batch) == (
        3, 5, 10, 20,
    )
    assert list(r.columns) == ["caption"] and r.include_superseded


def test_no_last_means_the_first_batch_only() -> None:
    r = range_request(JOB, 0, 0, 7, None, (), False)
    assert (r.batches.first_batch, r.batches.last_batch) == (7, 7)
    assert not r.include_superseded and list(r.columns) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((-1, 0, 0, None), "epoch must be an integer"),
        ((0, -1, 0, None), "rank must be an integer"),
        ((0, 0, 2**32, None), "first must be an integer"),
        ((0, 0, 0, 1.5), "last must be an integer"),
        ((0, 0, 9, 3), r"last \(3\) is below first \(9\)"),
    ],
)
def test_ranges_no_request_can_carry_fail_early(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        range_request(JOB, *args, (), False)


def test_columns_follow_the_streams_rules() -> None:
    with pytest.raises(ValueError, match="is not a metadata column name"):
        range_request(JOB, 0, 0, 0, None, ["Caption"], False)


def test_a_sample_by_id_in_any_spelling() -> None:
    u = uuid.UUID(int=42)
    for given in (u, u.bytes, str(u), bytearray(u.bytes)):
        r = sample_request(JOB, given, None, None, False)
        assert r.WhichOneof("query") == "sample" and r.sample.id == u.bytes
        assert r.sample.WhichOneof("sample") == "id" and r.sample.dataset == ""


def test_a_sample_by_source_key_with_its_dataset() -> None:
    r = sample_request(JOB, None, "train/a.jpg", "photos", True)
    assert (r.sample.source_key, r.sample.dataset, r.include_superseded) == (
        "train/a.jpg", "photos", True,
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of sample_id and source_key"),
        ({"sample_id": uuid.UUID(int=1), "source_key": "k"}, "exactly one of"),
        ({"sample_id": b"short"}, "sample_id must be 16 bytes"),
        ({"sample_id": "not-a-uuid"}, "is not a UUID"),
        ({"sample_id": uuid.UUID(int=1), "dataset": "d"}, "dataset goes with source_key"),
        ({"source_key": ""}, "source_key must be a non-empty string"),
        ({"source_key": "k", "dataset": ""}, "dataset must be a non-empty string"),
    ],
)
def test_find_refuses_what_names_no_one_sample(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sample_request(JOB, kwargs.get("sample_id"), kwargs.get("source_key"),
                       kwargs.get("dataset"), False)


# -- answers ---------------------------------------------------------------------------------


def ledger_batch(index: int, numbers: tuple[int, ...], **fields: Any) -> loader_pb2.LedgerBatch:
    fields = {"world_size": 4, **fields}
    m = loader_pb2.LedgerBatch(
        epoch=2, rank=1, index=index, ids=ids(*numbers),
        source_keys=[f"k/{n}" for n in numbers], resume_token=b"tok%d" % index, **fields,
    )
    m.sent_at.FromDatetime(datetime(2026, 11, 28, 20, 1, 2, 345678))
    return m


def answer(*batches: loader_pb2.LedgerBatch, sources: int = 1) -> loader_pb2.GetLedgerResponse:
    return loader_pb2.GetLedgerResponse(
        job_id=JOB,
        sources=[loader_pb2.LedgerSource(dataset=f"d{i}", split="all") for i in range(sources)],
        batches=batches,
    )


def test_batches_become_plain_values_in_the_answers_order() -> None:
    caption = loader_pb2.Column(
        name="caption", type=loader_pb2.COLUMN_TYPE_TEXT, text_values=["x", ""], nulls=b"\x02"
    )
    n = loader_pb2.Column(name="n", type=loader_pb2.COLUMN_TYPE_BIGINT, bigint_values=[5, 9])
    got = to_ledger_batches(
        answer(
            ledger_batch(8, (3, 1), columns=[caption, n]),
            ledger_batch(9, (7,), superseded=True, resharded_from="ab12"),
            ledger_batch(10, (8,), skipped=True),
        ),
        "here:1",
    )
    first, second, third = got
    assert (first.epoch, first.rank, first.world_size, first.index) == (2, 1, 4, 8)
    assert first.ids == [str(uuid.UUID(int=3)), str(uuid.UUID(int=1))] and len(first) == 2
    assert first.id_bytes == ids(3, 1)
    assert first.source_keys == ["k/3", "k/1"] and first.source_indexes == []
    assert first.columns["caption"].to_list() == ["x", None]
    assert first.columns["n"].values.dtype == np.int64 and first.columns["n"].to_list() == [5, 9]
    assert first.resume_token == b"tok8"
    assert first.sent_at == datetime(2026, 11, 28, 20, 1, 2, 345678, tzinfo=timezone.utc)
    assert (first.superseded, first.resharded_from, first.skipped) == (False, "", False)
    assert (second.index, second.superseded, second.resharded_from) == (9, True, "ab12")
    assert (third.index, third.superseded, third.skipped) == (10, False, True)
    assert first.sources == second.sources == (LedgerSource("d0", "all"),)


def test_a_mixtures_batches_point_at_its_sources() -> None:
    [b] = to_ledger_batches(answer(ledger_batch(0, (1, 2), source_indexes=[1, 0]), sources=2), "")
    assert [b.sources[i].dataset for i in b.source_indexes] == ["d1", "d0"]


@pytest.mark.parametrize(
    ("batch", "message"),
    [
        (loader_pb2.LedgerBatch(ids=ids(1, 2), source_keys=["a"]), "32 id bytes for 1 source keys"),
        (loader_pb2.LedgerBatch(ids=ids(1), source_keys=["a"], source_indexes=[0, 0]),
         "2 source indexes for 1 samples"),
        (loader_pb2.LedgerBatch(ids=ids(1), source_keys=["a"], source_indexes=[1]),
         "source index 1 of a job of 1 sources"),
        (loader_pb2.LedgerBatch(ids=ids(1), source_keys=["a"], columns=[loader_pb2.Column(
            name="n", type=loader_pb2.COLUMN_TYPE_INT, int_values=[1, 2])]),
         "column n: 2 values for 1 samples"),
    ],
)
def test_a_batch_whose_parts_disagree_is_data_loss(batch: loader_pb2.LedgerBatch, message: str) -> None:
    with pytest.raises(LoaderError) as caught:
        to_ledger_batches(answer(batch), "here:1")
    assert caught.value.code == grpc.StatusCode.DATA_LOSS
    assert caught.value.method == "GetLedger" and message in caught.value.details
    assert f"malformed ledger batch (job {JOB}, epoch 0, rank 0, batch 0)" in caught.value.details


def test_appearances_become_plain_values() -> None:
    response = loader_pb2.GetLedgerResponse(
        job_id=JOB, sample_id=uuid.UUID(int=5).bytes,
        sources=[loader_pb2.LedgerSource(dataset="d", split="s/train")],
        appearances=[
            loader_pb2.LedgerAppearance(epoch=0, rank=1, world_size=2, batch_index=3, position=4),
            loader_pb2.LedgerAppearance(epoch=1, rank=0, world_size=3, batch_index=6, position=0,
                                        superseded=True, resharded_from="cd"),
            loader_pb2.LedgerAppearance(epoch=2, skipped=True),
        ],
    )
    response.appearances[1].sent_at.FromSeconds(86400)
    found = to_sample_appearances(response, "")
    assert found.sample_id == str(uuid.UUID(int=5)) and found.job_id == JOB and len(found) == 3
    a, b, c = found.appearances
    assert (a.epoch, a.rank, a.world_size, a.batch_index, a.position) == (0, 1, 2, 3, 4)
    assert (a.superseded, a.resharded_from, a.skipped) == (False, "", False)
    assert (c.epoch, c.skipped) == (2, True)
    assert (b.epoch, b.batch_index, b.superseded, b.resharded_from) == (1, 6, True, "cd")
    assert b.sent_at == datetime(1970, 1, 2, tzinfo=timezone.utc)
    assert found.sources == (LedgerSource("d", "s/train"),)


def test_an_unknown_source_key_has_no_sample_and_no_appearances() -> None:
    found = to_sample_appearances(loader_pb2.GetLedgerResponse(job_id=JOB), "")
    assert found.sample_id is None and found.appearances == []


def test_appearances_without_a_16_byte_sample_id_are_data_loss() -> None:
    for raw in (b"", b"x" * 15):
        bad = loader_pb2.GetLedgerResponse(
            job_id=JOB, sample_id=raw, appearances=[loader_pb2.LedgerAppearance()]
        )
        with pytest.raises(LoaderError, match="malformed ledger answer") as caught:
            to_sample_appearances(bad, "")
        assert caught.value.code == grpc.StatusCode.DATA_LOSS


def test_batch_returns_the_received_row_and_none_when_unrecorded() -> None:
    rows = [ledger_batch(4, (1,)), ledger_batch(4, (2,), superseded=True)]
    asked: list[loader_pb2.GetLedgerRequest] = []

    def call(request: loader_pb2.GetLedgerRequest, timeout: Any, cancel: Any) -> Any:
        asked.append(request)
        return answer(*rows)

    ledger = Ledger(JOB, "here:1", call)
    got = ledger.batch(2, 1, 4, include_superseded=True)
    assert got is not None and got.ids == [str(uuid.UUID(int=1))]
    assert (asked[0].batches.first_batch, asked[0].batches.last_batch) == (4, 4)
    rows = [ledger_batch(4, (2,), superseded=True)]
    got = ledger.batch(2, 1, 4, include_superseded=True)
    assert got is not None and got.superseded
    rows = []
    assert ledger.batch(2, 1, 4) is None


def test_world_size_keeps_the_rows_of_one_world_of_a_resharded_epoch() -> None:
    def call(request: loader_pb2.GetLedgerRequest, timeout: Any, cancel: Any) -> Any:
        return answer(ledger_batch(0, (1,), world_size=2), ledger_batch(0, (2,), world_size=3))

    ledger = Ledger(JOB, "", call)
    assert [b.world_size for b in ledger.batches(0, 0, 0, 5)] == [2, 3]
    assert [b.world_size for b in ledger.batches(0, 0, 0, 5, world_size=2)] == [2]
    picked = ledger.batch(0, 0, 0, world_size=2)
    assert picked is not None and picked.ids == [str(uuid.UUID(int=1))]
    assert ledger.batch(0, 0, 0, world_size=4) is None
    with pytest.raises(ValueError, match="world_size must be an integer"):
        ledger.batches(0, 0, 0, world_size=-1)


def test_a_long_range_is_read_in_calls_of_1000_batches_joined_in_order() -> None:
    spans: list[tuple[int, int]] = []

    def call(request: loader_pb2.GetLedgerRequest, timeout: Any, cancel: Any) -> Any:
        r = request.batches
        spans.append((r.first_batch, r.last_batch))
        assert list(request.columns) == ["n"] and request.include_superseded
        return answer(ledger_batch(r.first_batch, (1,)), ledger_batch(r.last_batch, (2,)))

    got = Ledger(JOB, "", call).batches(0, 0, 5, 2005, columns=["n"], include_superseded=True)
    assert spans == [(5, 1004), (1005, 2004), (2005, 2005)]
    assert [b.index for b in got] == [5, 1004, 1005, 2004, 2005, 2005]


def test_a_call_over_the_loaders_sample_limit_is_asked_again_for_half_its_batches() -> None:
    # Batches of 256 samples: at most 256 of them fit the 65,536 samples of one read.
    spans: list[tuple[int, int]] = []

    def call(request: loader_pb2.GetLedgerRequest, timeout: Any, cancel: Any) -> Any:
        r = request.batches
        spans.append((r.first_batch, r.last_batch))
        if r.last_batch - r.first_batch + 1 > 256:
            raise LoaderError("GetLedger", "", grpc.StatusCode.INVALID_ARGUMENT,
                              f"batches {r.first_batch} to {r.last_batch} hold more than 65536 "
                              "samples, the most one read returns: ask for batches ... first")
        return answer(*(ledger_batch(i, (1,)) for i in range(r.first_batch, r.last_batch + 1)))

    got = Ledger(JOB, "", call).batches(0, 0, 0, 599)
    assert [b.index for b in got] == list(range(600))
    assert spans == [(0, 599), (0, 299), (0, 149), (150, 299), (300, 449), (450, 599)]


def test_other_refusals_of_a_range_are_raised_at_once() -> None:
    calls = 0

    def call(request: loader_pb2.GetLedgerRequest, timeout: Any, cancel: Any) -> Any:
        nonlocal calls
        calls += 1
        raise LoaderError("GetLedger", "", grpc.StatusCode.INVALID_ARGUMENT,
                          'column "nope" is not in dataset d')

    with pytest.raises(LoaderError, match="nope"):
        Ledger(JOB, "", call).batches(0, 0, 0, 599, columns=["nope"])
    assert calls == 1


# -- calls through a real (in-process) gRPC server -------------------------------------------


class FakeLoader(loader_pb2_grpc.LoaderServiceServicer):  # type: ignore[misc]
    """GetLedger answers ``ledger_status`` when set, else one batch; StreamBatches sends one
    batch per call and breaks the first call with UNAVAILABLE after it."""

    def __init__(self) -> None:
        self.ledger_requests: list[loader_pb2.GetLedgerRequest] = []
        self.ledger_metadata: list[dict[str, str]] = []
        self.ledger_status: tuple[grpc.StatusCode, str] | None = None
        self.stream_requests: list[loader_pb2.StreamBatchesRequest] = []
        self.lock = threading.Lock()

    def GetLedger(self, request: Any, context: grpc.ServicerContext) -> Any:
        self.ledger_requests.append(request)
        self.ledger_metadata.append(dict(context.invocation_metadata()))
        if self.ledger_status is not None:
            context.abort(*self.ledger_status)
        return answer(ledger_batch(request.batches.first_batch, (1, 2)))

    def StreamBatches(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        with self.lock:
            self.stream_requests.append(request)
            call = len(self.stream_requests)
        yield loader_pb2.StreamBatchesResponse(
            batch=loader_pb2.Batch(
                epoch=request.first_epoch, index=call - 1, ids=ids(call), labels=[0],
                data=b"x", data_sizes=[1], resume_token=b"after %d" % call,
            )
        )
        if call == 1:
            context.abort(grpc.StatusCode.UNAVAILABLE, "loader restarting")


@pytest.fixture()
def fake() -> Iterator[tuple[FakeLoader, str]]:
    servicer = FakeLoader()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    loader_pb2_grpc.add_LoaderServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield servicer, f"127.0.0.1:{port}"
    finally:
        server.stop(0)


def test_ledger_reads_go_out_as_getledger_calls_with_the_clients_token(
    fake: tuple[FakeLoader, str],
) -> None:
    servicer, target = fake
    with LoaderClient(target, token="s3cret", insecure_token=True) as client:
        got = client.ledger(JOB).batches(1, 2, 3, 4, columns=["caption"])
    assert [b.ids for b in got] == [[str(uuid.UUID(int=1)), str(uuid.UUID(int=2))]]
    [request] = servicer.ledger_requests
    assert request.job_id == JOB and request.batches.epoch == 1 and request.batches.rank == 2
    assert list(request.columns) == ["caption"]
    assert servicer.ledger_metadata[0]["authorization"] == "Bearer s3cret"


@pytest.mark.parametrize(
    "code",
    [grpc.StatusCode.NOT_FOUND, grpc.StatusCode.PERMISSION_DENIED,
     grpc.StatusCode.INVALID_ARGUMENT],
)
def test_refusals_are_loader_errors_with_the_status(
    fake: tuple[FakeLoader, str], code: grpc.StatusCode
) -> None:
    servicer, target = fake
    servicer.ledger_status = (code, f"job {JOB} says no")
    with LoaderClient(target) as client:
        with pytest.raises(LoaderError) as caught:
            client.ledger(JOB).find(source_key="k/1")
    assert caught.value.code == code and caught.value.method == "GetLedger"
    assert caught.value.details == f"job {JOB} says no"
    assert str(caught.value) == f"GetLedger on {target} {code.name}: job {JOB} says no"


def test_a_reconnected_stream_names_the_same_job(fake: tuple[FakeLoader, str]) -> None:
    servicer, target = fake
    policy = ReconnectPolicy(initial_backoff=0.01, max_backoff=0.01)
    with LoaderClient(target, reconnect=policy) as client:
        stream = client.stream_batches("d", "all", batch_size=2, seed=5, job_id=JOB)
        got = [b.index for b in stream]
    assert got == [0, 1] and stream.reconnects == 1
    first, second = servicer.stream_requests[:2]
    assert first.job_id == second.job_id == JOB
    assert (first.resume_token, second.resume_token) == (b"", b"after 1")
    # Every other field of the request is sent again unchanged.
    second.resume_token = b""
    assert second == first


def test_a_dataset_names_its_job_in_every_stream_and_keeps_it_in_its_state(
    fake: tuple[FakeLoader, str],
) -> None:
    from scylla_loader.torch import LoaderDataset

    servicer, target = fake
    dataset = LoaderDataset(target, "d", "all", batch_size=1, job_id=JOB, epoch=3,
                            reconnect=ReconnectPolicy(initial_backoff=0.01, max_backoff=0.01))
    items = list(dataset)
    assert len(items) == 2  # the first call broke after one batch and was resumed
    assert [r.job_id for r in servicer.stream_requests] == [JOB, JOB]
    assert [r.first_epoch for r in servicer.stream_requests] == [3, 3]
    state = dataset.state_dict()
    assert state["job_id"] == JOB and state["epoch"] == 3
    assert "job" not in state["stream"], "a job id is no part of the stream key"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"resume_token": b"checkpoint", "skip_batches": (4, 6)},
        {"replay": Replay(2, 1, 10, 12, world_size=3)},
    ],
)
def test_a_reconnect_after_a_batch_drops_the_skip_and_keeps_the_replay(
    fake: tuple[FakeLoader, str], kwargs: dict[str, Any]
) -> None:
    # A skip applies once, where it was asked for: a reconnect after a batch (perhaps in a
    # later epoch, where the same range would mean other batches) goes on without it. A
    # replay continues after its token, over the same range.
    servicer, target = fake
    policy = ReconnectPolicy(initial_backoff=0.01, max_backoff=0.01)
    with LoaderClient(target, reconnect=policy) as client:
        stream = client.stream_batches("d", "all", batch_size=2, job_id=JOB, **kwargs)
        assert len(list(stream)) == 2 and stream.reconnects == 1
    first, second = servicer.stream_requests[:2]
    assert first.resume_token == kwargs.get("resume_token", b"")
    assert second.resume_token == b"after 1"
    if "skip_batches" in kwargs:
        assert first.HasField("skip_batches") and not second.HasField("skip_batches")
        second.skip_batches.CopyFrom(first.skip_batches)
    else:
        assert first.HasField("replay") and second.replay == first.replay
    second.resume_token = first.resume_token
    assert second == first

"""The pure logic of LoaderClient.ingest: inputs made into samples, metadata columns inferred,
samples encoded and cut into requests by count and bytes, acknowledgements counted across
calls. The call itself (backpressure, resend after a break, errors) is tested against a real
loader in tests/integration/test_ingest.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from scylla_loader import IngestProgress, IngestSample
from scylla_loader.ingest import (
    DEFAULT_REQUEST_BYTES,
    PendingRequest,
    Tally,
    cut_requests,
    encode_sample,
    encode_target,
    infer_columns,
    to_sample,
)
from scylla_loader.ingest_call import IngestRun
from scylla_loader.retry import ReconnectPolicy
from scylla_loader.v1 import loader_pb2

MIB = 1024 * 1024


def decode(payload: bytes) -> loader_pb2.IngestSamplesRequest:
    return loader_pb2.IngestSamplesRequest.FromString(payload)


# -- inputs -------------------------------------------------------------------------------


def test_a_dict_and_a_dataclass_make_the_same_sample() -> None:
    fields: dict[str, Any] = {
        "source_key": "a/1", "data": b"xyz", "label": 3, "label_blob": b"\x01",
        "metadata": {"split": "train"},
    }
    assert to_sample(fields, 0) == to_sample(IngestSample(**fields), 0) == IngestSample(**fields)
    assert to_sample({"source_key": "k", "data": b"d"}, 0) == IngestSample("k", b"d")


@pytest.mark.parametrize(
    ("item", "error", "message"),
    [
        ({"source_key": "k"}, ValueError, "sample 4: needs source_key and data"),
        ({"source_key": "k", "data": b"d", "lable": 1}, ValueError, "unknown keys \\['lable'\\]"),
        ({"source_key": 7, "data": b"d"}, TypeError, "source_key must be a str"),
        (("k", b"d"), TypeError, "expected an IngestSample or a dict, got tuple"),
    ],
)
def test_bad_inputs_name_the_item(item: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        to_sample(item, 4)


# -- metadata columns ---------------------------------------------------------------------


def samples_with(*metadata: dict[str, Any] | None) -> list[IngestSample]:
    return [IngestSample(f"k{i}", b"d", 0, None, m) for i, m in enumerate(metadata)]


def test_columns_are_inferred_from_python_and_numpy_scalars() -> None:
    columns = infer_columns(samples_with(
        {"name": "a", "flag": True, "n": 3, "w": 0.5,
         "np_name": np.str_("b"), "np_flag": np.bool_(False), "np_n": np.int32(4),
         "np_w": np.float32(0.25), "np_u": np.uint8(7)},
    ))
    assert columns == {
        "name": "text", "flag": "boolean", "n": "bigint", "w": "double",
        "np_name": "text", "np_flag": "boolean", "np_n": "bigint", "np_w": "double",
        "np_u": "bigint",
    }


def test_ints_and_floats_make_double_and_nones_alone_make_text() -> None:
    columns = infer_columns(samples_with({"w": 1, "x": None}, None, {"w": 2.5, "x": None}))
    assert columns == {"w": "double", "x": "text"}
    # A None first does not hide the type of a later value.
    assert infer_columns(samples_with({"n": None}, {"n": 4})) == {"n": "bigint"}


def test_other_mixes_and_non_scalars_are_refused() -> None:
    with pytest.raises(ValueError, match="'n' has both bigint and boolean values .* columns="):
        infer_columns(samples_with({"n": 1}, {"n": True}))
    with pytest.raises(ValueError, match="'n' has both text and bigint"):
        infer_columns(samples_with({"n": "1"}, {"n": 1}))
    with pytest.raises(ValueError, match="metadata 'v' is a list"):
        infer_columns(samples_with({"v": [1, 2]}))


# -- encoding -----------------------------------------------------------------------------


def test_a_sample_encodes_every_field_and_metadata_kind() -> None:
    sample = IngestSample(
        "photos/cat 1.jpg", b"\x00\xffdata", np.int64(2), bytearray(b"mask"),  # type: ignore[arg-type]
        {"name": "x", "ok": np.bool_(True), "n": -(2**40), "w": np.float32(0.5), "gone": None},
    )
    request = decode(encode_sample(sample))
    assert len(request.samples) == 1 and not request.HasField("target")
    got = request.samples[0]
    assert (got.source_key, got.data, got.label, got.label_blob) == (
        "photos/cat 1.jpg", b"\x00\xffdata", 2, b"mask")
    assert {k: v.WhichOneof("kind") for k, v in got.metadata.items()} == {
        "name": "text", "ok": "boolean", "n": "int", "w": "double"}
    assert (got.metadata["name"].text, got.metadata["ok"].boolean,
            got.metadata["n"].int, got.metadata["w"].double) == ("x", True, -(2**40), 0.5)


def test_a_sample_without_label_has_no_label_field() -> None:
    got = decode(encode_sample(IngestSample("k", memoryview(b"d"), label_blob=b"b"))).samples[0]  # type: ignore[arg-type]
    assert not got.HasField("label") and got.label_blob == b"b" and got.data == b"d"


@pytest.mark.parametrize(
    ("sample", "error", "message"),
    [
        (IngestSample("k", b"d", 2**31), ValueError, "label 2147483648 is outside int32"),
        (IngestSample("k", b"d", 1.5), TypeError, "label must be an int, got float"),  # type: ignore[arg-type]
        (IngestSample("k", "text", 1), TypeError, "data must be bytes, got str"),  # type: ignore[arg-type]
        (IngestSample("k", b"d", 1, None, {"n": 2**63}), ValueError, "outside int64"),
        (IngestSample("k", b"d", 1, None, {"n": (1,)}), ValueError, "'n' is a tuple"),
    ],
)
def test_samples_that_cannot_be_sent_are_refused(
    sample: IngestSample, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        encode_sample(sample)


def test_the_target_put_before_samples_makes_one_request_with_both() -> None:
    target = encode_target("ds", ["cat", "dog"], {"w": "double"}, "skip", "python")
    samples = b"".join(encode_sample(IngestSample(f"k{i}", b"d", 1)) for i in range(3))
    request = decode(target + samples)
    assert request.target.dataset == "ds"
    assert list(request.target.label_names) == ["cat", "dog"]
    assert dict(request.target.columns) == {"w": "double"}
    assert request.target.bad_sample_policy == loader_pb2.BAD_SAMPLE_POLICY_SKIP
    assert request.target.source == "python"
    assert [s.source_key for s in request.samples] == ["k0", "k1", "k2"]
    with pytest.raises(ValueError, match="bad_samples must be 'fail' or 'skip'"):
        encode_target("ds", [], {}, "ignore", "python")


# -- requests -----------------------------------------------------------------------------


def pieces(sizes: list[int]) -> list[tuple[bytes, int]]:
    return [(encode_sample(IngestSample(f"k{i}", b"x" * n, 0)), 1) for i, n in enumerate(sizes)]


def test_requests_are_cut_by_count() -> None:
    requests = list(cut_requests(pieces([10] * 130), max_samples=64, max_bytes=DEFAULT_REQUEST_BYTES))
    assert [r.samples for r in requests] == [64, 64, 2]
    keys = [s.source_key for r in requests for s in decode(r.payload).samples]
    assert keys == [f"k{i}" for i in range(130)]


def test_requests_are_cut_by_bytes_and_a_large_sample_goes_alone() -> None:
    made = pieces([MIB, MIB, MIB, MIB, 5 * MIB, 10, 10])
    requests = list(cut_requests(made, max_samples=64, max_bytes=4 * MIB))
    assert [r.samples for r in requests] == [3, 1, 1, 2]
    assert all(len(r.payload) <= 4 * MIB for r in requests if r.samples > 1)
    assert len(requests[2].payload) > 5 * MIB


def test_cutting_reads_no_sample_before_it_is_needed() -> None:
    pulled = 0

    def source() -> Iterator[tuple[bytes, int]]:
        nonlocal pulled
        for piece in pieces([10] * 1000):
            pulled += 1
            yield piece

    requests = cut_requests(source(), max_samples=64, max_bytes=DEFAULT_REQUEST_BYTES)
    next(requests)
    assert pulled == 64
    next(requests)
    assert pulled == 128


def never_called(*_: Any) -> Any:
    raise AssertionError("no call in a unit test")


def run_of(samples: Any, **options: Any) -> IngestRun:
    args: dict[str, Any] = {
        "open_call": never_called, "target": "t", "policy": ReconnectPolicy(), "dataset": "ds",
        "samples": samples, "label_names": (), "columns": None, "bad_samples": "fail",
        "source": "python", "samples_per_request": 4, "max_unacknowledged": 8,
        "on_progress": None, "timeout": None,
    }
    args.update(options)
    return IngestRun(**args)


def test_columns_come_from_the_first_requests_samples() -> None:
    samples: list[Any] = [
        {"source_key": "a", "data": b"1", "label": 0, "metadata": {"w": 1}},
        IngestSample("b", b"2", 0, None, {"w": 0.5, "name": "x"}),
        {"source_key": "c", "data": b"3", "label": 0},
        {"source_key": "d", "data": b"4", "label": 0, "metadata": {"name": None}},
        {"source_key": "e", "data": b"5", "label": 0, "metadata": {"w": 2, "name": "y"}},
        {"source_key": "f", "data": b"6", "label": 0, "metadata": {"late": True}},
    ]
    run = run_of(samples)
    requests = run._request_stream()
    first = next(requests)
    target = decode(run._target_bytes).target
    assert dict(target.columns) == {"w": "double", "name": "text"}
    assert first.samples == 4
    # A key first seen later goes to the loader, whose bad-sample policy decides.
    second = decode(next(requests).payload)
    assert [dict(s.metadata) != {} for s in second.samples] == [True, True]
    assert list(second.samples[1].metadata) == ["late"]


def test_given_columns_are_used_as_they_are() -> None:
    run = run_of([IngestSample("a", b"1", 0, None, {"n": 1})], columns={"n": "int", "s": "text"})
    assert [r.samples for r in run._request_stream()] == [1]
    assert dict(decode(run._target_bytes).target.columns) == {"n": "int", "s": "text"}
    with pytest.raises(ValueError, match="column 'n': type must be one of"):
        run_of([], columns={"n": "integer"})


def test_the_byte_cap_leaves_room_for_the_target() -> None:
    names = [f"class number {i}" for i in range(20000)]  # a target of about 350 kB
    samples = [IngestSample(f"k{i}", b"x" * (512 * 1024), 0) for i in range(16)]
    run = run_of(samples, label_names=names, samples_per_request=64, max_request_bytes=4 * MIB)
    requests = list(run._request_stream())
    assert all(len(run._target_bytes) + len(r.payload) <= 4 * MIB for r in requests)
    assert sum(r.samples for r in requests) == 16 and requests[0].samples == 7


def test_options_are_checked_before_any_sample_is_read() -> None:
    def untouched() -> Iterator[IngestSample]:
        raise AssertionError("read")
        yield

    with pytest.raises(ValueError, match="bad_samples"):
        run_of(untouched(), bad_samples="drop")
    with pytest.raises(ValueError, match="max_unacknowledged"):
        run_of(untouched(), max_unacknowledged=0)
    with pytest.raises(ValueError, match="label_names"):
        run_of(untouched(), label_names="cat")
    with pytest.raises(ValueError, match="dataset"):
        run_of(untouched(), dataset="")


# -- acknowledgements ---------------------------------------------------------------------


def response(requests: int, samples: int, written: int, present: int, skipped: int,
             skips: tuple[tuple[str, str], ...] = (), done: bool = False,
             dataset_samples: int = 0) -> loader_pb2.IngestSamplesResponse:
    return loader_pb2.IngestSamplesResponse(
        acknowledged_requests=requests, acknowledged_samples=samples, written=written,
        already_present=present, skipped=skipped,
        skipped_samples=[loader_pb2.SkippedSample(source_key=k, reason=r) for k, r in skips],
        done=done, dataset_samples=dataset_samples,
    )


def test_the_tally_counts_across_calls_and_keeps_what_a_break_left_unacknowledged() -> None:
    tally = Tally()
    tally.pending.extend(PendingRequest(b"", n) for n in (4, 4, 3))
    assert tally.answer(response(1, 4, 4, 0, 0)) == 1
    assert tally.answer(response(2, 8, 7, 0, 1, (("bad", "has no data (0 bytes)"),))) == 1
    assert tally.progress() == IngestProgress(8, 7, 0, 1)
    assert [r.samples for r in tally.pending] == [3]
    # The call breaks; a new call sends the last request again and counts from 0.
    tally.new_call()
    tally.pending.append(PendingRequest(b"", 2))
    assert tally.answer(response(2, 5, 0, 3, 2, (("x", "r1"), ("y", "r2")))) == 2
    assert tally.answer(response(2, 5, 0, 3, 2, done=True, dataset_samples=12)) == 0
    summary = tally.summary(12, reconnects=1, resent=1)
    assert (summary.acknowledged, summary.written, summary.already_present, summary.skipped) == (
        13, 7, 3, 3)
    assert summary.skipped_samples == [("bad", "has no data (0 bytes)"), ("x", "r1"), ("y", "r2")]
    assert (summary.dataset_samples, summary.reconnects, summary.resent_requests) == (12, 1, 1)
    assert not tally.pending


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (response(3, 6, 6, 0, 0), "acknowledged request 3 of a call that sent 2"),
        (response(1, 5, 5, 0, 0), "acknowledged 5 samples for requests holding 2"),
        (response(0, 0, 0, 0, 0), "answered request 0 twice"),
    ],
)
def test_answers_that_do_not_fit_the_requests_are_refused(
    answer: loader_pb2.IngestSamplesResponse, message: str
) -> None:
    tally = Tally()
    tally.pending.extend([PendingRequest(b"", 2), PendingRequest(b"", 4)])
    with pytest.raises(ValueError, match=message):
        tally.answer(answer)


def test_counters_going_back_within_a_call_are_refused() -> None:
    tally = Tally()
    tally.pending.extend([PendingRequest(b"", 2), PendingRequest(b"", 2)])
    tally.answer(response(1, 2, 2, 0, 0))
    with pytest.raises(ValueError, match="went back"):
        tally.answer(response(2, 4, 1, 3, 0))

"""Mixed-stream requests: the sources reach the proto as given, and every wrong form fails
before any call with a message that names the offending source."""

from __future__ import annotations

from typing import Any

import pytest

from scylla_loader import LoaderClient, Source
from scylla_loader.request import build_request
from scylla_loader.source import stream_input
from scylla_loader.v1 import loader_pb2


def test_sources_and_samples_per_epoch_reach_the_proto_with_dataset_and_split_empty() -> None:
    r = build_request(
        sources=[Source("web", "main/train", 5), Source("books", "all", 3.5),
                 Source("code", "s@2/p", 2, repeat=True)],
        samples_per_epoch=2**32 - 1, batch_size=8, seed=3,
    )
    assert r.dataset == "" and r.split == "" and r.samples_per_epoch == 2**32 - 1
    assert [(s.dataset, s.split, s.weight, s.repeat) for s in r.sources] == [
        ("web", "main/train", 5.0, False), ("books", "all", 3.5, False),
        ("code", "s@2/p", 2.0, True),
    ]
    # What the server reads back from the wire is the same request.
    assert loader_pb2.StreamBatchesRequest.FromString(r.SerializeToString()) == r


def test_tuples_mappings_and_generators_are_sources_too() -> None:
    as_objects = build_request(
        sources=[Source("a", "all"), Source("b", "x/y", 2.0), Source("c", "all", 1.5, True)],
        batch_size=1,
    )
    loose: list[Any] = [("a", "all"), ("b", "x/y", 2), {"dataset": "c", "split": "all",
                                                        "weight": 1.5, "repeat": True}]
    assert build_request(sources=iter(loose), batch_size=1) == as_objects


def test_a_single_source_request_is_unchanged() -> None:
    r = build_request(dataset="d", split="all", batch_size=1)
    assert len(r.sources) == 0 and r.samples_per_epoch == 0 and r.dataset == "d"


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({}, "no dataset: a stream reads dataset and split"),
        ({"dataset": "d"}, "no split: a stream reads dataset and split"),
        ({"split": "all"}, "no dataset"),
        ({"dataset": "d", "split": "all", "sources": [Source("e", "all")]},
         "either dataset and split, or sources, not both"),
        ({"split": "all", "sources": [Source("e", "all")]}, "not both"),
        ({"dataset": "d", "split": "all", "samples_per_epoch": 10},
         "samples_per_epoch applies to mixed streams only"),
        ({"sources": []}, "a mixture needs at least one source"),
        ({"sources": [Source(f"d{i}", "all") for i in range(65)]},
         "a mixture has at most 64 sources, not 65"),
        ({"sources": "web"}, "sources must be a list"),
        ({"sources": Source("web", "all")}, "sources must be a list"),
        ({"sources": [Source("e", "all")], "samples_per_epoch": -1},
         r"samples_per_epoch -1 is out of range: use 0 \(until the source with the largest "
         r"weight per sample is used once\) or 1 to 4294967295"),
        ({"sources": [Source("e", "all")], "samples_per_epoch": 2**32},
         "samples_per_epoch 4294967296 is out of range"),
        ({"sources": [Source("e", "all")], "samples_per_epoch": 1.5},
         "samples_per_epoch 1.5 is out of range"),
    ],
)
def test_exactly_one_form_is_given(form: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_request(batch_size=1, **form)


W = r'source 2 \(dataset "c", split "all"\)'


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        # The server's words for the same mistakes (src/core/mixing/validateMix.ts).
        (Source("c", "all", 0), W + ": weight 0 must be a finite number above 0$"),
        (Source("c", "all", -1.5), W + ": weight -1.5 must be a finite number above 0$"),
        (Source("c", "all", float("nan")), W + ": weight NaN must be"),
        (Source("c", "all", float("inf")), W + ": weight Infinity must be"),
        (Source("c", "all", True), W + ": weight True must be"),
        (Source("c", "all", "2"), W + ": weight '2' must be"),  # type: ignore[arg-type]
        (Source("", "all"), r'source 2 \(dataset "", split "all"\): invalid dataset name "": '
                            "use 1 to 48 characters"),
        (Source("c", ""), r'source 2 \(dataset "c", split ""\): split is required \(e.g. "all"\)'),
        (Source("c", "  "), r'source 2 \(dataset "c", split "  "\): split is required'),
        (Source("c", None), r"source 2 \(dataset \"c\", split None\): split must be a string"),  # type: ignore[arg-type]
        (Source("c", "all", 1, "yes"), W + ": repeat must be True or False, not 'yes'"),  # type: ignore[arg-type]
        (("c",), r"source 2 must be a scylla_loader.Source, a \(dataset, split"),
        (("c", "all", 1, False, "x"), r"source 2 must be a scylla_loader.Source"),
        (["c", "all"], r"source 2 must be a scylla_loader.Source"),
        ({"dataset": "c", "split": "all", "wieght": 2}, r"source 2: unknown keys wieght"),
        ({"dataset": "c"}, r"source 2: missing split"),
    ],
)
def test_a_bad_source_is_named_by_its_index(bad: Any, message: str) -> None:
    good = [Source("a", "all"), ("b", "all", 2.0)]
    with pytest.raises(ValueError, match=message):
        build_request(sources=[*good, bad], batch_size=1)


def test_bad_sources_fail_in_stream_batches_before_any_call() -> None:
    # Nothing listens on port 1: a request that got as far as a call would fail otherwise
    # (and only once iterated).
    with LoaderClient("127.0.0.1:1") as client:
        with pytest.raises(ValueError, match=r'source 1 \(dataset "b", split "all"\): weight -2'):
            client.stream_batches(sources=[Source("a", "all"), Source("b", "all", -2)],
                                  batch_size=4)
        with pytest.raises(ValueError, match="not both"):
            client.stream_batches("a", "all", sources=[Source("b", "all")], batch_size=4)
        with pytest.raises(ValueError, match="no dataset"):
            client.stream_batches(batch_size=4)


def test_the_key_of_a_mixed_stream_changes_with_anything_that_changes_its_samples() -> None:
    base = [Source("a", "all", 5), Source("b", "all", 3), Source("c", "all", 2, True)]

    def key(sources: list[Source], samples_per_epoch: int = 0) -> str:
        return stream_input(None, None, sources, samples_per_epoch).key()

    variants = [
        key(base), key(base, 100), key(base[::-1]), key(base[:2]),
        key([Source("a", "all", 5), Source("b", "all", 3), Source("c", "all", 2)]),
        key([Source("a", "all", 5), Source("b", "all", 4), Source("c", "all", 2, True)]),
        key([Source("a", "all", 5), Source("b", "x/y", 3), Source("c", "all", 2, True)]),
    ]
    assert len(set(variants)) == len(variants)
    # One spelling per weight: 5 and 5.0 are the same stream.
    assert key([Source("a", "all", 5.0), Source("b", "all", 3.0), Source("c", "all", 2.0, True)]) == key(base)
    assert stream_input("d", "all", None, 0).key() == "d|all"

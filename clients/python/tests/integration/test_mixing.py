"""Mixed streams (several datasets weighted in one stream) against a real loader and the real
node: a StatefulDataLoader checkpoint of a 5:3:2 mixture with a small repeated source resumes
in a new process with exactly the samples of an uninterrupted run; a mixture of an
integer-labelled and a blob-labelled dataset gives each sample its own source's label; and a
source the server refuses is named in its error. The datasets are written here through the
loader (`pym_<hex>`) and dropped when the module ends."""

from __future__ import annotations

import collections
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from torch.utils.data import DataLoader

from scylla_loader import IngestSample, LoaderClient, LoaderError, Source
from scylla_loader.torch import LoaderDataset

from .conftest import split_ids
from .loader_process import LoaderProcess, drop_test_datasets
from .test_torch import run_module

pytestmark = pytest.mark.integration

SIZES = {"big": 600, "mid": 400, "small": 30, "ints": 120, "blobs": 80}
"""Samples per dataset. `small` is far below its share of the 1,000-sample mixed epoch (200),
so it must repeat; `big` and `mid` are above theirs (500, 300), so they are sub-sampled."""


def data_of(name: str, i: int) -> bytes:
    """A sample's bytes name it, so a received sample tells which one it is."""
    return f"{name}/{i}/".encode() + secrets.token_bytes(16)


def label_of(i: int) -> int:
    return i % 7


def blob_of(i: int) -> bytes:
    return f"mask-{i}".encode() * (1 + i % 3)


def make(name: str, n: int) -> list[IngestSample]:
    if name == "blobs":
        return [IngestSample(f"s/{i}", data_of(name, i), label_blob=blob_of(i)) for i in range(n)]
    return [IngestSample(f"s/{i}", data_of(name, i), label=label_of(i)) for i in range(n)]


@pytest.fixture(scope="module")
def datasets(loader: LoaderProcess) -> Iterator[dict[str, str]]:
    """The module's datasets by role, written through the loader; dropped at the end."""
    names = {role: f"pym_{secrets.token_hex(6)}" for role in SIZES}
    try:
        with LoaderClient(loader.target) as client:
            for role, n in SIZES.items():
                summary = client.ingest(names[role], make(role, n), timeout=300)
                assert summary.dataset_samples == n
        yield names
    finally:
        drop_test_datasets("pym", list(names.values()))


Items = dict[int, list[list[tuple[int, str]]]]


def mixing_run(loader: LoaderProcess, tmp: Path, name: str, **args: Any) -> Items:
    """One trainer process of mixing_run.py; its items per epoch as (source, id) pairs."""
    out = tmp / f"{name}.json"
    p = run_module("tests.integration.mixing_run",
                   json.dumps({"target": loader.target, "out": str(out), **args}))
    assert p.wait(timeout=300) == 0, name
    return {int(e): [[(int(s), i) for s, i in item] for item in items]
            for e, items in json.loads(out.read_text()).items()}


def test_a_checkpoint_of_a_mixed_stream_resumes_in_a_new_process_exactly_the_rest(
    loader: LoaderProcess, datasets: dict[str, str], tmp_path: Path
) -> None:
    sources = [
        {"dataset": datasets["big"], "split": "all", "weight": 5},
        {"dataset": datasets["mid"], "split": "all", "weight": 3},
        {"dataset": datasets["small"], "split": "all", "weight": 2, "repeat": True},
    ]
    spec = {"sources": sources, "samples_per_epoch": 1000, "batch_size": 50, "seed": 17,
            "first": 0, "last": 1}
    reference = mixing_run(loader, tmp_path, "reference", **spec)
    ids = {s: set(split_ids(loader.target, datasets[role], "all"))
           for s, role in enumerate(("big", "mid", "small"))}

    for epoch in (0, 1):
        pairs = [p for item in reference[epoch] for p in item]
        assert len(pairs) == 1000
        by_source = collections.Counter(s for s, _ in pairs)
        # 5:3:2 of 1,000 (the epoch's windows hold the weights, so the whole does too).
        assert all(abs(by_source[s] - n) <= 2 for s, n in enumerate((500, 300, 200))), by_source
        for s in range(3):
            counts = collections.Counter(i for src, i in pairs if src == s)
            assert set(counts) <= ids[s], f"source {s} delivered samples of another dataset"
            if s < 2:
                assert max(counts.values()) == 1, f"sub-sampled source {s} repeated a sample"
            else:
                # 30 samples in about 200 places: every sample before any comes again.
                assert set(counts) == ids[2]
                assert max(counts.values()) - min(counts.values()) <= 1, counts
    # Sub-sampled sources take the next slice of their permutation in the next epoch.
    for s in (0, 1):
        taken = [{i for item in reference[e] for src, i in item if src == s} for e in (0, 1)]
        assert taken[0] != taken[1]

    checkpoint = str(tmp_path / "mixed-mid-epoch.pt")
    before = mixing_run(loader, tmp_path, "before", **spec, stop_after=7, save_to=checkpoint)
    assert list(before) == [0] and len(before[0]) == 7
    after = mixing_run(loader, tmp_path, "after", **spec, load=checkpoint)

    def multiset(items: list[list[tuple[int, str]]]) -> collections.Counter[tuple[int, str]]:
        return collections.Counter(p for item in items for p in item)

    assert multiset(before[0]) + multiset(after[0]) == multiset(reference[0])
    assert multiset(after[1]) == multiset(reference[1])
    # In order, even: the resumed process continues the reference's sequence of items.
    assert before[0] + after[0] == reference[0]
    assert after[1] == reference[1]


def test_a_mixture_of_integer_and_blob_labels_gives_each_sample_its_sources_label(
    loader: LoaderProcess, datasets: dict[str, str]
) -> None:
    ints, blobs = datasets["ints"], datasets["blobs"]
    seen: collections.Counter[int] = collections.Counter()
    blob_samples: list[int] = []
    with LoaderClient(loader.target) as client:
        # Equal weights, samples_per_epoch 0: the epoch lasts until the source with the
        # largest weight per sample (blobs: 80 samples against 120) delivered each of its
        # samples once, and ints is sub-sampled to the same share.
        stream = client.stream_batches(
            sources=[Source(ints, "all"), Source(blobs, "all")], batch_size=32, seed=5,
            timeout=120,
        )
        for batch in stream:
            assert batch.source_indexes is not None and len(batch.source_indexes) == len(batch)
            for k, source in enumerate(batch.source_indexes.tolist()):
                name, number = bytes(batch.samples[k]).split(b"/")[:2]
                i = int(number)
                blob = bytes(batch.label_blobs[k]) if batch.label_blobs is not None else b""
                if source == 0:
                    assert name.decode() == "ints"
                    assert (int(batch.labels[k]), blob) == (label_of(i), b"")
                else:
                    assert name.decode() == "blobs"
                    assert (int(batch.labels[k]), blob) == (-1, blob_of(i))
                    blob_samples.append(i)
                seen[source] += 1
    assert sorted(blob_samples) == list(range(SIZES["blobs"]))
    assert abs(seen[0] - SIZES["blobs"]) <= 1, seen

    # The same through LoaderDataset with workers: integer labels, -1 for the blob source,
    # whose blobs come as bytes.
    dataset = LoaderDataset(loader.target, sources=[(ints, "all"), (blobs, "all")],
                            batch_size=32, seed=5, with_sources=True, return_label_blobs=True)
    through_torch: collections.Counter[int] = collections.Counter()
    for samples, labels, label_blobs, sources in DataLoader(dataset, batch_size=None,
                                                            num_workers=2):
        assert len(samples) == len(labels) == len(label_blobs) == len(sources)
        for sample, label, blob, source in zip(samples, labels.tolist(), label_blobs,
                                               sources.tolist()):
            name, number = sample.split(b"/")[:2]
            i = int(number)
            assert name.decode() == ("ints", "blobs")[source]
            assert (label, blob) == ((label_of(i), b"") if source == 0 else (-1, blob_of(i)))
            through_torch[source] += 1
    assert through_torch == seen


def test_a_share_larger_than_its_source_without_repeat_is_refused_naming_it(
    loader: LoaderProcess, datasets: dict[str, str]
) -> None:
    # The mixture of the checkpoint test without repeat: only `small` (200 of 1,000 positions
    # for 30 samples) is too small for its share.
    sources = [Source(datasets["big"], "all", 5), Source(datasets["mid"], "all", 3),
               Source(datasets["small"], "all", 2)]
    with LoaderClient(loader.target) as client:
        with pytest.raises(LoaderError) as caught:
            next(iter(client.stream_batches(sources=sources, samples_per_epoch=1000,
                                            batch_size=50, timeout=60)))
    assert caught.value.code_name == "INVALID_ARGUMENT"
    assert caught.value.details.startswith(
        f'source 2 (dataset "{datasets["small"]}", split "all") would fill 200 positions of a '
        "mixed epoch of 1000 but has 30 samples"
    ), caught.value.details

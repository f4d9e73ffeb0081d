"""LoaderClient.ingest against real loader processes writing to the real node: every sample
stored once and readable back byte for byte, resumption after a SIGKILLed loader, a re-run
after an interrupted ingest, backpressure, bad samples, the examples, and tokens. Each test
writes its own datasets (`pyi_<hex>`), dropped when the module ends."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from PIL import Image

from scylla_loader import (
    IngestProgress,
    IngestSample,
    LoaderClient,
    LoaderError,
    ReconnectPolicy,
)

from .loader_process import LoaderProcess, cli, drop_test_datasets, free_port

pytestmark = pytest.mark.integration

PACKAGE = Path(__file__).resolve().parents[2]
SAMPLE_ID_NAMESPACE = uuid.UUID("3f6c1d2e-8b4a-5c7e-9d10-2a4b6c8e0f13")
"""src/core/schema/sampleId.ts: a sample's id is uuid5(source key, uuid5(dataset, this))."""

N = 10_000


@pytest.fixture(scope="module")
def made() -> Iterator[list[str]]:
    """Names of the datasets this module writes; dropped at its end."""
    names: list[str] = []
    yield names
    drop_test_datasets("pyi", names)


@pytest.fixture()
def dataset(made: list[str]) -> str:
    name = f"pyi_{secrets.token_hex(6)}"
    made.append(name)
    return name


def sample_id(dataset: str, key: str) -> str:
    return str(uuid.uuid5(uuid.uuid5(SAMPLE_ID_NAMESPACE, dataset), key))


def make_sample(i: int) -> IngestSample:
    data = i.to_bytes(4, "big") + secrets.token_bytes(60 + i % 50)
    return IngestSample(f"item/{i}", data, i % 10, None,
                        {"shard": i % 7, "name": f"n{i}", "weight": i / 3, "even": i % 2 == 0})


def stored(target: str, dataset: str, token: str | None = None) -> dict[str, bytes]:
    """Every sample of the dataset by id, from one stream of split `all`."""
    out: dict[str, bytes] = {}
    with LoaderClient(target, token=token, insecure_token=token is not None) as client:
        for batch in client.stream_batches(dataset, "all", batch_size=2048, timeout=300):
            for i, sample_id_ in enumerate(batch.ids):
                assert sample_id_ not in out, f"{sample_id_} streamed twice"
                out[sample_id_] = bytes(batch.samples[i])
    return out


def assert_exactly(target: str, dataset: str, samples: list[IngestSample]) -> None:
    """The dataset holds these samples, each once, with their bytes, and a metadata row for
    each (a split set over the whole metadata table has them all)."""
    with LoaderClient(target) as client:
        assert client.describe_dataset(dataset, timeout=60).sample_count == len(samples)
        split = client.create_splits(dataset, "whole", parts={"every": 1}, timeout=300)
        assert [p.size for p in split.parts] == [len(samples)]
    expected = {sample_id(dataset, s.source_key): s.data for s in samples}
    assert stored(target, dataset) == expected


def test_ingest_of_10000_samples_stores_each_once_and_again_finds_them_stored(
    loader: LoaderProcess, dataset: str
) -> None:
    samples = [make_sample(i) for i in range(N)]
    progress: list[IngestProgress] = []
    with LoaderClient(loader.target) as client:
        summary = client.ingest(dataset, samples, on_progress=progress.append,
                                label_names=[f"c{i}" for i in range(10)])
        assert (summary.acknowledged, summary.written, summary.already_present,
                summary.skipped, summary.dataset_samples, summary.reconnects) == (N, N, 0, 0, N, 0)
        assert summary.skipped_samples == []
        # One callback per request of 64, totals growing to the summary's.
        assert len(progress) == -(-N // 64)
        assert [p.acknowledged for p in progress] == sorted(p.acknowledged for p in progress)
        assert progress[-1] == IngestProgress(N, N, 0, 0)
        described = client.describe_dataset(dataset, timeout=60)
        assert described.label_names == [f"c{i}" for i in range(10)]
        assert described.class_counts == {c: N // 10 for c in range(10)}
        assert described.columns == {
            "shard": "bigint", "name": "text", "weight": "double", "even": "boolean"}
        # The same samples again, as dicts this time: all found stored, nothing written.
        again = client.ingest(dataset, ({"source_key": s.source_key, "data": s.data,
                                         "label": s.label, "metadata": s.metadata}
                                        for s in samples))
        assert (again.acknowledged, again.written, again.already_present,
                again.dataset_samples) == (N, 0, N, N)
    assert_exactly(loader.target, dataset, samples)


def test_a_loader_sigkilled_half_way_is_resumed_by_resending_the_unacknowledged_requests(
    loader: LoaderProcess, resume_key: str, tmp_path: Path, dataset: str
) -> None:
    # One process (no cluster workers): the signals reach the process serving the call.
    process = LoaderProcess(tmp_path, resume_key, port=free_port(), extra_args=["--workers", "1"])
    process.start()
    samples = [make_sample(i) for i in range(N)]
    frozen_at: list[int] = []

    def kill_and_restart() -> None:
        time.sleep(1.0)  # the client fills its window meanwhile: requests no one answers
        process.kill()
        process.start()  # same port: the client's next call reaches the new process

    restart = threading.Thread(target=kill_and_restart)

    def freeze_half_way(progress: IngestProgress) -> None:
        if not frozen_at and progress.acknowledged >= N // 2:
            frozen_at.append(progress.acknowledged)
            assert process.process is not None
            os.kill(process.process.pid, signal.SIGSTOP)
            restart.start()

    try:
        # A loader restart takes 10-30 s on a loaded 2-core machine: the default policy (10
        # attempts, 13-26 s in all) could give up before it serves again.
        with LoaderClient(process.target,
                          reconnect=ReconnectPolicy(attempts=60, max_backoff=1.0)) as client:
            summary = client.ingest(dataset, samples, on_progress=freeze_half_way)
    finally:
        if restart.is_alive():
            restart.join()
        process.stop()
    # Read once stopped: the loader logs the call's end after sending `done`.
    ends = [e for e in process.events() if e.get("event") == "ingest_end"]
    assert N // 2 <= frozen_at[0] < N
    assert summary.reconnects >= 1
    # The window was full when the loader died: its 8 requests were sent again.
    assert summary.resent_requests == 8
    # Each sample acknowledged once over both calls: written by one of them, or by the killed
    # one before it could acknowledge (then found stored by the second).
    assert summary.acknowledged == N
    assert summary.written + summary.already_present == N and summary.skipped == 0
    assert summary.already_present <= 8 * 64
    assert summary.dataset_samples == N
    # The restarted loader's call: the rest, from the first request the first call left
    # unacknowledged (up to 7 more requests of 64 were acknowledged when the freeze landed).
    assert ends and ends[-1]["code"] == "OK"
    assert N - frozen_at[0] - 7 * 64 <= int(str(ends[-1]["samples"])) <= N - frozen_at[0]
    assert_exactly(loader.target, dataset, samples)


def test_an_ingest_interrupted_by_the_callers_iterable_completes_when_run_again(
    loader: LoaderProcess, dataset: str
) -> None:
    samples = [make_sample(i) for i in range(N)]

    def interrupted() -> Iterator[IngestSample]:
        for i, sample in enumerate(samples):
            if i == N // 2:
                raise KeyboardInterrupt  # Ctrl-C in the middle of reading the data
            yield sample

    acknowledged: list[int] = []
    with LoaderClient(loader.target) as client:
        with pytest.raises(KeyboardInterrupt):
            client.ingest(dataset, interrupted(),
                          on_progress=lambda p: acknowledged.append(p.acknowledged))
        assert 0 < acknowledged[-1] <= N // 2
        summary = client.ingest(dataset, samples)
    assert summary.acknowledged == N
    # Found stored: every sample acknowledged before the interruption, and perhaps some
    # sent but not acknowledged; none after the interruption was read.
    assert acknowledged[-1] <= summary.already_present <= N // 2
    assert summary.written + summary.already_present == N
    assert summary.dataset_samples == N
    assert_exactly(loader.target, dataset, samples)


def test_the_callers_iterable_is_read_no_further_than_the_window_allows(
    loader: LoaderProcess, dataset: str
) -> None:
    pulled = 0
    ahead: list[int] = []

    def counted() -> Iterator[IngestSample]:
        nonlocal pulled
        for i in range(3000):
            pulled += 1
            yield IngestSample(f"k/{i}", secrets.token_bytes(2000), 0)

    def watch(progress: IngestProgress) -> None:
        ahead.append(pulled - progress.acknowledged)

    with LoaderClient(loader.target) as client:
        summary = client.ingest(dataset, counted(), samples_per_request=16,
                                max_unacknowledged=2, on_progress=watch)
    assert summary.acknowledged == summary.written == 3000
    # At most 2 requests in flight, the one being built and the sample that closed it.
    assert len(ahead) == 3000 // 16 + 1
    assert max(ahead) <= 3 * 16 + 1


def test_bad_samples_are_skipped_with_their_reasons_or_fail_the_ingest_naming_them(
    loader: LoaderProcess, dataset: str
) -> None:
    good = [IngestSample(f"ok/{i}", b"x", i % 2, None, {"n": i}) for i in range(100)]
    bad = [
        IngestSample("empty", b"", 0),
        IngestSample("no-label", b"x"),
        IngestSample("label-3", b"x", 3),
        IngestSample("other-column", b"x", 0, None, {"m": 1}),
        IngestSample("wrong-type", b"x", 0, None, {"n": "seven"}),
    ]
    mixed = good[:50] + bad + good[50:]
    with LoaderClient(loader.target) as client:
        summary = client.ingest(dataset, mixed, bad_samples="skip", label_names=["a", "b"],
                                samples_per_request=8)
        assert (summary.written, summary.skipped, summary.dataset_samples) == (100, 5, 100)
        reasons = dict(summary.skipped_samples)
        assert list(reasons) == [s.source_key for s in bad]
        assert "has no data" in reasons["empty"]
        assert "neither a label nor a label blob" in reasons["no-label"]
        assert "2 classes" in reasons["label-3"]
        assert '"m", which is not a column' in reasons["other-column"]
        assert "is a text value, but the column is bigint" in reasons["wrong-type"]
        with pytest.raises(LoaderError) as caught:
            client.ingest(dataset, [IngestSample("fine", b"x", 1), IngestSample("label-9", b"x", 9)],
                          label_names=["a", "b"])
        assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert "label-9" in caught.value.details and "2 classes" in caught.value.details
        # Other class names than the dataset's are refused.
        with pytest.raises(LoaderError) as renamed:
            client.ingest(dataset, [IngestSample("x", b"x", 0)], label_names=["cat", "dog"])
        assert renamed.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_samples_without_labels_ingest_unlabelled_stream_as_minus_one_and_refuse_a_balanced_split(
    loader: LoaderProcess, dataset: str
) -> None:
    samples = [{"source_key": f"pair/{i}", "data": b"img" + bytes([i]),
                "metadata": {"caption": f"caption {i}"}} for i in range(40)]
    with LoaderClient(loader.target) as client:
        summary = client.ingest(dataset, samples)
        assert (summary.written, summary.skipped, summary.dataset_samples) == (40, 0, 40)
        described = client.describe_dataset(dataset, timeout=60)
        assert (described.label_names, described.class_counts) == ([], {-1: 40})
        labels: dict[str, int] = {}
        for batch in client.stream_batches(dataset, "all", batch_size=16, timeout=300):
            labels.update(zip(batch.ids, batch.labels.tolist()))
        assert labels == {sample_id(dataset, s["source_key"]): -1 for s in samples}
        with pytest.raises(LoaderError) as refused:
            client.create_splits(dataset, "bal", parts={"a": 1, "b": 1}, class_targets="balanced")
        assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert (f"dataset {dataset} is unlabelled: none of its 40 samples (after the filters) "
                "has a label, so a balanced split") in refused.value.details
        split = client.create_splits(dataset, "nat", parts={"train": 3, "val": 1})
        assert sum(p.size for p in split.parts) == 40
        streamed = [i for part in ("nat/train", "nat/val")
                    for b in client.stream_batches(dataset, part, batch_size=16, timeout=300)
                    for i in b.labels.tolist()]
        assert streamed == [-1] * 40


def run_example(name: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(PACKAGE / "examples" / name), *args],
        cwd=PACKAGE, capture_output=True, text=True, timeout=600,
        env={**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_torchvision_example_ingests_fake_data_and_an_image_folder(
    loader: LoaderProcess, made: list[str], tmp_path: Path
) -> None:
    fake, folder = f"pyi_{secrets.token_hex(6)}", f"pyi_{secrets.token_hex(6)}"
    made += [fake, folder]
    out = run_example("ingest_torchvision.py", "--target", loader.target, "--dataset", fake,
                      "--size", "300")
    assert "300 written, 0 already present, 0 skipped" in out
    assert "0 written, 300 already present" in run_example(
        "ingest_torchvision.py", "--target", loader.target, "--dataset", fake, "--size", "300")
    root = tmp_path / "tree"
    files = {}
    for cls in ("ant", "bee"):
        (root / cls).mkdir(parents=True)
        for i in range(3):
            path = root / cls / f"{i}.jpg"
            Image.new("RGB", (8, 8), (i * 40, 0, 0)).save(path)
            files[path] = path.read_bytes()
    run_example("ingest_torchvision.py", "--target", loader.target, "--dataset", folder,
                "--image-folder", str(root), "--key-prefix", "tree")
    with LoaderClient(loader.target) as client:
        assert client.describe_dataset(fake, timeout=60).sample_count == 300
        described = client.describe_dataset(folder, timeout=60)
    assert described.label_names == ["ant", "bee"] and described.class_counts == {0: 3, 1: 3}
    # The files' own bytes (JPEG), keyed by their paths under the root: tree/ant/0.jpg.
    expected = {sample_id(folder, f"tree/{p.relative_to(root).as_posix()}"): data
                for p, data in files.items()}
    assert stored(loader.target, folder) == expected


@pytest.mark.parametrize("plain", [False, True], ids=["datasets.Dataset", "list of dicts"])
def test_the_huggingface_example_ingests_a_small_dataset(
    loader: LoaderProcess, dataset: str, plain: bool
) -> None:
    if not plain:
        pytest.importorskip("datasets")
    out = run_example("ingest_huggingface.py", "--target", loader.target, "--dataset", dataset,
                      *(["--plain"] if plain else []))
    assert f"({'list' if plain else 'Dataset'}): 500 written" in out
    with LoaderClient(loader.target) as client:
        described = client.describe_dataset(dataset, timeout=60)
    assert described.sample_count == 500
    assert described.label_names == ["cat", "dog", "bird"]
    assert described.columns == {"brightness": "double", "camera": "text"}
    images = stored(loader.target, dataset)
    assert sample_id(dataset, "train/0") in images
    assert all(data.startswith(b"\x89PNG") for data in images.values())


# -- tokens -------------------------------------------------------------------------------


def _token(name: str, role: str, datasets: str) -> tuple[str, dict[str, object]]:
    made = cli("auth", "new-token", "--name", name, "--role", role, "--datasets", datasets,
               timeout=120)
    assert made.returncode == 0, made.stderr
    entry: dict[str, object] = json.loads(made.stderr.strip().splitlines()[-1])
    return made.stdout.strip(), entry


def test_ingest_needs_a_writer_token_for_the_dataset(
    resume_key: str, database: None, tmp_path: Path, dataset: str
) -> None:
    tokens = {
        "reader": _token("trainer", "reader", dataset),
        "writer": _token("pipeline", "writer", dataset),
        "other_writer": _token("elsewhere", "writer", "some_other_dataset"),
    }
    tokens_file = tmp_path / "tokens.json"
    tokens_file.write_text(json.dumps({"tokens": [entry for _, entry in tokens.values()]}))
    process = LoaderProcess(tmp_path, resume_key, extra_args=["--auth-tokens", str(tokens_file)])
    process.start()
    samples = [IngestSample(f"t/{i}", b"x", 0) for i in range(10)]
    try:
        for who, words in (("reader", "has role reader, and IngestSamples needs role writer"),
                           ("other_writer", f'may not use dataset "{dataset}"')):
            with LoaderClient(process.target, token=tokens[who][0], insecure_token=True) as client:
                with pytest.raises(LoaderError) as caught:
                    client.ingest(dataset, samples, timeout=60)
            assert caught.value.code == grpc.StatusCode.PERMISSION_DENIED, who
            assert words in caught.value.details, caught.value.details
        writer = tokens["writer"][0]
        with LoaderClient(process.target, token=writer, insecure_token=True) as client:
            with pytest.raises(LoaderError) as absent:  # the refused calls made nothing
                client.describe_dataset(dataset, timeout=60)
            assert absent.value.code == grpc.StatusCode.NOT_FOUND
            summary = client.ingest(dataset, samples, timeout=60)
        assert (summary.written, summary.dataset_samples) == (10, 10)
        assert len(stored(process.target, dataset, token=writer)) == 10
    finally:
        process.stop()

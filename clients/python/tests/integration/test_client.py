"""LoaderClient against a real loader and the real node."""

from __future__ import annotations

import threading
import time

import grpc
import pytest

from scylla_loader import LoaderClient, LoaderError, ReconnectInfo, ReconnectPolicy

from .conftest import Mnist, split_ids
from .loader_process import LoaderProcess, free_port

pytestmark = pytest.mark.integration


def test_describe_list_and_get_split(loader: LoaderProcess, mnist: Mnist) -> None:
    with LoaderClient(loader.target) as client:
        description = client.describe_dataset(mnist.dataset)
        assert description.sample_count == 70000
        assert sum(description.class_counts.values()) == 70000
        sets = client.list_splits(mnist.dataset)
        assert any(s.name == "main" for s in sets)
        main = client.get_split(mnist.dataset, "main")
        assert mnist.val in main.streamable_splits
        assert main.part("val").size == mnist.sizes["val"]


def test_a_stream_yields_every_sample_of_the_split_once(loader: LoaderProcess, mnist: Mnist) -> None:
    with LoaderClient(loader.target) as client:
        seen: list[str] = []
        labels = 0
        batches = list(client.stream_batches(mnist.dataset, mnist.val, batch_size=500, seed=7))
        for b in batches:
            seen += b.ids
            labels += int((b.labels >= 0).sum())
            assert all(len(s) > 50 and bytes(s[:4]) == b"\x89PNG" for s in b.samples)
        assert len(seen) == len(set(seen)) == mnist.sizes["val"] == labels
        assert [b.index for b in batches] == list(range(len(batches)))
        assert [b.last_in_epoch for b in batches] == [False] * (len(batches) - 1) + [True]


def test_a_token_resumes_right_after_its_batch(loader: LoaderProcess, mnist: Mnist) -> None:
    with LoaderClient(loader.target) as client:
        stream = client.stream_batches(mnist.dataset, mnist.val, batch_size=300, seed=1, ordering="in-order")
        first = [next(stream) for _ in range(5)]
        stream.close()
        rest = client.stream_batches(
            mnist.dataset, mnist.val, batch_size=300, seed=1, ordering="in-order",
            resume_token=first[-1].resume_token,
        )
        ids = [i for b in first for i in b.ids] + [i for b in rest for i in b.ids]
    assert ids == split_ids_in_order(loader, mnist)


def split_ids_in_order(loader: LoaderProcess, mnist: Mnist) -> list[str]:
    with LoaderClient(loader.target) as client:
        stream = client.stream_batches(mnist.dataset, mnist.val, batch_size=300, seed=1, ordering="in-order")
        return [i for b in stream for i in b.ids]


def test_unknown_dataset_and_split_are_not_found_with_the_servers_message(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    with LoaderClient(loader.target) as client:
        with pytest.raises(LoaderError) as caught:
            next(iter(client.stream_batches("no_such_dataset", "all", batch_size=8)))
        assert caught.value.code == grpc.StatusCode.NOT_FOUND
        assert "no_such_dataset" in caught.value.details and "does not exist" in caught.value.details
        with pytest.raises(LoaderError) as caught:
            next(iter(client.stream_batches(mnist.dataset, "main/nope", batch_size=8)))
        assert caught.value.code == grpc.StatusCode.NOT_FOUND
        assert "nope" in caught.value.details and "train" in caught.value.details
        with pytest.raises(LoaderError) as caught:
            client.describe_dataset("no_such_dataset")
        assert caught.value.code_name == "NOT_FOUND"
        with pytest.raises(LoaderError) as caught:
            client.get_split(mnist.dataset, "no_such_set")
        assert caught.value.code_name == "NOT_FOUND"


def test_batch_size_zero_is_invalid_argument(loader: LoaderProcess, mnist: Mnist) -> None:
    with LoaderClient(loader.target) as client:
        with pytest.raises(LoaderError) as caught:
            next(iter(client.stream_batches(mnist.dataset, mnist.val, batch_size=0)))
    assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "batch_size" in caught.value.details


def test_a_corrupt_resume_token_is_refused(loader: LoaderProcess, mnist: Mnist) -> None:
    with LoaderClient(loader.target) as client:
        token = next(iter(client.stream_batches(mnist.dataset, mnist.val, batch_size=64))).resume_token
        damaged = bytes([token[0] ^ 0xFF]) + token[1:]
        with pytest.raises(LoaderError) as caught:
            next(iter(client.stream_batches(mnist.dataset, mnist.val, batch_size=64, resume_token=damaged)))
    assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "token" in caught.value.details


def test_an_unreachable_target_fails_after_the_configured_attempts_naming_it() -> None:
    target = f"127.0.0.1:{free_port()}"
    attempts: list[ReconnectInfo] = []
    policy = ReconnectPolicy(attempts=3, initial_backoff=0.05, max_backoff=0.2)
    with LoaderClient(target, reconnect=policy) as client:
        started = time.monotonic()
        with pytest.raises(LoaderError) as caught:
            next(iter(client.stream_batches("mnist", "all", batch_size=8, on_reconnect=attempts.append)))
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE
    assert target in str(caught.value) and "gave up after 3 reconnection attempts" in str(caught.value)
    assert [a.attempt for a in attempts] == [1, 2, 3]
    assert time.monotonic() - started < 10


def test_cancel_from_another_thread_ends_the_stream(loader: LoaderProcess, mnist: Mnist) -> None:
    with LoaderClient(loader.target) as client:
        stream = client.stream_batches(mnist.dataset, mnist.train, batch_size=16)
        next(stream)
        threading.Timer(0.2, stream.cancel).start()
        with pytest.raises(LoaderError) as caught:
            for _ in stream:
                time.sleep(0.01)
    assert caught.value.code == grpc.StatusCode.CANCELLED


def test_the_timeout_covers_the_whole_stream(loader: LoaderProcess, mnist: Mnist) -> None:
    with LoaderClient(loader.target) as client:
        with pytest.raises(LoaderError) as caught:
            for _ in client.stream_batches(mnist.dataset, mnist.train, batch_size=16, timeout=0.5):
                time.sleep(0.01)
    assert caught.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


def test_the_whole_split_ids_helper_agrees_with_the_split_size(loader: LoaderProcess, mnist: Mnist) -> None:
    ids = split_ids(loader.target, mnist.dataset, mnist.test)
    assert len(ids) == len(set(ids)) == mnist.sizes["test"]

"""What a training loop sees of LoaderDataset: len() equal to the items the loop counts,
epochs that advance with non-persistent workers, a batching DataLoader refused, the raw
layout; against a real loader and the real node."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader

from scylla_loader import Source, Transform
from scylla_loader.torch import LoaderDataset

from .conftest import Mnist
from .loader_process import LoaderProcess
from .test_torch import stream_ids

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("rule", ["pad", "uneven", "drop"])
def test_len_is_what_the_loop_counts_for_each_rule_and_worker_count(
    loader: LoaderProcess, mnist: Mnist, rule: str
) -> None:
    # Rank 1 of 3 and a batch size that does not divide the shares: every rule and worker
    # count gives its own share lengths and a partial last batch.
    for workers in range(4):
        for drop_last in (False, True):
            dataset = LoaderDataset(
                loader.target, mnist.dataset, mnist.val, batch_size=301, rank=1, world_size=3,
                shard_rule=rule, drop_last=drop_last, num_workers=workers,  # type: ignore[arg-type]
                transform=len,
            )
            data = DataLoader(dataset, batch_size=None, num_workers=workers)
            counted = sum(1 for _ in data)
            assert len(data) == len(dataset) == counted > 0, (rule, workers, drop_last)


def test_len_of_mixtures_follows_samples_per_epoch(loader: LoaderProcess, mnist: Mnist) -> None:
    sources = [Source(mnist.dataset, mnist.val, 1), Source(mnist.dataset, mnist.test, 3)]
    for samples_per_epoch in (0, 5000):
        dataset = LoaderDataset(
            loader.target, sources=sources, samples_per_epoch=samples_per_epoch,
            batch_size=256, num_workers=2, transform=len,
        )
        counted = sum(1 for _ in DataLoader(dataset, batch_size=None, num_workers=2))
        assert len(dataset) == counted
    # 0: the test split (largest weight per sample) once, the val split a third of that.
    assert dataset.epoch_size() == 5000
    n = mnist.sizes["test"]
    mixed = LoaderDataset(loader.target, sources=sources, batch_size=256, num_workers=0)
    assert mixed.epoch_size() == n + round(n / 3)


def test_len_needs_the_worker_count_and_checks_it(loader: LoaderProcess, mnist: Mnist) -> None:
    with pytest.raises(TypeError, match="num_workers="):
        len(LoaderDataset(loader.target, mnist.dataset, mnist.val, batch_size=64))
    dataset = LoaderDataset(loader.target, mnist.dataset, mnist.val, batch_size=64, num_workers=2)
    with pytest.raises(ValueError, match="num_workers=2.*num_workers=0"):
        next(iter(DataLoader(dataset, batch_size=None)))


def test_non_persistent_workers_advance_epochs_and_follow_set_epoch(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    dataset = LoaderDataset(loader.target, "mnist", mnist.val, batch_size=500, seed=3, return_ids=True)
    data = DataLoader(dataset, batch_size=None, num_workers=2)  # new worker processes each pass

    def worker0() -> set[str]:
        # The DataLoader takes turns between its workers: worker 0 made items 0, 2, 4, ...
        return {i for ids in [ids for _s, _l, ids in data][::2] for i in ids}

    def expected(epoch: int) -> set[str]:
        return stream_ids(loader.target, mnist.val, epoch=epoch, rank=0, world=2, seed=3)

    assert [worker0() for _ in range(3)] == [expected(0), expected(1), expected(2)]
    assert expected(0) != expected(1)
    dataset.set_epoch(7)
    assert [worker0(), worker0()] == [expected(7), expected(8)]


def test_a_batching_dataloader_fails_at_the_first_batch_naming_batch_size_none(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    dataset = LoaderDataset(loader.target, mnist.dataset, mnist.val, batch_size=64)
    for workers in (0, 1):
        with pytest.raises(Exception, match=r"batch_size=None"):
            next(iter(DataLoader(dataset, num_workers=workers)))  # default batch_size=1
    images, _ = next(iter(DataLoader(dataset, batch_size=None)))
    assert len(images) == 64


def test_raw_batches_in_nchw_are_views_of_the_nhwc_bytes(loader: LoaderProcess, mnist: Mnist) -> None:
    transform = Transform(channels=3, center_crop=(20, 20))
    common = dict(batch_size=128, seed=3, ordering="in-order", server_transform=transform)
    nhwc, _ = next(iter(LoaderDataset(loader.target, mnist.dataset, mnist.val, **common)))  # type: ignore[arg-type]
    nchw, _ = next(iter(LoaderDataset(loader.target, mnist.dataset, mnist.val, raw_layout="NCHW", **common)))  # type: ignore[arg-type]
    assert nhwc.shape == (128, 20, 20, 3) and nchw.shape == (128, 3, 20, 20)
    assert torch.equal(nchw, nhwc.permute(0, 3, 1, 2))
    assert not nchw.is_contiguous()  # a view over the received bytes, not a copy
    with pytest.raises(ValueError, match="raw_layout"):
        LoaderDataset(loader.target, mnist.dataset, mnist.val, batch_size=8, raw_layout="NCHW")


LEN_THEN_FORK = """
import json, os, sys
from torch.utils.data import DataLoader
from scylla_loader.torch import LoaderDataset

def threads():
    names = []
    for t in os.listdir("/proc/self/task"):
        try:
            names.append(open(f"/proc/self/task/{t}/comm").read().strip())
        except FileNotFoundError:  # a thread that ended meanwhile
            pass
    return sorted(names)

target, dataset, split = sys.argv[1:4]
data = LoaderDataset(target, dataset, split, batch_size=500, num_workers=2, transform=len)
before = threads()
n = len(data)  # as Lightning and the Trainer do, right before the workers fork
after = threads()
counted = sum(1 for _ in DataLoader(data, batch_size=None, num_workers=2))
try:
    len(LoaderDataset(target, dataset, "main/trian", batch_size=500, num_workers=2))
    error = None
except ValueError as e:
    error = str(e)
# The control, last: a channel of this process, used and still open, shows gRPC's threads.
from scylla_loader import LoaderClient
with LoaderClient(target) as client:
    client.describe_dataset(dataset)
    control = threads()
print(json.dumps({"before": before, "after": after, "len": n, "counted": counted, "error": error,
                  "control": control}))
"""


def test_len_asks_the_loader_without_starting_grpc_in_the_process_that_forks_workers(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    # A fresh interpreter: this test process has used gRPC already.
    import collections
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", LEN_THEN_FORK, loader.target, mnist.dataset, mnist.val],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # gRPC's core threads (which outlive a closed channel by milliseconds, long enough for a
    # fork to copy their locks) never started here.
    started = collections.Counter(result["after"]) - collections.Counter(result["before"])
    assert not started, started
    assert collections.Counter(result["control"]) - collections.Counter(result["before"])
    assert result["len"] == result["counted"] > 0
    assert result["error"] is not None and "no part 'trian'" in result["error"]


# The fork with a client open is the point here; forksafe's warning about it is expected.
@pytest.mark.filterwarnings("ignore:this process forks with:RuntimeWarning")
def test_len_works_in_a_process_whose_own_channel_to_the_loader_is_open(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    # The child that asks for len() inherits this process's connection through fork; a channel
    # taking it from grpc's process-wide pool failed about 1 call in 20 with UNAVAILABLE
    # "Wrong file descriptor generation" (so did DataLoader workers' first calls).
    from scylla_loader import LoaderClient

    with LoaderClient(loader.target) as client:
        for _ in range(100):
            client.describe_dataset(mnist.dataset)
            dataset = LoaderDataset(loader.target, mnist.dataset, mnist.val, batch_size=500, num_workers=0)
            assert len(dataset) == -(-mnist.sizes["val"] // 500)


def test_a_pass_in_the_trainers_own_process_closes_its_channel_when_it_ends(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    # A pass with num_workers=0 (validation, a quick look) runs gRPC in the process that later
    # forks DataLoader workers; a channel left open there is carried into every later fork.
    from scylla_loader.client import open_clients
    from scylla_loader.torch import forksafe

    before = open_clients()
    dataset = LoaderDataset(loader.target, mnist.dataset, mnist.val, batch_size=500)
    assert sum(1 for _ in DataLoader(dataset, batch_size=None, num_workers=0)) > 1
    assert open_clients() == before
    for _ in DataLoader(dataset, batch_size=None, num_workers=0):
        break  # a pass left early closes too
    assert open_clients() == before
    if before == 0:
        assert forksafe.wait_for_grpc_threads(), forksafe.grpc_threads()
    # The next pass opens a channel again and gives the same epoch's batches.
    assert sum(1 for _ in DataLoader(dataset, batch_size=None, num_workers=0)) > 1

from pathlib import Path

import pytest

from scylla_loader.torch.sharding import Shard, resolve_rank, worker_shard


def test_workers_of_all_ranks_form_one_partition_of_streams() -> None:
    world, workers = 3, 4
    shards = [worker_shard(r, world, w, workers) for r in range(world) for w in range(workers)]
    assert sorted(s.rank for s in shards) == list(range(world * workers))
    assert {s.world_size for s in shards} == {12}
    assert worker_shard(1, 3, 2, 4) == Shard(rank=6, world_size=12)
    assert worker_shard(0, 1, 0, 1) == Shard(0, 1)


@pytest.mark.parametrize(
    ("args", "message"),
    [((2, 2, 0, 1), "rank must be in"), ((0, 0, 0, 1), "rank must be in"), ((0, 1, 2, 2), "worker must be in")],
)
def test_impossible_combinations_are_refused(args: tuple[int, int, int, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        worker_shard(*args)


def test_rank_comes_from_arguments_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert resolve_rank(None, None) == (3, 4)
    assert resolve_rank(1, 2) == (1, 2)
    monkeypatch.delenv("RANK")
    monkeypatch.delenv("WORLD_SIZE")
    assert resolve_rank(None, None) == (0, 1)
    with pytest.raises(ValueError, match="rank must be in"):
        resolve_rank(5, 2)


def test_with_torch_distributed_up_the_data_parallel_rank_is_what_the_caller_says(tmp_path: Path) -> None:
    import torch.distributed as dist

    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        assert resolve_rank(None, None) == (0, 1)  # the global rank
        assert resolve_rank(3, 4) == (3, 4)  # honoured, though the world has 1 process
        with pytest.raises(ValueError, match="pass both rank and world_size"):
            resolve_rank(0, None)
        group = dist.new_group([0])
        assert resolve_rank(None, None, group) == (0, 1)
        with pytest.raises(ValueError, match="contradict process_group"):
            resolve_rank(1, 2, group)
    finally:
        dist.destroy_process_group()
    with pytest.raises(ValueError, match="needs torch.distributed"):
        resolve_rank(None, None, object())

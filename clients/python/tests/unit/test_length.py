"""The client's count of items per epoch follows the server's shard and batch rules."""

from __future__ import annotations

from scylla_loader import Source
from scylla_loader.torch.length import batch_count, mixed_positions, shard_length


def test_shard_lengths_partition_pad_and_drop_as_the_server_does() -> None:
    n, world = 10, 4
    assert [shard_length(n, r, world, "uneven") for r in range(world)] == [3, 3, 2, 2]
    assert [shard_length(n, r, world, "pad") for r in range(world)] == [3] * 4
    assert [shard_length(n, r, world, "drop") for r in range(world)] == [2] * 4
    assert shard_length(2, 3, 4, "uneven") == 0 and shard_length(0, 0, 2, "pad") == 0
    assert batch_count(7, 3, False) == 3 and batch_count(7, 3, True) == 2


def test_a_mixed_epoch_of_zero_samples_follows_the_lead_source() -> None:
    sources = [Source("a", "all", 1), Source("b", "all", 3)]
    # b has the largest weight per sample: all of it, a a third of that (rounded half up).
    assert mixed_positions(sources, [100, 7], 0) == 7 + 2
    assert mixed_positions(sources, [3, 300], 0) == 3 + 9  # a leads: b three times a
    assert mixed_positions(sources, [10, 12], 0) == 12 + 4
    assert mixed_positions(sources, [1, 300], 77) == 77

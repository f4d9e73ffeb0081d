"""How many items a LoaderDataset yields per epoch: the server's sharding and batching rules
(see DESIGN.md, Sharding) over the epoch's positions, computed on the client."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..client import LoaderClient
from ..request import ShardRule
from ..source import Source


def shard_length(n: int, rank: int, world_size: int, rule: ShardRule) -> int:
    """Samples stream ``rank`` of ``world_size`` gets of an epoch of ``n`` positions."""
    if rule == "uneven":
        return max(0, -(-(n - rank) // world_size))
    if rule == "pad":
        return 0 if n == 0 else -(-n // world_size)
    if rule == "drop":
        return n // world_size
    raise ValueError(f"shard_rule must be 'pad', 'uneven' or 'drop', got {rule!r}")


def batch_count(samples: int, batch_size: int, drop_last: bool) -> int:
    """Batches of a stream of ``samples``, the final partial one left out with ``drop_last``."""
    return samples // batch_size if drop_last else -(-samples // batch_size)


def split_size(client: LoaderClient, dataset: str, split: str) -> int:
    """Samples in ``split`` of ``dataset``: ``all``, ``set/part``, ``set@version/part``, and a
    k-fold set's ``train-<i>`` / ``val-<i>``."""
    if split == "all":
        return client.describe_dataset(dataset).sample_count
    match = re.fullmatch(r"([^@/]+)(?:@(\d+))?/(.+)", split)
    if match is None:
        raise ValueError(f"split must be 'all', 'set/part' or 'set@version/part', got {split!r}")
    name, version, part = match.group(1), int(match.group(2) or 0), match.group(3)
    found = client.get_split(dataset, name, version=version)
    sizes = {p.name: p.size for p in found.parts}
    if part in sizes:
        return sizes[part]
    fold = re.fullmatch(r"(train|val)-(\d+)", part)
    if fold is not None and int(fold.group(2)) < found.folds:
        own = sizes.get(f"fold-{fold.group(2)}", 0)
        return own if fold.group(1) == "val" else sum(sizes.values()) - own
    raise ValueError(f"split set {name} of {dataset} has no part {part!r}")


def mixed_positions(sources: Sequence[Source], sizes: Sequence[int], samples_per_epoch: int) -> int:
    """Positions of a mixed epoch: ``samples_per_epoch``, or with 0 the quotas the server
    gives (the source with the largest weight per sample delivers each of its samples once,
    every other its weight's share of that, rounded, at most its size)."""
    if samples_per_epoch > 0:
        return samples_per_epoch
    lead = 0
    for i in range(1, len(sources)):
        if sources[i].weight * sizes[lead] > sources[lead].weight * sizes[i]:
            lead = i
    total = 0
    for i, source in enumerate(sources):
        share = sizes[lead] if i == lead else sizes[lead] * source.weight / sources[lead].weight
        # JavaScript's Math.round: halves go up.
        total += sizes[i] if i == lead else min(sizes[i], int(share + 0.5))
    return total

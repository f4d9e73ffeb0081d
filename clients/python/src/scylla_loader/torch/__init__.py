"""PyTorch integration (needs the ``torch`` extra): :class:`LoaderDataset`."""

from .dataset import LoaderDataset
from .decode import collate, decode_sample
from .job_state import find_worker_states, merge_states
from .sharding import Shard, resolve_rank, worker_shard

__all__ = [
    "LoaderDataset",
    "Shard",
    "collate",
    "decode_sample",
    "find_worker_states",
    "merge_states",
    "resolve_rank",
    "worker_shard",
]

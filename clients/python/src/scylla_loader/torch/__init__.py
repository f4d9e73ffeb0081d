"""PyTorch integration (needs the ``torch`` extra): :class:`LoaderDataset`."""

from .dataset import LoaderDataset
from .decode import collate, decode_sample
from .sharding import Shard, resolve_rank, worker_shard

__all__ = ["LoaderDataset", "Shard", "collate", "decode_sample", "resolve_rank", "worker_shard"]

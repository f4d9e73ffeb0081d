"""Python client of scylla-loader: training batches streamed from ScyllaDB/Cassandra over gRPC.

``LoaderClient`` streams batches with transparent resumption; ``scylla_loader.torch`` (with the
``torch`` extra) wraps it in a PyTorch ``IterableDataset``.
"""

from .batch import Batch, decode_batch
from .client import BatchStream, LoaderClient, ReconnectInfo
from .descriptions import DatasetDescription, SplitPart, SplitSet
from .errors import LoaderError
from .retry import ReconnectPolicy

__all__ = [
    "Batch",
    "BatchStream",
    "DatasetDescription",
    "LoaderClient",
    "LoaderError",
    "ReconnectInfo",
    "ReconnectPolicy",
    "SplitPart",
    "SplitSet",
    "decode_batch",
]

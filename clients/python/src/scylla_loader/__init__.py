"""Python client of scylla-loader: training batches streamed from ScyllaDB/Cassandra over gRPC.

``LoaderClient`` streams batches with transparent resumption; ``scylla_loader.torch`` (with the
``torch`` extra) wraps it in a PyTorch ``IterableDataset``; ``TlsOptions`` and a token reach a
loader run with TLS, mTLS and bearer tokens. ``Transform`` has the server decode
and augment each sample (a raw output gives each batch as one ``uint8`` tensor).
``LoaderClient.ingest`` writes samples through the loader; ``scylla_loader.ingest_sources``
makes them from torchvision and Hugging Face datasets. ``Source`` names one dataset and split
of a stream that mixes several by weight (``stream_batches(sources=[...])``). A stream that
names its job (``job_id=``) is recorded in the job's training ledger: ``LoaderClient.ledger``
reads which samples each batch held and where a sample appeared; a resumed stream may skip
recorded batches (``skip_batches=``) and ``Replay`` streams a recorded range again.
"""

from .batch import Batch, decode_batch
from .checkpoint import RankState, merge_resume_tokens
from .client import BatchStream, LoaderClient, ReconnectInfo
from .columns import Column, validate_column_names
from .descriptions import DatasetDescription, SplitPart, SplitSet
from .errors import LoaderError
from .ingest import IngestProgress, IngestSample, IngestSource, IngestSummary
from .ledger import Ledger, LedgerAppearance, LedgerBatch, LedgerSource, SampleAppearances
from .request import Replay
from .retry import ReconnectPolicy
from .security import TlsOptions, TokenFile, TokenSource
from .source import Source
from .transform import RandomResizedCrop, Transform

__all__ = [
    "Batch",
    "BatchStream",
    "Column",
    "DatasetDescription",
    "IngestProgress",
    "IngestSample",
    "IngestSource",
    "IngestSummary",
    "Ledger",
    "LedgerAppearance",
    "LedgerBatch",
    "LedgerSource",
    "LoaderClient",
    "LoaderError",
    "RandomResizedCrop",
    "RankState",
    "ReconnectInfo",
    "ReconnectPolicy",
    "Replay",
    "SampleAppearances",
    "SplitPart",
    "Source",
    "SplitSet",
    "TlsOptions",
    "TokenFile",
    "TokenSource",
    "Transform",
    "decode_batch",
    "merge_resume_tokens",
    "validate_column_names",
]

import uuid

import grpc
import numpy as np
import pytest

from scylla_loader import LoaderError, decode_batch
from scylla_loader.v1 import loader_pb2


def make_batch(samples: list[bytes], blobs: list[bytes] | None = None) -> loader_pb2.Batch:
    ids = [uuid.UUID(int=i + 1) for i in range(len(samples))]
    message = loader_pb2.Batch(
        epoch=3,
        index=7,
        ids=b"".join(u.bytes for u in ids),
        labels=list(range(-1, len(samples) - 1)),
        data=b"".join(samples),
        data_sizes=[len(s) for s in samples],
        resume_token=b"tok",
        last_in_epoch=True,
    )
    if blobs is not None:
        message.label_blobs = b"".join(blobs)
        message.label_blob_sizes.extend(len(b) for b in blobs)
    return message


def test_samples_are_views_of_one_buffer_cut_by_sizes() -> None:
    samples = [b"abc", b"", b"defgh"]
    batch = decode_batch(make_batch(samples))
    assert [bytes(s) for s in batch.samples] == samples
    assert all(s.obj is batch.data for s in batch.samples)  # views, not copies
    assert bytes(batch.sample_array(2)) == b"defgh"
    assert batch.sample_array(2).base is not None
    assert batch.labels.dtype == np.int32 and batch.labels.tolist() == [-1, 0, 1]
    assert batch.ids == [str(uuid.UUID(int=i)) for i in (1, 2, 3)]
    assert (batch.epoch, batch.index, batch.resume_token, batch.last_in_epoch) == (3, 7, b"tok", True)
    assert batch.label_blobs is None and len(batch) == 3


def test_label_blobs_are_cut_per_sample() -> None:
    batch = decode_batch(make_batch([b"a", b"b"], blobs=[b"xy", b""]))
    assert batch.label_blobs is not None
    assert [bytes(b) for b in batch.label_blobs] == [b"xy", b""]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda m: m.data_sizes.append(1), "id bytes for 4 samples"),
        (lambda m: setattr(m, "data", m.data + b"!"), "data sizes add up to 4 bytes but 5"),
        (lambda m: m.labels.append(5), "4 labels for 3 samples"),
        (lambda m: m.label_blob_sizes.append(0), "1 label blob sizes for 3 samples"),
    ],
)
def test_inconsistent_batches_are_data_loss(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    m = make_batch([b"a", b"bc", b"d"])
    mutate(m)
    with pytest.raises(LoaderError, match=message) as caught:
        decode_batch(m, target="host:1")
    assert caught.value.code == grpc.StatusCode.DATA_LOSS
    assert "epoch 3, batch 7" in str(caught.value) and "host:1" in str(caught.value)


def test_source_indexes_are_an_int64_array_per_sample_in_a_mixed_stream() -> None:
    m = make_batch([b"a", b"bc", b"d"], blobs=[b"", b"mask", b""])
    m.source_indexes.extend([2, 0, 1])
    batch = decode_batch(m, sources=3)
    assert batch.source_indexes is not None
    assert batch.source_indexes.dtype == np.int64 and batch.source_indexes.tolist() == [2, 0, 1]
    # Labels are per source: an integer for one sample, a blob (label -1 here) for another.
    assert batch.label_blobs is not None and bytes(batch.label_blobs[1]) == b"mask"
    # Without the request's count (decode_batch on its own) the indexes are still read.
    assert decode_batch(m).source_indexes.tolist() == [2, 0, 1]  # type: ignore[union-attr]


def test_a_single_source_batch_has_no_source_indexes() -> None:
    assert decode_batch(make_batch([b"a", b"b"])).source_indexes is None


def test_an_empty_batch_of_a_mixed_stream_has_an_empty_index_array() -> None:
    batch = decode_batch(make_batch([]), sources=2)
    assert batch.source_indexes is not None and batch.source_indexes.shape == (0,)


@pytest.mark.parametrize(
    ("indexes", "sources", "message"),
    [
        ([0, 1], 2, "2 source indexes for 3 samples"),
        ([0, 1, 1, 0], 0, "4 source indexes for 3 samples"),
        ([], 2, "no source indexes for 3 samples of a stream of 2 sources"),
        ([0, 2, 1], 2, "source index 2 in a stream of 2 sources"),
    ],
)
def test_source_indexes_that_do_not_fit_are_data_loss(indexes: list[int], sources: int, message: str) -> None:
    m = make_batch([b"a", b"bc", b"d"])
    m.source_indexes.extend(indexes)
    with pytest.raises(LoaderError, match=message) as caught:
        decode_batch(m, sources=sources)
    assert caught.value.code == grpc.StatusCode.DATA_LOSS

"""Raw batches (a server-side transform with raw output): layout checks on decode, and the
numpy and torch views over the message's bytes."""

import uuid
import warnings

import grpc
import numpy as np
import pytest
import torch

from scylla_loader import LoaderError, decode_batch
from scylla_loader.v1 import loader_pb2


def raw_batch(n: int = 3, h: int = 4, w: int = 5, c: int = 3) -> loader_pb2.Batch:
    pixels = np.arange(n * h * w * c, dtype=np.int64).astype(np.uint8).tobytes()
    return loader_pb2.Batch(
        epoch=1,
        index=2,
        ids=b"".join(uuid.UUID(int=i + 1).bytes for i in range(n)),
        labels=list(range(n)),
        data=pixels,
        data_sizes=[h * w * c] * n,
        shape=[n, h, w, c],
        dtype=loader_pb2.D_TYPE_UINT8,
        skipped_undecodable=2,
        skipped_missing=1,
    )


def address(buffer: bytes) -> int:
    return int(np.frombuffer(buffer, np.uint8).ctypes.data)


def test_a_raw_batch_is_a_zero_copy_nhwc_tensor() -> None:
    message = loader_pb2.StreamBatchesResponse(batch=raw_batch())
    received = loader_pb2.StreamBatchesResponse.FromString(message.SerializeToString())
    batch = decode_batch(received.batch)
    assert batch.shape == (3, 4, 5, 3) and batch.dtype == "uint8" and batch.is_tensor
    assert (batch.skipped_undecodable, batch.skipped_missing) == (2, 1)
    array = batch.array()
    assert array.shape == (3, 4, 5, 3) and array.dtype == np.uint8
    assert not array.flags.writeable
    assert int(array.ctypes.data) == address(batch.data)  # a view, not a copy
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the non-writable warning is silenced, nothing else
        tensor = batch.tensor()
    assert tensor.shape == (3, 4, 5, 3) and tensor.dtype == torch.uint8
    assert tensor.is_contiguous()
    assert tensor.data_ptr() == address(batch.data)
    expected = np.arange(3 * 4 * 5 * 3, dtype=np.int64).astype(np.uint8).reshape(3, 4, 5, 3)
    assert np.array_equal(tensor.numpy(), expected)
    assert np.array_equal(array[1], expected[1]) and bytes(batch.samples[1]) == expected[1].tobytes()
    # What a trainer does with it: NCHW floats, out of place.
    x = tensor.permute(0, 3, 1, 2).float().div_(255)
    assert x.shape == (3, 3, 4, 5) and float(x.max()) <= 1.0


def test_the_tensor_keeps_the_bytes_alive() -> None:
    batch = decode_batch(raw_batch(n=2, h=2, w=2, c=1))
    tensor = batch.tensor()
    expected = tensor.clone()
    del batch
    assert torch.equal(tensor, expected)


def test_a_batch_whose_samples_were_all_skipped_keeps_its_shape() -> None:
    m = raw_batch(n=0)
    m.skipped_undecodable = 4
    batch = decode_batch(m)
    assert batch.shape == (0, 4, 5, 3) and len(batch) == 0 and batch.skipped_undecodable == 4
    assert batch.array().shape == (0, 4, 5, 3)
    assert batch.tensor().shape == (0, 4, 5, 3) and batch.tensor().dtype == torch.uint8


def test_one_channel_batches() -> None:
    batch = decode_batch(raw_batch(n=2, h=3, w=3, c=1))
    assert batch.tensor().shape == (2, 3, 3, 1)


def test_sample_bytes_have_no_tensor() -> None:
    batch = decode_batch(loader_pb2.Batch(ids=uuid.UUID(int=1).bytes, labels=[0], data=b"x", data_sizes=[1]))
    assert batch.shape == () and batch.dtype is None and not batch.is_tensor
    assert batch.skipped_undecodable == 0
    with pytest.raises(ValueError, match="needs a batch streamed with a raw Transform"):
        batch.tensor()
    with pytest.raises(ValueError, match="needs a batch streamed with a raw Transform"):
        batch.array()


def masked_batch() -> loader_pb2.Batch:
    m = raw_batch()
    m.masks = bytes(range(3 * 4 * 5))
    m.mask_shape.extend([3, 4, 5, 1])
    return m


def _bad_sizes(m: loader_pb2.Batch) -> None:
    # Same total, unequal samples: 60 + 60 + 60 becomes 59 + 61 + 60.
    m.data_sizes[0] = 59
    m.data_sizes[1] = 61


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda m: m.ClearField("shape"), r"tensor shape \[\] is not \(samples"),
        (lambda m: setattr(m, "dtype", 7), "unknown tensor dtype 7"),
        (lambda m: m.shape.append(1), r"tensor shape \[3, 4, 5, 3, 1\] is not \(samples"),
        (lambda m: m.shape.__setitem__(0, 2), r"tensor shape \[2, 4, 5, 3\] for 3 samples"),
        (lambda m: m.shape.__setitem__(1, 5), r"needs 225 bytes but 180 were received"),
        (_bad_sizes, r"sample sizes \[59, 60, 61\] differ from 60"),
        (lambda m: setattr(m, "dtype", loader_pb2.D_TYPE_UNSPECIFIED), r"tensor shape \[3, 4, 5, 3\] without a dtype"),
        (lambda m: m.mask_shape.__setitem__(0, 2), r"mask shape \[2, 4, 5, 1\] for 3 samples"),
        (lambda m: m.mask_shape.__setitem__(3, 3), r"mask shape \[3, 4, 5, 3\] for 3 samples"),
        (lambda m: setattr(m, "masks", b"\0" * 59), r"needs 60 bytes but 59 were received"),
        (lambda m: m.ClearField("mask_shape"), "60 mask bytes without a mask shape"),
    ],
)
def test_a_bad_layout_is_data_loss(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    m = masked_batch()  # the images' layout, and the masks' beside it
    mutate(m)
    with pytest.raises(LoaderError, match=message) as caught:
        decode_batch(m, target="host:1")
    assert caught.value.code == grpc.StatusCode.DATA_LOSS
    assert "epoch 1, batch 2" in str(caught.value)


def test_masks_are_a_zero_copy_nhw1_tensor_beside_the_images() -> None:
    batch = decode_batch(masked_batch())
    assert batch.has_masks and batch.mask_shape == (3, 4, 5, 1)
    masks = batch.mask_array()
    assert masks.shape == (3, 4, 5, 1) and int(masks.ctypes.data) == address(batch.masks)
    assert int(masks[2, 3, 4, 0]) == 59
    tensor = batch.mask_tensor()
    assert tensor.shape == (3, 4, 5, 1) and tensor.data_ptr() == address(batch.masks)
    without = decode_batch(raw_batch())
    assert not without.has_masks and without.masks == b""
    with pytest.raises(ValueError, match="needs a batch streamed with Transform\\(masks=True\\)"):
        without.mask_array()


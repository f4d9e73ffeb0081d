"""Masks that follow their images (``Transform(masks=True)``) through a real loader: a batch
carries them as an (N, H, W, 1) ``uint8`` tensor aligned with the images, after the server's
RandomResizedCrop and flip."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from scylla_loader import IngestSample, LoaderClient, RandomResizedCrop, Transform

from .loader_process import LoaderProcess

pytestmark = pytest.mark.integration

H, W = 48, 40
SEGMENT = Transform(
    channels=3, random_resized_crop=RandomResizedCrop(H, W, scale=(0.2, 1.0)),
    horizontal_flip=0.5, masks=True,
)


def pair(rng: np.random.Generator, width: int, height: int) -> tuple[bytes, bytes]:
    """A JPEG of flat shapes whose red channel is 40 or 220, and its mask as a palette PNG:
    index 1 where red > 127 (a function of the image the transform must keep)."""
    red = np.full((height, width), 40, np.uint8)
    red[:, : width // 3] = 220  # a band on the left: a flip moves it
    for _ in range(5):
        x, y = int(rng.integers(0, width)), int(rng.integers(0, height))
        r = int(rng.integers(6, max(7, min(width, height) // 3)))
        red[max(0, y - r) : y + r, max(0, x - r) : x + r] = 220 if rng.integers(0, 2) else 40
    yy, xx = np.mgrid[0:height, 0:width]
    rgb = np.stack([red, (xx * 2 + yy).astype(np.uint8), (yy * 3).astype(np.uint8)], axis=-1)
    image = io.BytesIO()
    Image.fromarray(rgb, "RGB").save(image, "JPEG", quality=95)
    mask = Image.fromarray((red > 127).astype(np.uint8), "P")
    mask.putpalette([0, 0, 0, 128, 64, 200])
    out = io.BytesIO()
    mask.save(out, "PNG")
    return image.getvalue(), out.getvalue()


def mismatch_share(images: npt.NDArray[np.uint8], masks: npt.NDArray[np.uint8]) -> float:
    """Share of mask pixels that differ from (red > 127) of their image, leaving out pixels
    within one pixel of an edge of either (where interpolation blends the two sides)."""
    expected = (images[..., 0] > 127).astype(np.uint8)
    got = masks[..., 0]

    def near_edge(m: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
        padded = np.pad(m, ((0, 0), (1, 1), (1, 1)), mode="edge")
        edge = np.zeros(m.shape, bool)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                shifted = padded[:, 1 + dy : 1 + dy + m.shape[1], 1 + dx : 1 + dx + m.shape[2]]
                edge |= shifted != m
        return edge

    keep = ~(near_edge(expected) | near_edge(got))
    return float((got[keep] != expected[keep]).mean())


@pytest.fixture(scope="module")
def dataset(loader: LoaderProcess) -> str:
    rng = np.random.default_rng(38)
    samples = []
    for i in range(12):
        image, mask = pair(rng, 90 + 7 * i, 70 + 5 * i)
        samples.append(IngestSample(f"pair-{i}", image, label_blob=mask))
    digest = hashlib.sha256(b"".join(s.data + (s.label_blob or b"") for s in samples))
    name = f"py_masks_{digest.hexdigest()[:12]}"
    with LoaderClient(loader.target) as client:
        client.ingest(name, samples)
    return name


def test_a_stream_with_masks_yields_aligned_mask_tensors(loader: LoaderProcess, dataset: str) -> None:
    with LoaderClient(loader.target) as client:
        batches = list(client.stream_batches(dataset, "all", batch_size=5, seed=3, transform=SEGMENT))
    assert sum(len(b) for b in batches) == 12
    for b in batches:
        assert b.has_masks
        assert b.mask_shape == (len(b), H, W, 1)
        assert b.label_blobs is None
        masks = b.mask_array()
        assert set(np.unique(masks).tolist()) <= {0, 1}  # palette indices, not colours
        assert mismatch_share(b.array(), masks) < 0.01
        assert tuple(b.mask_tensor().shape) == (len(b), H, W, 1)

    # The blobs as stored, resized to the batch's size, fail the same check: it can fail.
    with LoaderClient(loader.target) as client:
        plain = list(client.stream_batches(
            dataset, "all", batch_size=12, seed=3,
            transform=Transform(
                channels=3, random_resized_crop=RandomResizedCrop(H, W, scale=(0.2, 1.0)),
                horizontal_flip=0.5,
            ),
        ))
    (batch,) = plain
    assert not batch.has_masks and batch.label_blobs is not None
    naive = np.stack([
        np.asarray(Image.open(io.BytesIO(bytes(blob))).resize((W, H), Image.Resampling.NEAREST))
        for blob in batch.label_blobs
    ])[..., None]
    assert mismatch_share(batch.array(), naive) > 0.03
    with pytest.raises(ValueError, match="masks=True"):
        batch.mask_array()


def test_masks_need_raw_output() -> None:
    with pytest.raises(ValueError, match="masks=True needs output='raw'"):
        Transform(center_crop=(8, 8), output="jpeg", masks=True)


def test_loader_dataset_yields_records_with_masks_that_follow_the_image(
    loader: LoaderProcess, dataset: str
) -> None:
    import torch
    from torch.utils.data import DataLoader

    from scylla_loader.torch import LoaderDataset

    with pytest.raises(ValueError, match=r"return_masks needs server_transform=Transform\(\.\.\., masks=True\)"):
        LoaderDataset(loader.target, dataset, "all", batch_size=4, return_masks=True)
    for layout in ("NHWC", "NCHW"):
        data = LoaderDataset(
            loader.target, dataset, "all", batch_size=5, seed=4, server_transform=SEGMENT,
            return_masks=True, columns=["source_key"], raw_layout=layout, num_workers=2,
        )
        keys: list[str] = []
        for item in DataLoader(data, batch_size=None, num_workers=2):
            assert set(item) == {"image", "label", "id", "mask", "source_key"}
            image, mask = item["image"], item["mask"]
            if layout == "NCHW":
                assert tuple(mask.shape) == (len(item["id"]), 1, H, W)
                image, mask = image.permute(0, 2, 3, 1), mask.permute(0, 2, 3, 1)
            assert mask.dtype == torch.uint8
            assert mismatch_share(image.numpy(), mask.numpy()) < 0.01
            keys += item["source_key"]
        assert sorted(keys) == sorted(f"pair-{i}" for i in range(12))

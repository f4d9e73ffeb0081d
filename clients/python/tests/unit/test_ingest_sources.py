"""scylla_loader.ingest_sources: torchvision datasets and Hugging Face datasets (and lists of
dicts shaped like their rows) made into samples."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision.datasets import FakeData, ImageFolder

from scylla_loader.ingest_sources import encode_image, from_huggingface, from_torchvision


def pixels(data: bytes) -> np.ndarray[Any, Any]:
    return np.asarray(Image.open(io.BytesIO(data)))


def test_images_of_every_kind_encode_to_the_same_png_pixels() -> None:
    rgb = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    from_pil = encode_image(Image.fromarray(rgb))
    assert from_pil.startswith(b"\x89PNG")
    assert np.array_equal(pixels(from_pil), rgb)
    assert np.array_equal(pixels(encode_image(rgb)), rgb)
    chw = torch.from_numpy(rgb).permute(2, 0, 1)
    assert np.array_equal(pixels(encode_image(chw)), rgb)
    assert np.array_equal(pixels(encode_image(chw.float() / 255)), rgb)
    grey = torch.zeros(1, 3, 3, dtype=torch.uint8)
    assert pixels(encode_image(grey)).shape == (3, 3)


def test_bytes_dicts_and_paths_are_stored_as_they_are(tmp_path: Path) -> None:
    path = tmp_path / "x.jpg"
    path.write_bytes(b"jpeg bytes")
    assert encode_image(b"raw") == b"raw"
    assert encode_image(bytearray(b"raw")) == b"raw"
    assert encode_image({"bytes": b"inline", "path": "ignored.png"}) == b"inline"
    assert encode_image({"bytes": None, "path": str(path)}) == b"jpeg bytes"
    assert encode_image(path) == b"jpeg bytes"
    with pytest.raises(TypeError, match="cannot make image bytes of a int"):
        encode_image(3)


def test_from_torchvision_numbers_keys_by_index_and_encodes_png() -> None:
    data = FakeData(size=5, image_size=(3, 8, 8), num_classes=3, random_offset=7)
    source = from_torchvision(data, key_prefix="fake")
    assert len(source) == 5 and source.label_names is None
    assert source.source == "torchvision:FakeData"
    samples = list(source)
    assert [s.source_key for s in samples] == [f"fake/{i}" for i in range(5)]
    for i, sample in enumerate(samples):
        image, label = data[i]
        assert sample.label == label
        assert np.array_equal(pixels(sample.data), np.asarray(image))
    assert [s.source_key for s in source] == [s.source_key for s in samples]  # iterable again


def image_folder(root: Path) -> Path:
    for cls, colour in (("cat", 10), ("dog", 200)):
        (root / cls).mkdir(parents=True)
        for i in range(2):
            Image.new("RGB", (4, 4), (colour, i, 0)).save(root / cls / f"{i}.jpg", quality=90)
    return root


def test_from_torchvision_stores_an_image_folders_files_as_they_are(tmp_path: Path) -> None:
    folder = ImageFolder(str(image_folder(tmp_path / "tree")))
    source = from_torchvision(folder, key_prefix="train")
    assert source.label_names == ["cat", "dog"]
    samples = list(source)
    assert [(s.source_key, s.label) for s in samples] == [
        ("train/cat/0.jpg", 0), ("train/cat/1.jpg", 0), ("train/dog/0.jpg", 1),
        ("train/dog/1.jpg", 1)]
    assert [s.data for s in samples] == [Path(p).read_bytes() for p, _ in folder.samples]
    # With a transform, or raw_files=False, the decoded images are encoded as PNG.
    reencoded = list(from_torchvision(folder, key_prefix="train", raw_files=False))
    assert all(s.data.startswith(b"\x89PNG") for s in reencoded)
    assert [s.source_key for s in reencoded] == [s.source_key for s in samples]
    with pytest.raises(ValueError, match="key_prefix"):
        from_torchvision(folder, key_prefix="")


def test_a_file_added_to_an_image_folder_keeps_the_other_keys(tmp_path: Path) -> None:
    root = image_folder(tmp_path / "tree")
    before = {s.source_key: s.data for s in from_torchvision(ImageFolder(str(root)), key_prefix="t")}
    Image.new("RGB", (4, 4), (10, 9, 9)).save(root / "cat" / "00-new.jpg", quality=90)
    after = {s.source_key: s.data for s in from_torchvision(ImageFolder(str(root)), key_prefix="t")}
    # Sorted first, the new file shifts every index; its path key leaves the others alone.
    assert set(after) - set(before) == {"t/cat/00-new.jpg"}
    assert all(after[k] == v for k, v in before.items())


def test_a_key_function_names_samples_of_other_datasets(tmp_path: Path) -> None:
    data = FakeData(size=3, image_size=(3, 8, 8), num_classes=3, random_offset=7)
    source = from_torchvision(data, key_prefix="fake", key=lambda i, item: f"id-{100 + i}")
    assert [s.source_key for s in source] == ["fake/id-100", "fake/id-101", "fake/id-102"]
    folder = ImageFolder(str(image_folder(tmp_path / "tree")))
    named = from_torchvision(folder, key_prefix="f", key=lambda i, entry: Path(entry[0]).stem)
    assert [s.source_key for s in named] == ["f/0", "f/1", "f/0", "f/1"]


def hf_rows() -> list[dict[str, Any]]:
    return [
        {"image": {"bytes": b"img0", "path": None}, "label": 1, "id": "a", "w": 0.5,
         "tags": ["x", "y"], "ok": True},
        {"image": b"img1", "label": "cat", "id": "b", "w": None, "tags": [], "ok": False},
    ]


def test_from_huggingface_takes_a_list_of_dicts_with_scalar_columns_as_metadata() -> None:
    source = from_huggingface(hf_rows(), key_column="id", label_names=["cat", "dog"])
    assert source.label_names == ["cat", "dog"] and source.columns is None
    assert source.source == "huggingface" and len(source) == 2
    first, second = list(source)
    assert (first.source_key, first.data, first.label) == ("a", b"img0", 1)
    assert first.metadata == {"w": 0.5, "ok": True}
    assert (second.source_key, second.data, second.label) == ("b", b"img1", 0)
    assert second.metadata == {"w": None, "ok": False}
    keyed = list(from_huggingface(hf_rows()[:1], key_prefix="train"))
    assert keyed[0].source_key == "train/0"
    with pytest.raises(ValueError, match="label 'cat' is not one of the class names"):
        list(from_huggingface(hf_rows()))


def test_from_huggingface_reads_a_datasets_dataset_undecoded_with_its_class_names() -> None:
    datasets = pytest.importorskip("datasets")
    png = encode_image(np.zeros((2, 2), dtype=np.uint8))
    features = datasets.Features({
        "image": datasets.Image(), "label": datasets.ClassLabel(names=["cat", "dog"]),
        "w": datasets.Value("float32"), "n": datasets.Value("int64"),
        "name": datasets.Value("string"), "vec": datasets.Sequence(datasets.Value("int32")),
    })
    ds = datasets.Dataset.from_dict(
        {"image": [{"bytes": png, "path": None}] * 3, "label": [0, 1, 1], "w": [0.5, 1.5, None],
         "n": [1, 2, 3], "name": ["a", "b", "c"], "vec": [[1], [2], [3]]},
        features=features, split="train",
    )
    source = from_huggingface(ds)
    assert source.label_names == ["cat", "dog"]
    assert source.columns == {"w": "double", "n": "bigint", "name": "text"}
    samples = list(source)
    assert [s.source_key for s in samples] == ["train/0", "train/1", "train/2"]
    assert [s.label for s in samples] == [0, 1, 1]
    assert all(s.data == png for s in samples)  # the original bytes, not decoded and re-encoded
    assert samples[2].metadata == {"w": None, "n": 3, "name": "c"}


def test_from_huggingface_reads_image_paths_only_inside_image_root(tmp_path: Path) -> None:
    root = tmp_path / "images"
    (root / "cats").mkdir(parents=True)
    (root / "cats" / "a.jpg").write_bytes(b"cat a")
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"not for the loader")
    (root / "link.jpg").symlink_to(secret)

    def rows(*images: Any) -> list[dict[str, Any]]:
        return [{"image": image, "label": 0} for image in images]

    # Inside the root: a relative path, an absolute one, a path value, a dict without bytes.
    inside = rows({"bytes": None, "path": "cats/a.jpg"},
                  {"bytes": None, "path": str(root / "cats" / "a.jpg")},
                  "cats/./a.jpg", root / "cats" / "a.jpg")
    assert [s.data for s in from_huggingface(inside, image_root=root)] == [b"cat a"] * 4
    assert [s.data for s in from_huggingface(inside, image_root=str(root))] == [b"cat a"] * 4

    # Never by default: a path is read only when image_root is given.
    for image in ({"bytes": None, "path": str(secret)}, {"bytes": None, "path": "cats/a.jpg"},
                  str(secret)):
        with pytest.raises(ValueError, match=r"row 0 \(0\): the image has no bytes, only the "
                           r"path .*; files are read only .* given image_root="):
            list(from_huggingface(rows(image)))

    # Outside the root: .., an absolute path elsewhere, a symbolic link out of it.
    for escape in ("../secret.txt", "cats/../../secret.txt", str(secret), "link.jpg"):
        with pytest.raises(ValueError, match=r"row 0 \(0\): image path .* is outside "
                           r"image_root .*; refused"):
            list(from_huggingface(rows({"bytes": None, "path": escape}), image_root=root))
        with pytest.raises(ValueError, match="is outside image_root"):
            list(from_huggingface(rows(escape), image_root=root))

    # Bytes win over a path, with or without a root; a root that is not a folder is refused.
    inline = rows({"bytes": b"inline", "path": str(secret)})
    assert [s.data for s in from_huggingface(inline)] == [b"inline"]
    with pytest.raises(ValueError, match="is not a directory"):
        from_huggingface(inline, image_root=secret)


def test_metadata_column_names_are_mapped_as_the_loader_maps_them() -> None:
    from scylla_loader.ingest_sources import from_huggingface, metadata_column_name

    assert metadata_column_name("NSFW") == "nsfw"
    assert metadata_column_name("caption.en") == "caption_en"
    assert metadata_column_name("original-width") == "original_width"
    assert metadata_column_name("2x") == "c_2x"
    assert metadata_column_name("id") == "src_id"
    assert metadata_column_name("...") is None
    rows = [{"image": b"\x89PNG", "label": 1, "NSFW": "UNLIKELY", "caption.en": "a cat"}]
    (sample,) = list(from_huggingface(rows))
    assert sample.metadata == {"nsfw": "UNLIKELY", "caption_en": "a cat"}
    clash = [{"image": b"x", "label": 0, "NSFW": "a", "nsfw": "b"}]
    with pytest.raises(ValueError, match="'NSFW' and 'nsfw' both map to metadata column nsfw"):
        list(from_huggingface(clash))

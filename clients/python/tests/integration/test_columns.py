"""Metadata columns through the Python client against a real loader and node: each sample
comes with exactly its own values of every type (nulls as None), by the sample's key, and a
resumed stream may ask for other columns."""

from __future__ import annotations

import json
import math
import secrets
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scylla_loader import LoaderClient, LoaderError, validate_column_names

from .loader_process import LoaderProcess, drop_test_datasets

pytestmark = pytest.mark.integration

PACKAGE = Path(__file__).resolve().parents[2]
SAMPLE_ID_NAMESPACE = uuid.UUID("3f6c1d2e-8b4a-5c7e-9d10-2a4b6c8e0f13")
COLUMNS = {"caption": "text", "n": "int", "big": "bigint", "x": "double", "ok": "boolean"}
N = 60


def values(i: int) -> dict[str, object]:
    return {
        "caption": None if i % 9 == 4 else f"a photo of thing {i} ✓",
        "n": None if i % 5 == 0 else i * 7 - 100,
        "big": None if i % 6 == 1 else i * 10_000_000_000 - 3,
        "x": None if i % 7 == 2 else i / 4 - 2.5,
        "ok": None if i % 4 == 0 else i % 3 == 0,
    }


@pytest.fixture(scope="module")
def dataset(loader: LoaderProcess) -> Iterator[str]:
    name = f"pyc_{secrets.token_hex(6)}"
    with LoaderClient(loader.target) as client:
        client.ingest(
            name,
            (
                {
                    "source_key": f"k/{i}",
                    "data": f"bytes {i}".encode(),
                    "label": i % 2,
                    "metadata": {k: v for k, v in values(i).items() if v is not None},
                }
                for i in range(N)
            ),
            label_names=["a", "b"],
            columns=COLUMNS,
        )
    yield name
    drop_test_datasets("pyc", [name])


def by_key(dataset: str) -> dict[str, int]:
    ns = uuid.uuid5(SAMPLE_ID_NAMESPACE, dataset)
    return {str(uuid.uuid5(ns, f"k/{i}")): i for i in range(N)}


def check(batches: list, names: list[str], dataset: str) -> list[str]:
    index = by_key(dataset)
    seen: list[str] = []
    for b in batches:
        assert list(b.columns) == names
        for j, sample_id in enumerate(b.ids):
            i = index[sample_id]
            for name in names:
                got = b.columns[name].to_list()[j]
                want = f"k/{i}" if name == "source_key" else values(i)[name]
                assert got == want, (name, i, got, want)
            seen.append(sample_id)
    return seen


def test_every_sample_carries_its_own_values_of_every_type(
    loader: LoaderProcess, dataset: str
) -> None:
    names = ["source_key", *COLUMNS]
    with LoaderClient(loader.target) as client:
        batches = list(client.stream_batches(dataset, "all", batch_size=8, seed=2, columns=names))
    seen = check(batches, names, dataset)
    assert sorted(seen) == sorted(by_key(dataset))
    column = batches[0].columns
    assert column["n"].values.dtype == np.int32
    assert column["big"].values.dtype == np.int64
    assert column["ok"].values.dtype == np.bool_
    assert isinstance(column["caption"].values, list)
    # Nulls of a number column are NaN in its float view.
    floats = np.concatenate([b.columns["x"].to_float_array() for b in batches])
    assert int(np.isnan(floats).sum()) == sum(1 for i in range(N) if values(i)["x"] is None)
    assert not any(math.isnan(v) for v in floats if not math.isnan(v))


def test_a_resumed_stream_may_ask_for_other_columns(loader: LoaderProcess, dataset: str) -> None:
    with LoaderClient(loader.target) as client:
        head = []
        for b in client.stream_batches(dataset, "all", batch_size=7, seed=9, columns=["caption"]):
            head.append(b)
            if len(head) == 3:
                break
        rest = list(
            client.stream_batches(
                dataset,
                "all",
                batch_size=7,
                seed=9,
                columns=["n", "source_key"],
                resume_token=head[-1].resume_token,
            )
        )
    seen = check(head, ["caption"], dataset) + check(rest, ["n", "source_key"], dataset)
    assert len(seen) == N and len(set(seen)) == N


def test_columns_are_refused_with_the_servers_words(loader: LoaderProcess, dataset: str) -> None:
    with pytest.raises(ValueError, match='"Caption" is not a metadata column name'):
        validate_column_names(["Caption"])
    with LoaderClient(loader.target) as client:
        with pytest.raises(ValueError, match=r"Batch\.labels"):
            client.stream_batches(dataset, "all", batch_size=4, columns=["label"])
        with pytest.raises(LoaderError) as err:
            list(client.stream_batches(dataset, "all", batch_size=4, columns=["nope"]))
    assert "column \"nope\" is not in dataset" in str(err.value)


def test_dict_items_keep_their_columns_through_a_stateful_checkpoint_in_a_new_process(
    loader: LoaderProcess, dataset: str, tmp_path: Path
) -> None:
    def run(name: str, columns: list[str], **extra: object) -> list[dict[str, Any]]:
        out = tmp_path / f"{name}.json"
        spec = {"target": loader.target, "dataset": dataset, "columns": columns,
                "out": str(out), **extra}
        p = subprocess.run([sys.executable, "-m", "tests.integration.records_run", json.dumps(spec)],
                           cwd=PACKAGE, timeout=300)
        assert p.returncode == 0, name
        items: list[dict[str, Any]] = json.loads(out.read_text())
        return items

    index = by_key(dataset)

    def check_items(items: list[dict[str, Any]], columns: list[str]) -> list[str]:
        seen: list[str] = []
        for item in items:
            for j, sample_id in enumerate(item["id"]):
                i = index[sample_id]
                for name in columns:
                    want = f"k/{i}" if name == "source_key" else values(i)[name]
                    assert item[name][j] == want, (name, i, item[name][j], want)
                seen.append(sample_id)
        return seen

    first_columns = ["source_key", "caption", "x"]
    ckpt = tmp_path / "mid.pt"
    first = run("first", first_columns, save_after=3, save_to=str(ckpt))
    whole = check_items(first, first_columns)
    assert sorted(whole) == sorted(index)
    # A new process resumes the checkpoint asking for other columns: exactly the rest.
    rest = run("rest", ["n", "ok", "big"], load=str(ckpt))
    resumed = check_items(rest, ["n", "ok", "big"])
    head = [i for item in first[:3] for i in item["id"]]
    assert sorted(head + resumed) == sorted(index)
    assert len(set(head + resumed)) == N

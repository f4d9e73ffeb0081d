"""The training ledger through the Python client against a real loader and node: what a job's
streams received is what the ledger lists, batch for batch and in order (rows given up by a
rollback superseded, a mixture's samples with their sources); a sample's appearances are found
by id and by source key; a LoaderDataset records every DataLoader worker's stream under its
stream rank, and keeps recording the job through a StatefulDataLoader state and through a
job state continued at another world size; a new process resumed from a StatefulDataLoader
state skips exactly the batches that followed it; and a replay streams a recorded range
again, batch for batch and byte for byte."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from torch.utils.data import DataLoader

from scylla_loader import Batch, LedgerSource, LoaderClient, LoaderError, Replay, Source
from scylla_loader.ledger import _OVER_ONE_READ, MAX_BATCHES_PER_CALL, range_request
from scylla_loader.torch import LoaderDataset, find_worker_states, merge_states

from .loader_process import LoaderProcess, drop_test_datasets

pytestmark = pytest.mark.integration

PACKAGE = Path(__file__).resolve().parents[2]

SAMPLE_ID_NAMESPACE = uuid.UUID("3f6c1d2e-8b4a-5c7e-9d10-2a4b6c8e0f13")
N = 96
"""Samples of ``dataset``; ``other`` (for a mixture) has ``N_OTHER``, with the same keys."""
N_OTHER = 40
BATCH = 8


def ingest(target: str, n: int) -> str:
    name = f"pyl_{secrets.token_hex(6)}"
    with LoaderClient(target) as client:
        client.ingest(
            name,
            ({"source_key": f"k/{i}", "data": f"bytes {i}".encode(), "label": i % 3,
              "metadata": {"n": i}} for i in range(n)),
            columns={"n": "int"},
        )
    return name


@pytest.fixture(scope="module")
def datasets(loader: LoaderProcess) -> Iterator[tuple[str, str]]:
    names = (ingest(loader.target, N), ingest(loader.target, N_OTHER))
    yield names
    drop_test_datasets("pyl", names)


@pytest.fixture(scope="module")
def dataset(datasets: tuple[str, str]) -> str:
    return datasets[0]


def key_of(dataset: str, n: int = N) -> dict[str, int]:
    """Sample id (UUID string) to the i of its source key ``k/<i>``."""
    ns = uuid.uuid5(SAMPLE_ID_NAMESPACE, dataset)
    return {str(uuid.uuid5(ns, f"k/{i}")): i for i in range(n)}


def new_job() -> str:
    return f"py-ledger/{secrets.token_hex(6)}"


def test_the_ledger_lists_what_an_out_of_order_job_received_batch_for_batch(
    loader: LoaderProcess, dataset: str
) -> None:
    job = new_job()
    index = key_of(dataset)
    with LoaderClient(loader.target) as client:
        received = list(client.stream_batches(
            dataset, "all", batch_size=BATCH, seed=5, epochs=2, ordering="out-of-order",
            job_id=job,
        ))
        ledger = client.ledger(job)
        by_epoch: dict[int, list[Batch]] = {0: [], 1: []}
        for b in received:
            by_epoch[b.epoch].append(b)
        for epoch, got in by_epoch.items():
            n = len(got)
            assert n == N // BATCH
            # Each epoch is the split exactly once.
            assert sorted(i for b in got for i in b.ids) == sorted(index)
            rows = ledger.batches(epoch, 0, 0, n - 1, columns=["n"])
            got.sort(key=lambda b: b.index)
            assert [(r.index, r.ids) for r in rows] == [(b.index, b.ids) for b in got]
            assert [r.resume_token for r in rows] == [b.resume_token for b in got]
            for r in rows:
                assert (r.epoch, r.rank, r.world_size) == (epoch, 0, 1)
                assert (r.superseded, r.resharded_from, r.source_indexes) == (False, "", [])
                assert r.source_keys == [f"k/{index[i]}" for i in r.ids]
                assert r.columns["n"].to_list() == [index[i] for i in r.ids]
                assert r.sources == (LedgerSource(dataset, "all"),)
            last = ledger.batch(epoch, 0, n - 1)
            assert last is not None and last.ids == got[-1].ids
            assert ledger.batch(epoch, 0, n) is None  # beyond the epoch: not recorded
        # Different epochs are different permutations: the ledger did not list one twice.
        assert [b.ids for b in by_epoch[0]] != [b.ids for b in by_epoch[1]]

        where = {
            (sample, b.epoch): (b.index, position)
            for b in received for position, sample in enumerate(b.ids)
        }
        for sample in (received[0].ids[0], received[5].ids[3], received[-1].ids[-1]):
            expected = sorted((e, *where[(sample, e)]) for e in (0, 1))
            by_id = ledger.find(sample_id=sample)
            assert by_id.sample_id == sample and by_id.job_id == job
            assert sorted((a.epoch, a.batch_index, a.position) for a in by_id.appearances) == expected
            assert all((a.rank, a.world_size, a.superseded) == (0, 1, False)
                       for a in by_id.appearances)
            by_key = ledger.find(source_key=f"k/{index[sample]}", dataset=dataset)
            assert by_key.sample_id == sample
            assert by_key.appearances == by_id.appearances
            assert ledger.find(sample_id=uuid.UUID(sample)).appearances == by_id.appearances


def test_an_unknown_job_is_not_found(loader: LoaderProcess, dataset: str) -> None:
    with LoaderClient(loader.target) as client:
        ledger = client.ledger(new_job())
        for read in (lambda: ledger.batches(0, 0, 0, 3), lambda: ledger.find(source_key="k/1")):
            with pytest.raises(LoaderError) as caught:
                read()
            assert caught.value.code_name == "NOT_FOUND" and caught.value.method == "GetLedger"


def test_a_job_id_names_one_job_only(loader: LoaderProcess, dataset: str) -> None:
    job = new_job()
    with LoaderClient(loader.target) as client:
        list(client.stream_batches(dataset, "all", batch_size=BATCH, seed=1, job_id=job))
        with pytest.raises(LoaderError) as caught:
            list(client.stream_batches(dataset, "all", batch_size=BATCH, seed=2, job_id=job))
    assert caught.value.code_name == "FAILED_PRECONDITION"


def test_the_loaders_refusal_of_an_oversized_read_is_the_one_ledger_batches_cuts_down(
    loader: LoaderProcess, dataset: str
) -> None:
    job = new_job()
    with LoaderClient(loader.target) as client:
        list(client.stream_batches(dataset, "all", batch_size=BATCH, job_id=job))
        request = range_request(job, 0, 0, 0, MAX_BATCHES_PER_CALL, (), False)  # 1,001 batches
        with pytest.raises(LoaderError) as too_many:
            client._unary("GetLedger", client._stub.GetLedger, request, None, None)
        assert too_many.value.code_name == "INVALID_ARGUMENT"
        assert _OVER_ONE_READ in too_many.value.details


def test_every_dataloader_worker_is_recorded_under_its_stream_rank(
    loader: LoaderProcess, dataset: str
) -> None:
    job = new_job()
    ds = LoaderDataset(loader.target, dataset, "all", batch_size=BATCH, seed=8, num_workers=2,
                       return_ids=True, job_id=job)
    # The DataLoader takes turns between its workers: worker w made items w, w + 2, ...
    # Worker w of data-parallel rank 0 of 1 streams as rank w of 2.
    items = [list(ids) for _samples, _labels, ids in DataLoader(ds, batch_size=None, num_workers=2)]
    assert sorted(i for ids in items for i in ids) == sorted(key_of(dataset))
    with LoaderClient(loader.target) as client:
        ledger = client.ledger(job)
        for worker in (0, 1):
            mine = items[worker::2]
            rows = ledger.batches(0, worker, 0, len(mine) - 1)
            assert [r.ids for r in rows] == mine
            assert all((r.rank, r.world_size, r.epoch) == (worker, 2, 0) for r in rows)
            assert ledger.batch(0, worker, len(mine)) is None


def test_rows_a_resume_from_an_earlier_token_gave_up_are_superseded(
    loader: LoaderProcess, dataset: str
) -> None:
    job = new_job()
    with LoaderClient(loader.target) as client:
        head: list[Batch] = []
        stream = client.stream_batches(dataset, "all", batch_size=BATCH, seed=6, job_id=job)
        for b in stream:
            head.append(b)
            if len(head) == 5:
                break
        stream.close()
        # The trainer goes back to its checkpoint after batch 2: batches 3 and 4 (and any the
        # loader had sent beyond them) are given up.
        final = head[:3] + list(client.stream_batches(
            dataset, "all", batch_size=BATCH, seed=6, job_id=job,
            resume_token=head[2].resume_token,
        ))
        assert sorted(i for b in final for i in b.ids) == sorted(key_of(dataset))
        ledger = client.ledger(job)
        n = len(final)
        assert [r.ids for r in ledger.batches(0, 0, 0, n - 1)] == [b.ids for b in final]
        every = ledger.batches(0, 0, 0, n - 1, include_superseded=True)
        assert [r.ids for r in every if not r.superseded] == [b.ids for b in final]
        superseded = {r.index: r.ids for r in every if r.superseded}
        assert superseded[3] == head[3].ids and superseded[4] == head[4].ids
        assert min(superseded) == 3
        picked = ledger.batch(0, 0, 3, include_superseded=True)
        assert picked is not None and not picked.superseded and picked.ids == final[3].ids
        given_up = head[3].ids[0]
        plain = ledger.find(sample_id=given_up)
        assert len(plain.appearances) == 1 and not plain.appearances[0].superseded
        everywhere = ledger.find(sample_id=given_up, include_superseded=True)
        assert len(everywhere.appearances) == 2
        assert any((a.superseded, a.batch_index, a.position) == (True, 3, 0)
                   for a in everywhere.appearances)


def test_a_mixtures_ledger_names_each_samples_source(
    loader: LoaderProcess, datasets: tuple[str, str]
) -> None:
    job = new_job()
    first, other = datasets
    keys = {first: key_of(first), other: key_of(other, N_OTHER)}
    with LoaderClient(loader.target) as client:
        received = sorted(client.stream_batches(
            sources=[Source(first, "all", 2), Source(other, "all", 1)], batch_size=BATCH,
            seed=4, job_id=job,
        ), key=lambda b: b.index)
        ledger = client.ledger(job)
        rows = ledger.batches(0, 0, 0, len(received) - 1)
        assert all(b.source_indexes is not None for b in received)
        assert [(r.ids, r.source_indexes) for r in rows] == [
            (b.ids, b.source_indexes.tolist()) for b in received
        ]
        assert rows[0].sources == (LedgerSource(first, "all"), LedgerSource(other, "all"))
        for r in rows:
            for sample, key, source in zip(r.ids, r.source_keys, r.source_indexes):
                assert key == f"k/{keys[r.sources[source].dataset][sample]}"
        # Both datasets hold a sample "k/<i>": dataset= says which one.
        batch, position = next(
            (b, p) for b in received for p, s in enumerate(b.source_indexes.tolist()) if s == 1
        )
        sample = batch.ids[position]
        key = f"k/{keys[other][sample]}"
        found = ledger.find(source_key=key, dataset=other)
        assert found.sample_id == sample
        assert [(a.epoch, a.batch_index, a.position) for a in found.appearances] == [
            (0, batch.index, position)
        ]
        assert ledger.find(source_key=key, dataset=first).sample_id != sample
        for named in ({}, {"dataset": "pyl_000000000000"}):
            with pytest.raises(LoaderError) as caught:
                ledger.find(source_key=key, **named)
            assert caught.value.code_name == "INVALID_ARGUMENT"
            assert f"{first}, {other}" in caught.value.details


def test_a_stateful_dataloader_resumed_from_its_state_keeps_recording_the_same_job(
    loader: LoaderProcess, dataset: str
) -> None:
    from torchdata.stateful_dataloader import StatefulDataLoader

    job = new_job()

    def make() -> StatefulDataLoader:
        ds = LoaderDataset(loader.target, dataset, "all", batch_size=BATCH, seed=2,
                           return_ids=True, job_id=job)
        return StatefulDataLoader(ds, batch_size=None, num_workers=0)

    # A trainer stops after 5 items (its stream still open, as after a crash) and a new one
    # continues from the state it saved: the state carries the job id to the new dataset.
    first = make()
    running = iter(first)
    head = [list(next(running)[2]) for _ in range(5)]
    state = first.state_dict()
    assert [w["job_id"] for w in find_worker_states(state)] == [job]
    second = make()
    second.load_state_dict(state)
    rest = [list(ids) for _s, _l, ids in second]
    assert sorted(i for ids in head + rest for i in ids) == sorted(key_of(dataset))
    with LoaderClient(loader.target) as client:
        ledger = client.ledger(job)
        received = head + rest
        assert [r.ids for r in ledger.batches(0, 0, 0, len(received) - 1)] == received
        every = ledger.batches(0, 0, 0, len(received) - 1, include_superseded=True)
        assert all(r.index >= 5 for r in every if r.superseded)
    del running


def test_a_job_state_continued_at_another_world_size_keeps_recording_the_job(
    loader: LoaderProcess, dataset: str
) -> None:
    job = new_job()

    def rank(r: int, world: int) -> LoaderDataset:
        return LoaderDataset(loader.target, dataset, "all", batch_size=BATCH, seed=7, rank=r,
                             world_size=world, return_ids=True, job_id=job)

    # World 2 delivers 3 batches per rank (its streams left open, as in a crash) ...
    old = [rank(r, 2) for r in range(2)]
    running = [iter(ds) for ds in old]
    head = [[list(next(it)[2]) for _ in range(3)] for it in running]
    state = merge_states([ds.state_dict() for ds in old])
    assert state["job_id"] == job
    # ... and world 3 continues the epoch from the merged job state.
    rest = []
    for r in range(3):
        ds = rank(r, 3)
        ds.load_job_state(state)
        rest.append([list(ids) for _s, _l, ids in ds])
    delivered = [i for per_rank in head + rest for batch in per_rank for i in batch]
    assert sorted(delivered) == sorted(key_of(dataset))
    with LoaderClient(loader.target) as client:
        ledger = client.ledger(job)
        rows = {r: ledger.batches(0, r, 0, MAX_BATCHES_PER_CALL - 1) for r in range(3)}
        for r in range(2):
            assert [b.ids for b in rows[r] if b.world_size == 2] == head[r]
            assert all(b.resharded_from == "" for b in rows[r] if b.world_size == 2)
            assert [b.ids for b in ledger.batches(0, r, 0, 99, world_size=2)] == head[r]
        for r in range(3):
            of_3 = [b for b in rows[r] if b.world_size == 3]
            assert [b.ids for b in of_3] == rest[r]
            last = ledger.batch(0, r, of_3[-1].index, world_size=3)
            assert last is not None and last.ids == rest[r][-1]
    digests = {b.resharded_from for r in range(3) for b in rows[r] if b.world_size == 3}
    assert len(digests) == 1 and digests != {""}
    del running


def test_a_new_process_resumed_from_a_stateful_checkpoint_skips_exactly_the_batches_after_it(
    loader: LoaderProcess, dataset: str, tmp_path: Path
) -> None:
    """The loss-spike workflow: a trainer (2 DataLoader workers, out of order) checkpoints
    after item S, goes on past the next SKIP batches of each worker stream, spikes; a new
    process loads the checkpoint, skips those batches and finishes the epoch."""
    import torch
    from torchdata.stateful_dataloader import StatefulDataLoader

    job, batch, seed, skip = new_job(), 4, 9, 3  # 24 batches: 12 per worker stream
    ds = LoaderDataset(loader.target, dataset, "all", batch_size=batch, seed=seed,
                       ordering="out-of-order", num_workers=2, return_ids=True, job_id=job)
    first = StatefulDataLoader(ds, batch_size=None, num_workers=2)
    running = iter(first)
    head = [list(next(running)[2]) for _ in range(6)]
    state = first.state_dict()
    after = [list(next(running)[2]) for _ in range(2 * skip + 4)]  # 2 more per worker
    del running
    saved = {w["rank"]: w["batch_index"] for w in find_worker_states(state)}
    assert sorted(saved) == [0, 1] and all(isinstance(i, int) for i in saved.values())
    with LoaderClient(loader.target) as client:
        ledger = client.ledger(job)
        # What each worker stream received after the checkpoint, by batch index.
        recorded = {w: {r.index: r.ids for r in ledger.batches(0, w, 0, 99)} for w in (0, 1)}
        skipped = {w: [recorded[w][i] for i in range(saved[w] + 1, saved[w] + 1 + skip)]
                   for w in (0, 1)}
        assert all(ids in after for w in (0, 1) for ids in skipped[w])  # the trainer got them
        # The checkpoint's batch indexes are where the head ended in each worker stream.
        assert sorted(recorded[w][i] for w in (0, 1) for i in range(saved[w] + 1)) == sorted(head)

        checkpoint, out = tmp_path / "state.pt", tmp_path / "rest.json"
        torch.save(state, checkpoint)
        spec = {"target": loader.target, "dataset": dataset, "job": job, "batch_size": batch,
                "seed": seed, "load": str(checkpoint), "skip": skip, "out": str(out)}
        done = subprocess.run([sys.executable, "-m", "tests.integration.skip_run",
                               json.dumps(spec)], cwd=PACKAGE, timeout=300)
        assert done.returncode == 0
        rest: list[list[str]] = json.loads(out.read_text())

        # The epoch is the split minus exactly the skipped batches' samples, each once.
        left_out = {i for w in (0, 1) for ids in skipped[w] for i in ids}
        delivered = [i for ids in head + rest for i in ids]
        assert len(left_out) == 2 * skip * batch
        assert sorted(delivered) == sorted(set(key_of(dataset)) - left_out)
        assert len(rest) == sum(12 - 1 - saved[w] - skip for w in (0, 1))
        for w in (0, 1):
            rows = ledger.batches(0, w, 0, 99)
            # Listed and marked: the skipped batches, with the samples they held.
            assert [r.ids for r in rows if r.skipped] == skipped[w]
            assert [r.index for r in rows if r.skipped] == list(
                range(saved[w] + 1, saved[w] + 1 + skip))
            # The resumed stream numbers on after the skipped range: one row per index.
            assert [r.index for r in rows] == list(range(12))
            assert not any(r.superseded for r in rows)
        live = sorted(r.ids for w in (0, 1) for r in ledger.batches(0, w, 0, 99) if not r.skipped)
        assert live == sorted(head + rest)
        # The batches that led to the spike can still be streamed again, as received.
        for w in (0, 1):
            again = client.stream_batches(
                dataset, "all", batch_size=batch, seed=seed, shard_rule="pad",
                ordering="out-of-order", job_id=job,
                replay=Replay(0, w, saved[w] + 1, saved[w] + skip),
            )
            assert [b.ids for b in again] == skipped[w]
        # What the spiking trainer received past the skipped batches was given up.
        given_up = [r for w in (0, 1) for r in ledger.batches(0, w, 0, 99, include_superseded=True)
                    if r.superseded]
        assert given_up and all(r.index > saved[r.rank] + skip for r in given_up)


def snapshot(b: Batch) -> tuple[object, ...]:
    """What a replayed batch must repeat: ids in order, index, token, labels and bytes."""
    return (b.epoch, b.index, b.ids, b.resume_token, b.labels.tolist(), bytes(b.data),
            b.sizes.tolist())


def test_a_replay_streams_a_recorded_range_again_byte_for_byte(
    loader: LoaderProcess, dataset: str
) -> None:
    job = new_job()
    fields = {"batch_size": BATCH, "seed": 3, "ordering": "out-of-order", "job_id": job}
    with LoaderClient(loader.target) as client:
        received = [snapshot(b) for b in client.stream_batches(dataset, "all", epochs=2, **fields)]
        epoch_1 = sorted((s for s in received if s[0] == 1), key=lambda s: s[1])
        assert [s[1] for s in epoch_1] == list(range(N // BATCH))
        replayed = list(client.stream_batches(dataset, "all", replay=Replay(1, 0, 3, 7), **fields))
        assert [snapshot(b) for b in replayed] == epoch_1[3:8]
        # One batch (no last), and a replay resumed from a token it sent: the batches after it.
        [one] = client.stream_batches(dataset, "all", replay=Replay(1, 0, 5), **fields)
        assert snapshot(one) == epoch_1[5]
        rest = client.stream_batches(dataset, "all", replay=Replay(1, 0, 3, 7),
                                     resume_token=replayed[1].resume_token, **fields)
        assert [snapshot(b) for b in rest] == epoch_1[5:8]
        # Nothing was recorded by the replays: the ledger still lists the job's own batches.
        rows = client.ledger(job).batches(1, 0, 0, N // BATCH - 1, include_superseded=True)
        assert [(r.index, r.ids, r.resume_token) for r in rows] == [
            (s[1], s[2], s[3]) for s in epoch_1
        ]
        # A replay must repeat the job's fields; a range the ledger lacks is named.
        with pytest.raises(LoaderError) as other_seed:
            list(client.stream_batches(dataset, "all", replay=Replay(1, 0, 3),
                                       **{**fields, "seed": 4}))
        assert other_seed.value.code_name == "FAILED_PRECONDITION"
        with pytest.raises(LoaderError) as beyond:
            list(client.stream_batches(dataset, "all", replay=Replay(1, 0, 10, 12), **fields))
        assert beyond.value.code_name == "INVALID_ARGUMENT"
        assert "batch 12 of epoch 1, rank 0" in beyond.value.details

"""Epoch bookkeeping and state validation of LoaderDataset (no server needed: nothing here
opens a channel)."""

from typing import Any

import pytest

from scylla_loader.torch import LoaderDataset


def make() -> LoaderDataset:
    return LoaderDataset("127.0.0.1:1", "d", "s/train", batch_size=4, epoch=2)


def test_iterations_advance_by_themselves_until_set_epoch_says_otherwise() -> None:
    ds = make()
    assert [ds._begin_epoch() for _ in range(3)] == [2, 3, 4]
    ds.set_epoch(0)
    assert ds._begin_epoch() == 0
    assert ds._begin_epoch() == 1
    ds.set_epoch(7)
    ds.set_epoch(7)
    assert ds._begin_epoch() == 7 and ds._begin_epoch() == 8


def test_a_state_before_any_item_keeps_the_next_epoch() -> None:
    ds = make()
    state = ds.state_dict()
    assert state["epoch"] is None and state["next_epoch"] == 2
    other = make()
    other.load_state_dict({**state, "next_epoch": 5})
    assert other._begin_epoch() == 5


@pytest.mark.parametrize(
    "state",
    [
        None,
        {},
        {"version": 2, "epoch": 0},
        {"version": 1, "epoch": None, "next_epoch": -1},
        {"version": 1, "epoch": -1, "stream": "x", "resume_token": None, "epoch_done": False},
        {"version": 1, "epoch": 0, "stream": 3, "resume_token": None, "epoch_done": False},
        {"version": 1, "epoch": 0, "stream": "x", "resume_token": "abc", "epoch_done": False},
        {"version": 1, "epoch": 0, "stream": "x", "resume_token": b"t", "epoch_done": "no"},
    ],
)
def test_damaged_states_are_refused(state: Any) -> None:
    with pytest.raises(ValueError, match="LoaderDataset state"):
        make().load_state_dict(state)


def test_the_client_never_crosses_pickling() -> None:
    ds = make()
    ds._client = ds._client_here()  # a channel only connects on a call: nothing is contacted
    state = ds.__getstate__()
    assert state["_client"] is None and state["_client_pid"] == -1
    assert ds._client is not None
    ds._client.close()


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="decode must be"):
        LoaderDataset("h:1", "d", "s", batch_size=4, decode="jpeg")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size"):
        LoaderDataset("h:1", "d", "s", batch_size=0)


def test_a_server_transform_is_part_of_the_stream_key() -> None:
    from scylla_loader import Transform

    plain = make()._stream_key(0, 1)
    with_crop = LoaderDataset(
        "127.0.0.1:1", "d", "s/train", batch_size=4, epoch=2,
        server_transform=Transform(center_crop=(8, 8)),
    )._stream_key(0, 1)
    other_crop = LoaderDataset(
        "127.0.0.1:1", "d", "s/train", batch_size=4, epoch=2,
        server_transform=Transform(center_crop=(8, 9)),
    )._stream_key(0, 1)
    assert with_crop.startswith(plain) and len({plain, with_crop, other_crop}) == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"decode": "pil"}, "with a raw server_transform the server already decoded"),
        ({"transform": lambda x: x}, "with a raw server_transform the server already decoded"),
    ],
)
def test_a_raw_server_transform_excludes_client_decoding(kwargs: dict[str, Any], message: str) -> None:
    from scylla_loader import Transform

    with pytest.raises(ValueError, match=message):
        LoaderDataset(
            "127.0.0.1:1", "d", "s", batch_size=4,
            server_transform=Transform(center_crop=(8, 8)), **kwargs,
        )


def test_a_reencoded_server_transform_still_decodes_client_side() -> None:
    from scylla_loader import Transform

    ds = LoaderDataset(
        "127.0.0.1:1", "d", "s", batch_size=4, decode="pil",
        server_transform=Transform(resize=64, output="jpeg"),
    )
    assert ds.server_transform is not None and not ds.server_transform.raw


def test_a_transform_object_in_the_callable_slot_is_pointed_elsewhere() -> None:
    from scylla_loader import Transform

    with pytest.raises(ValueError, match="pass a scylla_loader.Transform as server_transform="):
        LoaderDataset(
            "127.0.0.1:1", "d", "s", batch_size=4,
            transform=Transform(center_crop=(8, 8)),  # type: ignore[arg-type]
        )


MIXED = [("web", "main/train", 5), ("books", "all", 3), ("code", "all", 2, True)]


def mixed(**options: Any) -> LoaderDataset:
    return LoaderDataset("127.0.0.1:1", batch_size=4, **{"sources": MIXED, **options})


def test_a_mixed_dataset_keeps_its_checked_sources_and_streams_no_single_split() -> None:
    from scylla_loader import Source

    ds = mixed(samples_per_epoch=1000, with_sources=True)
    assert ds.sources == (Source("web", "main/train", 5.0), Source("books", "all", 3.0),
                          Source("code", "all", 2.0, True))
    assert ds.dataset is None and ds.split is None and ds.samples_per_epoch == 1000


def test_the_stream_key_of_a_mixed_dataset_follows_its_sources_not_its_item_layout() -> None:
    keys = {
        "base": mixed()._stream_key(0, 1),
        "epoch length": mixed(samples_per_epoch=10)._stream_key(0, 1),
        "weights": mixed(sources=[("web", "main/train", 4), *MIXED[1:]])._stream_key(0, 1),
        "repeat": mixed(sources=[*MIXED[:2], ("code", "all", 2)])._stream_key(0, 1),
        "one source": LoaderDataset("127.0.0.1:1", "web", "main/train", batch_size=4)._stream_key(0, 1),
    }
    assert len(set(keys.values())) == len(keys), keys
    # What each item holds is no part of the stream: a checkpoint taken with it continues
    # without, and the ids' or sources' presence does not change which samples come.
    assert mixed(with_sources=True, return_ids=True)._stream_key(0, 1) == keys["base"]
    # A single split's key is the one states were saved with before mixing existed.
    assert keys["one source"].startswith("web|main/train|batch 4|")


def test_a_mixed_state_resumes_only_the_same_mixture() -> None:
    ds = mixed(samples_per_epoch=100)
    state = {"version": 1, "stream": ds._stream_key(0, 1), "job": ds._job_key(), "rank": 0,
             "world_size": 1, "epoch": 0, "resume_token": b"t", "job_checkpoint": None,
             "epoch_done": False, "next_epoch": 1}
    same = mixed(samples_per_epoch=100)
    same.load_state_dict(state)
    assert same._pending is not None and same._pending["resume_token"] == b"t"
    other = mixed(samples_per_epoch=200)
    other.load_state_dict(state)
    with pytest.raises(ValueError, match="sources and samples_per_epoch"):
        next(iter(other))  # refused before any call: nothing listens on port 1


def test_a_mixed_job_state_belongs_to_its_mixture() -> None:
    from scylla_loader.torch import merge_states

    ds = mixed(samples_per_epoch=100)
    worker = {"version": 1, "stream": ds._stream_key(1, 2), "job": ds._job_key(), "rank": 1,
              "world_size": 2, "epoch": 3, "resume_token": None, "job_checkpoint": None,
              "epoch_done": True}
    job = merge_states([worker, {**worker, "stream": ds._stream_key(0, 2), "rank": 0}])
    assert job["epoch"] == 4
    mixed(samples_per_epoch=100).load_job_state(job)
    with pytest.raises(ValueError, match="belongs to another job"):
        mixed(samples_per_epoch=0).load_job_state(job)
    with pytest.raises(ValueError, match="belongs to another job"):
        LoaderDataset("127.0.0.1:1", "web", "main/train", batch_size=4).load_job_state(job)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dataset": "d", "split": "s", "with_sources": True}, "with_sources needs a mixed stream"),
        ({"dataset": "d", "split": "s", "sources": MIXED}, "not both"),
        ({}, "no dataset"),
        ({"sources": [*MIXED, ("x", "all", float("nan"))]},
         r'source 3 \(dataset "x", split "all"\): weight NaN'),
        ({"dataset": "d", "split": "s", "samples_per_epoch": 5}, "mixed streams only"),
    ],
)
def test_mixing_mistakes_fail_where_the_dataset_is_made(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LoaderDataset("127.0.0.1:1", batch_size=4, **kwargs)


def test_what_a_spawned_worker_receives_of_a_mixture_pickles() -> None:
    import pickle

    # The shared epoch and skip cells pickle only while a worker is spawned; the rest of the
    # state (the checked sources among it) must pickle on its own.
    ds = mixed(samples_per_epoch=7, with_sources=True)
    cells = {"_epoch_cell", "_skip_cell"}
    state = {k: v for k, v in ds.__getstate__().items() if k not in cells}
    copy = pickle.loads(pickle.dumps(state))
    assert copy["_input"] == ds._input and copy["sources"] == ds.sources


class _Recorder:
    """Stands in for the LoaderClient of a worker: records what the dataset asked for and
    answers with batches decoded as a real stream's are (the wire path has integration tests)."""

    def __init__(self, messages: list[Any]) -> None:
        self.messages = messages
        self.asked: dict[str, Any] = {}
        self.closed = False

    def stream_batches(self, *args: Any, **kwargs: Any) -> Any:
        from scylla_loader import decode_batch

        self.asked = {"args": args, **kwargs}
        sources = len(kwargs.get("sources") or ())
        return (decode_batch(m, sources=sources) for m in self.messages)  # close()s as BatchStream

    def close(self) -> None:
        self.closed = True


def test_items_of_a_mixed_dataset_end_with_int64_source_indexes() -> None:
    import uuid

    import torch

    from scylla_loader.v1 import loader_pb2

    message = loader_pb2.Batch(
        epoch=0, index=0, ids=b"".join(uuid.UUID(int=i + 1).bytes for i in range(3)),
        labels=[4, -1, 7], data=b"abc", data_sizes=[1, 1, 1], label_blobs=b"m",
        label_blob_sizes=[0, 1, 0], source_indexes=[0, 2, 0], resume_token=b"t1",
    )
    ds = mixed(samples_per_epoch=30, with_sources=True, return_ids=True)
    recorder = _Recorder([message])
    # A pass in the trainer's own process makes a client of its own for the pass.
    ds._new_client = lambda: recorder  # type: ignore[method-assign, assignment, return-value]
    items = list(ds)
    assert recorder.asked["args"] == (None, None)
    assert recorder.asked["sources"] == ds.sources and recorder.asked["samples_per_epoch"] == 30
    [(samples, labels, ids, sources)] = items
    assert samples == [b"a", b"b", b"c"] and labels.tolist() == [4, -1, 7]
    assert len(ids) == 3
    assert sources.dtype == torch.int64 and sources.tolist() == [0, 2, 0]
    assert ds.state_dict()["resume_token"] == b"t1" and ds.state_dict()["epoch_done"] is True
    assert recorder.closed  # a pass outside a worker closes its client when it ends


def started(job_id: str | None = None, **extra: Any) -> dict[str, Any]:
    """A worker state as a LoaderDataset leaves it after its first item."""
    state = {"version": 1, "epoch": 0, "stream": "x", "resume_token": b"t",
             "epoch_done": False, **extra}
    if job_id is not None:
        state["job_id"] = job_id
    return state


def test_a_job_id_is_checked_where_the_dataset_is_made() -> None:
    with pytest.raises(ValueError, match="is not a job id: use 1 to 128 characters"):
        LoaderDataset("127.0.0.1:1", "d", "all", batch_size=4, job_id="run 7")
    assert LoaderDataset("127.0.0.1:1", "d", "all", batch_size=4, job_id="run-7").job_id == "run-7"


def test_a_state_saved_with_a_job_id_resumes_under_that_job_id_only() -> None:
    named = LoaderDataset("127.0.0.1:1", "d", "all", batch_size=4, job_id="run-7")
    named.load_state_dict(started("run-7"))
    for job_id in ("run-8", None):
        other = LoaderDataset("127.0.0.1:1", "d", "all", batch_size=4, job_id=job_id)
        with pytest.raises(ValueError, match="saved by job_id 'run-7'.*pass job_id='run-7'"):
            other.load_state_dict(started("run-7"))


def test_a_state_without_a_job_id_resumes_under_any() -> None:
    # States saved before job ids existed (no key) or by a job that named none.
    for state in (started(), {**started(), "job_id": None}):
        LoaderDataset("127.0.0.1:1", "d", "all", batch_size=4, job_id="run-7").load_state_dict(state)
        make().load_state_dict(state)


def test_a_job_state_saved_with_a_job_id_resumes_under_that_job_id_only() -> None:
    ds = LoaderDataset("127.0.0.1:1", "d", "all", batch_size=4, job_id="run-7")
    job = {"version": 1, "kind": "scylla_loader.job", "job": ds._job_key(), "epoch": 1,
           "job_checkpoint": None, "job_id": "run-7"}
    ds.load_job_state(job)
    with pytest.raises(ValueError, match="job state was saved by job_id 'run-7'"):
        LoaderDataset("127.0.0.1:1", "d", "all", batch_size=4).load_job_state(job)
    # The job key itself ignores the job id: an unnamed job's state loads into a named one.
    ds.load_job_state({**job, "job_id": None})


# -- skip_batches ----------------------------------------------------------------------------


def batch_message(index: int, *, last: bool = False) -> Any:
    import uuid

    from scylla_loader.v1 import loader_pb2

    return loader_pb2.Batch(
        epoch=0, index=index, ids=uuid.UUID(int=index + 1).bytes, labels=[0], data=b"x",
        data_sizes=[1], resume_token=b"after %d" % index, last_in_epoch=last,
    )


def named(recorder: _Recorder | None = None) -> LoaderDataset:
    ds = LoaderDataset("127.0.0.1:1", "d", "all", batch_size=1, job_id="run-7")
    if recorder is not None:
        ds._new_client = lambda: recorder  # type: ignore[method-assign, assignment, return-value]
    return ds


def saved(ds: LoaderDataset, index: int | None, **extra: Any) -> dict[str, Any]:
    """The state ``ds`` leaves after delivering batch ``index`` of epoch 0 (no index: a state
    saved before states kept it)."""
    state = {"version": 1, "stream": ds._stream_key(0, 1), "job": ds._job_key(),
             "job_id": "run-7", "rank": 0, "world_size": 1, "epoch": 0,
             "resume_token": b"after %d" % (index or 0), "job_checkpoint": None,
             "epoch_done": False, "next_epoch": 1}
    if index is not None:
        state["batch_index"] = index
    return {**state, **extra}


def test_a_state_keeps_the_index_of_the_last_batch_delivered() -> None:
    ds = named(_Recorder([batch_message(0), batch_message(1)]))
    items = iter(ds)
    next(items)
    assert ds.state_dict()["batch_index"] == 0
    next(items)
    assert ds.state_dict()["batch_index"] == 1 and ds.state_dict()["skip_batches"] is None


def test_skip_batches_names_the_next_n_batches_after_the_states_last_one() -> None:
    recorder = _Recorder([batch_message(8), batch_message(9, last=True)])
    for order in ("skip first", "load first"):
        ds = named(recorder)
        if order == "skip first":  # as with a StatefulDataLoader, which loads at iteration
            ds.skip_batches(3)
            ds.load_state_dict(saved(ds, 4))
        else:
            ds.load_state_dict(saved(ds, 4))
            ds.skip_batches(3)
        items = iter(ds)
        next(items)
        assert recorder.asked["skip_batches"] == (5, 7)
        assert recorder.asked["resume_token"] == b"after 4" and recorder.asked["job_id"] == "run-7"
        # The stream delivered past the skip: a state from here on resumes without it.
        state = ds.state_dict()
        assert (state["batch_index"], state["skip_batches"]) == (8, None)
        list(items)
        # Only the first iteration after skip_batches skips: the next epoch is whole.
        list(ds)
        assert recorder.asked["skip_batches"] is None and recorder.asked["resume_token"] is None


def test_a_state_taken_before_the_skipping_streams_first_batch_still_skips() -> None:
    class Broken(_Recorder):
        def stream_batches(self, *args: Any, **kwargs: Any) -> Any:
            self.asked = {"args": args, **kwargs}
            raise RuntimeError("trainer killed before the first batch")

    ds = named(Broken([]))
    ds.load_state_dict(saved(ds, 4))
    ds.skip_batches(2)
    with pytest.raises(RuntimeError):
        next(iter(ds))
    state = ds.state_dict()
    assert state["skip_batches"] == [5, 6] and state["resume_token"] == b"after 4"
    recorder = _Recorder([batch_message(7)])
    again = named(recorder)
    again.load_state_dict(state)
    list(again)
    assert recorder.asked["skip_batches"] == (5, 6)
    carrying = named()
    carrying.load_state_dict(state)
    with pytest.raises(ValueError, match="skips batches 5 to 6 already"):
        carrying.skip_batches(1)


def test_old_states_without_a_batch_index_still_resume() -> None:
    recorder = _Recorder([batch_message(5)])
    ds = named(recorder)
    ds.load_state_dict(saved(ds, None))
    list(ds)
    assert recorder.asked["resume_token"] == b"after 0" and recorder.asked["skip_batches"] is None
    assert ds.state_dict()["batch_index"] == 5


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"batch_index": None}, "holds no batch index"),
        ({"epoch_done": True}, "at the end of epoch 0"),
        ({"job_checkpoint": b"c"}, "a job state .* cannot name batches to skip"),
    ],
)
def test_states_that_cannot_skip_are_refused_when_skip_batches_is_called(
    state: dict[str, Any], message: str
) -> None:
    ds = named()
    ds.load_state_dict(saved(ds, 4, **state))
    with pytest.raises(ValueError, match=message):
        ds.skip_batches(2)


def test_what_cannot_skip_is_refused_naming_why() -> None:
    with pytest.raises(ValueError, match="needs job_id"):
        make().skip_batches(1)
    for n in (0, -1, True, 1.0):
        with pytest.raises(ValueError, match="1 or more"):
            named().skip_batches(n)  # type: ignore[arg-type]
    ds = named()
    job = {"version": 1, "kind": "scylla_loader.job", "job": ds._job_key(), "epoch": 0,
           "job_checkpoint": b"c", "job_id": "run-7"}
    ds.load_job_state(job)
    with pytest.raises(ValueError, match="a job state .* cannot name batches to skip"):
        ds.skip_batches(1)
    # Asked before the job state was loaded (a worker finds it at its iteration).
    later = named()
    later.skip_batches(1)
    later.load_job_state(job)
    with pytest.raises(ValueError, match="a job state .* cannot name batches to skip"):
        next(iter(later))
    # Nothing loaded: nothing to skip after.
    fresh = named()
    fresh.skip_batches(1)
    with pytest.raises(ValueError, match="needs a state to resume from"):
        next(iter(fresh))


@pytest.mark.parametrize("bad", [-1, "3", True])
def test_a_damaged_batch_index_is_refused(bad: Any) -> None:
    ds = named()
    with pytest.raises(ValueError, match="corrupt LoaderDataset state: batch_index"):
        ds.load_state_dict(saved(ds, 4, batch_index=bad))
    with pytest.raises(ValueError, match="corrupt LoaderDataset state: skip_batches"):
        ds.load_state_dict(saved(ds, 4, skip_batches=[5]))


def test_every_dataloader_worker_takes_a_skip_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import scylla_loader.torch.dataset as module

    class Info:
        def __init__(self, id: int) -> None:
            self.id, self.num_workers = id, 2

    ds = named()
    ds.skip_batches(3)
    taken = []
    for worker in (0, 1, 0, 1):
        monkeypatch.setattr(module, "get_worker_info", lambda: Info(worker))
        taken.append(ds._take_skip())
    assert taken == [3, 3, None, None]
    ds.skip_batches(2)
    monkeypatch.setattr(module, "get_worker_info", lambda: Info(1))
    assert ds._take_skip() == 2

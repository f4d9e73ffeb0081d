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

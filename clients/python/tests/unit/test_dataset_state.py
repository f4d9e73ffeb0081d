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

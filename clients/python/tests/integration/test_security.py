"""The client's TLS, mTLS and bearer tokens against real loaders run with `--tls-cert`,
`--tls-key`, `--tls-client-ca` and `--auth-tokens`, streaming MNIST from the real node.
Certificates come from a CA made at test time; tokens from `auth new-token`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from torch.utils.data import DataLoader

from scylla_loader import LoaderClient, LoaderError, ReconnectPolicy, TlsOptions, TokenFile
from scylla_loader.torch import LoaderDataset

from .certs import Cert, TestCa
from .conftest import DATASET
from .loader_process import LoaderProcess, cli

pytestmark = pytest.mark.integration

NO_RETRY = ReconnectPolicy(attempts=0)
"""The refusals are asserted as the first error, not after reconnection attempts."""


@dataclass(frozen=True)
class Tokens:
    reader: str
    """reader of mnist."""
    other_reader: str
    """reader of another dataset only."""
    admin: str
    """admin of every dataset."""
    revoked: str
    """Made by `auth new-token` but not in the loader's file."""


@dataclass(frozen=True)
class Secured:
    ca: TestCa
    client: Cert
    tokens: Tokens
    tls: LoaderProcess
    """TLS and tokens."""
    mtls: LoaderProcess
    """mTLS (client certificates from ``ca``) and tokens."""


def _new_token(name: str, role: str, datasets: str) -> tuple[str, dict[str, object]]:
    made = cli("auth", "new-token", "--name", name, "--role", role, "--datasets", datasets,
               timeout=120)
    assert made.returncode == 0, made.stderr
    entry: dict[str, object] = json.loads(made.stderr.strip().splitlines()[-1])
    return made.stdout.strip(), entry


@pytest.fixture(scope="module")
def secured(
    tmp_path_factory: pytest.TempPathFactory, resume_key: str, database: None
) -> Iterator[Secured]:
    folder = tmp_path_factory.mktemp("security")
    ca = TestCa(folder / "ca", "loader")
    server = ca.issue("loader", "server")
    client = ca.issue("trainer-a", "client")
    made = {
        "reader": _new_token("trainer-a", "reader", DATASET),
        "other_reader": _new_token("trainer-b", "reader", "some-other-dataset"),
        "admin": _new_token("ops", "admin", "*"),
        "revoked": _new_token("gone", "reader", "*"),
    }
    tokens_file = folder / "tokens.json"
    tokens_file.write_text(
        json.dumps({"tokens": [entry for key, (_, entry) in made.items() if key != "revoked"]})
    )
    tokens = Tokens(**{key: token for key, (token, _) in made.items()})
    common = ["--tls-cert", str(server.cert), "--tls-key", str(server.key),
              "--auth-tokens", str(tokens_file)]
    tls = LoaderProcess(folder, resume_key, extra_args=common)
    mtls = LoaderProcess(folder, resume_key, extra_args=[*common, "--tls-client-ca", str(ca.cert)])
    tls.start()
    try:
        mtls.start()
        try:
            yield Secured(ca, client, tokens, tls, mtls)
        finally:
            mtls.stop()
    finally:
        tls.stop()


def first_batch_ids(client: LoaderClient) -> list[str]:
    stream = client.stream_batches(DATASET, "all", batch_size=64, timeout=60)
    try:
        return next(iter(stream)).ids
    finally:
        stream.close()


# -- TLS ----------------------------------------------------------------------------------


def test_tls_with_the_right_ca_streams(secured: Secured) -> None:
    with LoaderClient(
        secured.tls.target, tls=TlsOptions(ca=secured.ca.cert), token=secured.tokens.reader
    ) as client:
        assert len(first_batch_ids(client)) == 64
        assert client.describe_dataset(DATASET, timeout=30).sample_count >= 70000


def test_tls_with_pem_bytes_and_a_server_name_streams(secured: Secured) -> None:
    # Connected by IP, verified against the name the certificate carries.
    tls = TlsOptions(ca=secured.ca.cert.read_bytes(), server_name="localhost")
    with LoaderClient(secured.tls.target, tls=tls, token=secured.tokens.reader) as client:
        assert len(first_batch_ids(client)) == 64


def test_tls_with_another_ca_fails(secured: Secured, tmp_path: Path) -> None:
    stranger = TestCa(tmp_path / "other", "stranger")
    with LoaderClient(
        secured.tls.target, tls=TlsOptions(ca=stranger.cert), token=secured.tokens.reader,
        reconnect=NO_RETRY,
    ) as client, pytest.raises(LoaderError) as caught:
        first_batch_ids(client)
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE


def test_plain_text_against_the_tls_loader_fails(secured: Secured) -> None:
    with LoaderClient(secured.tls.target) as client, pytest.raises(LoaderError) as caught:
        client.describe_dataset(DATASET, timeout=10)
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE


# -- mTLS ---------------------------------------------------------------------------------


def test_mtls_with_a_client_certificate_of_the_ca_streams(secured: Secured) -> None:
    tls = TlsOptions(ca=secured.ca.cert, cert=secured.client.cert, key=secured.client.key)
    with LoaderClient(secured.mtls.target, tls=tls, token=secured.tokens.reader) as client:
        assert len(first_batch_ids(client)) == 64


def test_mtls_without_a_client_certificate_is_refused(secured: Secured) -> None:
    with LoaderClient(
        secured.mtls.target, tls=TlsOptions(ca=secured.ca.cert), token=secured.tokens.reader,
        reconnect=NO_RETRY,
    ) as client, pytest.raises(LoaderError) as caught:
        first_batch_ids(client)
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE


def test_mtls_with_a_client_certificate_of_another_ca_is_refused(
    secured: Secured, tmp_path: Path
) -> None:
    foreign = TestCa(tmp_path / "foreign", "foreign").issue("intruder", "client")
    tls = TlsOptions(ca=secured.ca.cert, cert=foreign.cert, key=foreign.key)
    with LoaderClient(
        secured.mtls.target, tls=tls, token=secured.tokens.reader, reconnect=NO_RETRY
    ) as client, pytest.raises(LoaderError) as caught:
        client.describe_dataset(DATASET, timeout=10)
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE


# -- tokens -------------------------------------------------------------------------------


def tls_client(secured: Secured, token: object = None) -> LoaderClient:
    return LoaderClient(
        secured.tls.target, tls=TlsOptions(ca=secured.ca.cert), token=token,  # type: ignore[arg-type]
        reconnect=ReconnectPolicy(attempts=3, initial_backoff=0.05, max_backoff=0.1),
    )


def test_without_a_token_the_call_is_unauthenticated_and_not_retried(secured: Secured) -> None:
    with tls_client(secured) as client:
        stream = client.stream_batches(DATASET, "all", batch_size=64, timeout=60)
        with pytest.raises(LoaderError) as caught:
            next(iter(stream))
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert "no bearer token" in caught.value.details
    assert stream.reconnects == 0


def test_an_unknown_token_is_unauthenticated_and_never_echoed(secured: Secured) -> None:
    with tls_client(secured, secured.tokens.revoked) as client:
        stream = client.stream_batches(DATASET, "all", batch_size=64, timeout=60)
        with pytest.raises(LoaderError) as caught:
            next(iter(stream))
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert "unknown token" in caught.value.details
    assert secured.tokens.revoked not in str(caught.value)
    assert stream.reconnects == 0


def test_a_reader_streams_describes_and_lists_its_dataset(secured: Secured) -> None:
    with tls_client(secured, secured.tokens.reader) as client:
        assert len(first_batch_ids(client)) == 64
        assert client.describe_dataset(DATASET, timeout=30).dataset == DATASET
        client.list_splits(DATASET, timeout=30)


def test_a_reader_may_not_create_splits(secured: Secured) -> None:
    with tls_client(secured, secured.tokens.reader) as client, pytest.raises(LoaderError) as caught:
        client.create_splits(DATASET, "never-made", parts={"a": 1, "b": 1}, timeout=30)
    assert caught.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert "trainer-a" in caught.value.details and "CreateSplits" in caught.value.details


def test_a_reader_of_another_dataset_may_not_stream_this_one(secured: Secured) -> None:
    with tls_client(secured, secured.tokens.other_reader) as client:
        stream = client.stream_batches(DATASET, "all", batch_size=64, timeout=60)
        with pytest.raises(LoaderError) as caught:
            next(iter(stream))
    assert caught.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert "trainer-b" in caught.value.details and DATASET in caught.value.details
    assert stream.reconnects == 0


def test_the_token_function_is_called_for_every_call(secured: Secured) -> None:
    # Valid for two calls, then the function hands out a token the loader does not know:
    # the third call is refused, so the token was asked for again, not cached.
    handed: list[str] = []
    lock = threading.Lock()

    def rotating() -> str:
        with lock:
            handed.append(secured.tokens.reader if len(handed) < 2 else secured.tokens.revoked)
            return handed[-1]

    with tls_client(secured, rotating) as client:
        assert len(first_batch_ids(client)) == 64
        client.describe_dataset(DATASET, timeout=30)
        with pytest.raises(LoaderError) as caught:
            client.list_splits(DATASET, timeout=30)
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert len(handed) == 3


def test_a_failing_token_function_is_unauthenticated_and_reaches_no_loader(
    secured: Secured,
) -> None:
    def broken() -> str:
        raise OSError("token service unreachable")

    with tls_client(secured, broken) as client:
        stream = client.stream_batches(DATASET, "all", batch_size=64, timeout=60)
        with pytest.raises(LoaderError) as caught:
            next(iter(stream))
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert "token function failed: OSError: token service unreachable" in caught.value.details
    assert stream.reconnects == 0


def test_a_loader_dataset_in_a_spawned_worker_streams_over_mtls_with_a_token_file(
    secured: Secured, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(secured.tokens.reader + "\n")
    dataset = LoaderDataset(
        secured.mtls.target, DATASET, "all", batch_size=64, return_ids=True,
        tls=TlsOptions(ca=secured.ca.cert, cert=secured.client.cert, key=secured.client.key),
        token=TokenFile(token_file),
    )
    loader = DataLoader(dataset, batch_size=None, num_workers=1, multiprocessing_context="spawn")
    items = iter(loader)
    try:
        _images, labels, ids = next(items)
    finally:
        del items
    assert len(ids) == 64 and len(labels) == 64

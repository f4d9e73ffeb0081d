"""The client's TLS and token options: what is refused when the client is made, and what a
real in-process gRPC server receives (the header, per call; a failed token function ends the
call as UNAUTHENTICATED without a retry)."""

from __future__ import annotations

import pickle
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from scylla_loader import LoaderClient, LoaderError, ReconnectPolicy, TlsOptions, TokenFile
from scylla_loader.errors import from_rpc_error
from scylla_loader.retry import is_retryable
from scylla_loader.security import check_security
from scylla_loader.v1 import loader_pb2, loader_pb2_grpc

TOKEN = "slt_" + "A" * 43
FAKE_PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


# -- options refused when the client is made ----------------------------------------------


def test_a_token_over_plain_text_is_refused_and_the_message_says_what_to_do() -> None:
    with pytest.raises(ValueError) as caught:
        LoaderClient("127.0.0.1:1", token=TOKEN)
    message = str(caught.value)
    assert "tls=" in message and "insecure_token=True" in message
    assert TOKEN not in message


def test_a_token_function_over_plain_text_is_refused_too() -> None:
    with pytest.raises(ValueError, match="a token needs TLS"):
        LoaderClient("127.0.0.1:1", token=lambda: TOKEN)


@pytest.mark.parametrize(
    "target", ["loader.ml.svc:50051", "10.0.0.7:50051", "dns:///loader:50051", "[2001:db8::1]:1"]
)
def test_insecure_token_is_refused_for_a_remote_target(target: str) -> None:
    with pytest.raises(ValueError, match="only to a loader on this machine"):
        LoaderClient(target, token=TOKEN, insecure_token=True)


@pytest.mark.parametrize(
    "target",
    ["localhost:50051", "127.0.0.1:50051", "[::1]:50051", "dns:///localhost:1", "unix:/tmp/s"],
)
def test_insecure_token_is_accepted_for_a_local_target(target: str) -> None:
    LoaderClient(target, token=TOKEN, insecure_token=True).close()


def test_insecure_token_needs_a_token_and_no_tls() -> None:
    with pytest.raises(ValueError, match="without a token"):
        LoaderClient("localhost:1", insecure_token=True)
    with pytest.raises(ValueError, match="with TLS leave it off"):
        LoaderClient("localhost:1", tls=True, token=TOKEN, insecure_token=True)


def test_tls_and_credentials_exclude_each_other() -> None:
    with pytest.raises(ValueError, match="either tls= or credentials="):
        LoaderClient("localhost:1", tls=True, credentials=grpc.ssl_channel_credentials())


def test_cert_and_key_go_together() -> None:
    with pytest.raises(ValueError, match="cert and key go together"):
        TlsOptions(cert=FAKE_PEM)
    with pytest.raises(ValueError, match="cert and key go together"):
        TlsOptions(key=FAKE_PEM)


def test_a_missing_pem_file_names_the_option_and_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.crt"
    with pytest.raises(ValueError) as caught:
        LoaderClient("localhost:1", tls=TlsOptions(ca=missing))
    assert "tls.ca" in str(caught.value) and str(missing) in str(caught.value)


def test_a_file_that_is_not_pem_is_refused(tmp_path: Path) -> None:
    key = tmp_path / "client.key"
    key.write_text("not a key")
    cert = tmp_path / "client.crt"
    cert.write_bytes(FAKE_PEM)
    with pytest.raises(ValueError, match=r"tls\.key: .*client\.key is not a PEM file"):
        LoaderClient("localhost:1", tls=TlsOptions(cert=cert, key=key))


def test_pem_content_paths_and_str_paths_are_all_accepted(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_bytes(FAKE_PEM)
    for value in (FAKE_PEM, FAKE_PEM.decode(), ca, str(ca)):
        LoaderClient("localhost:1", tls=TlsOptions(ca=value), token=TOKEN).close()


@pytest.mark.parametrize("bad", ["", "slt_two words", "slt_line\n", "slt_tök"])
def test_a_static_token_that_cannot_be_a_header_is_refused_without_echoing_it(bad: str) -> None:
    with pytest.raises(ValueError) as caught:
        LoaderClient("localhost:1", tls=True, token=bad)
    assert "slt_" not in str(caught.value)


def test_a_token_of_another_type_is_refused() -> None:
    with pytest.raises(ValueError, match="token must be a str or a function"):
        LoaderClient("localhost:1", tls=True, token=b"bytes")  # type: ignore[arg-type]


def test_check_security_reads_the_files_without_making_grpc_objects(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="tls.cert"):
        check_security(
            "localhost:1",
            tls=TlsOptions(cert=tmp_path / "gone.crt", key=tmp_path / "gone.key"),
            token=None,
            insecure_token=False,
        )


def test_a_token_file_is_read_at_every_call_and_pickles(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("slt_first\n")
    source = pickle.loads(pickle.dumps(TokenFile(path)))
    assert source() == "slt_first"
    path.write_text("slt_second")
    assert source() == "slt_second"
    assert "slt_" not in repr(source)


# -- errors -------------------------------------------------------------------------------


class _FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self._code = code
        self._details = details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


def test_a_failed_token_function_becomes_unauthenticated() -> None:
    error = from_rpc_error(
        _FakeRpcError(
            grpc.StatusCode.UNAVAILABLE,
            "Getting metadata from plugin failed with error: the client's token function "
            "failed: OSError: vault down",
        ),
        "GetSplit",
        "t:1",
    )
    assert error.code == grpc.StatusCode.UNAUTHENTICATED
    assert error.details == "the client's token function failed: OSError: vault down"


def test_other_unavailable_errors_stay_unavailable() -> None:
    error = from_rpc_error(_FakeRpcError(grpc.StatusCode.UNAVAILABLE, "Socket closed"), "M", "t")
    assert error.code == grpc.StatusCode.UNAVAILABLE


@pytest.mark.parametrize(
    "code", [grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED]
)
def test_authentication_and_permission_errors_are_not_resumed(code: grpc.StatusCode) -> None:
    assert not is_retryable(code, "unknown token", retry_on_resource_exhausted=True)


# -- against an in-process server ---------------------------------------------------------


class AuthServicer(loader_pb2_grpc.LoaderServiceServicer):  # type: ignore[misc]
    """Records the authorization header of every call; refuses any but ``Bearer slt_ok*``
    with UNAUTHENTICATED; StreamBatches fails UNAVAILABLE once before streaming, so that the
    client's reconnection shows whether the token function runs for the new call."""

    def __init__(self) -> None:
        self.headers: list[str | None] = []
        self.lock = threading.Lock()
        self.broke_once = False

    def _check(self, context: grpc.ServicerContext) -> None:
        header = dict(context.invocation_metadata()).get("authorization")
        with self.lock:
            self.headers.append(header if isinstance(header, str) else None)
        if not isinstance(header, str) or not header.startswith("Bearer slt_ok"):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")

    def GetSplit(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._check(context)
        return loader_pb2.GetSplitResponse()

    def StreamBatches(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        self._check(context)
        if not self.broke_once:
            self.broke_once = True
            context.abort(grpc.StatusCode.UNAVAILABLE, "restarting")
        yield from ()


@pytest.fixture()
def server() -> Iterator[tuple[AuthServicer, str]]:
    servicer = AuthServicer()
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    loader_pb2_grpc.add_LoaderServiceServicer_to_server(servicer, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    try:
        yield servicer, f"127.0.0.1:{port}"
    finally:
        srv.stop(None)


def test_no_token_sends_no_header(server: tuple[AuthServicer, str]) -> None:
    servicer, target = server
    with LoaderClient(target) as client, pytest.raises(LoaderError) as caught:
        client.get_split("d", "s")
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert caught.value.details == "unknown token"
    assert servicer.headers == [None]


def test_the_token_function_is_asked_at_every_call_and_reconnection(
    server: tuple[AuthServicer, str],
) -> None:
    servicer, target = server
    issued: list[str] = []

    def rotating() -> str:
        issued.append(f"slt_ok{len(issued)}")
        return issued[-1]

    policy = ReconnectPolicy(attempts=3, initial_backoff=0.01, max_backoff=0.01)
    with LoaderClient(target, token=rotating, insecure_token=True, reconnect=policy) as client:
        client.get_split("d", "s")
        client.get_split("d", "s")
        stream = client.stream_batches("d", "all", batch_size=1)
        assert list(stream) == []
        assert stream.reconnects == 1
    assert servicer.headers == [f"Bearer {t}" for t in issued]
    assert issued == ["slt_ok0", "slt_ok1", "slt_ok2", "slt_ok3"]


def test_a_refused_token_is_raised_at_once_not_retried(server: tuple[AuthServicer, str]) -> None:
    servicer, target = server
    servicer.broke_once = True
    policy = ReconnectPolicy(attempts=5, initial_backoff=0.01, max_backoff=0.01)
    with LoaderClient(target, token="slt_bad", insecure_token=True, reconnect=policy) as client:
        with pytest.raises(LoaderError) as caught:
            list(client.stream_batches("d", "all", batch_size=1))
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert "unknown token" in str(caught.value)
    assert servicer.headers == ["Bearer slt_bad"]


@pytest.mark.parametrize(
    ("source", "why"),
    [
        (lambda: (_ for _ in ()).throw(OSError("vault down")), "OSError: vault down"),
        (lambda: None, "a token must be a str, got NoneType"),
        (lambda: "slt_ok with space", "characters a bearer token cannot hold"),
    ],
)
def test_a_failing_token_function_ends_the_call_unauthenticated_without_retry(
    server: tuple[AuthServicer, str], source: Any, why: str
) -> None:
    servicer, target = server
    policy = ReconnectPolicy(attempts=5, initial_backoff=0.01, max_backoff=0.01)
    with LoaderClient(target, token=source, insecure_token=True, reconnect=policy) as client:
        with pytest.raises(LoaderError) as caught:
            list(client.stream_batches("d", "all", batch_size=1))
        with pytest.raises(LoaderError) as unary:
            client.get_split("d", "s")
    for error in (caught.value, unary.value):
        assert error.code == grpc.StatusCode.UNAUTHENTICATED
        assert error.details.startswith("the client's token function failed")
        assert why in error.details
        assert "slt_ok with space" not in error.details
    assert servicer.headers == []  # nothing reached the server

"""TLS and bearer-token settings of a client, turned into grpc channel credentials."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import grpc

PemSource = Union[bytes, str, "os.PathLike[str]"]
"""PEM content (``bytes``, or a ``str`` holding ``-----BEGIN``), or the path of a PEM file."""

TokenSource = Union[str, Callable[[], str]]
"""A bearer token, or a function returning one, called before every call."""

TOKEN_FUNCTION_FAILED = "the client's token function"
"""Start of the message of a token function that failed or returned no usable token; grpc
reports such a call as UNAVAILABLE, which the client turns into UNAUTHENTICATED (see
:func:`scylla_loader.errors.from_rpc_error`) so that no reconnect loop retries it."""

# RFC 6750's b64token, the shape of every bearer token (the server's are `slt_` + base64url).
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass(frozen=True)
class TlsOptions:
    """TLS to the loader. Each of ``ca``, ``cert``, ``key`` is PEM content (``bytes``, or a
    ``str`` containing ``-----BEGIN``) or a file path (``str`` or ``Path``), read when the
    client is made (so a :class:`~scylla_loader.torch.LoaderDataset` reads it in each worker).

    Attributes:
        ca: CA bundle the server's certificate must chain to. Default: the system's roots.
        cert: Client certificate chain, for a loader run with ``--tls-client-ca`` (mTLS);
            needs ``key``.
        key: The client certificate's private key; needs ``cert``.
        server_name: Name the server's certificate must carry when it differs from the host
            of the target (e.g. connecting by IP, or through a port-forward).
    """

    ca: PemSource | None = None
    cert: PemSource | None = None
    key: PemSource | None = None
    server_name: str | None = None

    def __post_init__(self) -> None:
        if (self.cert is None) != (self.key is None):
            raise ValueError("TlsOptions: cert and key go together: set both for mTLS, or neither")
        if self.server_name is not None and not self.server_name:
            raise ValueError("TlsOptions: server_name must not be empty")


class TokenFile:
    """A token function that reads a file at every call, e.g. a token mounted from a
    Kubernetes Secret (updated in place when rotated). Unlike a lambda it can be pickled, so
    it travels to spawned DataLoader workers. Surrounding whitespace is dropped."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __call__(self) -> str:
        return self.path.read_text(encoding="utf-8").strip()

    def __repr__(self) -> str:
        return f"TokenFile({str(self.path)!r})"


def check_token(token: object) -> str:
    """The token if it can be sent as ``authorization: Bearer <token>``; a ValueError that
    does not repeat it otherwise."""
    if not isinstance(token, str):
        raise ValueError(f"a token must be a str, got {type(token).__name__}")
    if not token:
        raise ValueError("the token is empty")
    if not _TOKEN_SHAPE.fullmatch(token):
        raise ValueError(
            "the token has characters a bearer token cannot hold (whitespace, a newline, "
            "non-ASCII...): strip what was read around it"
        )
    return token


class _BearerPlugin(grpc.AuthMetadataPlugin):
    """Adds ``authorization: Bearer <token>`` to every call, asking ``source`` each time."""

    def __init__(self, source: TokenSource) -> None:
        self._source = source

    def __call__(
        self, context: grpc.AuthMetadataContext, callback: grpc.AuthMetadataPluginCallback
    ) -> None:
        source = self._source
        if isinstance(source, str):
            callback((("authorization", f"Bearer {source}"),), None)
            return
        try:
            token = check_token(source())
        except Exception as error:  # noqa: BLE001 - any failure of user code ends the call
            # The message is the user's exception's, never the token (check_token never
            # repeats it).
            why = f"{type(error).__name__}: {error}"
            callback((), RuntimeError(f"{TOKEN_FUNCTION_FAILED} failed: {why}"))
            return
        callback((("authorization", f"Bearer {token}"),), None)


def read_pem(value: PemSource | None, option: str) -> bytes | None:
    """PEM bytes of an option: given, or read from the file it names (a ValueError naming the
    option and the path otherwise)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, str) and "-----BEGIN" in value:
        return value.encode()
    try:
        data = Path(value).read_bytes()
    except OSError as error:
        raise ValueError(
            f"{option}: cannot read PEM file {os.fspath(value)} ({error.strerror or error})"
        ) from error
    if b"-----BEGIN" not in data:
        raise ValueError(f"{option}: {os.fspath(value)} is not a PEM file (no -----BEGIN line)")
    return data


def _local_connection_type(target: str) -> grpc.LocalConnectionType:
    """The kind of local connection a target makes, or a ValueError for a remote target."""
    if target.startswith(("unix:", "unix-abstract:")):
        return grpc.LocalConnectionType.UDS
    host = target
    for scheme in ("dns:///", "dns:", "ipv4:", "ipv6:"):
        if host.startswith(scheme):
            host = host[len(scheme):]
            break
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if host in ("localhost", "::1") or host.startswith("127."):
        return grpc.LocalConnectionType.LOCAL_TCP
    raise ValueError(
        f"insecure_token=True sends the token unencrypted, so only to a loader on this "
        f"machine (localhost, 127.x, [::1] or a unix: socket), not to {target!r}: use tls="
    )


@dataclass(frozen=True)
class Security:
    """What a client's security settings make: the channel's credentials (None: plain text)
    and the channel options they need."""

    credentials: grpc.ChannelCredentials | None
    options: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class _Checked:
    pems: tuple[bytes | None, bytes | None, bytes | None] | None
    """(ca, key, cert) of a TlsOptions; None without one."""
    local: grpc.LocalConnectionType | None
    """The local connection an ``insecure_token`` is sent over; None without one."""


def check_security(
    target: str,
    *,
    tls: TlsOptions | bool | None,
    token: TokenSource | None,
    insecure_token: bool,
    credentials: grpc.ChannelCredentials | None = None,
) -> None:
    """Checks a client's security settings without making any grpc object, so a
    :class:`~scylla_loader.torch.LoaderDataset` can fail in the process that makes it rather
    than in its DataLoader workers (grpc must not start before they fork)."""
    _check(target, tls, token, insecure_token, credentials)


def _check(
    target: str,
    tls: TlsOptions | bool | None,
    token: TokenSource | None,
    insecure_token: bool,
    credentials: grpc.ChannelCredentials | None,
) -> _Checked:
    if tls is not None and tls is not False and credentials is not None:
        raise ValueError("set either tls= or credentials=, not both")
    if tls is not None and not isinstance(tls, (bool, TlsOptions)):
        raise ValueError(f"tls must be a TlsOptions, True or None, got {type(tls).__name__}")
    if token is not None and not isinstance(token, str) and not callable(token):
        raise ValueError(
            f"token must be a str or a function returning one, got {type(token).__name__}"
        )
    if isinstance(token, str):
        check_token(token)
    pems = None
    if isinstance(tls, TlsOptions):
        ca = read_pem(tls.ca, "tls.ca")
        cert = read_pem(tls.cert, "tls.cert")
        pems = (ca, read_pem(tls.key, "tls.key"), cert)
    secure = tls is True or pems is not None or credentials is not None
    if insecure_token and secure:
        raise ValueError("insecure_token=True is for a plain-text channel; with TLS leave it off")
    if token is None:
        if insecure_token:
            raise ValueError("insecure_token=True without a token: pass token= too, or drop it")
        return _Checked(pems, None)
    if secure:
        return _Checked(pems, None)
    if not insecure_token:
        raise ValueError(
            "a token needs TLS: over plain text it would travel in the clear. Pass "
            "tls=TlsOptions(ca=...) (or tls=True for the system's roots); for a loader on "
            "this machine (a test, the sidecar overlay) insecure_token=True sends it "
            "unencrypted over localhost or a unix: socket only"
        )
    return _Checked(pems, _local_connection_type(target))


def security(
    target: str,
    *,
    tls: TlsOptions | bool | None,
    token: TokenSource | None,
    insecure_token: bool,
    credentials: grpc.ChannelCredentials | None,
) -> Security:
    """Checks a client's security settings together and makes its credentials. Every
    mistake is a ValueError here, when the client is made, rather than a failed call later."""
    checked = _check(target, tls, token, insecure_token, credentials)
    options: tuple[tuple[str, Any], ...] = ()
    channel = credentials
    if checked.pems is not None:
        ca, key, cert = checked.pems
        channel = grpc.ssl_channel_credentials(
            root_certificates=ca, private_key=key, certificate_chain=cert
        )
    elif tls is True:
        channel = grpc.ssl_channel_credentials()
    if isinstance(tls, TlsOptions) and tls.server_name is not None:
        options = (("grpc.ssl_target_name_override", tls.server_name),)
    if token is None:
        return Security(channel, options)
    if checked.local is not None:
        # grpc sends call credentials only over a secure channel; local credentials count as
        # one and themselves refuse any connection that does not stay on this machine.
        channel = grpc.local_channel_credentials(checked.local)
    assert channel is not None  # _check: a token comes with TLS, credentials or a local peer
    call = grpc.metadata_call_credentials(_BearerPlugin(token), name="scylla_loader bearer")
    return Security(grpc.composite_channel_credentials(channel, call), options)

"""Test certificates made at test time with the `openssl` CLI (as the TypeScript tests' own
test CA does): never checked in, valid for a day, P-256 keys."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Cert:
    cert: Path
    key: Path


class TestCa:
    """A CA in ``folder``; :meth:`issue` makes server certificates (for ``localhost`` and
    ``127.0.0.1``) and client certificates (clientAuth)."""

    __test__ = False  # not a pytest class

    def __init__(self, folder: Path, name: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.cert = folder / "ca.pem"
        self.key = folder / "ca.key"
        self._serial = 0
        _openssl("req", "-x509", *_new_key(self.key), "-out", str(self.cert), "-days", "1",
                 "-subj", f"/CN={name} test CA")

    def issue(self, common_name: str, use: str) -> Cert:
        self._serial += 1
        base = self.folder / f"{use}-{self._serial}"
        ext = base.with_suffix(".ext")
        ext.write_text(
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
            if use == "server"
            else "extendedKeyUsage=clientAuth\n"
        )
        key, csr, pem = base.with_suffix(".key"), base.with_suffix(".csr"), base.with_suffix(".pem")
        _openssl("req", *_new_key(key), "-out", str(csr), "-subj", f"/CN={common_name}")
        _openssl("x509", "-req", "-in", str(csr), "-CA", str(self.cert), "-CAkey", str(self.key),
                 "-set_serial", str(self._serial), "-days", "1", "-extfile", str(ext),
                 "-out", str(pem))
        return Cert(pem, key)


def _new_key(key: Path) -> list[str]:
    return ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key)]


def _openssl(*args: str) -> None:
    try:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)
    except FileNotFoundError as error:
        raise RuntimeError("the openssl CLI is needed to make test certificates") from error
    except subprocess.CalledProcessError as error:
        raise RuntimeError(f"openssl {args[0]} failed: {error.stderr.decode()}") from error

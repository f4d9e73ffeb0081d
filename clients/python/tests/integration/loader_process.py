"""A real loader process (the repository's `serve` command) for the integration tests."""

from __future__ import annotations

import functools
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli_command() -> list[str]:
    """The command that runs the repository's command line: its sources through tsx, or its
    build (`dist/src/cli/main.js`, about a CPU second less per start) when
    SCYLLA_LOADER_TEST_CLI is `build`, as scripts/test.sh sets it once it has built them."""
    if os.environ.get("SCYLLA_LOADER_TEST_CLI") == "build":
        return ["node", str(_built_cli())]
    return ["node", "--import", "tsx", "src/cli/main.ts"]


@functools.cache
def _built_cli() -> Path:
    """The build's CLI entry, refused when missing or older than a file under src/ (generated
    code aside): the tests must not run a stale build."""
    built = REPO / "dist" / "src" / "cli" / "main.js"
    built_at = built.stat().st_mtime if built.exists() else 0.0
    newest = max(
        (p.stat().st_mtime for p in (REPO / "src").rglob("*")
         if p.is_file() and "generated" not in p.relative_to(REPO / "src").parts),
        default=0.0,
    )
    if built_at < newest:
        raise RuntimeError(
            f"SCYLLA_LOADER_TEST_CLI=build but {built} is missing or older than src/: "
            "run npm run build:tsc")
    return built


def cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Runs the repository's command line (see `cli_command`)."""
    return subprocess.run(
        [*cli_command(), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


_DROP = """
import { createDbClient } from './src/core/db/createDbClient.ts';
import { dbConfigFromFlags } from './src/cli/dbOptions.ts';
const client = await createDbClient(dbConfigFromFlags({}));
try {
  const pattern = new RegExp('^' + process.argv[1] + '_[0-9a-f]{12}$');
  for (const name of process.argv.slice(2)) {
    if (!pattern.test(name)) throw new Error('not a test dataset: ' + name);
    await client.execute('DROP KEYSPACE IF EXISTS ' + name, [], { readTimeout: 120000 });
  }
} finally {
  await client.shutdown();
}
"""


def drop_test_datasets(prefix: str, names: Sequence[str]) -> None:
    """Drops the test datasets `names`, each `<prefix>_<12 hex digits>` (anything else is
    refused, so a wrong name cannot drop a real keyspace), on the local node."""
    if not names:
        return
    dropped = subprocess.run(
        ["node", "--import", "tsx", "--input-type=module", "-e", _DROP, prefix, *names],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert dropped.returncode == 0, dropped.stderr[-3000:]


class LoaderProcess:
    """`serve` on a chosen port with a fixed resume key, so a restarted process on the same
    port continues the tokens of the one before. Started with `node` directly (no npx/tsx
    wrapper process), so the pid is the server's own and SIGKILL really kills it."""

    def __init__(
        self,
        log_dir: Path,
        resume_key: str,
        port: int | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.port = port or free_port()
        self.extra_args = tuple(extra_args)
        """More `serve` flags, e.g. the TLS and tokens files of the security tests."""
        self.resume_key = resume_key
        self.log_dir = log_dir
        self.starts = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = log_dir / "loader-0.log"

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 90) -> None:
        self.log_path = self.log_dir / f"loader-{self.port}-{self.starts}.log"
        # `serve --ready-file`: written once the loader serves, removed when it stops.
        ready_file = self.log_dir / f"loader-{self.port}-{self.starts}.ready.json"
        self.starts += 1
        env = {**os.environ, "SCYLLA_LOADER_RESUME_KEY": self.resume_key}
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [*cli_command(), "serve", "--host", "127.0.0.1",
                 "--grpc-port", str(self.port), "--metrics-port", "0",
                 "--ready-file", str(ready_file), *self.extra_args],
                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"loader exited with {self.process.returncode}: {self.log()}")
            if ready_file.exists():
                return
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"loader did not report serving within {timeout} s: {self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def events(self) -> list[dict[str, object]]:
        out = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

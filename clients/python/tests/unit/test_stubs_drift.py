"""The committed stubs must be what grpcio-tools makes of proto/ today."""

import importlib.util
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2]


def test_committed_stubs_match_proto(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("generate_stubs", PACKAGE / "scripts" / "generate_stubs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate(tmp_path)
    for name in ("loader_pb2.py", "loader_pb2.pyi", "loader_pb2_grpc.py"):
        fresh = (tmp_path / "scylla_loader" / "v1" / name).read_text()
        committed = (PACKAGE / "src" / "scylla_loader" / "v1" / name).read_text()
        assert fresh == committed, (
            f"src/scylla_loader/v1/{name} is stale: run `python scripts/generate_stubs.py` "
            "in clients/python after changing proto/"
        )

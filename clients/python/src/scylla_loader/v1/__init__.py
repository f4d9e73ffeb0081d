"""Generated gRPC stubs of scylla_loader.v1 (see scripts/generate_stubs.py)."""

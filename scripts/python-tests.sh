#!/usr/bin/env bash
# The Python client's checks (clients/python): type check (mypy --strict) and pytest, unit and
# integration (these use the local Cassandra node and start real loader processes), in the
# test venv that scripts/python-env.sh names and makes (scripts/setup.sh has made it already
# when this runs from scripts/test.sh; run alone, it is made here). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(scripts/python-env.sh)
cd clients/python
echo "python-tests: mypy --strict"
"$venv/bin/mypy"
echo "python-tests: pytest"
exec "$venv/bin/pytest" -q -p no:cacheprovider "$@"

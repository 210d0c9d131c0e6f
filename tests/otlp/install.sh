#!/bin/sh
# Creates (once) the Python venv the Phoenix OTLP tests run in, and prints its python's path.
#
#   PY=$(sh tests/otlp/install.sh) && "$PY" -m pytest tests/otlp -q
#
# The venv lives at $AGENTLOG_PHOENIX_VENV, by default ~/.cache/agentlog-ci/phoenix-<version>.
# A venv that already holds these exact versions is left alone (the check takes well under a second);
# anything else in it is (re)installed. Needs Python 3.11 to 3.14 ($AGENTLOG_PHOENIX_PYTHON,
# else python3.11, python3.12, python3.13, python3) and access to PyPI. Progress goes to stderr.
set -eu

PHOENIX_VERSION=20.26.1
# pytest is pinned too; the rest the tests import (opentelemetry-proto, protobuf, httpx) comes
# with Phoenix 20.26.1 (opentelemetry-proto 1.45.2, protobuf 7.36.2, httpx 0.28.1 when checked).
PYTEST_VERSION=9.2.0
VENV=${AGENTLOG_PHOENIX_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/agentlog-ci/phoenix-$PHOENIX_VERSION}
PY=$VENV/bin/python
STAMP=$VENV/.agentlog-phoenix-$PHOENIX_VERSION-pytest-$PYTEST_VERSION

installed() {
    "$PY" -c 'import sys; from importlib.metadata import version as v
sys.exit(not (v("arize-phoenix") == sys.argv[1] and v("pytest") == sys.argv[2]
              and v("opentelemetry-proto") and v("httpx")))' "$PHOENIX_VERSION" "$PYTEST_VERSION" 2>/dev/null
}

if [ -f "$STAMP" ] && [ -x "$PY" ] && installed; then
    echo "$PY"
    exit 0
fi

base=${AGENTLOG_PHOENIX_PYTHON:-}
if [ -z "$base" ]; then
    for candidate in python3.11 python3.12 python3.13 python3; do
        if command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] < (3, 15)))' 2>/dev/null; then
            base=$candidate
            break
        fi
    done
fi
if [ -z "$base" ]; then
    echo "install.sh: no Python 3.11-3.14 found; set AGENTLOG_PHOENIX_PYTHON" >&2
    exit 1
fi

start=$(date +%s)
echo "install.sh: installing arize-phoenix==$PHOENIX_VERSION into $VENV with $base" >&2
mkdir -p "$(dirname "$VENV")"
[ -x "$PY" ] || "$base" -m venv "$VENV"
"$PY" -m pip install --quiet --disable-pip-version-check \
    "arize-phoenix==$PHOENIX_VERSION" "pytest==$PYTEST_VERSION" >&2
"$PY" -c 'import phoenix.server.main, phoenix.client, opentelemetry.proto, pytest'
rm -f "$VENV"/.agentlog-phoenix-*
touch "$STAMP"
echo "install.sh: done in $(($(date +%s) - start)) s" >&2
echo "$PY"

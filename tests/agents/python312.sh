#!/usr/bin/env bash
# Prints the path of a Python 3.12 or later, for the agents that need one (OpenHands CLI): the
# first of $AGENTLOG_OPENHANDS_PYTHON, python3.12 or python3.13 on PATH, pyenv's versions, or
# one built before into the cache. Failing those, it builds CPython 3.13 from Debian trixie's
# source package, without Debian's patches (which take ensurepip out), (the machine's own Debian
# has 3.11 only) into
# $AGENTLOG_AGENTS_CACHE/python-3.13, once: about 10 minutes on 2 cores.
set -euo pipefail
cache="${AGENTLOG_AGENTS_CACHE:-$HOME/.cache/agentlog-agents}"
prefix="$cache/python-3.13"

recent() { "$1" -c 'import sys; sys.exit(sys.version_info[:2] < (3, 12))' >/dev/null 2>&1; }

candidates=("${AGENTLOG_OPENHANDS_PYTHON:-}" python3.12 python3.13 "$prefix/bin/python3.13")
if command -v pyenv >/dev/null; then
  for v in "$(pyenv root)"/versions/3.1[2-9]*; do
    [ -d "$v" ] && candidates+=("$v/bin/python3")
  done
fi
for c in "${candidates[@]}"; do
  [ -n "$c" ] || continue
  exe=$(command -v "$c" 2>/dev/null || true)
  if [ -n "$exe" ] && recent "$exe"; then
    echo "$exe"
    exit 0
  fi
done

echo "building CPython 3.13 from Debian trixie's source into $prefix" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo -n"; fi
$sudo apt-get install -y -qq dpkg-dev build-essential libssl-dev libffi-dev zlib1g-dev libsqlite3-dev libbz2-dev \
  liblzma-dev libreadline-dev uuid-dev libncurses-dev libgdbm-dev >&2
work="$cache/python-3.13.build"
rm -rf "$work" && mkdir -p "$work/apt/lists/partial" "$work/apt/archives/partial" "$work/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  >"$work/apt/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache::Archives=$work/apt/archives")
apt-get "${apt_opts[@]}" update -qq >&2
(cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only python3.13 >&2 \
  && dpkg-source --no-check --skip-patches -x python3.13_*.dsc cpython >&2)
(cd "$work/src/cpython" && ./configure --prefix="$prefix" >&2 && make -j"$(nproc)" >&2 \
  && make install >&2)
rm -rf "$work"
recent "$prefix/bin/python3.13"
echo "$prefix/bin/python3.13"

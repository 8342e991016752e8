#!/usr/bin/env bash
# Set up the dataset-dedup peers for tools/bench/dedup_peers.py (idempotent,
# quiet on success): tools/.venv-dedup (git-ignored) with exactly
# text-dedup==0.4.1 and datatrove[processing]==0.10.1, plus orjson (which
# datatrove's JsonlReader needs but no extra short of [io] brings).
#
# text-dedup 0.4.1 declares Requires-Python >= 3.12 (on 3.11 pip offers at
# most 0.4.0), so the venv is made with python3.12: $PYTHON, else python3.12
# on PATH, else pyenv's newest 3.12.
# Usage: bash tools/bench/setup_dedup_peers.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$(dirname "$here")"
venv="$tools/.venv-dedup"
pins=("text-dedup==0.4.1" "datatrove[processing]==0.10.1" orjson)
# shellcheck source=venv.sh
source "$here/venv.sh"

find_python() {
    if [[ -n "${PYTHON:-}" ]]; then echo "$PYTHON"; return; fi
    if command -v python3.12 >/dev/null 2>&1; then command -v python3.12; return; fi
    if command -v pyenv >/dev/null 2>&1; then
        local v
        v="$(pyenv versions --bare 2>/dev/null | grep -E '^3\.12(\.|$)' | sort -V | tail -n 1 || true)"
        if [[ -n "$v" && -x "$(pyenv root)/versions/$v/bin/python3.12" ]]; then
            echo "$(pyenv root)/versions/$v/bin/python3.12"; return
        fi
    fi
    echo "setup_dedup_peers.sh: text-dedup 0.4.1 needs Python 3.12; set PYTHON=/path/to/python3.12" >&2
    exit 1
}

check="$(cat <<'PY'
import importlib.metadata as md
want = {"text-dedup": "0.4.1", "datatrove": "0.10.1"}
for name, ver in want.items():
    assert md.version(name) == ver, name
import text_dedup.minhash, datatrove.pipeline.dedup.minhash, xxhash, orjson  # noqa: F401
PY
)"
ensure_venv find_python "$venv" "$check" "${pins[@]}"

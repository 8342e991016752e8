#!/usr/bin/env bash
# Set up the Python peers for the benchmark harness (idempotent, quiet on success):
#   - tools/.venv (git-ignored) with exactly datasketch==2.0.0 rensa==0.5.0
#     gaoya==0.2.2 and the Python redis client;
#   - redis-server from Debian's packages when it is not on PATH.
# Usage: bash tools/bench/setup_peers.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$(dirname "$here")"
venv="$tools/.venv"
python="${PYTHON:-python3}"
pins=(datasketch==2.0.0 rensa==0.5.0 gaoya==0.2.2 redis)
# shellcheck source=venv.sh
source "$here/venv.sh"

base_python() { echo "$python"; }
check="$(cat <<'EOF'
import importlib.metadata as md
want = {"datasketch": "2.0.0", "rensa": "0.5.0", "gaoya": "0.2.2"}
for name, ver in want.items():
    assert md.version(name) == ver, name
md.version("redis")
import datasketch, rensa, gaoya, redis  # noqa: F401
EOF
)"
ensure_venv base_python "$venv" "$check" "${pins[@]}"

if ! command -v redis-server >/dev/null 2>&1; then
    if [[ $EUID -ne 0 ]] && command -v sudo >/dev/null 2>&1; then sudo=(sudo); else sudo=(); fi
    run_quiet "${sudo[@]}" apt-get update -q
    run_quiet env DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends redis-server
    # The Debian package enables a system-wide redis service on port 6379; the
    # harness runs its own instance (tools/bench/redis.sh), so stop that one
    # where a service manager is running (harmless when there is none).
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet redis-server 2>/dev/null; then
        "${sudo[@]}" systemctl stop redis-server >/dev/null 2>&1 || true
    fi
fi

#!/usr/bin/env bash
# Run every peer system at each threshold, one process per run, and keep the
# results under tools/data/peers/ (git-ignored).
#
#   bash tools/bench/run_peers.sh [SHINGLES] [OUTDIR] [THRESHOLDS...]
#
# SHINGLES defaults to tools/data/debian-desc-long.shingles.jsonl (written by
# `lshdb export` from a db created without --store-text), OUTDIR to
# tools/data/peers, THRESHOLDS to "0.5 0.8". SYSTEMS (env) picks a subset;
# REDIS_PORT (env, default 6390) is the private redis-server's port on
# 127.0.0.1, started before the datasketch-redis runs and stopped after.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$(dirname "$here")"
shingles="${1:-$tools/data/debian-desc-long.shingles.jsonl}"
outdir="${2:-$tools/data/peers}"
shift $(($# > 2 ? 2 : $#))
thresholds=("$@")
[[ ${#thresholds[@]} -gt 0 ]] || thresholds=(0.5 0.8)
systems=(${SYSTEMS:-datasketch datasketch-redis rensa gaoya})
port="${REDIS_PORT:-6390}"
python="$tools/.venv/bin/python"

bash "$here/setup_peers.sh"
mkdir -p "$outdir"
redis_started=0
failed=0
cleanup() {
    if ((redis_started)); then bash "$here/redis.sh" stop "$port"; fi
}
trap cleanup EXIT

for system in "${systems[@]}"; do
    if [[ $system == datasketch-redis ]] && ((!redis_started)); then
        bash "$here/redis.sh" start "$port"
        redis_started=1
    fi
    for t in "${thresholds[@]}"; do
        name="$system-$t"
        start=$(date +%s)
        if "$python" "$here/peers.py" --system "$system" --shingles "$shingles" --threshold "$t" \
            --num-perm 128 --redis-port "$port" \
            --out "$outdir/$name.json" --pairs-out "$outdir/$name.pairs.tsv" 2>"$outdir/$name.log"; then
            echo "$name: $(($(date +%s) - start)) s wall -> $outdir/$name.json"
        else
            echo "$name: FAILED after $(($(date +%s) - start)) s; see $outdir/$name.log" >&2
            failed=1
        fi
    done
    if [[ $system == datasketch-redis ]] && ((redis_started)); then
        bash "$here/redis.sh" stop "$port"
        redis_started=0
    fi
done
exit $failed

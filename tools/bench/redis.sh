#!/usr/bin/env bash
# A private redis-server for the datasketch-redis peer runs, on loopback only.
#
#   bash tools/bench/redis.sh start PORT [DIR]   # daemonize, wait for PING
#   bash tools/bench/redis.sh stop  PORT [DIR]   # SHUTDOWN NOSAVE, wait for exit
#
# DIR (default tools/data/redis, git-ignored) holds the pidfile, the log and
# the RDB file (dump-PORT.rdb) that an explicit SAVE writes. Snapshots are off
# (--save '') unless REDIS_SAVE is set, e.g. REDIS_SAVE='3600 1'; AOF stays
# off. The server binds to 127.0.0.1 only, with protected mode on.
set -euo pipefail

usage() {
    echo "usage: $0 start|stop PORT [DIR]" >&2
    exit 2
}

[[ $# -ge 2 && $# -le 3 ]] || usage
cmd="$1"
port="$2"
[[ "$port" =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || usage
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${3:-$(dirname "$here")/data/redis}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
pidfile="$dir/redis-$port.pid"
logfile="$dir/redis-$port.log"
cli=(redis-cli -h 127.0.0.1 -p "$port")

alive() {
    [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

pong() {
    [[ "$("${cli[@]}" ping 2>/dev/null)" == PONG ]]
}

case "$cmd" in
start)
    if alive && pong; then
        exit 0 # already running (ours)
    fi
    if pong; then
        echo "redis.sh: something else already answers on 127.0.0.1:$port" >&2
        exit 1
    fi
    redis-server \
        --bind 127.0.0.1 \
        --protected-mode yes \
        --port "$port" \
        --unixsocket '' \
        --dir "$dir" \
        --dbfilename "dump-$port.rdb" \
        --save "${REDIS_SAVE:-}" \
        --appendonly no \
        --daemonize yes \
        --pidfile "$pidfile" \
        --logfile "$logfile"
    for _ in $(seq 1 100); do
        pong && exit 0
        sleep 0.1
    done
    echo "redis.sh: redis-server on 127.0.0.1:$port did not answer PING in 10 s; log: $logfile" >&2
    exit 1
    ;;
stop)
    if ! alive; then
        rm -f "$pidfile"
        exit 0
    fi
    pid="$(cat "$pidfile")"
    "${cli[@]}" shutdown nosave >/dev/null 2>&1 || true
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; exit 0; }
        sleep 0.1
    done
    # Still there after 10 s: end the server we started, by its pid.
    kill "$pid" 2>/dev/null || true
    rm -f "$pidfile"
    ;;
*)
    usage
    ;;
esac

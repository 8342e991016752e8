# Sourced by setup_peers.sh and setup_dedup_peers.sh: a quiet command runner
# and an idempotent venv with exact pins, written once for both.

log="$(mktemp)"
trap 'rm -f "$log"' EXIT

run_quiet() {
    # Run a command, showing its output only when it fails.
    if ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        echo "$(basename "$0"): failed: $*" >&2
        exit 1
    fi
}

# ensure_venv FIND VENV CHECK PIN...: makes VENV with the interpreter the
# command FIND prints (run only when VENV has none), then installs the PINs
# unless the Python script CHECK already passes in it.
ensure_venv() {
    local find="$1" venv="$2" check="$3"
    shift 3
    if [[ ! -x "$venv/bin/python" ]]; then
        run_quiet "$("$find")" -m venv "$venv"
    fi
    # Check the exact pins are installed; install only when something differs.
    if ! "$venv/bin/python" - <<<"$check" >/dev/null 2>&1; then
        run_quiet "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    fi
}

#!/usr/bin/env python3
"""Dedup at scale (issue 23): `lshdb dedup` (and, with --db, dedup into a
database) against `lshdb add` of the same corpus, with the rate of every
million records, peak memory and the issue's bars.

Each run reads the corpus from standard input (`dedup -` / `add --jsonl -`):
this script writes the file into the pipe and notes the time at which line
k * --every has been written. The CLI reads ahead a bounded amount (dedup:
the pipe's 64 KiB, two parsed 4,096-record chunks in a channel, one being
read and one being sketched — about 20,000 short records; add: likewise a
batch or two), so the pipe blocks while the writer is busy and those times
track processing to within that much (checked on heavy-10m at 2.4 M: the
harness had written 2,434,930 lines, and the kept and dropped outputs held
2,426,735 decided records: 8,195 ahead). The `tail` of a run (end of input
to exit) is the rest: the last chunks, the final commit and the output's
rename.

Measured per run: wall, CPU (user + sys from wait4), peak RSS (ru_maxrss of
the process from wait4, and VmRSS sampled every 0.25 s as a series), the
time and rate of every --every records, and the CLI's --json summary (kept
and dropped counts). Bars (issue 23): dedup within 1.5x of add's time at
every mark, >= 40k records/s overall at 10 M, the slowest later --every
within 1.5x of the first, peak RSS <= 1 GB.

    cargo build --release
    python3 tools/scale_corpus.py --docs 10000000 --out tools/data/heavy-10m.jsonl
    python3 tools/bench/scale_dedup.py tools/data/heavy-10m.jsonl          # dedup + add
    python3 tools/bench/scale_dedup.py tools/data/heavy-1m.jsonl --every 100000 --db

The JSON result goes to tools/bench/results/scale-dedup-NAME-DATE.json (or
--result), the markdown table to standard output. On a shared machine the
figures are noisy: `loadavg` at start and end is in the result.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dedup_measure import _tree_sample  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GB = 1 << 30


def feed(path, pipe, every, marks, t0, on_mark=None):
    """Write `path` into `pipe`; append (lines, seconds since t0) to marks at
    every `every`-th line and at the end, calling on_mark(lines) there.
    Returns the line count."""
    lines = 0
    nxt = every
    last = b"\n"
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 20)
            if not block:
                break
            start = 0
            n = block.count(b"\n")
            while lines + n >= nxt:  # the mark falls in this block: write up to it
                pos = start
                for _ in range(nxt - lines):
                    pos = block.index(b"\n", pos) + 1
                pipe.write(block[start:pos])
                pipe.flush()
                n -= block.count(b"\n", start, pos)
                lines, start = nxt, pos
                marks.append((lines, time.perf_counter() - t0))
                if on_mark:
                    on_mark(lines)
                nxt += every
            pipe.write(block[start:])
            lines += n
            last = block[-1:]
    if last != b"\n":
        lines += 1  # a last line without a line ending
    pipe.close()
    if not marks or marks[-1][0] != lines:
        marks.append((lines, time.perf_counter() - t0))
    return lines


def sample_rss(pid, series, t0, done):
    """VmRSS of pid (bytes) every 0.25 s into series as (seconds, bytes)."""
    cpu = {}
    while not done.is_set():
        rss = _tree_sample(pid, cpu)
        if rss:
            series.append((round(time.perf_counter() - t0, 2), rss))
        done.wait(0.25)


def perf_windows(pid, at, seconds, prefix, started):
    """on_mark for feed: at the marks in `at`, profile pid for `seconds`
    with perf record (in the background; the files are prefix-N.data)."""
    def on_mark(n):
        if n in at:
            started.append(subprocess.Popen(
                ["perf", "record", "-q", "-F", "199", "--call-graph", "dwarf,16384", "-p", str(pid),
                 "-o", "%s-%d.data" % (prefix, n), "--", "sleep", str(seconds)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return on_mark


def run(name, cmd, corpus, every, log, perf=None):
    """One measured run of cmd (reading the corpus on stdin); perf: (marks,
    seconds, file prefix) to profile it in windows."""
    t0 = time.perf_counter()
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
    series, marks = [], []
    done = threading.Event()
    sampler = threading.Thread(target=sample_rss, args=(proc.pid, series, t0, done), daemon=True)
    sampler.start()
    out = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    perfs = []
    on_mark = perf_windows(proc.pid, perf[0], perf[1], perf[2], perfs) if perf else None
    try:
        lines = feed(corpus, proc.stdin, every, marks, t0, on_mark)
    except BrokenPipeError:
        lines = marks[-1][0] if marks else 0
    t_fed = time.perf_counter() - t0
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    for pr in perfs:
        pr.wait()
    reader.join()
    sampler.join()
    summary = None
    for line in reversed((out[0] if out else b"").decode(errors="replace").splitlines()):
        if line.startswith("{"):
            summary = json.loads(line)
            break
    per = []
    prev_n, prev_t = 0, 0.0
    for n, t in marks:
        per.append({"upto": n, "seconds": round(t, 3),
                    "rate": round((n - prev_n) / (t - prev_t)) if t > prev_t else None})
        prev_n, prev_t = n, t
    step = max(1, len(series) // 400)  # keep the series short
    return {
        "name": name, "command": " ".join(cmd), "exit": proc.returncode, "records": lines,
        "wall": round(wall, 3), "cpu": round(ru.ru_utime + ru.ru_stime, 2),
        "rate": round(lines / wall) if wall else None, "tail": round(wall - t_fed, 3),
        "peak_rss": ru.ru_maxrss * 1024, "per_every": per, "summary": summary,
        "rss_series": series[::step],
    }


def bars(runs, every):
    """The issue's bars over the runs (a list of (bar, value, ok))."""
    by = {r["name"]: r for r in runs}
    out = []
    add = by.get("add")
    for r in runs:
        if r["name"] == "add":
            continue
        pairs = [(d["seconds"] / a["seconds"], d["upto"]) for d, a in
                 zip(r["per_every"], add["per_every"] if add and add["exit"] == 0 else [])
                 if a["seconds"] > 0 and d["upto"] == a["upto"]]
        if pairs:
            worst = max(pairs)
            out.append(("%s time / add time, worst mark (at %d)" % (r["name"], worst[1]),
                        "%.2fx" % worst[0], worst[0] <= 1.5))
        rates = [p["rate"] for p in r["per_every"] if p["rate"] and p["upto"] % every == 0]
        if len(rates) >= 2:
            out.append(("%s last --every's time vs the first's" % r["name"],
                        "%.2fx" % (rates[0] / rates[-1]), rates[0] / rates[-1] <= 1.5))
            slow = min(rates[1:])
            out.append(("%s slowest --every's time vs the first's (information)" % r["name"],
                        "%.2fx" % (rates[0] / slow), None))
        if r["records"] >= 10_000_000:
            out.append(("%s overall rate at 10 M" % r["name"], "%d/s" % r["rate"], r["rate"] >= 40_000))
        out.append(("%s peak RSS" % r["name"], "%.2f GB" % (r["peak_rss"] / GB), r["peak_rss"] <= GB))
    return out


def table(result):
    runs, every = result["runs"], result["every"]
    rows = ["| run | records | wall s | CPU s | rec/s | peak RSS | kept | dropped | tail s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        s = r["summary"] or {}
        kept = s.get("kept", s.get("inserted", ""))
        rows.append("| %s | %d | %.1f | %.1f | %s | %.2f GB | %s | %s | %.1f |" % (
            r["name"], r["records"], r["wall"], r["cpu"], f"{r['rate']:,}", r["peak_rss"] / GB,
            kept, s.get("dropped", ""), r["tail"]))
    rows += ["", "records/s per %s records (time the harness wrote each mark):" % f"{every:,}", ""]
    rows.append("| up to | " + " | ".join(r["name"] for r in runs) + " |")
    rows.append("|---:|" + "---:|" * len(runs))
    for i, p in enumerate(runs[0]["per_every"]):
        cells = [f"{r['per_every'][i]['rate']:,}" if i < len(r["per_every"]) and r["per_every"][i]["rate"]
                 else "" for r in runs]
        rows.append("| %s | %s |" % (f"{p['upto']:,}", " | ".join(cells)))
    rows += ["", "| bar | value | met |", "|---|---:|---|"]
    rows += ["| %s | %s | %s |" % (b, v, "—" if ok is None else "yes" if ok else "**no**")
             for b, v, ok in result["bars"]]
    return "\n".join(rows)


def git_commit(path):
    try:
        return subprocess.run(["git", "-C", path, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", help='JSON Lines {"id", "text"} (tools/scale_corpus.py)')
    p.add_argument("--lshdb", default=os.path.join(REPO, "target/release/lshdb"))
    p.add_argument("--threshold", type=float, default=0.8)
    p.add_argument("--every", type=int, default=1_000_000, help="mark every N records (default 1e6)")
    p.add_argument("--db", action="store_true", help="also run dedup --db (a persistent database)")
    p.add_argument("--no-add", action="store_true", help="skip the `lshdb add` run")
    p.add_argument("--no-dedup", action="store_true", help="skip the plain dedup run")
    p.add_argument("--work", help="scratch directory (default: a temporary one; needs ~3x the corpus)")
    p.add_argument("--result", help="result JSON (default tools/bench/results/scale-dedup-NAME-DATE.json)")
    p.add_argument("--keep-outputs", action="store_true", help="keep kept/dropped files and databases")
    p.add_argument("--perf-at", help="profile the dedup run with perf record for --perf-seconds "
                   "after these marks (comma-separated record counts, multiples of --every)")
    p.add_argument("--perf-seconds", type=int, default=40)
    p.add_argument("--perf-prefix", help="perf data files PREFIX-N.data (default WORK/perf-dedup)")
    p.add_argument("--commit", help="the commit the binary was built from (default: its repository's HEAD)")
    p.add_argument("--with", dest="with_", metavar="RESULT",
                   help="also table the runs of this earlier result (same corpus), e.g. add run apart")
    args = p.parse_args(argv)
    work = args.work or tempfile.mkdtemp(prefix="scale-dedup-")
    os.makedirs(work, exist_ok=True)
    # Run a copy: a `cargo build` during the run would otherwise change the
    # binary between runs (and under perf).
    lshdb = os.path.join(work, "lshdb-under-test")
    shutil.copy2(os.path.abspath(args.lshdb), lshdb)
    t = str(args.threshold)
    plans = []
    base = ["dedup", "-", "--id-field", "id", "--threshold", t, "--json"]
    if not args.no_dedup:
        plans.append(("dedup", base + ["--out", f"{work}/kept.jsonl", "--dropped", f"{work}/dropped.jsonl"]))
    if args.db:
        plans.append(("dedup --db", base + ["--out", f"{work}/kept-db.jsonl", "--dropped",
                                           f"{work}/dropped-db.jsonl", "--db", f"{work}/dedup.lshdb"]))
    if not args.no_add:
        plans.append(("add", ["add", f"{work}/add.lshdb", "--jsonl", "-", "--json"]))
    started = datetime.datetime.now(datetime.timezone.utc)
    result = {"corpus": os.path.abspath(args.corpus), "every": args.every, "threshold": args.threshold,
              "lshdb": os.path.abspath(args.lshdb),
              "commit": args.commit or git_commit(os.path.dirname(os.path.abspath(args.lshdb))),
              "version": subprocess.run([lshdb, "--version"], capture_output=True, text=True).stdout.strip(),
              "started": started.isoformat(timespec="seconds"), "cpus": os.cpu_count(),
              "loadavg_start": os.getloadavg(), "runs": []}
    stem = os.path.splitext(os.path.basename(args.corpus))[0]
    path = args.result or os.path.join(HERE, "results", "scale-dedup-%s-%s.json" % (
        stem, started.strftime("%Y%m%d-%H%M")))

    def save():  # after every run, so that a failure later loses no measurement
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    for name, cmd in plans:
        if name == "add":
            subprocess.run([lshdb, "create", f"{work}/add.lshdb", "--threshold", t], check=True,
                           stdout=subprocess.DEVNULL)
        print("scale_dedup: %s ..." % name, file=sys.stderr, flush=True)
        perf = None
        if args.perf_at and name == "dedup":
            perf = ({int(x) for x in args.perf_at.split(",")}, args.perf_seconds,
                    args.perf_prefix or os.path.join(work, "perf-dedup"))
        r = run(name, [lshdb] + cmd, args.corpus, args.every,
                os.path.join(work, name.replace(" ", "") + ".log"), perf)
        db = {"add": f"{work}/add.lshdb", "dedup --db": f"{work}/dedup.lshdb"}.get(name)
        r["db_bytes"] = os.path.getsize(db) if db and os.path.exists(db) else None
        result["runs"].append(r)
        save()
        print("scale_dedup: %s: exit %d, %.1f s, %s rec/s" % (name, r["exit"], r["wall"], r["rate"]),
              file=sys.stderr, flush=True)
        if r["exit"] != 0:
            with open(os.path.join(work, name.replace(" ", "") + ".log"), errors="replace") as f:
                sys.stderr.write(f.read()[-2000:])
    result["loadavg_end"] = os.getloadavg()
    if args.with_:
        with open(args.with_) as f:
            earlier = json.load(f)
        for r in earlier["runs"]:
            r = dict(r, name="%s (%s)" % (r["name"], os.path.basename(args.with_)) if any(
                x["name"] == r["name"] for x in result["runs"]) else r["name"])
            r["from"] = {k: earlier.get(k) for k in ("commit", "started", "loadavg_start", "loadavg_end")}
            result["runs"].append(r)
    result["bars"] = bars(result["runs"], args.every)
    save()
    if not args.keep_outputs and not args.work:
        shutil.rmtree(work, ignore_errors=True)
    else:
        os.remove(lshdb)
    print(table(result))
    print("\nresult: %s (commit %s, load %.1f -> %.1f on %d cores)" % (
        os.path.relpath(path), result["commit"], result["loadavg_start"][0], result["loadavg_end"][0],
        result["cpus"]))
    return 0 if all(r["exit"] == 0 for r in result["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())

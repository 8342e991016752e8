"""Measuring for dedup_peers.py: a child process's wall time, CPU and peak
memory (its whole process tree), and the score of a dedup against the exact
truth, and the table of results."""

import os
import subprocess
import threading
import time


# ---------------------------------------------------------------------------
# Measuring a child process
# ---------------------------------------------------------------------------


def _tree_sample(pid, cpu_seen):
    """Resident bytes of pid and all its descendants (from /proc); records
    each process's CPU ticks so far in cpu_seen[(pid, start time)]."""
    total = 0
    stack = [pid]
    seen = set()
    page = os.sysconf("SC_PAGE_SIZE")
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * page
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            # utime, stime: fields 14, 15 of stat (11, 12 after the name)
            cpu_seen[(p, fields[19])] = int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            continue
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return total


class TimedOut(Exception):
    pass


def measure(cmd, *, env=None, cwd=None, log=None, timeout=None):
    """Run cmd; return wall seconds, CPU seconds, peak RSS of the process
    tree (sampled every 20 ms) and the largest single-process peak RSS
    (getrusage). CPU is user + sys of the process and its waited-for
    children (getrusage), or, when larger, the sum over every process of the
    tree seen by the sampler (which also counts processes nobody waits for,
    such as a multiprocessing forkserver's workers, less their last 20 ms)."""
    out = open(log, "wb") if log else subprocess.DEVNULL
    start = time.perf_counter()
    # A session of its own, so that a run over the time limit is ended with
    # all its worker processes (its process group, by its id).
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    timed_out = threading.Event()

    def stop():
        timed_out.set()
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, stop) if timeout else None
    if timer:
        timer.start()
    peak = [0]
    cpu_seen = {}
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _tree_sample(proc.pid, cpu_seen))
            done.wait(0.02)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    t.join()
    if timer:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if timed_out.is_set():
        if log:
            out.close()
        raise TimedOut(f"over the time limit of {timeout:.0f} s")
    if log:
        out.close()
    if proc.returncode != 0:
        tail = open(log, errors="replace").read()[-3000:] if log else ""
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{tail}")
    return {
        "wall_s": wall,
        "cpu_s": max(usage.ru_utime + usage.ru_stime,
                     sum(cpu_seen.values()) / os.sysconf("SC_CLK_TCK")),
        "peak_rss_tree_mib": peak[0] / 2**20,
        "peak_rss_largest_process_mib": usage.ru_maxrss / 1024,
    }


# ---------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------


def truth_of(ids, pairs):
    pos = {k: n for n, k in enumerate(ids)}
    nbrs = [[] for _ in ids]
    for a, b, _ in pairs:
        ia, ib = pos[a], pos[b]
        nbrs[ia].append(ib)
        nbrs[ib].append(ia)
    # exact keep-first
    kept = [False] * len(ids)
    first_drop = set()
    for i in range(len(ids)):
        if any(kept[j] for j in nbrs[i] if j < i):
            first_drop.add(i)
        else:
            kept[i] = True
    # components
    parent = list(range(len(ids)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, ns in enumerate(nbrs):
        for j in ns:
            ri, rj = find(i), find(j)
            if ri != rj:
                parent[max(ri, rj)] = min(ri, rj)
    comp = [find(i) for i in range(len(ids))]
    sizes = {}
    for c in comp:
        sizes[c] = sizes.get(c, 0) + 1
    return {"pos": pos, "nbrs": nbrs, "first_drop": first_drop, "comp": comp, "sizes": sizes}


def score(truth, ids, dropped_ids):
    pos, nbrs = truth["pos"], truth["nbrs"]
    unknown = [d for d in dropped_ids if d not in pos]
    if unknown:
        raise SystemExit(f"dropped ids not in the corpus: {unknown[:3]}")
    dropped = {pos[d] for d in dropped_ids}
    n = len(ids)
    kept = [True] * n
    for d in dropped:
        kept[d] = False
    first = truth["first_drop"]
    represented = sum(1 for d in dropped if any(kept[j] for j in nbrs[d]))
    no_nbr = sum(1 for d in dropped if not nbrs[d])
    per_comp = {}
    for d in dropped:
        c = truth["comp"][d]
        per_comp[c] = per_comp.get(c, 0) + 1
    comp_should = sum(s - 1 for s in truth["sizes"].values())
    comp_hit = sum(min(k, truth["sizes"][c] - 1) for c, k in per_comp.items())
    lost = sum(1 for c, k in per_comp.items() if truth["sizes"][c] >= 2 and k == truth["sizes"][c])
    left = sum(1 for i in range(n) if kept[i] for j in nbrs[i] if j > i and kept[j])
    return {
        "dropped": len(dropped),
        "recall_first": len(dropped & first) / len(first) if first else 1.0,
        "recall_components": comp_hit / comp_should if comp_should else 1.0,
        "precision": represented / len(dropped) if dropped else 1.0,
        "dropped_without_any_near_duplicate": no_nbr,
        "lost_components": lost,
        "pairs_left": left,
    }


def fmt(v, nd=2):
    if v is None:
        return "–"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:,.{nd}f}"


def table(results, systems):
    rows = [
        ("wall time, s", "wall_s", 2, "time"),
        ("CPU time (all processes), s", "cpu_s", 2, "time"),
        ("peak RSS, process tree, MiB", "peak_rss_tree_mib", 0, "time"),
        ("documents dropped", "dropped", None, None),
        ("recall (exact keep-first)", "recall_first", 4, "score"),
        ("recall (exact components)", "recall_components", 4, "score"),
        ("precision (kept near-dup)", "precision", 4, "score"),
        ("dropped without any near-dup", "dropped_without_any_near_duplicate", None, None),
        ("components with none kept", "lost_components", None, None),
        ("near-dup pairs left in the output", "pairs_left", None, None),
    ]
    lines = ["| | " + " | ".join(systems) + " |", "|---|" + "---:|" * len(systems)]
    for label, key, nd, _ in rows:
        cells = []
        for s in systems:
            v = results[s].get(key)
            if results[s].get("unfinished") and key == "wall_s":
                cells.append(f"> {results[s]['unfinished_after_s']:,.0f} (stopped)")
                continue
            cells.append(fmt(v, nd if nd is not None else 0) if v is not None else "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    base = results.get("lshdb-dedup")
    if base:
        others = [s for s in systems if s != "lshdb-dedup"]
        lines += ["", "lshdb dedup's ratio to each (> 1× means lshdb dedup is better):", "",
                  "| | " + " | ".join(others) + " |", "|---|" + "---:|" * len(others)]
        for label, key, _, kind in rows:
            if kind is None:
                continue
            cells = []
            for s in others:
                v, b = results[s].get(key), base.get(key)
                if v is None or b is None or (kind == "time" and b == 0) or (kind == "score" and v == 0):
                    cells.append("–")
                elif kind == "time":
                    cells.append(f"{v / b:.2f}×")
                else:
                    cells.append(f"{b / v:.2f}×")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)

#!/usr/bin/env python3
"""Where `lshdb dedup`'s CPU time goes: the samples of a `perf record -g`
profile (perf script text on standard input or a file) counted by stage
(the innermost frame that names one: held-record checks, look-ups in the
last snapshot, commits, sketching, parsing, ...) and by leaf (Jaccard, redb
page reads, codec, allocator, ...), as two markdown tables.

    perf record -F 199 --call-graph dwarf,16384 -o perf.data -- lshdb dedup ...
    perf script -i perf.data -F tid,ip,sym --no-inline > perf.txt
    python3 tools/bench/perf_stages.py perf.txt

The patterns follow the function names of the tree this was written on
(src/db/unique.rs, held.rs, query/plan.rs); a sample no pattern names is
counted as "other" (the table says how many)."""

import re
import sys

# (label, regex on one frame's symbol); the innermost matching frame wins.
STAGES = [
    ("held-record check (Held::best, verify in memory)", r"held::Held::best"),
    ("held-record push", r"held::Held::push"),
    ("commit: held records to the file (write_held)", r"Writing::write_held|put_records"),
    ("commit: postings and runs", r"put_run|append_postings|RunWriter"),
    ("commit: other (redb commit, fsync)", r"Writing::commit|Writing::finish"),
    ("look-up in the last snapshot (look_up, plan::run)", r"::look_up$|query::plan::run|plan::resolve"),
    ("decide: other (triage, bookkeeping)", r"Writing::decide|dedup::first::triage"),
    ("sketch (shingle, MinHash, bands)", r"Pipeline::prepare|Sketcher::|MinHasher::signature"),
    ("parse (read, JSON)", r"next_chunk|support::jsonl|records::Source"),
    ("output (kept, dropped)", r"dedup::outputs|records::sink"),
    ("drop (free memory)", r"drop_in_place"),
    ("channels (stdin reader, chunk hand-off)", r"mpmc::|mpsc::"),
    ("rayon scheduling (idle workers spinning, waking, stealing)", r"rayon_core::"),
]
LEAVES = [
    ("Jaccard (jaccard_at_least)", r"jaccard_at_least|measures::"),
    ("redb page reads (get_page, cache)", r"get_page|lru_cache|quick_cache|CachedReader|read_page"),
    ("redb other (btree, commit)", r"^redb::|<redb::"),
    ("codec (frame, checksum, decode, encode)", r"store::codec|crc32"),
    ("run filters (may_contain, read_row)", r"runs::filter"),
    ("allocator", r"malloc|_int_free|cfree|unlink_chunk|realloc|^free$"),
    ("memcpy/memcmp", r"memmove|memcpy|memcmp|memset"),
    ("hashing (HashMap, SipHash)", r"hashbrown|sip::Hasher|HashMap"),
    ("sorting", r"::sort::"),
    ("sketch (OPH, shingling, normalise)", r"oph::|shingle::|band_keys"),
    ("Held::best itself", r"held::Held::best"),
    ("kernel", r"^\[k\]"),
]


def samples(lines):
    """Yield each sample's frames (leaf first) as symbol strings."""
    frames = []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                yield frames
            frames = []
            continue
        if not line.startswith("\t"):
            continue  # the header line: thread id
        parts = line.strip().split(None, 1)
        if len(parts) == 2:
            addr, sym = parts
            if addr.startswith("ffffffff"):
                sym = "[k] " + sym
            frames.append(sym)
        elif parts:
            frames.append("?")
    if frames:
        yield frames


def classify(frames, table):
    for sym in frames:
        for label, rx in table:
            if rx.search(sym):
                return label
    return "other"


def main(argv):
    src = open(argv[1], encoding="utf-8", errors="replace") if len(argv) > 1 else sys.stdin
    stages = [(l, re.compile(r)) for l, r in STAGES]
    leaves = [(l, re.compile(r)) for l, r in LEAVES]
    by_stage, by_leaf, cross = {}, {}, {}
    n = 0
    for frames in samples(src):
        n += 1
        s = classify(frames, stages)
        by_stage[s] = by_stage.get(s, 0) + 1
        leaf = classify(frames[:1], leaves)
        by_leaf[leaf] = by_leaf.get(leaf, 0) + 1
        cross.setdefault(s, {})
        cross[s][leaf] = cross[s].get(leaf, 0) + 1
    for title, d in (("stage (innermost named frame)", by_stage), ("leaf function", by_leaf)):
        print("| %s | samples | share | top leaves |\n|---|---:|---:|---|" % title)
        for k, v in sorted(d.items(), key=lambda kv: -kv[1]):
            top = ""
            if d is by_stage:
                top = ", ".join("%s %d" % (lf.split(" (")[0], c) for lf, c in
                                sorted(cross[k].items(), key=lambda kv: -kv[1])[:3])
            print("| %s | %d | %.1f%% | %s |" % (k, v, 100 * v / max(n, 1), top))
        print()
    print("%d samples" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Generate large, realistic near-duplicate corpora (1-10 million documents).

Output: JSON Lines ``{"id": <str>, "text": <str>}``, like debian_corpus.py.
tools/README.md describes the corpus in full (seeds, edit model, figures).

Seed texts: the one-line summaries of /usr/share/package-lists/pypi.tsv and
npm.tsv (~925,000 distinct non-empty texts), optionally also those of
``--extra FILE`` (a debian_corpus.py JSONL). Natural near-duplicates among
them stay and are not part of the planted truth.

Planted families. Family f takes seed ``perm[f mod S]`` in round f div S; its
size is drawn from a truncated Zipf law P(s) ~ s^-alpha, s = 1..max_family
(``--family-alpha`` 2.0, ``--max-family`` 2000). Round 0: the original plus
s-1 edited copies; later rounds: s fresh copies of the same seed (group
truth by ``seed``). The last family is cut so sizes sum to exactly --docs.

Heavy families (issue 23; the defaults, ``--plain`` turns them off and gives
the corpus of earlier versions byte for byte): each family draws a share of
near-exact copies from ``--light LO,HI`` (0.2,0.9; such a copy has edit rate
under 0.03, mostly one typo) and edits its other copies at ``--edit-rate``
(0.0,0.5); ``--template-share`` (0.03) of the families of >= 2 are wrapped
in one of ``--templates`` (24) boilerplate templates (product pages, mirror
sites), the first ones used most, so that members of different seeds share
buckets of tens of thousands of documents (corpus_heavy.py).

Edit model (corpus_model.Editor): word substitutions, insertions, deletions
and swaps at rate r, clause reordering, boilerplate prefixes and suffixes,
case and punctuation changes; a copy with no word edit gets one typo,
punctuation or case change. Every copy differs from its parent, and a Bloom
filter (pre-filled with the seeds) makes every text of a run distinct (a hit
redraws the copy from a stream seeded by the rejected text). Ids: the
original is ``SOURCE/NAME``, copies ``SOURCE/NAME#j``.

Determinism: --seed, --docs, the options and the same input files (see
seed_fingerprint in the summary) fix the output byte for byte (--self-test
checks it). Memory: the seeds (~0.5 GB) plus the Bloom filter plus the
shuffle window (``--shuffle-window``, 100000); nothing per document.

Files: ``--out`` the corpus (default stdout); ``--families FILE`` one JSON
line per family {"family", "seed", "round", "ids"}; ``--truth-sample M
--sample-out FILE`` M uniformly chosen ids. ``--shard i/n`` writes the
families whose seed position p has (p div 1024) mod n == i (concatenate the
shards; ~98% of texts equal the single run's).

Usage:
  python3 tools/scale_corpus.py --docs 1000000 --out tools/data/heavy-1m.jsonl
  python3 tools/scale_corpus.py --self-test

A one-line summary goes to stderr. Standard library only (Python >= 3.9).
"""

import argparse
import array
import bisect
import hashlib
import io
import json
import os
import random
import sys
import time

# Helper modules next to this script.
from corpus_measure import SimHist, size_hist_lines  # noqa: E402
from corpus_heavy import Heavy, build_templates, wrap  # noqa: E402
from corpus_model import Bloom, Editor, build_vocab, load_seeds, zipf_cdf  # noqa: E402
from stdout_pipe import quiet_stdout  # noqa: E402

PYPI_TSV = "/usr/share/package-lists/pypi.tsv"
NPM_TSV = "/usr/share/package-lists/npm.tsv"

BLOCK = 1024  # families per random stream (unit of --shard)

# ---------------------------------------------------------------------------
# generator
# ---------------------------------------------------------------------------


def family_plan(n_docs, seed, cdf):
    """Yield family sizes (summing to n_docs), from their own random stream."""
    rnd = random.Random("%s:sizes" % seed).random
    total = 0
    bl = bisect.bisect_left
    nmax = len(cdf)
    while total < n_docs:
        s = bl(cdf, rnd()) + 1
        if s > nmax:
            s = nmax
        if total + s > n_docs:
            s = n_docs - total
        total += s
        yield s


def generate(args, keys, texts, out, fam_out, stats, hist=None):
    """Write the corpus to ``out`` (a text stream). Returns sample ids."""
    t_setup = time.process_time()
    S = len(texts)
    N = args.docs
    seed = args.seed
    shard_i, shard_n = args.shard
    cdf = zipf_cdf(args.family_alpha, args.max_family)
    vocab = build_vocab(texts, random.Random("%s:vocab" % seed))
    editor = Editor(vocab, args.edit_rate[0], args.edit_rate[1])
    edit = editor.edit
    heavy = Heavy(args.light, args.template_share,
                  build_templates(args.templates, random.Random("%s:templates" % seed)))

    bloom = Bloom(N // shard_n + S + 1)
    bloom.add_all(texts)

    sample = set()
    if args.truth_sample:
        sample = set(random.Random("%s:sample" % seed).sample(range(N), min(args.truth_sample, N)))
    sample_ids = []

    copies = array.array("I", bytes(4 * S))  # copies numbered so far, per seed
    # One seeded shuffle for all rounds: family f uses seed perm[f mod S], so
    # all families of a seed sit at the same position and land in one shard.
    perm = list(range(S))
    random.Random("%s:perm" % seed).shuffle(perm)

    enc = json.encoder.encode_basestring
    win = args.shuffle_window if args.shuffle_window > 1 else 0
    buf = []  # shuffle window
    pending = []  # lines ready to be written
    wrng = random.Random("%s:window:%d/%d" % (seed, shard_i, shard_n)).random
    write = out.write
    rng = random.Random()
    rnd = rng.random
    rng2 = random.Random()
    rnd2 = rng2.random
    # Bloom filter, inlined in the hot loop
    blake = hashlib.blake2b
    from_bytes = int.from_bytes
    bits, bmask = bloom.bits, bloom.mask
    stats["setup_cpu"] = "%.1fs" % (time.process_time() - t_setup)
    seed64 = seed & 0xFFFFFFFFFFFFFFFF
    g = 0  # global document index (generation order)
    nfam = written = redraws = originals = max_tries = templated = 0
    size_hist = {}
    f = -1
    for f, size in enumerate(family_plan(N, seed, cdf)):
        r, pos = divmod(f, S)
        si = perm[pos]
        c0 = copies[si]
        copies[si] = c0 + size - (1 if r == 0 else 0)
        g0 = g
        g += size
        b = pos // BLOCK
        if b % shard_n != shard_i:
            continue
        if size > (r == 0):
            # each family has its own stream (a redraw in one family does
            # not change the others, also across --shard runs)
            rng.seed((f << 64) | seed64)
        key = keys[si]
        orig = texts[si]
        ekey = enc(key)
        name = key.split("/", 1)[1]
        if name.startswith("@"):  # npm scope: @scope/pkg -> pkg
            name = name.rsplit("/", 1)[-1]
        q, tmpl = heavy.family(size, rnd) if size > (r == 0) else (0.0, None)
        if tmpl is not None:
            templated += size
        if r == 0:
            members = [orig]
            if tmpl is None:
                lines = ['{"id": %s, "text": %s}\n' % (ekey, enc(orig))]
            else:  # the wrapped original is new: mark it in the Bloom filter
                w = wrap(tmpl, name, orig)
                h = from_bytes(blake(w.encode(), digest_size=8).digest(), "little")
                x, y = h & bmask, (h >> 32) & bmask
                bits[x >> 3] |= 1 << (x & 7)
                bits[y >> 3] |= 1 << (y & 7)
                lines = ['{"id": %s, "text": %s}\n' % (ekey, enc(w))]
            ids = [ekey] if fam_out is not None else None
            originals += 1
            j = 1
        else:
            members = []
            lines = []
            ids = [] if fam_out is not None else None
            j = c0 + 1
        if size > len(members):
            ekey = ekey[:-1] + "#"
            while len(members) < size:
                if members and rnd() < 0.25:
                    parent = members[int(rnd() * len(members))]
                else:
                    parent = orig
                rate = heavy.rate(q, rnd)
                t = edit(parent, name, rnd, rate)
                tries = 0
                while True:
                    w = t if tmpl is None else wrap(tmpl, name, t)
                    h = from_bytes(blake(w.encode(), digest_size=8).digest(), "little")
                    x = h & bmask
                    y = (h >> 32) & bmask
                    mx = 1 << (x & 7)
                    my = 1 << (y & 7)
                    x >>= 3
                    y >>= 3
                    if not (bits[x] & mx and bits[y] & my):
                        bits[x] |= mx
                        bits[y] |= my
                        break
                    # a duplicate (or Bloom false positive): draw again from
                    # a stream seeded by the rejected text, so that the main
                    # stream (and thus the other copies) does not depend on
                    # the Bloom filter's history
                    # (seeded with the copy and attempt number too: no cycles)
                    redraws += 1
                    tries += 1
                    rng2.seed(h + (tries << 64) + (j << 80) + (si << 112))
                    if tries < 8:
                        t = edit(t if rnd2() < 0.5 else parent, name, rnd2, rate)
                    else:  # crowded neighbourhood: keep editing the copy
                        t = edit(t, name, rnd2, rate)
                if tries > max_tries:
                    max_tries = tries
                members.append(t)
                i = '%s%d"' % (ekey, j)
                lines.append('{"id": %s, "text": %s}\n' % (i, enc(w)))
                if ids is not None:
                    ids.append(i)
                j += 1
        if hist is not None:
            hist(orig, members, r)  # of the texts inside any template
        if sample:
            for k in range(size):
                if g0 + k in sample:
                    sample_ids.append(json.loads(lines[k])["id"])
        if win:
            nb = len(buf)
            for line in lines:
                if nb < win:
                    buf.append(line)
                    nb += 1
                else:
                    k = int(wrng() * win)
                    pending.append(buf[k])
                    buf[k] = line
        else:
            pending += lines
        if len(pending) >= 4096:
            write("".join(pending))
            pending.clear()
        if fam_out is not None:
            fam_out.write('{"family": %d, "seed": %s, "round": %d, "ids": [%s]}\n' % (
                f, enc(key), r, ", ".join(ids)))
        nfam += 1
        written += size
        size_hist[size] = size_hist.get(size, 0) + 1
    if pending:
        write("".join(pending))
    if buf:
        # drain the window in a seeded random order
        random.Random("%s:drain:%d/%d" % (seed, shard_i, shard_n)).shuffle(buf)
        write("".join(buf))
    stats.update(docs=written, families=nfam, originals=originals,
                 edited=written - originals, redraws=redraws, max_tries=max_tries,
                 templated=templated, rounds=f // S + 1 if f >= 0 else 0, bloom_mb="%.0f" % (bloom.nbits / 8 / 2**20))
    stats["_size_hist"] = size_hist
    return sample_ids


# ---------------------------------------------------------------------------
# self-test
# ---------------------------------------------------------------------------


def self_test():
    t0 = time.monotonic()
    st = {}
    keys, texts = load_seeds(PYPI_TSV, NPM_TSV, None, 2000, st)
    assert len(texts) > 1000, "too few seed texts in %s / %s" % (PYPI_TSV, NPM_TSV)
    N = 30000  # > seeds * mean family size: exercises rounds >= 1

    plain = dict(light=(0.0, 0.0), template_share=0.0, templates=24)

    def run(seed, docs=N, window=1000, **heavy):
        a = argparse.Namespace(docs=docs, seed=seed, shard=(0, 1), family_alpha=2.0,
                               max_family=300, edit_rate=(0.0, 0.3), truth_sample=50,
                               shuffle_window=window, **(heavy or plain))
        out, fam = io.StringIO(), io.StringIO()
        hist = SimHist()
        s = {}
        sample = generate(a, keys, texts, out, fam, s, hist)
        return out.getvalue(), fam.getvalue(), sample, hist, s

    c1, f1, s1, hist, stats = run(7)
    c2, f2, s2, _, _ = run(7)
    assert c1 == c2 and f1 == f2 and s1 == s2, "same seed, different output"
    c3, _, _, _, _ = run(8)
    assert c3 != c1, "different seed, same output"
    docs = [json.loads(l) for l in c1.splitlines()]
    assert len(docs) == N, len(docs)
    ids = [d["id"] for d in docs]
    assert len(set(ids)) == N, "duplicate ids"
    assert len({d["text"] for d in docs}) == N, "duplicate texts"
    fams = [json.loads(l) for l in f1.splitlines()]
    assert sum(len(x["ids"]) for x in fams) == N, "family sizes do not sum to N"
    assert sorted(i for x in fams for i in x["ids"]) == sorted(ids), "families != corpus ids"
    assert len(s1) == 50 and set(s1) <= set(ids), "bad sample"
    assert stats["rounds"] >= 2, stats
    # a shard is a subset of the families, with the same ids
    sh = argparse.Namespace(docs=N, seed=7, shard=(1, 3), family_alpha=2.0, max_family=300,
                            edit_rate=(0.0, 0.3), truth_sample=0, shuffle_window=0, **plain)
    o = io.StringIO()
    generate(sh, keys, texts, o, None, {})
    sids = {json.loads(l)["id"] for l in o.getvalue().splitlines()}
    assert sids and sids < set(ids), "shard ids not a subset"
    # similarity spread of edited copies
    tot = sum(hist.bins)
    frac = [c / tot for c in hist.bins]
    print("self-test: docs=%d families=%d rounds=%d redraws=%d seeds=%d" % (
        N, stats["families"], stats["rounds"], stats["redraws"], len(texts)), file=sys.stderr)
    print("family sizes:", file=sys.stderr)
    print("\n".join(size_hist_lines(stats["_size_hist"])), file=sys.stderr)
    print("Jaccard(copy, original), char 5-shingles:", file=sys.stderr)
    print("\n".join(hist.lines()), file=sys.stderr)
    assert sum(1 for x in frac[5:] if x >= 0.03) >= 4, "copies not spread over 0.5-1.0"
    assert sum(frac[:5]) >= 0.03, "no copies below 0.5"
    assert sum(frac[5:]) >= 0.5, "most copies below 0.5"
    # heavy families: deterministic, distinct, templated members present
    hv = dict(light=(0.2, 0.9), template_share=0.2, templates=24)
    h1, _, _, _, hs = run(7, **hv)
    assert h1 == run(7, **hv)[0], "heavy: same seed, different output"
    hdocs = [json.loads(l) for l in h1.splitlines()]
    assert len({d["text"] for d in hdocs}) == N, "heavy: duplicate texts"
    assert hs["templated"] > N // 50, hs
    assert sum("Free shipping" in d["text"] or "mirror" in d["text"] for d in hdocs) > N // 100
    print("self-test: OK (%.1fs)" % (time.monotonic() - t0), file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------


def _shard(s):
    try:
        i, n = s.split("/")
        i, n = int(i), int(n)
    except ValueError:
        raise argparse.ArgumentTypeError("expected i/n")
    if not (n >= 1 and 0 <= i < n):
        raise argparse.ArgumentTypeError("need 0 <= i < n")
    return i, n


def _share(s):
    lo, hi = _rate(s)
    if hi > 1:
        raise argparse.ArgumentTypeError("need 0 <= LO <= HI <= 1")
    return lo, hi


def _rate(s):
    try:
        lo, hi = (float(x) for x in s.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("expected LO,HI")
    if not 0 <= lo <= hi <= 2:
        raise argparse.ArgumentTypeError("need 0 <= LO <= HI <= 2")
    return lo, hi


class _Atomic:
    """A text file written as FILE.tmp and renamed when complete.

    A symlink or anything that is not a regular file (/dev/null, /dev/stdout,
    a FIFO) is written in place: renaming would replace the link or device.
    """

    def __init__(self, path):
        self.path = path
        self.tmp = None
        if os.path.lexists(path) and (os.path.islink(path) or not os.path.isfile(path)):
            self.f = open(path, "w", encoding="utf-8", newline="\n", buffering=1 << 20)
            return
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        self.tmp = path + ".tmp"
        self.f = open(self.tmp, "w", encoding="utf-8", newline="\n", buffering=1 << 20)

    def commit(self):
        self.f.close()
        if self.tmp is not None:
            os.replace(self.tmp, self.path)


def _parser():
    """The command line (defaults of the heavy options: None, set in main)."""
    p = argparse.ArgumentParser(
        description="Generate a large corpus with planted near-duplicate families "
                    '(JSON Lines {"id": ..., "text": ...}).')
    p.add_argument("--docs", "-n", type=int, default=1000000, help="documents to write (default %(default)s)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default %(default)s)")
    p.add_argument("--out", "-o", default="-", help="corpus file (default: stdout)")
    p.add_argument("--families", help="write the planted families as JSON Lines here")
    p.add_argument("--truth-sample", type=int, default=0, metavar="M",
                   help="choose M documents for exact-truth computations")
    p.add_argument("--sample-out", help="file for the --truth-sample ids (one per line)")
    p.add_argument("--family-alpha", type=float, default=2.0,
                   help="power-law exponent of family sizes, P(s) ~ s^-alpha (default %(default)s)")
    p.add_argument("--max-family", type=int, default=None,
                   help="largest family size (default 2000; --plain: 1000)")
    p.add_argument("--edit-rate", type=_rate, default=None, metavar="LO,HI",
                   help="per-copy edit rate range, word edits per word (default 0.0,0.5; "
                        "--plain: 0.0,0.3)")
    p.add_argument("--light", type=_share, default=None, metavar="LO,HI",
                   help="per family, the share of near-exact copies is drawn from LO..HI "
                        "(default 0.2,0.9; --plain: 0,0)")
    p.add_argument("--template-share", type=float, default=None, metavar="P",
                   help="share of families of >= 2 wrapped in a boilerplate template "
                        "(default 0.03; --plain: 0)")
    p.add_argument("--templates", type=int, default=24, metavar="K",
                   help="number of boilerplate templates (default %(default)s)")
    p.add_argument("--plain", action="store_true",
                   help="the defaults of the corpus before issue 23 (no heavy families)")
    p.add_argument("--shuffle-window", type=int, default=100000, metavar="W",
                   help="output order shuffle window in documents, 0 = family by family "
                        "(default %(default)s)")
    p.add_argument("--shard", type=_shard, default=(0, 1), metavar="i/n",
                   help="write only blocks b = i mod n of families")
    p.add_argument("--pypi", default=PYPI_TSV, help="PyPI TSV (default %(default)s; '' = none)")
    p.add_argument("--npm", default=NPM_TSV, help="npm TSV (default %(default)s; '' = none)")
    p.add_argument("--extra", action="append", metavar="FILE",
                   help="also use the texts of this JSONL (from debian_corpus.py); repeatable")
    p.add_argument("--max-seeds-per-source", type=int, default=0, metavar="K",
                   help="read only the first K rows of each input (testing)")
    p.add_argument("--similarity", action="store_true",
                   help="also print a histogram of Jaccard(copy, original) (slower)")
    p.add_argument("--self-test", action="store_true", help="run the self-test and exit")
    return p


def main(argv=None):
    p = _parser()
    args = p.parse_args(argv)
    if args.self_test:
        return self_test()
    if args.docs < 0:
        p.error("--docs must be >= 0")
    for k, heavy, plain in (("max_family", 2000, 1000), ("edit_rate", (0.0, 0.5), (0.0, 0.3)),
                            ("light", (0.2, 0.9), (0.0, 0.0)), ("template_share", 0.03, 0.0)):
        if getattr(args, k) is None:
            setattr(args, k, plain if args.plain else heavy)
    if not 0 <= args.template_share <= 1 or args.templates < 1:
        p.error("--template-share must be in 0..1 and --templates >= 1")
    if args.max_family < 1:
        p.error("--max-family must be >= 1")
    if args.truth_sample and not args.sample_out:
        p.error("--truth-sample needs --sample-out")

    t0 = time.monotonic()
    stats = {}
    keys, texts = load_seeds(args.pypi, args.npm, args.extra, args.max_seeds_per_source, stats)
    if not texts:
        p.error("no seed texts")
    t_load = time.monotonic() - t0

    out = sys.stdout if args.out == "-" else None
    outf = _Atomic(args.out) if out is None else None
    famf = _Atomic(args.families) if args.families else None
    hist = SimHist() if args.similarity else None
    t1 = time.monotonic()
    c1 = time.process_time()
    try:
        sample_ids = generate(args, keys, texts, out or outf.f, famf.f if famf else None,
                              stats, hist)
        if out is not None:
            out.flush()
    except BrokenPipeError:
        quiet_stdout()
        return 0
    t_gen = time.monotonic() - t1
    c_gen = time.process_time() - c1
    if outf:
        outf.commit()
    if famf:
        famf.commit()
    if args.sample_out:
        sf = _Atomic(args.sample_out)
        sf.f.write("".join(i + "\n" for i in sample_ids))
        sf.commit()
    keys_ = ["docs", "families", "rounds", "originals", "edited", "templated", "redraws", "max_tries", "seeds",
             "seed_empty", "seed_dup_texts", "bloom_mb", "seed_fingerprint", "setup_cpu"]
    shard = " shard=%d/%d" % args.shard if args.shard[1] > 1 else ""
    print("scale-corpus seed=%d%s: %s load=%.1fs gen=%.1fs gen_cpu=%.1fs docs_per_s=%.0f docs_per_cpu_s=%.0f%s" % (
        args.seed, shard, " ".join("%s=%s" % (k, stats.get(k, 0)) for k in keys_),
        t_load, t_gen, c_gen, stats["docs"] / t_gen if t_gen > 0 else 0,
        stats["docs"] / c_gen if c_gen > 0 else 0,
        "" if outf is None or outf.tmp is None else
        " out=%s (%d bytes)" % (args.out, os.path.getsize(args.out))),
        file=sys.stderr)
    if args.similarity:
        print("family sizes:", file=sys.stderr)
        print("\n".join(size_hist_lines(stats["_size_hist"])), file=sys.stderr)
        print("Jaccard(copy, original seed text), char 5-shingles:", file=sys.stderr)
        print("\n".join(hist.lines()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

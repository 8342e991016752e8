#!/usr/bin/env python3
"""Build text corpora for lshdb experiments as JSON Lines.

Each output line is one JSON object ``{"id": <str>, "text": <str>}``. Ids are
unique within a corpus: when a builder yields the same id twice, the first
occurrence wins and later ones are counted as skipped duplicates.

Corpora (registry ``CORPORA`` at the bottom of the builders section):

  debian-desc   Debian package descriptions (~63,000 packages on bookworm).
                id = package name, text = the whole Description field
                (synopsis line + long description), with the control-file
                continuation syntax undone: the leading single space of each
                continuation line is removed and a line " ." becomes an empty
                line; lines are joined with "\\n".

                Source: ``apt-cache dumpavail`` (one stanza per package). The
                system's apt lists of this image keep only one-line
                descriptions (``Acquire::Languages "none"``), so with
                ``--long`` the tool runs its own ``apt-get update`` with
                ``Acquire::Languages=en`` into a private lists folder under
                tools/data/ (the system's /var/lib/apt/lists is only read, by
                apt-cache) and joins the ``Translation-en`` files by package
                name and Description-md5.

Usage:
  python3 tools/debian_corpus.py [CORPUS] [--long] [--out FILE] [--limit N]

  e.g. python3 tools/debian_corpus.py --long --out tools/data/debian-desc-long.jsonl

A one-line summary goes to stderr. Standard library only (Python >= 3.8).
"""

import argparse
import bz2
import glob
import gzip
import json
import lzma
import os
import shutil
import subprocess
import sys
import time

from deb822 import iter_stanzas, unfold_description  # next to this script
from stdout_pipe import quiet_stdout  # next to this script

TOOLS_DIR = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.path.join(TOOLS_DIR, "data")



def open_text_any(path):
    """Open a (possibly compressed) apt index file as a text stream.

    .gz/.xz/.lzma/.bz2 are read in-process; .lz4/.zst (no stdlib module) are
    piped through apt's own ``apt-helper cat-file``, or the lz4/zstd CLI.
    Returns (stream, cleanup) where cleanup() releases any subprocess.
    """
    enc = dict(encoding="utf-8", errors="replace")
    if path.endswith(".gz"):
        return gzip.open(path, "rt", **enc), lambda: None
    if path.endswith(".xz") or path.endswith(".lzma"):
        return lzma.open(path, "rt", **enc), lambda: None
    if path.endswith(".bz2"):
        return bz2.open(path, "rt", **enc), lambda: None
    if path.endswith(".lz4") or path.endswith(".zst"):
        helper = "/usr/lib/apt/apt-helper"
        if os.access(helper, os.X_OK):
            cmd = [helper, "cat-file", path]
        else:
            tool = "lz4" if path.endswith(".lz4") else "zstd"
            if not shutil.which(tool):
                raise RuntimeError("cannot decompress %s: need %s or apt-helper" % (path, tool))
            cmd = [tool, "-dc", path]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, **enc)

        def cleanup():
            proc.stdout.close()
            if proc.wait() != 0:
                raise RuntimeError("%s failed with status %d" % (" ".join(cmd), proc.returncode))

        return proc.stdout, cleanup
    return open(path, "r", **enc), lambda: None


# ---------------------------------------------------------------------------
# debian-desc
# ---------------------------------------------------------------------------

# Preference when the same index exists in several encodings (e.g. after runs
# with different apt settings): cheapest to read first.
_COMPRESSION_PREF = ["", ".gz", ".xz", ".lzma", ".bz2", ".lz4", ".zst"]


def _split_compression(path):
    for ext in _COMPRESSION_PREF[1:]:
        if path.endswith(ext):
            return path[: -len(ext)], ext
    return path, ""


def apt_update_translations(apt_lists, apt_cache, quiet=False):
    """Run ``apt-get update`` with English translations into our own folders.

    Everything apt writes goes to ``apt_lists`` and ``apt_cache`` (both under
    tools/data/); the system's /var/lib/apt/lists and /var/cache/apt are not
    written. The system's sources (/etc/apt/sources.list{,.d}) are used as is.
    """
    os.makedirs(os.path.join(apt_lists, "partial"), exist_ok=True)
    os.makedirs(os.path.join(apt_cache, "archives", "partial"), exist_ok=True)
    # A config file is the only way to *remove* list entries set in
    # /etc/apt/apt.conf.d: drop the update hooks, which in this image would
    # touch system state (rm /var/cache/apt/archives/*.deb, appstreamcli
    # refresh of the system catalog, PackageKit notification).
    conf = os.path.join(os.path.dirname(apt_lists), "apt-update.conf")
    with open(conf, "w") as f:
        f.write(
            "// written by tools/debian_corpus.py for its private apt-get update\n"
            "#clear APT::Update::Post-Invoke;\n"
            "#clear APT::Update::Post-Invoke-Success;\n"
            "#clear APT::Update::Pre-Invoke;\n"
        )
    cmd = [
        "apt-get", "update",
        "-c", conf,
        # docker-no-languages sets Acquire::Languages { "none"; }; apt takes
        # languages listed before "none", and this -o value lands first.
        "-o", "Acquire::Languages=en",
        "-o", "Dir::State::Lists=" + apt_lists,
        "-o", "Dir::Cache=" + apt_cache,
        "-o", "Dir::Cache::pkgcache=",
        "-o", "Dir::Cache::srcpkgcache=",
        # keep lists compressed, Translations as .gz (readable with gzip);
        # Packages files stay in apt's default (.lz4 here), we don't read them
        "-o", "Acquire::GzipIndexes=true",
        "-o", "Acquire::IndexTargets::deb::Translations::KeepCompressedAs=gz",
        # appstream metadata (50appstream) is not needed
        "-o", "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false",
    ]
    if quiet:
        cmd.insert(2, "-qq")
    else:
        cmd.insert(2, "-q")
    print("+ " + " ".join(cmd), file=sys.stderr)
    sys.stderr.flush()
    # apt's output goes to stderr so that stdout stays pure JSON Lines
    rc = subprocess.call(cmd, stdout=sys.stderr, stdin=subprocess.DEVNULL)
    return rc


def find_translation_files(apt_lists):
    """The *_i18n_Translation-en* files in apt_lists, one encoding per index."""
    best = {}
    for path in glob.glob(os.path.join(apt_lists, "*_i18n_Translation-en*")):
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            continue
        base, ext = _split_compression(path)
        if not base.endswith("_i18n_Translation-en"):
            continue  # e.g. Translation-en_GB
        rank = _COMPRESSION_PREF.index(ext)
        if base not in best or rank < best[base][0]:
            best[base] = (rank, path)
    return sorted(p for _, p in best.values())


def load_translations(paths, stats):
    """Read Translation-en files.

    Returns (by_md5, by_name): by_md5[(package, md5)] = text and
    by_name[package] = [(md5, text), ...] in file order.
    """
    by_md5 = {}
    by_name = {}
    wanted = {"package", "description-md5", "description-en"}
    n = 0
    for path in paths:
        stream, cleanup = open_text_any(path)
        try:
            for st in iter_stanzas(stream, wanted):
                pkg = st.get("package")
                raw = st.get("description-en")
                if not pkg or raw is None:
                    continue
                n += 1
                md5 = st.get("description-md5", "")
                text = unfold_description(raw)
                key = (pkg, md5)
                if key in by_md5:
                    continue  # same description listed in several suites
                by_md5[key] = text
                by_name.setdefault(pkg, []).append((md5, text))
        finally:
            stream.close()
            cleanup()
    stats["translation_files"] = len(paths)
    stats["translation_entries"] = n
    stats["translation_unique"] = len(by_md5)
    return by_md5, by_name


def _dumpavail_lines(stats):
    proc = subprocess.Popen(
        ["apt-cache", "dumpavail"],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        encoding="utf-8",
        errors="replace",
    )
    try:
        yield from proc.stdout
    finally:
        # also reached when the consumer stops early (--limit)
        proc.stdout.close()
        if proc.poll() is None:
            proc.terminate()
        rc = proc.wait()
        stats["_dumpavail_rc"] = rc


def build_debian(args, stats):
    """Yield (id, text) for every package stanza of ``apt-cache dumpavail``."""
    by_md5, by_name = {}, {}
    if args.long:
        apt_lists = os.path.abspath(args.apt_lists)
        apt_cache = os.path.abspath(args.apt_cache)
        if not args.no_update:
            rc = apt_update_translations(apt_lists, apt_cache, quiet=args.quiet)
            if rc != 0:
                print("warning: apt-get update exited with %d; using whatever "
                      "Translation files are present" % rc, file=sys.stderr)
        paths = find_translation_files(apt_lists)
        if not paths:
            raise SystemExit(
                "error: no *_i18n_Translation-en* files in %s (apt-get update "
                "failed or the network is unreachable?)" % apt_lists)
        by_md5, by_name = load_translations(paths, stats)

    # counters live in ``stats`` directly so they are right under --limit too
    for k in ("stanzas_read", "translation_md5", "translation_name",
              "translation_name_other_synopsis", "avail_long",
              "synopsis_only", "no_description"):
        stats[k] = 0
    missing_translation = stats.setdefault("_missing_translation", [])
    wanted = {"package", "description", "description-md5"}
    lines = _dumpavail_lines(stats)
    try:
        for st in iter_stanzas(lines, wanted):
            yield from _debian_record(st, args, by_md5, by_name, stats,
                                      missing_translation)
    finally:
        lines.close()  # terminates apt-cache when stopped early (--limit)
    if stats["stanzas_read"] == 0:
        raise SystemExit(
            "error: apt-cache dumpavail printed nothing (exit status %s); run "
            "`apt-get update` once (as root) so apt has package lists"
            % stats.get("_dumpavail_rc"))


def _debian_record(st, args, by_md5, by_name, stats, missing_translation):
    """Yield the (id, text) record for one dumpavail stanza (or nothing)."""
    stats["stanzas_read"] += 1
    pkg = st.get("package")
    if not pkg:
        return
    raw = st.get("description")
    if raw is None:
        stats["no_description"] += 1
        return
    text = unfold_description(raw)
    if "\n" in text:
        # full description in the stanza itself (installed packages: dpkg's
        # status file keeps the long text, and dumpavail includes it)
        stats["avail_long"] += 1
    elif args.long:
        md5 = st.get("description-md5", "")
        long_text = by_md5.get((pkg, md5)) if md5 else None
        if long_text is not None:
            stats["translation_md5"] += 1
            text = long_text
        elif pkg in by_name:
            # The description changed between the system's lists and the
            # freshly downloaded translations: prefer a version with the same
            # synopsis, else the first one listed.
            cands = [t for _, t in by_name[pkg]]
            same = [t for t in cands if t.split("\n", 1)[0] == text]
            if same:
                stats["translation_name"] += 1
                text = same[0]
            else:
                stats["translation_name_other_synopsis"] += 1
                text = cands[0]
        else:
            stats["synopsis_only"] += 1
            missing_translation.append(pkg)
    else:
        stats["synopsis_only"] += 1
    yield pkg, text


def add_debian_args(p):
    g = p.add_argument_group("debian-desc")
    g.add_argument("--long", action="store_true",
                   help="fetch Translation-en (own apt-get update into "
                        "tools/data/apt-lists) and use the long descriptions")
    g.add_argument("--no-update", action="store_true",
                   help="with --long: do not run apt-get update, reuse the "
                        "Translation files already in --apt-lists")
    g.add_argument("--apt-lists", default=os.path.join(DATA_DIR, "apt-lists"),
                   help="private apt lists folder (default: %(default)s)")
    g.add_argument("--apt-cache", default=os.path.join(DATA_DIR, "apt-cache"),
                   help="private apt cache folder (default: %(default)s)")
    g.add_argument("--list-missing", action="store_true",
                   help="with --long: print the packages without a "
                        "translation to stderr")


def summarize_debian(args, stats):
    keys = ["stanzas_read", "written", "duplicates_skipped",
            "long_descriptions", "mean_text_chars"]
    if args.long:
        keys += ["translation_md5", "translation_name",
                 "translation_name_other_synopsis", "avail_long",
                 "synopsis_only", "translation_entries", "translation_unique"]
    else:
        keys += ["avail_long", "synopsis_only"]
    if stats.get("no_description"):
        keys.append("no_description")
    if args.list_missing and stats.get("_missing_translation"):
        print("no translation: " + " ".join(stats["_missing_translation"]),
              file=sys.stderr)
    return keys


# Registry of corpora: name -> (builder, add_args, summary keys).
# builder(args, stats) yields (id, text) pairs and may fill ``stats``;
# add_args(parser) registers its options; summary(args, stats) returns the
# stats keys to print (in order) and may print extra diagnostics.
CORPORA = {
    "debian-desc": {
        "build": build_debian,
        "add_args": add_debian_args,
        "summary": summarize_debian,
        "help": "Debian package descriptions (apt-cache dumpavail [+ Translation-en])",
    },
}


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Write a text corpus as JSON Lines "
                    '({"id": ..., "text": ...} per line).',
        epilog="corpora: " + "; ".join(
            "%s: %s" % (k, v["help"]) for k, v in CORPORA.items()))
    p.add_argument("corpus", nargs="?", choices=sorted(CORPORA),
                   help="corpus to build (default: debian-desc)")
    p.add_argument("--corpus", dest="corpus_opt", choices=sorted(CORPORA),
                   help="same as the positional argument")
    p.add_argument("--out", "-o", default="-",
                   help="output file (default: stdout); written via a "
                        "temporary file and renamed when complete")
    p.add_argument("--limit", type=int, default=None,
                   help="stop after writing N records")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="less output from helper commands")
    for c in CORPORA.values():
        c["add_args"](p)
    args = p.parse_args(argv)
    if args.corpus and args.corpus_opt and args.corpus != args.corpus_opt:
        p.error("conflicting corpus names")
    name = args.corpus or args.corpus_opt or "debian-desc"
    corpus = CORPORA[name]
    if args.limit is not None and args.limit < 0:
        p.error("--limit must be >= 0")

    t0 = time.monotonic()
    stats = {"written": 0, "duplicates_skipped": 0}
    seen = set()
    total_chars = 0
    long_texts = 0

    if args.out == "-":
        out = sys.stdout
        tmp = None
    else:
        d = os.path.dirname(os.path.abspath(args.out))
        os.makedirs(d, exist_ok=True)
        tmp = args.out + ".tmp"
        out = open(tmp, "w", encoding="utf-8", newline="\n")

    records = corpus["build"](args, stats)
    try:
        if args.limit != 0:
            for rid, text in records:
                if rid in seen:
                    stats["duplicates_skipped"] += 1
                    continue
                seen.add(rid)
                out.write(json.dumps({"id": rid, "text": text},
                                     ensure_ascii=False) + "\n")
                stats["written"] += 1
                total_chars += len(text)
                if "\n" in text:
                    long_texts += 1
                if args.limit is not None and stats["written"] >= args.limit:
                    break
        out.flush()
    except BrokenPipeError:
        quiet_stdout()  # e.g. `| head`: stop quietly
        records.close()
        return 0
    finally:
        records.close()  # stops apt-cache early under --limit
        if tmp is not None:
            out.close()
    if tmp is not None:
        os.replace(tmp, args.out)

    stats["long_descriptions"] = long_texts
    stats["mean_text_chars"] = "%.1f" % (total_chars / stats["written"]) if stats["written"] else "0"
    keys = corpus["summary"](args, stats)
    mode = " mode=long" if getattr(args, "long", False) else ""
    limit = " limit=%d" % args.limit if args.limit is not None else ""
    print("%s%s%s: %s time=%.1fs%s" % (
        name, mode, limit,
        " ".join("%s=%s" % (k, stats.get(k, 0)) for k in keys),
        time.monotonic() - t0,
        "" if tmp is None else " out=%s (%d bytes)" % (args.out, os.path.getsize(args.out)),
    ), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

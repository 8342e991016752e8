"""Seed texts and the edit model of scale_corpus.py: the seed readers, the
boilerplate, the vocabulary, the family-size law, the Bloom filter and the
Editor that makes one edited copy."""

import hashlib
import json

VOCAB_SIZE = 1 << 17

# Boilerplate. "{}" is replaced by the package name of the seed.
PREFIXES = [
    "Python bindings for ",
    "A fork of {} with fixes. ",
    "[DEPRECATED] ",
    "Unofficial ",
    "Experimental: ",
    "(WIP) ",
    "{}: ",
    "Yet another ",
    "Lightweight ",
    "TypeScript port of ",
    "Node.js wrapper for ",
    "Fork of {}: ",
]
SUFFIXES = [
    " This package is deprecated.",
    " Licensed under the MIT License.",
    " Released under the Apache License 2.0.",
    " BSD-3-Clause licensed.",
    " Use {}-ng instead.",
    " (maintained fork)",
    " Work in progress.",
    " Fork of {}.",
    " Supports Python 3.8+.",
    " Mirror of {}.",
    " Not affiliated with the original project.",
    " This package is no longer maintained.",
    " GPLv3.",
    " See the README for details.",
]
STRIP = ".,;:!?()[]{}\"'`*<>"


# ---------------------------------------------------------------------------
# seeds
# ---------------------------------------------------------------------------


def _read_tsv(path, col, source, max_rows):
    with open(path, encoding="utf-8", errors="replace") as f:
        f.readline()  # header
        n = 0
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) <= col:
                continue
            yield source, p[0], p[col]
            n += 1
            if max_rows and n >= max_rows:
                break


def _read_jsonl(path, max_rows):
    with open(path, encoding="utf-8") as f:
        n = 0
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            yield "debian", d["id"], d["text"]
            n += 1
            if max_rows and n >= max_rows:
                break


def load_seeds(pypi, npm, extra, max_per_source, stats):
    """Return (keys, texts): distinct non-empty texts, key = SOURCE/NAME."""
    keys, texts, seen = [], [], set()
    sources = []
    if pypi:
        sources.append(_read_tsv(pypi, 4, "pypi", max_per_source))
    if npm:
        sources.append(_read_tsv(npm, 3, "npm", max_per_source))
    for path in extra or []:
        sources.append(_read_jsonl(path, max_per_source))
    read = empty = dup = badname = 0
    for it in sources:
        for source, name, text in it:
            read += 1
            text = text.strip()
            if not text:
                empty += 1
                continue
            if "#" in name or not name:
                badname += 1
                continue
            if text in seen:
                dup += 1
                continue
            seen.add(text)
            key = source + "/" + name
            keys.append(key)
            texts.append(text)
    crc = hashlib.blake2b("\0".join(keys).encode(), digest_size=8)
    crc.update("\0".join(texts).encode())
    stats.update(seed_rows=read, seed_empty=empty, seed_dup_texts=dup,
                 seed_bad_names=badname, seeds=len(texts),
                 seed_fingerprint=crc.hexdigest())
    return keys, texts


def build_vocab(texts, rng, size=VOCAB_SIZE):
    """A frequency-weighted pool of corpus words (tokens of random seeds)."""
    vocab = []
    n = len(texts)
    tries = 0
    while len(vocab) < size and tries < size * 20:
        tries += 1
        toks = texts[int(rng.random() * n)].split()
        w = toks[int(rng.random() * len(toks))].strip(STRIP)
        if 2 <= len(w) <= 20 and "\n" not in w:
            vocab.append(w)
    if not vocab:
        vocab = ["package", "library", "tool"]
    return vocab


def zipf_cdf(alpha, max_family):
    w = [s ** -alpha for s in range(1, max_family + 1)]
    tot = sum(w)
    cdf, acc = [], 0.0
    for x in w:
        acc += x / tot
        cdf.append(acc)
    cdf[-1] = 1.0
    return cdf


# ---------------------------------------------------------------------------
# Bloom filter (k = 2, deterministic hash)
# ---------------------------------------------------------------------------


class Bloom:
    def __init__(self, items):
        bits = 1 << 16
        while bits < 16 * items and bits < (1 << 32):
            bits <<= 1
        self.mask = bits - 1
        self.bits = bytearray(bits >> 3)
        self.nbits = bits

    def add_all(self, texts):
        blake = hashlib.blake2b
        from_bytes = int.from_bytes
        bits, mask = self.bits, self.mask
        for t in texts:
            h = from_bytes(blake(t.encode(), digest_size=8).digest(), "little")
            x = h & mask
            y = (h >> 32) & mask
            bits[x >> 3] |= 1 << (x & 7)
            bits[y >> 3] |= 1 << (y & 7)

    def add_new(self, text):
        """Add text; return False if it was (possibly) present already."""
        h = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        a = h & self.mask
        b = (h >> 32) & self.mask
        bits = self.bits
        ma = 1 << (a & 7)
        mb = 1 << (b & 7)
        if bits[a >> 3] & ma and bits[b >> 3] & mb:
            return False
        bits[a >> 3] |= ma
        bits[b >> 3] |= mb
        return True


# ---------------------------------------------------------------------------
# edits
# ---------------------------------------------------------------------------


class Editor:
    def __init__(self, vocab, lo, hi):
        self.vocab = vocab
        self.nv = len(vocab)
        self.lo = lo
        self.span = hi - lo

    def edit(self, parent, name, rnd, r=None):
        """One edited copy of parent (a str different from parent), at edit
        rate r (default: drawn from the LO,HI range)."""
        if r is None:
            r = self.lo + self.span * rnd()
        vocab, nv = self.vocab, self.nv
        toks = parent.split(" ")
        n = len(toks)
        nops = int(r * n + rnd())
        if nops == 0:
            # light edit only: a typo, punctuation or case
            u = rnd()
            if u < 0.5:
                text = self._typo(parent, rnd)
            elif u < 0.8:
                text = self._punct(parent, rnd)
            else:
                text = self._case(parent, rnd)
            if text == parent:
                text = self._typo(parent, rnd)
            return text
        for _ in range(nops):
            u = rnd()
            n = len(toks)
            if u < 0.45:
                toks[int(rnd() * n)] = vocab[int(rnd() * nv)]
            elif u < 0.70:
                toks.insert(int(rnd() * (n + 1)), vocab[int(rnd() * nv)])
            elif u < 0.90:
                if n > 1:
                    del toks[int(rnd() * n)]
            elif n > 1:
                i = int(rnd() * (n - 1))
                toks[i], toks[i + 1] = toks[i + 1], toks[i]
        text = " ".join(toks)
        # structural edits
        if rnd() < r * 0.6:
            text = self._reorder(text, rnd)
        if rnd() < r * 0.8:
            if rnd() < 0.5:
                p = PREFIXES[int(rnd() * len(PREFIXES))]
                if "{}" in p:
                    p = p.replace("{}", name)
                if rnd() < 0.5 and text[:1].isupper() and text[1:2].islower():
                    text = text[0].lower() + text[1:]
                text = p + text
            else:
                s = SUFFIXES[int(rnd() * len(SUFFIXES))]
                if "{}" in s:
                    s = s.replace("{}", name)
                if text[-1:].isalnum() and rnd() < 0.7:
                    text += "."
                text += s
        if rnd() < 0.12:
            text = self._case(text, rnd)
        if rnd() < 0.2 or text == parent:
            text = self._punct(text, rnd)
        if text == parent:
            text = self._typo(text, rnd)
        return text

    @staticmethod
    def _typo(text, rnd):
        """Drop, double or swap a character, or add a word end."""
        n = len(text)
        if n < 3:
            return text + "s"
        i = 1 + int(rnd() * (n - 2))
        u = rnd()
        if u < 0.3:
            return text[:i] + text[i + 1:]
        if u < 0.6:
            return text[:i] + text[i] + text[i:]
        if u < 0.9 and text[i] != text[i + 1]:
            return text[:i] + text[i + 1] + text[i] + text[i + 2:]
        return text + "s"

    @staticmethod
    def _reorder(text, rnd):
        for sep in (". ", ", ", " - ", "; ", " and "):
            if sep in text:
                parts = text.split(sep)
                if len(parts) == 2:
                    parts.reverse()
                else:
                    i = int(rnd() * (len(parts) - 1))
                    parts[i], parts[i + 1] = parts[i + 1], parts[i]
                return sep.join(parts)
        return text

    @staticmethod
    def _case(text, rnd):
        u = rnd()
        if u < 0.45:
            return text.lower()
        if u < 0.75:
            return text[:1].upper() + text[1:] if text[:1].islower() else text[:1].lower() + text[1:]
        if u < 0.93:
            return text.title()
        return text.upper()

    @staticmethod
    def _punct(text, rnd):
        u = rnd()
        if u < 0.4:
            return text[:-1] if text.endswith(".") else text + "."
        if u < 0.55 and " - " in text:
            return text.replace(" - ", ": ", 1)
        if u < 0.7 and "," in text:
            return text.replace(",", "")
        if u < 0.8 and " and " in text:
            return text.replace(" and ", " & ", 1)
        if u < 0.9:
            return text.rstrip(".!") + "!"
        return text + " ..."

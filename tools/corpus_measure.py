"""Measures of scale_corpus.py's output: 5-character shingles, Jaccard,
the histogram of copy-to-seed similarity, and the family size table."""



def shingles(text):
    t = " ".join(text.lower().split())
    if len(t) < 5:
        return {t}
    return {t[i:i + 5] for i in range(len(t) - 4)}


def jaccard(a, b):
    return len(a & b) / len(a | b) if a or b else 1.0


class SimHist:
    """Histogram of Jaccard(copy, original seed text) in bins of 0.1."""

    def __init__(self):
        self.bins = [0] * 11

    def __call__(self, orig, members, r):
        so = shingles(orig)
        for t in (members[1:] if r == 0 else members):
            self.bins[int(jaccard(so, shingles(t)) * 10)] += 1

    def lines(self):
        tot = sum(self.bins) or 1
        out = []
        for i, c in enumerate(self.bins):
            label = "1.0      " if i == 10 else "[%.1f,%.1f)" % (i / 10, (i + 1) / 10)
            out.append("  J %s %9d %5.1f%% %s" % (label, c, 100 * c / tot, "#" * round(50 * c / tot)))
        return out


def size_hist_lines(size_hist):
    edges = [1, 2, 3, 4, 5, 6, 11, 21, 51, 101, 201, 501, 1001, 2001, 10**9]
    tot_f = sum(size_hist.values()) or 1
    tot_d = sum(s * c for s, c in size_hist.items()) or 1
    out = ["  size        families      %      docs      %"]
    for lo, hi in zip(edges, edges[1:]):
        fc = sum(c for s, c in size_hist.items() if lo <= s < hi)
        dc = sum(s * c for s, c in size_hist.items() if lo <= s < hi)
        if not fc:
            continue
        label = str(lo) if hi == lo + 1 else "%d-%d" % (lo, hi - 1) if hi < 10**9 else "%d+" % lo
        out.append("  %-9s %10d %6.2f %9d %6.2f" % (label, fc, 100 * fc / tot_f, dc, 100 * dc / tot_d))
    return out

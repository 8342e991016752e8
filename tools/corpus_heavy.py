"""Heavy families for scale_corpus.py (issue 23): a per-family mixture of
near-exact and heavily edited copies, and templated families (boilerplate
pages, product descriptions, mirror sites) whose members share one long
boilerplate text across many seeds, so that buckets of tens of thousands of
documents appear. Deterministic: every choice comes from the family's own
random stream."""

# Boilerplate sentences templates are made of. "{name}" is the seed's package
# name. A template is a start, the family member's text, then some of these.
_BOILER = [
    "Free shipping on all orders over $50 and easy returns within 30 days.",
    "Buy {name} online at the best price, in stock and ready to ship today.",
    "Sign up for our newsletter to get the latest deals and product news.",
    "All trademarks are the property of their respective owners.",
    "This page is a mirror of the original project page and may be out of date.",
    "Customers who bought this item also bought similar products from our store.",
    "Please enable JavaScript and cookies to continue using this website.",
    "We use cookies to improve your experience; by continuing you accept our policy.",
    "Copyright (c) 2024 Example Mirror Network. All rights reserved.",
    "Questions? Contact our support team around the clock by mail or chat.",
    "Documentation, downloads and release notes are available on the project site.",
    "Rated 4.5 out of 5 stars by verified buyers; read all reviews below.",
    "Compare prices from hundreds of shops and save up to 40 percent.",
    "Last updated by the mirror bot; the upstream repository is authoritative.",
    "Add to cart, add to wish list, or share this product with a friend.",
    "Install it with your package manager of choice or download the archive.",
]
_START = [
    "{name} | Product details: ",
    "Mirror of {name}: ",
    "Package {name} - ",
    "Home > Software > {name} > ",
    "Download {name}. ",
    "{name} (official mirror). ",
]


def build_templates(count, rng):
    """`count` templates: (start, end) strings with "{name}" slots. Template k
    has 8 - k mod 8 boilerplate sentences after the text, so the boilerplate
    ranges from ~600 characters (the most used templates: members of
    different seeds near Jaccard 0.8, the hardest case for verification)
    down to ~70 (Jaccard ~0.3)."""
    out = []
    for k in range(count):
        start = _START[int(rng.random() * len(_START))]
        pool = list(_BOILER)
        rng.shuffle(pool)
        out.append((start, " " + " ".join(pool[:8 - k % 8])))
    return out


class Heavy:
    """Per-family choices of the heavy corpus.

    - Edit-rate mixture: each family draws a near-exact share q ~ U(light);
      each copy is then near-exact (rate ~ U(0, 0.03): mostly one typo,
      punctuation or case change) with probability q, else edited at the
      --edit-rate range (heavy edits at its top).
    - Templates: a family of size >= 2 is templated with probability
      `template_share`; its members (original and copies) are wrapped in
      template t, chosen skewed (t = floor(u^2 * count)), so the first
      templates gather tens of thousands of documents at 10 M.
    """

    LIGHT_HI = 0.03

    def __init__(self, light, template_share, templates):
        self.light_lo, self.light_span = light[0], light[1] - light[0]
        self.template_share = template_share
        self.templates = templates

    def family(self, size, rnd):
        """(near-exact share, template or None) of one family. Draws nothing
        when both are off, so the plain corpus of earlier versions stays
        byte for byte the same."""
        q = 0.0
        if self.light_lo or self.light_span:
            q = self.light_lo + self.light_span * rnd()
        tmpl = None
        if size >= 2 and self.template_share and rnd() < self.template_share:
            u = rnd()
            tmpl = self.templates[int(u * u * len(self.templates))]
        return q, tmpl

    def rate(self, q, rnd):
        """An edit rate for one copy, or None for the --edit-rate range."""
        if q and rnd() < q:
            return self.LIGHT_HI * rnd()
        return None


def wrap(tmpl, name, text):
    """text inside template tmpl (a (start, end) pair) for package `name`."""
    start, end = tmpl
    return start.replace("{name}", name) + text + end.replace("{name}", name)

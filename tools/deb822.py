"""deb822 (Debian control file) parsing for debian_corpus.py: stanzas and
unfolded Description fields."""


def iter_stanzas(lines, wanted=None):
    """Yield one dict per deb822 stanza from an iterable of text lines.

    Keys are lower-cased field names; values are the raw field value: the
    text after "Field:" on the first line (leading whitespace stripped), then
    each continuation line verbatim (with its leading space), joined with
    "\\n". If ``wanted`` is a set of lower-case names, only those fields are
    kept (saves memory and time on the ~50 MB dumpavail output).
    """
    stanza = {}
    cur = None  # key of the field being continued, None if not kept
    in_field = False
    for line in lines:
        line = line.rstrip("\r\n")
        if not line.strip():
            if stanza:
                yield stanza
            stanza = {}
            cur = None
            in_field = False
            continue
        if line[0] in " \t":
            # continuation of the previous field
            if in_field and cur is not None:
                stanza[cur] += "\n" + line
            continue
        name, sep, value = line.partition(":")
        if not sep:
            # malformed line; ignore it rather than abort the whole corpus
            cur = None
            in_field = False
            continue
        in_field = True
        key = name.strip().lower()
        if wanted is not None and key not in wanted:
            cur = None
            continue
        cur = key
        stanza[key] = value.strip()
    if stanza:
        yield stanza


def unfold_description(raw):
    """Undo the control-file continuation syntax of a Description value.

    First line = synopsis. For each continuation line the single leading
    space is removed and a line consisting of " ." becomes an empty line.
    Lines are joined with "\\n". Other leading whitespace (verbatim lines
    start with two spaces) is kept after removing the first space.
    """
    lines = raw.split("\n")
    out = [lines[0].strip()]
    for line in lines[1:]:
        if line[:1] in (" ", "\t"):
            line = line[1:]
        if line.rstrip() == ".":
            line = ""
        out.append(line)
    return "\n".join(out)

"""Every capability the CLI documents has a Python call (issue 22).

The test reads the synopsis at the top of ``docs/cli.md`` (every command
and flag, as ``lshdb --help`` prints them) and looks each one up below: a
command maps to the Python calls that do its job, a flag to the Python
parameter that does what it does, or to ``CLI`` with the reason it is the
command line's own (an output format, an input file format). A command or
flag missing from these tables fails the test, as does a Python call or
parameter that does not exist.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Dict, List

import lshdb

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"

#: What a flag that belongs to the command line alone says.
CLI = "cli: "
JSON = CLI + "output format; Python returns values"
RECORDS = CLI + "record and file formats of the input; Python takes texts, keys and columns"
OUTPUT = CLI + "output files; Python returns the values to write where one likes"
DEFAULT_PRIORITY = CLI + "a record without the field; Python gives each document's priority (None: 0)"

#: Each command: the Python calls that do its job.
COMMANDS: Dict[str, List[str]] = {
    "scan": ["Database.open(create=)", "Database.insert_many", "Database.remove", "Database.groups"],
    "dedup": ["Database.insert_unique_many", "Database.open(create=)"],
    "create": ["Database.create", "Database.open(create=)"],
    "add": ["Database.insert", "Database.insert_many", "Database.insert_items"],
    "query": ["Database.query", "Database.query_many"],
    "pairs": ["Database.pairs"],
    "groups": ["Database.groups"],
    "clusters": ["Database.clusters", "Database.members"],
    "similarity": ["Database.similarity"],
    "get": ["Database.get", "Database.cluster_of"],
    "remove": ["Database.remove"],
    "expire": ["Database.expire"],
    "stats": ["Database.stats"],
    "check": ["Database.check"],
    "compact": ["Database.compact"],
    "rebuild": ["Database.rebuild"],
    "export": ["Database.documents"],
    "import": ["Database.insert_many(shingles=)"],
    "tune": ["Sketcher(threshold=)", "Sketcher.bands", "Sketcher.rows"],
    "inspect": ["Sketcher.shingles", "Sketcher.signatures", "Sketcher.band_keys"],
}

#: Each command's flags: the Python parameter, or CLI and why.
FLAGS: Dict[str, Dict[str, str]] = {
    "scan": {
        "--db": "Database.open(create=)",
        "--threshold": "Database.open(threshold=)",
        "--json": JSON,
        "--adopt": CLI + "the folder state of a scan (which files changed) is the CLI's job",
        "--allow-removals": CLI + "the folder state of a scan (which files changed) is the CLI's job",
    },
    "dedup": {
        "--db": "Database.open(create=)",
        "--threshold": "Database.insert_unique_many(threshold=)",
        "--out": OUTPUT,
        "--dropped": OUTPUT,
        "--clusters": OUTPUT,
        "--keep": CLI + "Python keeps the first of each cluster in input order, as insert_unique_many decides",
        "--text-field": RECORDS,
        "--id-field": RECORDS,
        "--window": "Database.expire(older_than=)",
        "--time-field": "Database.insert(timestamp=)",
        "--priority-field": "Database.insert_unique(priority=)",
        "--default-priority": DEFAULT_PRIORITY,
        "--memory": "Database.insert_unique_many(memory=)",
        "--json": JSON,
    },
    "create": {
        "--threshold": "Database.create(threshold=)",
        "--num-perm": "Database.create(num_perm=)",
        "--bands": "Database.create(bands=)",
        "--rows": "Database.create(rows=)",
        "--shingle": "Database.create(shingle=)",
        "--simhash": "Database.create(simhash=)",
        "--store-text": "Database.create(store_text=)",
        "--containment": "Database.create(containment=)",
        "--clusters": "Database.create(clusters=)",
        "--representative": "Database.create(clusters=)",
        "--timestamps": "Database.create(timestamps=)",
        "--json": JSON,
    },
    "add": {
        "--jsonl": RECORDS,
        "--text-stdin": RECORDS,
        "--key": "Database.insert(key=)",
        "--key-field": RECORDS,
        "--text-field": RECORDS,
        "--format": RECORDS,
        "--batch": "Database.insert_many(batch=)",
        "--unique": "Database.insert_unique_many(threshold=)",
        "--strict": CLI + "Python reports rejected documents in the result instead",
        "--time-field": "Database.insert_many(timestamps=)",
        "--priority-field": "Database.insert_many(priorities=)",
        "--default-priority": DEFAULT_PRIORITY,
        "--json": JSON,
    },
    "query": {
        "--text": "Database.query(text=)",
        "--file": RECORDS,
        "--key": "Database.query(key=)",
        "--jsonl": "Database.query_many(texts=)",
        "--key-field": RECORDS,
        "--text-field": RECORDS,
        "--format": RECORDS,
        "--threshold": "Database.query(threshold=)",
        "--limit": "Database.query(limit=)",
        "--top": "Database.query(top=)",
        "--simhash": "Database.simhash_search(max_distance=)",
        "--containment": "Database.query(containment=)",
        "--exhaustive": "Database.query(exhaustive=)",
        "--max-bucket": "Database.query(max_bucket=)",
        "--explain": "Database.query(explain=)",
        "--json": JSON,
        "--allow-empty": CLI + "Python raises InvalidInput for an empty text; query_many answers []",
    },
    "pairs": {"--threshold": "Database.pairs(threshold=)", "--json": JSON, "--exact": "Database.exact_pairs(threshold=)"},
    "groups": {"--threshold": "Database.groups(threshold=)", "--json": JSON},
    "clusters": {
        "--min-size": CLI + "Python streams every cluster with its size, to filter as one likes",
        "--json": JSON,
        "--documents": "Database.document_clusters",
    },
    "similarity": {"--json": JSON},
    "get": {"--json": JSON},
    "remove": {"--json": JSON},
    "expire": {
        "--older-than": "Database.expire(older_than=)",
        "--batch": "Database.expire(batch=)",
        "--json": JSON,
    },
    "stats": {"--deep": "Database.stats(deep=)", "--json": JSON},
    "check": {"--json": JSON},
    "compact": {"--json": JSON},
    "rebuild": {
        "--threshold": "Database.rebuild(threshold=)",
        "--bands": "Database.rebuild(bands=)",
        "--rows": "Database.rebuild(rows=)",
        "--containment": "Database.rebuild(containment=)",
        "--no-containment": "Database.rebuild(containment=)",
        "--clusters": "Database.rebuild(clusters=)",
        "--representative": "Database.rebuild(clusters=)",
        "--no-clusters": "Database.rebuild(clusters=)",
        "--timestamps": "Database.rebuild(timestamps=)",
        "--no-timestamps": "Database.rebuild(timestamps=)",
        "--json": JSON,
    },
    "export": {
        "--out": OUTPUT,
        "--salvage": CLI + "rescuing what a damaged file still holds is an admin job (docs/reliability.md)",
    },
    "import": {
        "--in": RECORDS,
        "--batch": "Database.insert_many(batch=)",
        "--unchecked-shingles": "Database.insert_many(shingles=)",
        "--time-field": "Database.insert_many(timestamps=)",
        "--priority-field": "Database.insert_many(priorities=)",
        "--default-priority": DEFAULT_PRIORITY,
        "--json": JSON,
    },
    "tune": {
        "--threshold": "Sketcher(threshold=)",
        "--num-perm": "Sketcher(num_perm=)",
        "--fp-weight": CLI + "exploring other error weights is the CLI's; Python's Sketcher tunes with the defaults",
        "--fn-weight": CLI + "exploring other error weights is the CLI's; Python's Sketcher tunes with the defaults",
    },
    "inspect": {
        "--text": "Sketcher.shingles(texts=)",
        "--shingle": "Sketcher(shingle=)",
        "--num-perm": "Sketcher(num_perm=)",
        "--threshold": "Sketcher(threshold=)",
    },
}


def synopsis() -> Dict[str, List[str]]:
    """The commands of docs/cli.md's opening synopsis, with their flags."""
    block = DOCS.read_text(encoding="utf-8").split("```", 2)[1]
    out: Dict[str, List[str]] = {}
    command = ""
    for line in block.splitlines():
        if line.startswith("lshdb "):
            command = line.split()[1]
            out[command] = []
        if command:
            out[command] += [f for f in re.findall(r"--[a-z][a-z-]*", line) if f not in out[command]]
    return out


def resolves(spec: str) -> bool:
    """Whether ``Class.method(param=)`` (or ``Class(param=)``, or without
    a parameter) names a real call of the package."""
    match = re.fullmatch(r"(\w+)(?:\.(\w+))?(?:\((\w+)=\))?", spec)
    assert match, spec
    cls, method, param = match.groups()
    target = getattr(lshdb, cls)
    if method is not None:
        if not hasattr(target, method):
            return False
        target = getattr(target, method)
    if param is None:
        return True
    if isinstance(target, property):
        return False
    return param in inspect.signature(target).parameters


def test_the_synopsis_is_read() -> None:
    commands = synopsis()
    assert len(commands) >= 17 and "--top" in commands["query"] and "--containment" in commands["rebuild"]


def test_every_cli_command_and_flag_has_a_python_call_or_a_reason() -> None:
    missing = []
    for command, flags in synopsis().items():
        if command not in COMMANDS:
            missing.append(command)
            continue
        missing += [f"{command} {flag}" for flag in flags if flag not in FLAGS.get(command, {})]
    assert not missing, f"CLI capabilities without a Python call (map them above): {missing}"


def test_every_mapped_python_call_exists() -> None:
    specs = [s for calls in COMMANDS.values() for s in calls]
    specs += [s for flags in FLAGS.values() for s in flags.values() if not s.startswith(CLI)]
    broken = [s for s in specs if not resolves(s)]
    assert not broken, f"mapped to Python calls that do not exist: {broken}"


def test_the_tables_name_only_documented_commands_and_flags() -> None:
    commands = synopsis()
    assert set(COMMANDS) == set(commands)
    stale = [f"{c} {f}" for c, flags in FLAGS.items() for f in flags if f not in commands.get(c, [])]
    assert not stale, f"flags the CLI no longer documents: {stale}"

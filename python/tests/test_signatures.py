"""The wrappers' signatures against the native module's stubs.

A public method's parameters are written in the Rust module (its
``#[pyo3(signature)]``), in ``lshdb/_lshdb.pyi`` (which stubtest checks
against the built module) and in the Python wrapper that checks types and
wraps results. This test makes the stub the reference for the wrappers:
every wrapper method with a native namesake takes the same parameters, in
the same order, of the same kind, with the same defaults, apart from the
differences listed (with their reason) below; and every native method is
wrapped or listed as used internally. So a parameter changed in Rust fails
stubtest until the stub follows, then this test until the wrapper does.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

import pytest

import lshdb

STUB = Path(__file__).resolve().parents[1] / "lshdb" / "_lshdb.pyi"

#: What differs on purpose: "kind" (only the kind differs) or "all" (the
#: parameter is left out of the comparison), per wrapper method.
DIFFERS: Dict[str, Dict[str, str]] = {
    # Optional and positional in Python (None: the index threshold); the
    # wrapper resolves it, so natively it is a required keyword.
    # A prioritised insert_unique is natively its own method
    # (insert_unique_document).
    "Database.insert_unique": {"threshold": "all", "priority": "all"},
    "Database.insert_unique_many": {"threshold": "all"},
    # Containment search is a mode of `query`, natively its own method
    # (query_containment: other hits, other explain record).
    "Database.query": {"containment": "all", "exhaustive": "all"},
    # A stamped insert is natively its own method (insert_at), and so is
    # one with a priority (insert_document).
    "Database.insert": {"timestamp": "all", "priority": "all"},
    # `arrow` converts the result in Python; `parallel` is keyword-only there.
    "Sketcher.shingles": {"arrow": "all", "parallel": "kind"},
    "Sketcher.signatures": {"parallel": "kind"},
    "Sketcher.band_keys": {"parallel": "kind"},
    "Sketcher.simhash": {"parallel": "kind"},
}

#: Native methods no wrapper method of the same name forwards to: called
#: by wrappers of other names (insert_many, Batch, Labels, __contains__,
#: __len__, Sketcher.jaccard, insert with a timestamp or a priority,
#: insert_unique with a priority) or by the wrapper's construction.
INTERNAL: Dict[str, Set[str]] = {
    "Database": {
        "insert_columns",
        "insert_pairs",
        "insert_item_columns",
        "insert_shingle_columns",
        "query_containment",
        "apply_batch",
        "contains",
        "len",
        "get_label",
        "set_label",
        "query_place",
        "insert_at",
        "insert_document",
        "insert_unique_document",
        "insert_carried_columns",
    },
    "Sketcher": {"jaccard_texts"},
}

Param = Tuple[str, str, Any]  # name, kind, default (inspect.Parameter.empty when none)
POSITIONAL, KEYWORD = "positional", "keyword-only"


def _stub_classes() -> Dict[str, Dict[str, ast.FunctionDef]]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    out: Dict[str, Dict[str, ast.FunctionDef]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
    return out


def _is_property(f: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in f.decorator_list)


def _stub_params(f: ast.FunctionDef) -> List[Param]:
    a = f.args
    positional = a.posonlyargs + a.args
    defaults: List[Any] = [inspect.Parameter.empty] * (len(positional) - len(a.defaults))
    defaults += [ast.literal_eval(d) for d in a.defaults]
    out = [(p.arg, POSITIONAL, d) for p, d in zip(positional, defaults)]
    out += [
        (p.arg, KEYWORD, inspect.Parameter.empty if d is None else ast.literal_eval(d))
        for p, d in zip(a.kwonlyargs, a.kw_defaults)
    ]
    return [p for p in out if p[0] not in ("self", "cls")]


def _wrapper_params(f: Any) -> List[Param]:
    out = []
    for p in inspect.signature(f).parameters.values():
        if p.name in ("self", "cls"):
            continue
        kind = KEYWORD if p.kind is inspect.Parameter.KEYWORD_ONLY else POSITIONAL
        out.append((p.name, kind, p.default))
    return out


def _compared(params: List[Param], differs: Dict[str, str]) -> List[Param]:
    out = []
    for name, kind, default in params:
        how = differs.get(name)
        if how == "all":
            continue
        out.append((name, "" if how == "kind" else kind, default))
    return out


def _defines(cls: type, name: str) -> bool:
    """Whether ``cls`` or one of its own bases (``Database``'s area
    mixins) defines ``name``; ``object``'s methods do not count."""
    return any(name in vars(base) for base in cls.__mro__ if base is not object)


def _pairs() -> List[Tuple[str, Any, ast.FunctionDef]]:
    """(``Class.method``, wrapper function, stub function) of every
    wrapper method with a native namesake."""
    stubs = _stub_classes()
    out = []
    for cls in (lshdb.Database, lshdb.Sketcher):
        native = stubs[cls.__name__]
        for name, stub in native.items():
            if _is_property(stub) or name.startswith("__") and name != "__new__":
                continue
            wrapper_name = "__init__" if name == "__new__" else name
            if _defines(cls, wrapper_name):
                out.append((f"{cls.__name__}.{name}", getattr(cls, wrapper_name), stub))
    return out


@pytest.mark.parametrize("name,wrapper,stub", _pairs(), ids=[p[0] for p in _pairs()])
def test_a_wrapper_takes_the_native_methods_parameters(name: str, wrapper: Any, stub: ast.FunctionDef) -> None:
    differs = DIFFERS.get(name, {})
    want = _compared(_stub_params(stub), differs)
    got = _compared(_wrapper_params(wrapper), differs)
    assert got == want, f"{name}: the wrapper's parameters differ from _lshdb.pyi's (or list why in DIFFERS)"


def test_every_native_method_is_wrapped_or_listed() -> None:
    stubs = _stub_classes()
    wrapped = {name.split(".")[1] for name, _, _ in _pairs()}
    assert len(wrapped) >= 20  # the pairing finds the methods at all
    for cls in (lshdb.Database, lshdb.Sketcher):
        native = stubs[cls.__name__]
        methods = {n for n, f in native.items() if not _is_property(f) and not n.startswith("__")}
        missing = methods - wrapped - INTERNAL[cls.__name__]
        assert not missing, f"{cls.__name__}: native methods neither wrapped nor listed in INTERNAL: {sorted(missing)}"
        assert INTERNAL[cls.__name__] <= methods, "INTERNAL names a method the stub no longer has"
        properties = {n for n, f in native.items() if _is_property(f)}
        assert all(isinstance(inspect.getattr_static(cls, p, None), property) for p in properties), cls.__name__


def test_the_listed_differences_still_differ() -> None:
    """An entry of DIFFERS whose parameter now matches is stale."""
    pairs = {name: (wrapper, stub) for name, wrapper, stub in _pairs()}
    for name, differs in DIFFERS.items():
        wrapper, stub = pairs[name]
        native = {p[0]: p for p in _stub_params(stub)}
        python = {p[0]: p for p in _wrapper_params(wrapper)}
        for param in differs:
            assert native.get(param) != python.get(param), f"{name}: `{param}` no longer differs; drop it from DIFFERS"

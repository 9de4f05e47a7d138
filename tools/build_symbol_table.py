"""Build ``codemods/data/trl_symbols.json``, the import table behind rule TRL101.

Downloads TRL wheels (cached in ``.wheels/``), reads their sources with ``ast`` (trl is never
imported), and maps every public import path that TRL 1.13.0 moved or removed to its fate.
Hand-curated corrections live in ``tools/symbol_overrides.json``.  See ``tools/README.md``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".wheels"
OUTPUT = ROOT / "codemods" / "data" / "trl_symbols.json"
OVERRIDES = ROOT / "tools" / "symbol_overrides.json"
TARGET = "1.13.0"
OLDEST_MINOR = (0, 4)
NEWEST_MINOR = (1, 12)
FATES = ("moved", "removed", "ppo", "value_head")

# TRL102 rewrites these wherever they came from.
VALUE_HEAD_NAMES = frozenset(
    {
        "AutoModelForCausalLMWithValueHead",
        "AutoModelForSeq2SeqLMWithValueHead",
        "PreTrainedModelWrapper",
        "ValueHead",
        "SUPPORTED_ARCHITECTURES",
    }
)
PPO_NAMES = frozenset({"PPOTrainer", "PPOConfig", "PPOv2Trainer", "PPOv2Config"})
# Modules whose classes only make sense with PPO (the PPO rewrite rule owns them).
PPO_MODULE = re.compile(r"(^trl\.experimental\.ppo(\.|$))|(\.ppo(v2)?_(trainer|config)$)")
# Private modules, tests, CLI entry points and the pre-0.13 example scripts (`trl.commands.scripts`)
# are not library API.  `trl.trainer.xxx` is a stray test script the 0.13.0 wheel shipped by
# accident.  Other scripts (a `__main__` guard plus a PEP 723 header or `main`/`make_parser`, e.g.
# `trl.scripts.sft`, `trl.experimental.gold.gold`) are dropped in `scan_module`, so library modules
# such as `trl.scripts.utils` and `trl.commands.cli_utils` (TrlParser & co.) stay.
SKIPPED_MODULE = re.compile(
    r"(^|\.)(_[^.]*|tests?|cli)(\.|$)|^trl\.commands\.scripts(\.|$)|^trl\.trainer\.xxx$"
)
SCRIPT_ENTRY_POINTS = frozenset({"main", "make_parser"})
# Public-looking bindings that are never API.
NOISE_NAMES = frozenset({"logger", "TYPE_CHECKING"})
FORWARDING = frozenset({"class (self, *args, **kwargs)", "def (*args, **kwargs)"})


@dataclass
class ModuleScan:
    """What one module of one wheel makes importable."""

    exports: dict[str, str] = field(default_factory=dict)  # public API name -> kind
    bound: set[str] = field(default_factory=set)  # every name `from module import x` finds
    # defined class/function/value -> fingerprint, for --review
    signatures: dict[str, str] = field(default_factory=dict)
    lazy: dict[str, str] = field(default_factory=dict)  # lazily exported name -> submodule key


Scan = dict[str, ModuleScan]  # module dotted name -> scan
Overrides = dict[str, dict[str, object]]
Table = dict[str, Any]  # the trl_symbols.json document


# --------------------------------------------------------------------------- versions and wheels


def available_versions() -> list[str]:
    """Ask pip which trl versions the index has."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "trl"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    match = re.search(r"Available versions:\s*(.+)", out)
    if match is None:
        raise ValueError(f"cannot parse `pip index versions trl` output: {out!r}")
    return [v.strip() for v in match.group(1).split(",")]


def pick_versions(available: Iterable[str]) -> list[str]:
    """First and latest final patch of every minor in range, plus the target.

    The latest patch is what users pin; the first patch makes ``gone_in`` exact to the minor.
    """
    by_minor: dict[tuple[int, int], list[Version]] = {}
    for raw in available:
        v = Version(raw)
        if (
            not v.is_prerelease
            and not v.is_devrelease
            and OLDEST_MINOR <= v.release[:2] <= NEWEST_MINOR
        ):
            by_minor.setdefault((v.major, v.minor), []).append(v)
    picked = {TARGET}
    for patches in by_minor.values():
        picked.update({str(min(patches)), str(max(patches))})
    return sorted(picked, key=Version)


def fetch_wheel(version: str) -> Path:
    """Return the cached wheel of ``trl==version``, downloading it with pip if needed."""
    CACHE.mkdir(exist_ok=True)
    cached = sorted(CACHE.glob(f"trl-{version}-*.whl"))
    if not cached:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                f"trl=={version}",
                "-d",
                str(CACHE),
            ],
            check=True,
        )
        cached = sorted(CACHE.glob(f"trl-{version}-*.whl"))
    if not cached:
        raise ValueError(f"pip downloaded no wheel for trl=={version}")
    return cached[0]


# --------------------------------------------------------------------------- reading one wheel


def module_name(path: str) -> str | None:
    """``trl/models/utils.py`` -> ``trl.models.utils``; None for files that are not library
    modules."""
    if not path.startswith("trl/") or not path.endswith(".py"):
        return None
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    name = ".".join(parts)
    return None if SKIPPED_MODULE.search(name) else name


def is_main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":``"""
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements executed at import time, descending into if/try/with blocks but not defs."""
    for node in body:
        yield node
        if is_main_guard(node):
            continue
        if isinstance(node, ast.If):
            yield from top_level(node.body)
            yield from top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from top_level(block)
        elif isinstance(node, ast.With):
            yield from top_level(node.body)


def strings(node: ast.AST | None) -> list[str]:
    """String constants of a list/tuple/set literal (or a single string)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [s for elt in node.elts for s in strings(elt)]
    return []


def dict_entries(node: ast.AST | None) -> list[tuple[str, str]]:
    """(submodule, name) pairs of an ``_import_structure``-style dict literal."""
    if not isinstance(node, ast.Dict):
        return []
    return [
        (key.value, name)
        for key, value in zip(node.keys, node.values)
        if isinstance(key, ast.Constant) and isinstance(key.value, str)
        for name in strings(value)
    ]


def target_names(target: ast.expr) -> list[str]:
    """Names bound by an assignment target."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in target_names(elt)]
    return []


def subscript_owner(node: ast.expr) -> str | None:
    """``_import_structure["x"]`` -> ``_import_structure``; a bare name -> that name."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def subscript_key(node: ast.expr) -> str:
    """``_import_structure["x"]`` -> ``"x"``; anything else -> ``""``."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    return ""


def listed_entries(stmt: ast.stmt, owner: str) -> list[tuple[str, str]]:
    """(key, name) pairs ``stmt`` adds to the container ``owner`` (key ``""`` for ``__all__``)."""
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            if subscript_owner(target) == owner:
                if isinstance(target, ast.Name) and isinstance(stmt.value, ast.Dict):
                    return dict_entries(stmt.value)
                return [(subscript_key(target), n) for n in strings(stmt.value)]
    if isinstance(stmt, ast.AugAssign) and subscript_owner(stmt.target) == owner:
        return [(subscript_key(stmt.target), n) for n in strings(stmt.value)]
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.value.args:
        func, arg = stmt.value.func, stmt.value.args[0]
        if isinstance(func, ast.Attribute) and subscript_owner(func.value) == owner:
            if func.attr == "update":
                return dict_entries(arg)
            return [(subscript_key(func.value), n) for n in strings(arg)]
    return []


def is_library_import(node: ast.ImportFrom) -> bool:
    """Relative or ``trl.`` imports: what a package ``__init__`` re-exports on purpose."""
    return node.level > 0 or (node.module or "").split(".")[0] == "trl"


def is_script(tree: ast.Module, source: str) -> bool:
    """A runnable script: a ``__main__`` guard plus a PEP 723 header or a ``main``/``make_parser``.

    ``trl.generation.vllm_client`` has a ``__main__`` demo but neither, so it stays a library
    module.
    """
    if not any(is_main_guard(n) for n in tree.body):
        return False
    defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return "# /// script" in source or bool(defs & SCRIPT_ENTRY_POINTS)


def param_names(args: ast.arguments) -> str:
    """``(a, b, *args, c, **kwargs)``: parameter names only, annotations and defaults dropped."""
    names = [a.arg for a in args.posonlyargs + args.args]
    names += [f"*{args.vararg.arg}"] if args.vararg else (["*"] if args.kwonlyargs else [])
    names += [a.arg for a in args.kwonlyargs]
    names += [f"**{args.kwarg.arg}"] if args.kwarg else []
    return f"({', '.join(names)})"


def signature(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Fingerprint used by ``--review``: a function's parameter names, a class's ``__init__``'s."""
    if not isinstance(node, ast.ClassDef):
        return f"def {param_names(node.args)}"
    init = next(
        (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None
    )
    return f"class {param_names(init.args) if init else '(inherited)'}"


@dataclass
class Bindings:
    """Top-level names of one module, by how they were bound."""

    defined: dict[str, str] = field(default_factory=dict)  # name -> class/function/value
    # `from .x import name` / `from trl.x import name`
    reexported: set[str] = field(default_factory=set)
    bound: set[str] = field(default_factory=set)
    lazy: dict[str, str] = field(default_factory=dict)  # `_import_structure`: name -> submodule
    listed: list[str] = field(default_factory=list)  # `__all__`
    has_all: bool = False  # an explicit `__all__`, even empty, limits what a package re-exports
    signatures: dict[str, str] = field(default_factory=dict)

    def add(self, stmt: ast.stmt) -> None:
        self.lazy.update({name: key for key, name in listed_entries(stmt, "_import_structure")})
        self.listed += [name for _, name in listed_entries(stmt, "__all__")]
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            self.defined[stmt.name] = "class" if isinstance(stmt, ast.ClassDef) else "function"
            self.signatures[stmt.name] = signature(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [n for t in targets for n in target_names(t)]
            self.has_all |= "__all__" in names and not isinstance(stmt, ast.AugAssign)
            self.defined.update({n: "value" for n in names})
            if stmt.value is not None:
                self.signatures.update({n: f"= {ast.unparse(stmt.value)}" for n in names})
        elif isinstance(stmt, ast.ImportFrom):
            imported = {a.asname or a.name for a in stmt.names if a.name != "*"}
            self.bound |= imported
            if is_library_import(stmt):
                self.reexported |= imported
        elif isinstance(stmt, ast.Import):
            self.bound |= {(a.asname or a.name).split(".")[0] for a in stmt.names}


def public_api(b: Bindings, *, is_package: bool) -> tuple[dict[str, str], set[str]]:
    """(exports, bound): what the module offers as API, and every name an import finds."""
    listed = {n: "reexport" for n in b.listed if n not in b.defined}
    if is_package and b.lazy:  # a _LazyModule replaces the module: only its structure is visible
        exports = {n: "reexport" for n in [*b.lazy, *b.listed]}
        bound = set(exports)
    elif is_package:
        reexported = set(b.listed) & b.reexported if b.has_all else b.reexported
        exports = {**{n: "reexport" for n in reexported}, **b.defined, **listed}
        bound = b.bound | set(b.defined)
    else:
        exports = {**b.defined, **listed}
        bound = b.bound | set(b.defined)
    public = {n: k for n, k in exports.items() if not n.startswith("_") and n not in NOISE_NAMES}
    return public, bound


def scan_module(source: str, *, is_package: bool) -> ModuleScan:
    """Public names of one module, from its source text; a script exports nothing."""
    tree = ast.parse(source)
    bindings = Bindings()
    for stmt in top_level(tree.body):
        bindings.add(stmt)
    exports, bound = public_api(bindings, is_package=is_package)
    if is_script(tree, source):  # still importable, but nothing in it is API
        return ModuleScan(bound=bound)
    return ModuleScan(
        exports=exports, bound=bound, signatures=bindings.signatures, lazy=bindings.lazy
    )


def scan_wheel(wheel: Path) -> Scan:
    """Scan every library module of a wheel; namespace packages count as (empty) modules."""
    scan: Scan = {}
    with zipfile.ZipFile(wheel) as zf:
        for path in sorted(zf.namelist()):
            name = module_name(path)
            if name is None:
                continue
            source = zf.read(path).decode("utf-8")
            try:
                scan[name] = scan_module(source, is_package=path.endswith("/__init__.py"))
            except SyntaxError as e:
                raise ValueError(f"{wheel.name}:{path} does not parse") from e
    for name in list(scan):
        parts = name.split(".")
        for i in range(1, len(parts)):
            scan.setdefault(".".join(parts[:i]), ModuleScan())
    drop_stale_lazy_names(scan)
    return scan


def drop_stale_lazy_names(scan: Scan) -> None:
    """Forget lazy exports whose submodule is gone or lacks the name: importing them raises.

    E.g. the 0.13.0 ``trl/trainer/__init__.py`` still lists ``PPOv2Trainer`` after the module was
    deleted.
    """
    for module, mscan in scan.items():
        for name, key in mscan.lazy.items():
            source = scan.get(f"{module}.{key}")
            if source is None or name not in source.bound:
                mscan.exports.pop(name, None)
                mscan.bound.discard(name)


# --------------------------------------------------------------------------- deciding fates


def span(versions: list[str], present: list[bool]) -> dict[str, object]:
    """``seen`` = [first, last] present version; ``gone_in`` = next scanned version, if any."""
    idx = [i for i, p in enumerate(present) if p]
    info: dict[str, object] = {"seen": [versions[idx[0]], versions[idx[-1]]]}
    if idx[-1] + 1 < len(versions):
        info["gone_in"] = versions[idx[-1] + 1]
    return info


def target_rank(module: str, *, is_package: bool) -> tuple[int, int, str]:
    """Sort key for a 1.13 home: ``trl`` first, then package exports, then defining modules."""
    if module == "trl":
        return (0, 0, module)
    return (1 if is_package else 2, module.count("."), module)


def package_modules(scan: Scan) -> set[str]:
    """Modules of ``scan`` that have submodules (i.e. packages)."""
    return {m.rsplit(".", 1)[0] for m in scan if "." in m}


def homes(target: Scan) -> dict[str, str]:
    """Best public 1.13 path of every name, by ``target_rank``."""
    packages = package_modules(target)
    best: dict[str, tuple[tuple[int, int, str], str]] = {}
    for module, scan in target.items():
        rank = target_rank(module, is_package=module in packages)
        for name in scan.exports:
            if name not in best or rank < best[name][0]:
                best[name] = (rank, f"{module}.{name}")
    return {name: path for name, (_, path) in best.items()}


def still_importable(target: Scan, module: str, name: str) -> bool:
    """``from module import name`` works in the target (name bound, or a submodule)."""
    return module in target and (name in target[module].bound or f"{module}.{name}" in target)


def decide(module: str, name: str, kind: str, home: str | None) -> dict[str, object]:
    """Fate of an old path that no longer imports in the target."""
    if name in VALUE_HEAD_NAMES:
        return {"fate": "value_head"}
    if name in PPO_NAMES or (PPO_MODULE.search(module) and kind == "class" and home is None):
        return {"fate": "ppo"}
    if home is not None:
        return {"fate": "moved", "to": home}
    return {"fate": "removed"}


def build_symbols(versions: list[str], scans: list[Scan]) -> dict[str, dict[str, object]]:
    """Every (module, name) exported by an old version and not importable in the target."""
    target = scans[-1]
    best = homes(target)
    kinds: dict[tuple[str, str], str] = {}
    for scan in scans[:-1]:
        for module, mscan in scan.items():
            for name, kind in mscan.exports.items():
                if kinds.get((module, name), "reexport") == "reexport":  # prefer a defining kind
                    kinds[(module, name)] = kind
    symbols: dict[str, dict[str, object]] = {}
    for (module, name), kind in sorted(kinds.items()):
        if still_importable(target, module, name):
            continue
        present = [module in s and name in s[module].exports for s in scans]
        symbols[f"{module}.{name}"] = {
            **decide(module, name, kind, best.get(name)),
            **span(versions, present),
        }
    return symbols


def build_modules(versions: list[str], scans: list[Scan]) -> dict[str, dict[str, object]]:
    """Modules importable in some scanned version but not in the target."""
    gone = sorted({m for s in scans[:-1] for m in s} - set(scans[-1]))
    return {m: span(versions, [m in s for s in scans]) for m in gone}


# --------------------------------------------------------------------------- overrides and output


def check_override(key: str, entry: dict[str, object], *, by_name: bool) -> None:
    """An override must cite evidence; a fate needs a valid value, ``moved`` a target."""
    if not entry.get("why"):
        raise ValueError(f"override {key} has no 'why' citation")
    if "fate" not in entry and not by_name:
        raise ValueError(f"override {key} has no 'fate'")
    if "fate" in entry and entry["fate"] not in FATES:
        raise ValueError(f"override {key} has fate {entry['fate']!r}, expected one of {FATES}")
    if entry.get("fate") == "moved" and not entry.get("to"):
        raise ValueError(f"override {key} is 'moved' without 'to'")


def load_overrides(path: Path = OVERRIDES) -> tuple[Overrides, Overrides]:
    """(by dotted path, by bare name): hand-curated entries, each citing its evidence in ``why``.

    ``names`` entries apply to every generated path of that name; ``symbols`` entries apply to one
    path and may add paths the generator skips (still importable, but deprecated).
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    symbols: Overrides = data.get("symbols", {})
    names: Overrides = data.get("names", {})
    for key, entry in symbols.items():
        check_override(key, entry, by_name=False)
    for key, entry in names.items():
        check_override(key, entry, by_name=True)
    return symbols, names


def merge(base: dict[str, object], entry: dict[str, object]) -> None:
    """Overlay ``entry`` on ``base``; a fate other than ``moved`` drops a generated ``to``."""
    if entry.get("fate", base.get("fate")) != "moved":
        base.pop("to", None)
    base.update(entry)


def apply_overrides(
    symbols: dict[str, dict[str, object]],
    overrides: tuple[Overrides, Overrides],
    *,
    versions: list[str],
    scans: list[Scan],
) -> None:
    """Merge name overrides, then path overrides; new paths get their ``seen`` span from the
    scans."""
    by_path, by_name = overrides
    for key, base in symbols.items():
        if key.rsplit(".", 1)[1] in by_name:
            merge(base, by_name[key.rsplit(".", 1)[1]])
    for key, entry in by_path.items():
        if key not in symbols:
            module, name = key.rsplit(".", 1)
            present = [module in s and name in s[module].exports for s in scans]
            if not any(present):
                raise ValueError(f"override {key} names a path no scanned version exports")
            symbols[key] = span(versions, present)
        merge(symbols[key], entry)


def review(symbols: dict[str, dict[str, object]], scans: list[Scan]) -> Iterator[str]:
    """Generated ``moved`` entries whose last old definition differs from every 1.13 one.

    These are the name-collision suspects to confirm or override by hand.
    """
    for key, entry in sorted(symbols.items()):
        if entry["fate"] != "moved" or "why" in entry:
            continue
        module, name = key.rsplit(".", 1)
        old = [
            s[module].signatures[name]
            for s in scans[:-1]
            if name in s.get(module, ModuleScan()).signatures
        ]
        # Skip the 0.26-0.28 deprecation shims that only forward to the new class.
        old = [sig for sig in old if sig not in FORWARDING]
        new = {m.signatures[name] for m in scans[-1].values() if name in m.signatures}
        if old and old[-1] not in new:
            yield f"{key} -> {entry['to']}: {name}{old[-1]} vs {sorted(new)}"


def render(table: Table) -> str:
    """One symbol or module per line: stable, diff-friendly JSON."""
    lines = ["{"]
    head = [(k, table[k]) for k in ("schema", "target", "generated_by", "scanned")]
    lines += [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head]
    for section in ("modules", "symbols"):
        entries: dict[str, object] = table[section]
        body = [
            f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
            for k, v in sorted(entries.items())
        ]
        end = "," if section == "modules" else ""
        lines += [f" {json.dumps(section)}: {{", ",\n".join(body), f" }}{end}"]
    return "\n".join(lines + ["}"]) + "\n"


def build_table(
    versions: list[str], scans: list[Scan], overrides: tuple[Overrides, Overrides]
) -> Table:
    """The whole ``trl_symbols.json`` document."""
    symbols = build_symbols(versions, scans)
    apply_overrides(symbols, overrides, versions=versions, scans=scans)
    return {
        "schema": 1,
        "target": TARGET,
        "generated_by": "tools/build_symbol_table.py",
        "scanned": versions,
        "modules": build_modules(versions, scans),
        "symbols": symbols,
    }


def summary(table: Table) -> str:
    """``59 versions, 84 modules gone, symbols {'moved': ..., ...}``"""
    counts = {f: sum(e["fate"] == f for e in table["symbols"].values()) for f in FATES}
    return (
        f"{len(table['scanned'])} versions, {len(table['modules'])} modules gone, symbols {counts}"
    )


def main(argv: list[str] | None = None) -> int:
    """Scan the wheels, write the table, print a one-line summary (and the review with --review)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--versions", nargs="*", help="scan these versions instead of asking pip")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument(
        "--review", action="store_true", help="print moved entries whose signature changed"
    )
    args = parser.parse_args(argv)
    start = time.monotonic()
    versions = (
        sorted(set(args.versions) | {TARGET}, key=Version)
        if args.versions
        else pick_versions(available_versions())
    )
    with ThreadPoolExecutor(max_workers=8) as pool:
        wheels = list(pool.map(fetch_wheel, versions))
    scans = [scan_wheel(w) for w in wheels]
    table = build_table(versions, scans, load_overrides())
    if args.review:
        print("\n".join(review(table["symbols"], scans)))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(table), encoding="utf-8")
    print(f"{summary(table)}, {time.monotonic() - start:.1f}s -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

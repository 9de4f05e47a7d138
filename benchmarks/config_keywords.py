"""Keywords the public corpus hands TrainingArguments and TRL's configs that the installed
transformers and TRL no longer take (each one a TypeError when the script builds its config),
before and after `fix`: what TRL108's tables still miss.

    python benchmarks/config_keywords.py            # the corpus of benchmarks/public.py
    python benchmarks/config_keywords.py --dest DIR

Calls are matched by the callee's last name (`TrainingArguments(...)`, `transformers.
TrainingArguments(...)`, `SFTConfig(...)`), so a repository's own class of the same name counts
too; the table says how many files each keyword is in, with one of them.
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codemods import RULES  # noqa: E402
from codemods.base import Options  # noqa: E402
from codemods.engine import process  # noqa: E402


def accepted() -> dict[str, set[str]]:
    """Class name -> the keywords its installed dataclass takes."""
    import transformers
    import trl

    out = {}
    for name in dir(trl):
        if name.endswith("Config"):
            try:
                cls = getattr(trl, name)
            except Exception:  # noqa: BLE001 - an optional extra of TRL that is not installed
                continue
            if dataclasses.is_dataclass(cls):
                out[name] = {f.name for f in dataclasses.fields(cls)}
    for name in ("TrainingArguments", "Seq2SeqTrainingArguments"):
        out[name] = {f.name for f in dataclasses.fields(getattr(transformers, name))}
    return out


def code_of(path: Path, data: bytes) -> str:
    """A file's Python code (a notebook's code cells, shell and magic lines left out)."""
    text = data.decode("utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except ValueError:
        return ""
    lines = []
    for cell in cells:
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            lines += [x for x in source.splitlines() if not x.lstrip().startswith(("!", "%"))]
    return "\n".join(lines)


def unknown(code: str, classes: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(class, keyword) of each call of a known class with a keyword it does not take."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return set()
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        for kw in node.keywords if name in classes else ():
            if kw.arg and kw.arg not in classes[name]:
                found.add((name, kw.arg))
    return found


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dest", type=Path, default=Path.home() / ".cache" / "trl-migrate" / "public")
    args = p.parse_args(argv)
    classes = accepted()
    codes = [r.code for r in RULES]
    before: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    after: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for path in sorted(args.dest.rglob("*")):
        if path.suffix not in (".py", ".ipynb") or not path.is_file() or ".git" in path.parts:
            continue
        data = path.read_bytes()
        name = str(path.relative_to(args.dest))
        found = unknown(code_of(path, data), classes)
        if not found:
            continue
        result = process(name, data, codes=codes, options=Options())
        # by keyword: the rewrite may hand it to another class (TrainingArguments -> SFTConfig)
        left = {kw for _, kw in unknown(code_of(path, result.new or data), classes)}
        for key in found:
            before[key].append(name)
            if key[1] in left:
                after[key].append(name)
    print("| call | keyword | files | after `fix` | e.g. |")
    print("|---|---|---|---|---|")
    for (cls, kw), files in sorted(before.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"| {cls} | {kw} | {len(files)} | {len(after.get((cls, kw), []))} | {files[0]} |")


if __name__ == "__main__":
    main()

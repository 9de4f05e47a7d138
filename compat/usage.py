"""What a repo's own code and configs use, read statically, for checks that matter only then:
`gradient_checkpointing_kwargs` with `offload` on (TRL207, TRL307)."""

from __future__ import annotations

import os
import re

from migrate.kernel.discovery import walk

# `gradient_checkpointing_kwargs={"offload": True}`, `=dict(offload=True)`, a YAML or JSON
# config (`gradient_checkpointing_kwargs: {"offload": true}`, or the key on the next line), a
# command line (`--gradient_checkpointing_kwargs '{"offload": true}'`). A literal false is off.
_OFFLOAD = re.compile(
    r"gradient_checkpointing_kwargs[\"']?\s*[=:]?\s*"
    r"(?:(?:dict\(|['\"]?\{)[^}\)]{0,300}?|\n[ \t]+)"
    r"[\"']?offload[\"']?\s*[:=](?!\s*(?:False|false|0|None|null)\b)",
    re.S,
)
_SUFFIXES = (".py", ".ipynb", ".sh", ".yaml", ".yml", ".json", ".toml", ".cfg", ".md")


def offload_uses(root: str) -> list[str]:
    """`path:line` of every place under `root` (a folder, or a file's folder) that turns on
    gradient-checkpointing offload, sorted."""
    folder = root if os.path.isdir(root) else os.path.dirname(os.path.abspath(root))
    found = []
    for path in walk(folder, suffixes=_SUFFIXES):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read(2_000_000)
        except OSError:
            continue
        if "offload" not in text:
            continue
        if path.endswith(".ipynb"):
            text = text.replace('\\"', '"').replace("\\n", "\n")  # the cells' JSON strings
        for m in _OFFLOAD.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{os.path.relpath(path, folder)}:{line}")
    return sorted(found)

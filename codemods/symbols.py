"""The TRL symbol table: every historical import path that TRL 1.13 moved or removed.

The data is `codemods/data/trl_symbols.json`, generated from the real wheels by
`tools/build_symbol_table.py` (see tools/README.md). This module only loads and queries it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from importlib import resources

MOVED = "moved"
REMOVED = "removed"
VALUE_HEAD = "value_head"
PPO = "ppo"


@dataclasses.dataclass(frozen=True)
class Symbol:
    path: str  # old fully qualified dotted path, e.g. "trl.core.set_seed"
    fate: str  # moved | removed | value_head | ppo
    to: str = ""  # new fully qualified path when moved
    seen: tuple[str, str] = ("", "")  # first and last TRL version where `path` imported
    gone_in: str = ""
    hint: str = ""
    deprecated: bool = False  # still imports in 1.13 but warns

    @property
    def module(self) -> str:
        return self.path.rpartition(".")[0]

    @property
    def name(self) -> str:
        return self.path.rpartition(".")[2]

    @property
    def to_module(self) -> str:
        return self.to.rpartition(".")[0]

    @property
    def to_name(self) -> str:
        return self.to.rpartition(".")[2]

    def history(self) -> str:
        """`trl.core.LengthSampler (TRL 0.4.7-0.24.0)`: where and when the old path worked."""
        first, last = self.seen
        return f"{self.path} (TRL {first}-{last})" if first else self.path


@dataclasses.dataclass(frozen=True)
class Table:
    target: str
    symbols: dict[str, Symbol]
    gone_modules: dict[str, str]  # module -> version it disappeared in

    def get(self, path: str) -> Symbol | None:
        return self.symbols.get(path)

    def module_gone(self, module: str) -> bool:
        return module in self.gone_modules

    @functools.cached_property
    def names_by_module(self) -> dict[str, dict[str, Symbol]]:
        out: dict[str, dict[str, Symbol]] = {}
        for sym in self.symbols.values():
            out.setdefault(sym.module, {})[sym.name] = sym
        return out

    @functools.cached_property
    def _by_name(self) -> dict[str, list[Symbol]]:
        out: dict[str, list[Symbol]] = {}
        for sym in self.symbols.values():
            out.setdefault(sym.name, []).append(sym)
        return out

    def same_name(self, path: str) -> Symbol | None:
        """For a path the table lacks (a name re-exported by an old module, say
        `trl.trainer.ppov2_trainer.PPOv2Config`): the fate every known path of that name shares."""
        module, _, name = path.rpartition(".")
        known = self._by_name.get(name, [])
        fates = {(s.fate, s.to) for s in known}
        if len(fates) != 1 or not self.module_gone(module):
            return None
        return dataclasses.replace(
            known[0], path=path, seen=("", ""), gone_in=self.gone_modules[module]
        )

    @functools.cached_property
    def mention(self) -> re.Pattern[str]:
        """A word from any old path (symbol or gone module): text without one needs no TRL101."""
        words = {s.name for s in self.symbols.values()}
        words |= {
            m.rpartition(".")[2] for m in self.gone_modules
        }  # `from trl import core`, `trl.core.x`
        return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, words))) + r")\b")

    def by_fate(self, fate: str) -> dict[str, Symbol]:
        return {p: s for p, s in self.symbols.items() if s.fate == fate}


@functools.cache
def load() -> Table:
    raw = json.loads(
        resources.files("codemods").joinpath("data/trl_symbols.json").read_text("utf-8")
    )
    symbols = {}
    for path, entry in raw["symbols"].items():
        seen = entry.get("seen") or ("", "")
        symbols[path] = Symbol(
            path=path,
            fate=entry["fate"],
            to=entry.get("to", ""),
            seen=(seen[0], seen[1]),
            gone_in=entry.get("gone_in", ""),
            hint=entry.get("hint", ""),
            deprecated=bool(entry.get("deprecated", False)),
        )
    gone = {m: e.get("gone_in", "") for m, e in raw.get("modules", {}).items()}
    return Table(target=raw["target"], symbols=symbols, gone_modules=gone)

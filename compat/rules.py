"""The rules of a TRL release as typed values, loaded from `compat/data/trl-<major.minor>.toml`."""

from __future__ import annotations

import dataclasses
import os

import tomlkit
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")


class RulesError(ValueError):
    """No rules table for the requested TRL release, or a malformed one."""


@dataclasses.dataclass(frozen=True)
class PackageRule:
    name: str  # canonical distribution name
    specifier: str  # what the target TRL needs, PEP 440
    role: str  # "target" | "base" | "extra" | "python"
    cite: str
    extra: str = ""  # the trl extra that declares it
    was: str = ""  # the previous release's specifier, for messages
    compare: str = "public"  # "public" or "base": how an installed/pinned version is compared

    @property
    def spec(self) -> SpecifierSet:
        return SpecifierSet(self.specifier)

    @property
    def floor(self) -> Version | None:
        return _bound(self.spec, (">=", ">"))

    @property
    def ceiling(self) -> Version | None:
        return _bound(self.spec, ("<=", "<"))


@dataclasses.dataclass(frozen=True)
class Defect:
    id: str
    kind: str  # "undeclared-dependency" | "notice"
    trl: str  # the TRL versions it affects
    summary: str
    cite: str
    needs: str = ""
    satisfied_by_extra: str = ""
    package: str = ""
    available: str = ""

    def affects(self, trl_version: Version) -> bool:
        return trl_version in SpecifierSet(self.trl, prereleases=True)


@dataclasses.dataclass(frozen=True)
class Rules:
    target: Version
    python: PackageRule
    packages: dict[str, PackageRule]
    defects: tuple[Defect, ...]
    source: str  # the data file these came from

    def rule_for(self, name: str) -> PackageRule | None:
        key = canonicalize_name(name)
        if key == "python":
            return self.python
        return self.packages.get(key)


def _bound(spec: SpecifierSet, ops: tuple[str, ...]) -> Version | None:
    found = [Version(s.version) for s in spec if s.operator in ops]
    return (max(found) if ops[0] == ">=" else min(found)) if found else None


def available_targets() -> list[str]:
    names = [n for n in os.listdir(DATA_DIR) if n.startswith("trl-") and n.endswith(".toml")]
    return sorted(n[4:-5] for n in names)


def load_rules(target_trl: str = "1.13.0") -> Rules:
    """The rules for `target_trl`, from the data file of its major.minor series."""
    try:
        wanted = Version(target_trl)
    except InvalidVersion as e:
        raise RulesError(f"--target-trl {target_trl!r} is not a version") from e
    series = f"{wanted.major}.{wanted.minor}"
    path = os.path.join(DATA_DIR, f"trl-{series}.toml")
    if not os.path.exists(path):
        known = ", ".join(available_targets())
        raise RulesError(f"no compat rules for TRL {series}; known: {known}")
    with open(path, encoding="utf-8") as fh:
        data = tomlkit.parse(fh.read()).unwrap()
    try:
        return _build(data, path, wanted)
    except (KeyError, TypeError, InvalidSpecifier, InvalidVersion) as e:
        raise RulesError(f"malformed rules file {path}: {e}") from e


def _build(data: dict, path: str, wanted: Version) -> Rules:
    target = max(Version(data["target"]), wanted)
    py = data["python"]
    python = PackageRule(name="python", specifier=py["specifier"], role="python", cite=py["cite"])
    packages: dict[str, PackageRule] = {}
    for row in data["package"]:
        rule = PackageRule(
            name=canonicalize_name(row["name"]),
            specifier=row["specifier"],
            role=row["role"],
            cite=row["cite"],
            extra=row.get("extra", ""),
            was=row.get("was", ""),
            compare=row.get("compare", "public"),
        )
        if rule.role == "target":
            rule = dataclasses.replace(rule, specifier=f">={target}")
        SpecifierSet(rule.specifier)  # validate early
        packages[rule.name] = rule
    defects = tuple(Defect(**row) for row in data.get("defect", []))
    return Rules(target=target, python=python, packages=packages, defects=defects, source=path)

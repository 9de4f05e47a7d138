"""TRL208: two requirement sources of one repo whose trl ranges no single version satisfies
(`requirements.txt` pins trl==0.11.4, `requirements-dev.txt` trl==0.8.6): whichever a user
installs from, the other is wrong. Judged on what the sources say after the fixes this run
makes, so a `--fix` that lifts both floors to TRL 1.13 clears it."""

from __future__ import annotations

from collections.abc import Sequence

from compat.check import Checked, applies
from compat.codes import severity
from compat.model import Declared, SourceRead
from compat.versions import SpecError, intersect, intervals_of, parse_clauses
from migrate.kernel.findings import Finding, Fix

PACKAGE = "trl"


def conflicts(
    checked: Sequence[tuple[SourceRead, Checked]], markers: dict[str, str] | None, *, fix: bool
) -> list[tuple[SourceRead, Finding]]:
    """(the later source, its TRL208 finding) for each pair of sources that disagree on trl:
    fixable when this run's edits make them agree (not reported once `fix` applies them),
    manual when even the edits leave them apart."""
    seen: list[tuple[SourceRead, Declared, tuple[str, str], tuple[list, list]]] = []
    out = []
    for src, result in checked:
        if src.is_lock:
            continue  # a lock follows its manifest; the manifest is what to agree on
        edits = {id(e.declared): e.new for e in result.edits}
        for d in src.declared:
            if d.name != PACKAGE or d.url or not applies(d, markers):
                continue
            specs = (d.specifier, edits.get(id(d), d.specifier))
            try:
                ranges = (_admitted(specs[0], d), _admitted(specs[1], d))
            except SpecError:
                break
            for other_src, other, other_specs, other_ranges in seen:
                if other_src is src:
                    continue
                apart_after = not intersect(ranges[1], other_ranges[1])
                apart_now = not intersect(ranges[0], other_ranges[0])
                if apart_after or (apart_now and not fix):
                    k = 1 if apart_after and fix else 0
                    message = (
                        f"`{PACKAGE}{_shown(specs[k])}` here and "
                        f"`{PACKAGE}{_shown(other_specs[k])}` in {other_src.display}:{other.line} "
                        "admit no common version: make them agree"
                        + ("" if apart_after else " (--fix does: it moves both to the target)")
                    )
                    out.append(
                        (
                            src,
                            Finding(
                                "TRL208",
                                severity("TRL208"),
                                src.display,
                                d.line,
                                d.col,
                                message,
                                Fix.MANUAL if apart_after else Fix.AVAILABLE,
                            ),
                        )
                    )
                    break
            seen.append((src, d, specs, ranges))
            break  # one trl requirement a source is enough to compare
    return out


def _admitted(spec: str, d: Declared) -> list:
    return intervals_of(parse_clauses(spec, d.dialect))


def _shown(spec: str) -> str:
    return spec if spec else " (any version)"

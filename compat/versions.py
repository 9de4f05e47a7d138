"""Version ranges without an index: clauses of a specifier as intervals, verdicts and rewrites.

A declared specifier is read in its own dialect ("pep440", "poetry" with ^ and ~, "conda" with
`=1.2` meaning 1.2.*, "prefix" for a bare `3.9` meaning 3.9.*), turned into version intervals,
and compared with what the target release needs. Rewrites change as little text as they can:
a pin stays a pin, a clause that is fine is kept verbatim.
"""

from __future__ import annotations

import dataclasses
import enum
import re

from packaging.version import InvalidVersion, Version

Interval = tuple["Version | None", bool, "Version | None", bool]  # lo, lo_closed, hi, hi_closed
_FULL: Interval = (None, False, None, False)
_OPS = ("===", "~=", "==", "!=", "<=", ">=", "<", ">", "^", "~", "=")


class SpecError(ValueError):
    """A specifier this module cannot read."""


class Verdict(str, enum.Enum):
    OK = "ok"
    NONE_WORKS = "no version works"  # error
    TOO_OLD = "floor too low"  # warning: admits versions below the floor
    TOO_NEW = "admits too new"  # warning: admits versions above the ceiling


@dataclasses.dataclass(frozen=True)
class Clause:
    raw: str  # the clause as written, e.g. ">= 0.10"
    op: str  # one of _OPS, or "" for a bare version, or "*" for any
    version: str  # the version text, maybe with a trailing ".*"
    dialect: str

    @property
    def is_pin(self) -> bool:
        return (
            self.op in ("==", "===", "=")
            and not self.version.endswith(".*")
            or (self.op == "" and self.dialect == "poetry")
            or (self.op == "" and self.dialect in ("conda", "prefix"))
        )

    @property
    def is_lower(self) -> bool:
        return self.op in (">=", ">", "~=", "^", "~")

    @property
    def is_upper(self) -> bool:
        return self.op in ("<=", "<")

    def intervals(self) -> list[Interval]:
        return _clause_intervals(self)


def _v(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion as e:
        raise SpecError(f"{text!r} is not a version") from e


def _release(text: str) -> list[int]:
    return list(_v(text).release)


def _bump(parts: list[int], index: int) -> Version:
    head = parts[:index] + [parts[index] + 1]
    return Version(".".join(str(p) for p in head))


def _prefix_interval(text: str) -> Interval:
    parts = _release(text)
    return (_v(text), True, _bump(parts, len(parts) - 1), False)


def _clause_intervals(c: Clause) -> list[Interval]:
    op, ver = c.op, c.version
    if op == "*" or ver in ("*", ""):
        return [_FULL]
    if ver.endswith(".*"):
        base = ver[:-2]
        lo, lo_c, hi, hi_c = _prefix_interval(base)
        if op == "!=":
            return [(None, False, lo, False), (hi, True, None, False)]
        return [(lo, lo_c, hi, hi_c)]
    if op == "" and c.dialect in ("conda", "prefix") or op == "=":
        return [_prefix_interval(ver)]
    v = _v(ver)
    if op in ("==", "===", ""):
        v = Version(v.public)  # a local label (+cu126) says how it was built, not which release
        return [(v, True, v, True)]
    if op == "!=":
        return [(None, False, v, False), (v, False, None, False)]
    if op in (">=", ">"):
        return [(v, op == ">=", None, False)]
    if op in ("<=", "<"):
        return [(None, False, v, op == "<=")]
    parts = _release(ver)
    if op == "~=":
        if len(parts) < 2:
            raise SpecError(f"~={ver} needs at least two release components")
        return [(v, True, _bump(parts, len(parts) - 2), False)]
    if op == "^":
        nonzero = [i for i, p in enumerate(parts) if p != 0]
        return [(v, True, _bump(parts, nonzero[0] if nonzero else len(parts) - 1), False)]
    if op == "~":
        return [(v, True, _bump(parts, 1 if len(parts) >= 2 else 0), False)]
    raise SpecError(f"unknown operator {op!r}")


def _lo_key(iv: Interval) -> tuple[int, Version | None, int]:
    lo, closed = iv[0], iv[1]
    return (0, None, 0) if lo is None else (1, lo, 0 if closed else 1)


def _intersect_one(a: Interval, b: Interval) -> Interval | None:
    lo, lo_c = a[0], a[1]
    if b[0] is not None and (lo is None or b[0] > lo or (b[0] == lo and not b[1])):
        lo, lo_c = b[0], b[1]
    hi, hi_c = a[2], a[3]
    if b[2] is not None and (hi is None or b[2] < hi or (b[2] == hi and not b[3])):
        hi, hi_c = b[2], b[3]
    if lo is not None and hi is not None and (lo > hi or (lo == hi and not (lo_c and hi_c))):
        return None
    return (lo, lo_c, hi, hi_c)


def intersect(a: list[Interval], b: list[Interval]) -> list[Interval]:
    out = [iv for x in a for y in b if (iv := _intersect_one(x, y)) is not None]
    return sorted(out, key=_lo_key)


def intervals_of(clauses: list[Clause]) -> list[Interval]:
    result = [_FULL]
    for c in clauses:
        result = intersect(result, c.intervals())
    return result


_CLAUSE = re.compile(r"^\s*(===|~=|==|!=|<=|>=|<|>|\^|~|=)?\s*(\S*?)\s*$")


def parse_clauses(text: str, dialect: str = "pep440") -> list[Clause]:
    """Split `text` into clauses; `dialect` decides what a bare version and `=` mean."""
    stripped = text.strip()
    if "|" in stripped:
        raise SpecError(f"alternatives ({stripped!r}) are not supported")
    if stripped.startswith("(") and stripped.endswith(")"):
        stripped = stripped[1:-1]
    pieces = [p for p in re.split(r",", stripped) if p.strip()]
    if dialect == "poetry" and len(pieces) == 1:  # poetry also separates clauses with spaces
        pieces = re.findall(r"(?:===|~=|==|!=|<=|>=|<|>|\^|~|=)?\s*[^\s,]+", stripped)
    clauses = []
    for piece in pieces:
        m = _CLAUSE.match(piece)
        if not m or (not m.group(2) and m.group(1)):
            raise SpecError(f"cannot read {piece.strip()!r} as a version clause")
        op, ver = m.group(1) or "", m.group(2)
        if ver == "*":
            op = "*"
        elif op == "" and dialect == "pep440":
            raise SpecError(f"{piece.strip()!r} has no operator")
        clause = Clause(raw=piece.strip(), op=op, version=ver, dialect=dialect)
        clause.intervals()  # validates the version
        clauses.append(clause)
    return clauses


def normalize(v: Version, compare: str) -> Version:
    """The version as a rule compares it: without its local label, or (base) as its release."""
    return Version(v.base_version if compare == "base" else v.public)


def judge(clauses: list[Clause], required: list[Clause]) -> Verdict:
    """Whether what `clauses` admits fits inside what `required` admits."""
    admitted = intervals_of(clauses)
    if not intersect(admitted, intervals_of(required)):
        return Verdict.NONE_WORKS
    floor, ceiling = bounds(required)
    if floor is not None and intersect(admitted, [(None, False, floor[0], not floor[1])]):
        return Verdict.TOO_OLD
    if ceiling is not None and intersect(admitted, [(ceiling[0], not ceiling[1], None, False)]):
        return Verdict.TOO_NEW
    return Verdict.OK


def judge_version(version: Version, required: list[Clause], compare: str) -> Verdict:
    v = normalize(version, compare)
    floor, ceiling = bounds(required)
    if floor is not None and (v < floor[0] or (v == floor[0] and not floor[1])):
        return Verdict.TOO_OLD
    if ceiling is not None and (v > ceiling[0] or (v == ceiling[0] and not ceiling[1])):
        return Verdict.TOO_NEW
    return (
        Verdict.OK
        if intersect([(v, True, v, True)], intervals_of(required))
        else Verdict.NONE_WORKS
    )


def bounds(
    required: list[Clause],
) -> tuple[tuple[Version, bool] | None, tuple[Version, bool] | None]:
    """(floor, closed) and (ceiling, closed) of a required range, each None when unbounded."""
    ivs = intervals_of(required)
    lo = None if ivs[0][0] is None else (ivs[0][0], ivs[0][1])
    hi = None if ivs[-1][2] is None else (ivs[-1][2], ivs[-1][3])
    return lo, hi


def _is_pin(c: Clause) -> bool:
    if c.op in ("==", "===") and not c.version.endswith(".*"):
        return True
    return c.op == "=" or (c.op == "" and c.dialect in ("poetry", "conda", "prefix"))


def _spaced(clauses: list[Clause]) -> bool:
    return any(re.match(r"^(===|~=|==|!=|<=|>=|<|>|\^|~|=)\s+\S", c.raw) for c in clauses)


def _repin(pin: Clause, target: Version, required: list[Clause]) -> str:
    """The pin moved to `target`, same operator and spacing; a prefix pin keeps its length if it
    can."""
    full = str(target)
    candidates = [full]
    if pin.op in ("=", "") and pin.dialect in ("conda", "prefix"):
        n = len(_release(pin.version.removesuffix(".*")))
        short = ".".join(str(p) for p in target.release[:n])
        candidates.insert(0, short)
    for text in candidates:
        raw = pin.raw[: len(pin.raw) - len(pin.version)] + text
        trial = Clause(raw=raw, op=pin.op, version=text, dialect=pin.dialect)
        if judge([trial], required) is Verdict.OK:
            return raw
    return pin.raw[: len(pin.raw) - len(pin.version)] + full


def _below(v: Version, bound: tuple[Version, bool]) -> bool:
    return v < bound[0] or (v == bound[0] and not bound[1])


def _rewrite_clause(c: Clause, floor, ceiling, required: list[Clause], space: str) -> str | None:
    """The clause's replacement text, or None to drop it."""
    if _is_pin(c):
        v = _v(c.version.removesuffix(".*"))
        if floor is not None and _below(v, floor):
            return _repin(c, floor[0], required)
        if ceiling is not None and (v > ceiling[0]):
            return _repin(c, ceiling[0], required)
        return c.raw
    ivs = c.intervals()
    if c.is_lower:
        lo, hi = ivs[0][0], ivs[0][2]
        if floor is not None and lo is not None and _below(lo, floor):
            if hi is not None and hi > floor[0]:  # ~=, ^ and ~ keep the upper end they implied
                return f">={space}{floor[0]},{space and ' '}<{space}{hi}"
            return f">={space}{floor[0]}"
        return c.raw
    if c.is_upper:
        hi = _v(c.version)
        if floor is not None and (hi < floor[0] or (hi == floor[0] and c.op == "<")):
            return None
        if ceiling is not None and (hi > ceiling[0]):
            return f"{'<=' if ceiling[1] else '<'}{space}{ceiling[0]}"
        return c.raw
    return c.raw if intersect(ivs, intervals_of(required)) else None


def rewrite(text: str, dialect: str, required: list[Clause]) -> str:
    """`text` changed just enough that every version it admits works, in the same dialect."""
    clauses = parse_clauses(text, dialect)
    floor, ceiling = bounds(required)
    space = " " if _spaced(clauses) else ""
    sep = ", " if re.search(r",\s", text) else ","
    out: list[str] = []
    for c in clauses:
        if c.op == "*":
            continue
        new = _rewrite_clause(c, floor, ceiling, required, space)
        if new is not None:
            out.append(new)
    kept = parse_clauses(sep.join(out), dialect) if out else []
    if floor is not None and not any(_is_pin(c) or c.is_lower for c in kept):
        out.insert(0, f">={space}{floor[0]}")
    candidate = sep.join(out)
    if (
        ceiling is not None
        and judge(parse_clauses(candidate, dialect), required) is Verdict.TOO_NEW
    ):
        out.append(f"{'<=' if ceiling[1] else '<'}{space}{ceiling[0]}")
        candidate = sep.join(out)
    if judge(parse_clauses(candidate, dialect), required) is not Verdict.OK:
        candidate = sep.join(c.raw for c in required)
    return candidate

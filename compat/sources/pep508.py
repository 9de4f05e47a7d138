"""PEP 508 requirement strings with the position of their version text, for in-place edits."""

from __future__ import annotations

import dataclasses
import re

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

_HEAD = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?")
_URL_START = re.compile(r"^((git|hg|svn|bzr)\+|[a-zA-Z][a-zA-Z0-9+.-]*://|file:|\.{1,2}[/\\]|/|~)")
_TAG_VERSION = re.compile(r"@v?(\d+(?:\.\d+)+(?:[a-z]+\d+)?)(?:#|$)")
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclasses.dataclass(frozen=True)
class Parsed:
    name: str  # canonical
    extras: frozenset[str]
    specifier: str  # as written, without parentheses
    span: tuple[int, int]  # of the specifier inside the text; an insertion point when empty
    marker: Marker | None
    url: str
    url_version: str


def parse(text: str) -> Parsed:
    """Read one requirement string; raises InvalidRequirement as pip would reject it."""
    if _URL_START.match(text.strip()):
        return parse_bare_url(text.strip())
    req = Requirement(text)
    m = _HEAD.match(text)
    assert m is not None  # Requirement() accepted it, so it starts with a name
    head_end = m.end()
    spec_start, spec_end = head_end, head_end
    if not req.url:
        rest = text[head_end:]
        cut = rest.find(";")
        body = rest if cut == -1 else rest[:cut]
        stripped = body.strip()
        if stripped:
            lead = len(body) - len(body.lstrip())
            spec_start = head_end + lead
            spec_end = spec_start + len(stripped)
            if stripped.startswith("(") and stripped.endswith(")"):
                spec_start, spec_end = spec_start + 1, spec_end - 1
        else:
            spec_start = spec_end = m.end(2) if m.group(2) else m.end(1)
    specifier = text[spec_start:spec_end].strip()
    return Parsed(
        name=canonicalize_name(req.name),
        extras=frozenset(canonicalize_name(e) for e in req.extras),
        specifier=specifier,
        span=(spec_start, spec_end),
        marker=req.marker,
        url=req.url or "",
        url_version=url_version(req.url or ""),
    )


def parse_bare_url(url: str) -> Parsed:
    """A requirement given as just a URL or path (`git+ssh://...trl.git@v1.13.0#egg=trl`)."""
    egg = _EGG.search(url)
    if egg:
        name = egg.group(1)
    else:
        tail = re.split(r"[#?]", url)[0].rstrip("/").rsplit("/", 1)[-1]
        name = re.split(r"@", tail)[0].removesuffix(".git") if "+" in url or "://" in url else ""
    if name and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        name = ""
    return Parsed(
        name=canonicalize_name(name) if name else "",
        extras=frozenset(),
        specifier="",
        span=(0, 0),
        marker=None,
        url=url,
        url_version=url_version(url),
    )


def url_version(url: str) -> str:
    """A version tag at the end of a VCS URL (`...trl.git@v1.13.0`), else ""."""
    m = _TAG_VERSION.search(url.split("#", 1)[0] + "#")
    return m.group(1) if m and "+" in url.split(":", 1)[0] else ""


__all__ = ["InvalidRequirement", "Parsed", "parse", "parse_bare_url", "url_version"]


def declare(
    src,
    text: str,
    line: int,
    *,
    label: str = "",
    col: int = 0,
    offset: int | None = None,  # type: ignore[no-untyped-def]
    key: tuple | None = None,
    note: str = "",
    display: str | None = None,
    message: str = "",
) -> None:
    """Parse one PEP 508 requirement of a source into `src.declared`, or record a TRL200 error
    at `line`. Its specifier can be fixed in place when `offset` (where `text` starts in the
    file's text) or `key` (the TOML string holding it) is given and it is not a URL."""
    from compat.model import Declared, Where

    try:
        parsed = parse(text)
    except InvalidRequirement as e:
        what = message or f"invalid requirement {text!r}"
        src.error(line, f"{label + ': ' if label else ''}{what}: {str(e).splitlines()[0]}", col=col)
        return
    if not parsed.name:
        return
    where = None
    if not parsed.url and (offset is not None or key is not None):
        base = offset or 0
        where = (
            Where(base + parsed.span[0], base + parsed.span[1], key)
            if key is not None
            else Where(base + parsed.span[0], base + parsed.span[1])
        )
    src.declared.append(
        Declared(
            name=parsed.name,
            display=text if display is None else display,
            specifier=parsed.specifier,
            dialect="pep440",
            line=line,
            col=col,
            extras=parsed.extras,
            marker=parsed.marker,
            url=parsed.url,
            url_version=parsed.url_version,
            where=where,
            note=note,
        )
    )

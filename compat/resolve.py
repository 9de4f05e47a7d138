"""`compat --resolve`: prove that each manifest's requirements (as fixed) resolve together with
the target TRL, by a real resolver: `uv pip compile` (the `uv` package), for this machine's
platform and every other platform the requirements' markers name. A conflict is a TRL209 error
with the resolver's own explanation, which names the requirements that clash; no resolver or no
index is a TRL210 note that says the proof was skipped. Nothing is installed or written.

Requirements files and static `pyproject.toml` dependencies are resolved as the resolver reads
them; `setup.py` is not (the resolver would run it), nor are locks (they are resolved already).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

from compat.codes import severity
from compat.model import SourceRead
from migrate.kernel.findings import Finding, Fix

RESOLVABLE = ("requirements", "pyproject")
TIMEOUT = 180.0
# sys_platform / platform_system values a marker may name -> uv's --python-platform
_PLATFORMS = {"linux": "linux", "darwin": "macos", "win32": "windows", "windows": "windows"}
_OFFLINE = re.compile(
    r"(?i)failed to fetch|connection|dns error|network|timed out|offline|no such host"
)


def resolver() -> str | None:
    """The uv binary: the `uv` package's, else one on PATH."""
    try:
        import uv  # type: ignore[import-not-found]

        found: str = uv.find_uv_bin()
        return found
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def platforms(src: SourceRead) -> list[str]:
    """This machine's platform, then every other one the source's markers name."""
    import sys

    here = _PLATFORMS.get(sys.platform, "linux")
    named = []
    for d in src.declared:
        text = str(d.marker or "")
        for value in re.findall(
            r"(?:sys_platform|platform_system)\s*[=!]=\s*['\"](\w+)['\"]", text
        ):
            p = _PLATFORMS.get(value.lower())
            if p and p != here and p not in named:
                named.append(p)
    return [here, *named]


def resolve(
    sources: Sequence[SourceRead], *, target_trl: str, python_version: str
) -> list[tuple[SourceRead | None, Finding]]:
    """One TRL209 per source and platform that does not resolve; a TRL210 when skipped."""
    uv = resolver()
    if uv is None:
        return [(None, _skipped("no resolver: install `uv` (pip install 'trl-migrate[resolve]')"))]
    out: list[tuple[SourceRead | None, Finding]] = []
    with tempfile.TemporaryDirectory(prefix="trl-migrate-resolve-") as tmp:
        pin = os.path.join(tmp, "target.in")
        with open(pin, "w", encoding="utf-8") as fh:
            fh.write(f"trl=={target_trl}\n")
        for src in sources:
            if src.fmt not in RESOLVABLE or src.fatal or not src.declared:
                continue
            for platform in platforms(src):
                problem = _compile(uv, src.path, pin, platform, python_version, tmp)
                if problem is None:
                    continue
                kind, text = problem
                if kind == "offline":
                    return [*out, (None, _skipped(f"the package index is unreachable ({text})"))]
                message = (
                    f"does not resolve with trl=={target_trl} on {platform} "
                    f"(Python {python_version}): {text}"
                )
                out.append(
                    (
                        src,
                        Finding(
                            "TRL209", severity("TRL209"), src.display, 0, 0, message, Fix.MANUAL
                        ),
                    )
                )
                break  # one platform's explanation is enough for the source
    return out


def _compile(
    uv: str, path: str, pin: str, platform: str, python_version: str, tmp: str
) -> tuple[str, str] | None:
    cmd = [
        uv,
        "pip",
        "compile",
        "--quiet",
        "--no-header",
        "--python-version",
        python_version,
        "--python-platform",
        platform,
        "--cache-dir",
        os.path.join(tmp, "cache"),
        path,
        pin,
    ]
    try:
        done = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            cwd=os.path.dirname(path),
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "offline", f"no answer in {TIMEOUT:.0f} s"
    except OSError as e:
        return "offline", str(e)
    if done.returncode == 0:
        return None
    err = done.stderr.strip()
    if "No solution found" in err or "unsatisfiable" in err:
        return "conflict", _explanation(err)
    if _OFFLINE.search(err):
        return "offline", err.splitlines()[-1][:200] if err else "no output"
    return "conflict", _explanation(err)


def _explanation(err: str) -> str:
    """The resolver's reasons, on one line (they name the requirements that clash)."""
    lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
    reasons = [ln.removeprefix("cause:").strip() for ln in lines if not ln.startswith("error:")]
    text = " ".join(reasons) or (lines[0] if lines else "the resolver failed")
    return text if len(text) <= 600 else text[:597] + "..."


def _skipped(why: str) -> Finding:
    return Finding(
        "TRL210", severity("TRL210"), "<resolve>", 0, 0, f"resolution not proven: {why}", Fix.NONE
    )

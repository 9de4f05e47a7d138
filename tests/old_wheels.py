"""Old TRL (and transformers) releases' own source, read out of their wheels, for tests that
compare our written-in definitions with the functions they replace: `.wheels/` when the checkout
has it, else a `pip download --no-deps` into the temp folder (package registries only)."""

from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def wheel(version: str, package: str = "trl") -> Path | str:
    """The path of `package` (trl unless named) `version`'s wheel, or why it is not at hand."""
    name = f"{package}-{version}-py3-none-any.whl"
    local = ROOT / ".wheels" / name
    if local.exists():
        return local
    dest = Path(tempfile.gettempdir()) / "trl-migrate-wheels"
    dest.mkdir(exist_ok=True)
    found = dest / name
    if found.exists():
        return found
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(dest)]
        + [f"{package}=={version}"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if done.returncode != 0 or not found.exists():
        return f"{package} {version}'s wheel could not be downloaded: {done.stderr[-200:]}"
    return found


def member(version: str, path: str, package: str = "trl") -> str:
    """The text of `path` inside `package` (trl unless named) `version`'s wheel; raises
    LookupError with the reason when the wheel is not at hand."""
    found = wheel(version, package)
    if isinstance(found, str):
        raise LookupError(found)
    with zipfile.ZipFile(found) as z:
        return z.read(path).decode()

"""Shared helpers: copy a fixture folder, run the check, and list findings as comparable tuples."""

from __future__ import annotations

import os
import shutil

from compat import CompatReport, check_path

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


# Written at test time, not committed: linters and config loaders that walk the repo would
# choke on a broken pyproject.toml or setup.py.
GENERATED = {
    "malformed": {
        "pyproject.toml": b'[project\nname = "x"\n',
        "setup.py": b'from setuptools import setup\nsetup(install_requires=["trl==0.11.4"\n',
    }
}


def copy_fixture(name: str, tmp_path) -> str:  # type: ignore[no-untyped-def]
    dest = tmp_path / name
    shutil.copytree(os.path.join(FIXTURES, name), dest)
    for file, data in GENERATED.get(name, {}).items():
        (dest / file).write_bytes(data)
    return str(dest)


def declared(path: str, **kwargs) -> CompatReport:  # type: ignore[no-untyped-def]
    return check_path(path, installed=False, **kwargs)


def summary(report: CompatReport, *, skip_info: bool = True) -> list[tuple[str, int, str, str]]:
    """(path, line, code, fix) of every finding, sorted."""
    return sorted(
        (f.path, f.line, f.code, f.fix.value)
        for f in report.findings
        if not (skip_info and f.severity.value == "info")
    )


def message(report: CompatReport, path: str, line: int, code: str) -> str:
    """The messages of the findings at path:line with that code, joined by newlines."""
    found = [f.message for f in report.findings if (f.path, f.line, f.code) == (path, line, code)]
    assert found, (path, line, code, report.findings)
    return "\n".join(found)


def snapshot(folder: str) -> dict[str, bytes]:
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, folder)] = fh.read()
    return out

"""The installed environment: distributions of this interpreter (importlib.metadata) or of
another one (`--python PATH`, probed in a subprocess), torch's version and whether bf16 works.
Never imports torch in this process."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile

from packaging.utils import canonicalize_name

from compat.sources import _probe

BF16_TIMEOUT_S = 60
PROBE_TIMEOUT_S = 30


class EnvironmentReadError(ValueError):
    """The interpreter could not be run or its answer could not be read."""


@dataclasses.dataclass(frozen=True)
class Dist:
    name: str  # canonical
    version: str
    path: str  # the .dist-info / .egg-info folder


@dataclasses.dataclass
class Environment:
    python: str  # the interpreter, as given or sys.executable
    python_version: str
    dists: dict[str, list[Dist]]  # canonical name -> every install found, first one wins
    broken: list[tuple[str, str]]  # (path, problem) of unreadable metadata
    bf16: str = "not checked"  # "yes (cpu)", "no (cuda: ...)", "unknown (...)"

    def version_of(self, name: str) -> str | None:
        found = self.dists.get(canonicalize_name(name))
        return found[0].version if found else None


def read_environment(python: str | None = None, *, check_bf16: bool = True) -> Environment:
    """The distributions of `python` (default: this interpreter)."""
    if python is None:
        raw = _probe.probe()
        exe = sys.executable
    else:
        raw = _run_json(python, _probe_source(), PROBE_TIMEOUT_S)
        exe = python
    env = _build(exe, raw)
    if check_bf16:
        env.bf16 = _bf16(exe) if env.version_of("torch") else "torch not installed"
    return env


def _probe_source() -> str:
    with open(_probe.__file__, encoding="utf-8") as fh:
        return fh.read()


def _run_json(python: str, code: str, timeout: float) -> dict:
    if not os.path.exists(python):
        raise EnvironmentReadError(f"no such interpreter: {python}")
    try:
        with tempfile.TemporaryDirectory() as cwd:  # keep the caller's folder off sys.path
            proc = subprocess.run(
                [python, "-c", code],
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=cwd,
                check=False,
            )
    except subprocess.TimeoutExpired as e:
        raise EnvironmentReadError(f"{python} did not answer within {timeout:.0f}s") from e
    except OSError as e:
        raise EnvironmentReadError(f"cannot run {python}: {e.strerror or e}") from e
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentReadError(f"{python} exited with {proc.returncode}: {tail}")
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError) as e:
        raise EnvironmentReadError(f"{python} gave an answer that is not JSON") from e


def _build(exe: str, raw: dict) -> Environment:
    dists: dict[str, list[Dist]] = {}
    broken: list[tuple[str, str]] = []
    for d in raw.get("dists", []):
        if d.get("problem") or not d.get("name") or not d.get("version"):
            what = d.get("problem") or ("no Name" if not d.get("name") else "no Version")
            broken.append((d.get("path", ""), what))
            continue
        key = canonicalize_name(d["name"])
        dist = Dist(key, str(d["version"]), d.get("path", ""))
        if dist not in dists.get(key, []):
            dists.setdefault(key, []).append(dist)
    return Environment(
        python=exe, python_version=raw.get("python", "?"), dists=dists, broken=sorted(broken)
    )


def _bf16(python: str) -> str:
    try:
        out = _run_json(python, _probe.BF16, BF16_TIMEOUT_S)
    except EnvironmentReadError as e:
        return f"unknown ({e})"
    where = f"{out.get('device')}: {out.get('name')}" if out.get("name") else str(out.get("device"))
    if out.get("bf16"):
        return f"yes ({where})"
    return f"no ({where}{'; ' + out['error'] if out.get('error') else ''})"

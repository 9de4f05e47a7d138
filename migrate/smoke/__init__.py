"""Smoke-run a user's script: start the harness subprocess, time it out, turn its outcome into
TRL4nn findings.

This side never imports torch: it starts the harness (`migrate/reference/harness.py`) in a fresh
temporary folder (removed afterwards), offline, and reads back the JSON the harness writes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any

from migrate.kernel.codes import (
    HARNESS,
    SKIPPED,
)
from migrate.kernel.findings import Severity
from migrate.smoke.entry_points import nested_projects, project_root, reached
from migrate.smoke.launchers import sweep_parameters
from migrate.smoke.outcome import judge, stack_at_kill
from migrate.smoke.result import SmokeResult, finding
from migrate.smoke.workspace import inside, mirror, trim_configs

IMPORTS_ENV = "TRL_MIGRATE_SMOKE_IMPORTS"  # what the script's project modules import (absent.py)
COLUMNS_ENV = "TRL_MIGRATE_SMOKE_COLUMNS"  # string keys they read (stand_ins.py's stand-in rows)
STACK_WAIT = 3.0  # seconds a timed-out run gets to write its stack before it is killed
PATHS_ENV = "TRL_MIGRATE_SMOKE_PATHS"  # the project's import roots, after the script's folder
MODULE_ENV = "TRL_MIGRATE_SMOKE_MODULE"  # run as `python -m` this module
NOTEBOOK_ENV = "TRL_MIGRATE_SMOKE_NOTEBOOK"  # the script is a notebook's cells
SWEEP_ENV = "TRL_MIGRATE_SMOKE_SWEEP"  # the W&B sweep that runs the script (caps.py)
SMOKE_PACKAGES = ("torch", "transformers", "trl", "datasets", "accelerate")
INSTALL_HINT = "pip install torch==2.13.0 && pip install 'trl-migrate[smoke]'"


def missing_packages() -> list[str]:
    """The smoke extra's packages that are not importable here (checked without importing them)."""
    return [name for name in SMOKE_PACKAGES if importlib.util.find_spec(name) is None]


_PROBE = (
    "import importlib.util, json, sys; "
    "print(json.dumps([n for n in sys.argv[1:] if importlib.util.find_spec(n) is None]))"
)


def missing_in(python: str) -> tuple[list[str], str]:
    """(the smoke packages `python` lacks, '') or ([], why it cannot be run at all): the
    harness runs in the user's own interpreter with `smoke --python`."""
    try:
        proc = subprocess.run(
            [python, "-c", _PROBE, *SMOKE_PACKAGES],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return [], f"cannot run this interpreter: {e}"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return [], f"this interpreter failed to start (exit status {proc.returncode}): {last}"
    try:
        return list(json.loads(proc.stdout.strip().splitlines()[-1])), ""
    except (ValueError, IndexError):
        return [], f"unexpected output from this interpreter: {proc.stdout[-200:]!r}"


def skipped(
    path: str,
    missing: Sequence[str],
    *,
    steps: int = 2,
    timeout: float = 0,
    python: str | None = None,
) -> SmokeResult:
    """The result for a script that could not be smoke-run because the smoke extra (or, with
    `python`, part of the training stack in that interpreter) is missing."""
    result = SmokeResult(path, [], steps, timeout)
    where = f" in {python}" if python else ""
    how = (
        f"install them there (`{python} -m pip install torch trl datasets accelerate`)"
        if python
        else f"install the smoke extra with `{INSTALL_HINT}` (CPU torch first)"
    )
    finding(
        result,
        SKIPPED,
        Severity.WARNING,
        f"not smoke-run: {', '.join(missing)} not installed{where}; {how}, then run "
        f"`trl-migrate smoke {f'--python {python} ' if python else ''}{path}`",
    )
    return result


def _project_root() -> str:
    import migrate

    return os.path.dirname(os.path.dirname(os.path.abspath(migrate.__file__)))


def _env(tmp: str, steps: int, store: str | None, *, stand_ins: bool = True) -> dict[str, str]:
    env = dict(os.environ)
    if not stand_ins:
        env["TRL_MIGRATE_SMOKE_NO_STAND_INS"] = "1"
    home = os.path.join(tmp, "hf-home")
    env.update(
        {
            # A script's own `pip install` (an auto-installer in `except ImportError:`, MedLLM's)
            # runs in a subprocess the socket guard does not reach: without an index it
            # installs nothing, so the interpreter the smoke run uses stays as it was
            "PIP_NO_INDEX": "1",
            "UV_OFFLINE": "1",
            "CONDA_OFFLINE": "true",
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HOME": home,
            "HF_DATASETS_CACHE": os.path.join(home, "datasets"),
            "WANDB_MODE": "disabled",
            "WANDB_DISABLED": "true",
            "COMET_MODE": "DISABLED",
            "DISABLE_MLFLOW_INTEGRATION": "TRUE",
            "TRACKIO_DISABLED": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "PYTHONUNBUFFERED": "1",
            "TMPDIR": os.path.join(tmp, "tmp"),
            "TRL_MIGRATE_SMOKE_STEPS": str(steps),
            "TRL_MIGRATE_SMOKE_STORE": store or os.path.join(tmp, "tiny-models"),
            "PYTHONPATH": os.pathsep.join(
                p for p in (_project_root(), env.get("PYTHONPATH", "")) if p
            ),
        }
    )
    return env


def smoke_script(
    script: str,
    args: Sequence[str] = (),
    *,
    steps: int = 2,
    timeout: float = 300.0,
    python: str | None = None,
    store: str | None = None,
    keep: bool = False,
    stand_ins: bool = True,
    root: str | None = None,
    cwd: str | None = None,
    module: str = "",
    entry: Any = None,
    rewritten: frozenset[str] | None = None,
    before: Mapping[str, bytes] | None = None,
) -> SmokeResult:
    """Run `script` with `args` for `steps` training steps on tiny offline stand-ins, in a
    subprocess.

    Never raises for a failing script: every outcome is a finding (TRL410-TRL418). `store` is a
    folder to keep the tiny models in between runs (default: inside the temporary folder).
    `stand_ins`: missing non-training modules the script imports get reported no-op stand-ins
    (migrate/reference/absent.py); False lets their import fail as it would. `rewritten`: the
    files `fix` rewrote (absolute paths), and `before` what they held: a crash is placed
    against them.
    """
    result = SmokeResult(script, list(args), steps, timeout)
    if not os.path.isfile(script):
        finding(result, HARNESS, Severity.ERROR, f"{script}: no such file")
        return result
    if python is None:
        missing = missing_packages()
    else:
        missing, problem = missing_in(python)
        if problem:
            finding(result, HARNESS, Severity.ERROR, f"--python {python}: {problem}")
            return result
    if missing:
        return skipped(script, missing, steps=steps, timeout=timeout, python=python)
    result.entry = entry
    tmp = tempfile.mkdtemp(prefix="trl-migrate-smoke-")
    started = time.perf_counter()
    try:
        for sub in ("run", "tmp", "hf-home"):
            os.makedirs(os.path.join(tmp, sub))
        out_json, log_path = os.path.join(tmp, "result.json"), os.path.join(tmp, "output.log")
        cells = None
        root = os.path.abspath(root or project_root(script))
        here = os.path.abspath(cwd) if cwd else _default_cwd(root)
        copy = os.path.join(tmp, "repo")
        result.root, result.rewritten = root, rewritten
        result.before = dict(before or {})
        if mirror(root, copy):
            result.copy = copy
            result.trimmed = trim_configs(copy, getattr(entry, "config_left_out", ()) or ())
            result.ran = inside(script, root, copy)
            run_in = inside(here, root, copy)
            base = copy
        else:  # too big to copy: run from a bare folder, the project importable in place
            result.ran, run_in = os.path.abspath(script), os.path.join(tmp, "run")
            base = root
        paths = [
            os.path.normpath(os.path.join(base, rel, src))
            for rel in (".", *nested_projects(root))
            for src in ("", "src")
        ]
        os.makedirs(run_in, exist_ok=True)
        result.cwd = os.path.relpath(here, root)
        if script.endswith(".ipynb"):
            cells = _notebook_script(result, tmp)
            if cells is None:
                return result
        # By file, not `-m`: `-m` would put the run's folder first on sys.path, where a repo's
        # own `migrate.py` would shadow our package before the harness starts.
        cmd = [
            python or sys.executable,
            os.path.join(_project_root(), "migrate", "reference", "harness.py"),
            out_json,
            result.ran,
            *args,
        ]
        env = _env(tmp, steps, store, stand_ins=stand_ins)
        env[PATHS_ENV] = os.pathsep.join(p for p in paths if os.path.isdir(p))
        if module:
            env[MODULE_ENV] = module
        if cells is not None:
            env[NOTEBOOK_ENV] = "1"
        reach = reached(result.ran, copy if result.copy else root)
        sweep, parameters = sweep_parameters(script, root)
        if parameters:  # `wandb agent` fills wandb.config from the sweep file
            env[SWEEP_ENV] = json.dumps({"sweep": sweep, "parameters": parameters}, default=str)
        env[IMPORTS_ENV] = ",".join(reach.imports)
        env[COLUMNS_ENV] = ",".join(reach.keys)
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                cmd,
                cwd=run_in,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            timed_out = False
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill(proc)
        result.seconds = time.perf_counter() - started
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            log_text = fh.read()
        if timed_out:  # the stack dump may be longer than the tail kept
            result.stack = stack_at_kill(log_text, result.ran)
        result.log_tail = (result.log_tail + log_text)[-4000:]
        data = None
        if not timed_out and os.path.exists(out_json):
            with open(out_json, encoding="utf-8") as fh:
                data = json.load(fh)
        judge(result, data, timed_out=timed_out, returncode=proc.returncode)
        if cells is not None:
            result.findings = [cells.locate(f) for f in result.findings]
    finally:
        if keep:
            result.tmpdir_removed = False
            result.log_tail += f"\n(kept {tmp})"
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def _default_cwd(root: str) -> str:
    """Where a script runs when no launch line says: here, as `python path/x.py` would, when
    here lies in the project; else the project root."""
    here = os.getcwd()
    rel = os.path.relpath(here, root)
    return here if not rel.startswith("..") else root


def _notebook_script(result: SmokeResult, tmp: str):  # type: ignore[no-untyped-def]
    """Write the notebook's code cells as one script under `tmp` (IPython lines become `pass`);
    None, with a finding, when the notebook cannot be read."""
    from migrate.kernel import notebooks
    from migrate.kernel.files import SourceError

    try:
        with open(result.path, encoding="utf-8") as fh:
            cells = notebooks.runnable(fh.read())
    except (OSError, UnicodeDecodeError, SourceError) as e:
        finding(result, HARNESS, Severity.ERROR, f"{result.path}: cannot run this notebook: {e}")
        return None
    # Beside the notebook's copy, so its relative paths and sibling imports work.
    folder = os.path.dirname(result.ran) if result.ran else tmp
    stem = os.path.splitext(os.path.basename(result.path))[0]
    result.ran = os.path.join(folder, f"{stem}.smoke.py")
    with open(result.ran, "w", encoding="utf-8") as fh:
        fh.write(cells.text)
    if cells.skipped:
        result.log_tail = "IPython lines not run: " + "; ".join(cells.skipped) + "\n"
    return cells


def _kill(proc: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """Ask the harness for its stack first (faulthandler on SIGUSR1 writes it to the log), then
    kill the whole process group."""
    try:
        os.kill(proc.pid, signal.SIGUSR1)
        proc.wait(timeout=STACK_WAIT)
    except (ProcessLookupError, PermissionError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the script's own children too
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()

"""Smoke-run a user's script: start the harness subprocess, time it out, turn its outcome into TRL4nn findings.

This side never imports torch: it starts `python -m migrate.reference.harness` in a fresh
temporary folder (removed afterwards), offline, and reads back the JSON the harness writes.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from migrate.kernel.codes import (
    CRASH,
    EXIT,
    HARNESS,
    IMPORT,
    NO_STEP,
    NON_FINITE,
    OFFLINE,
    PASSED,
    SKIPPED,
    TIMEOUT,
)
from migrate.kernel.findings import FileResult, Finding, Fix, Severity, Status

SMOKE_PACKAGES = ("torch", "transformers", "trl", "datasets", "accelerate")
INSTALL_HINT = "pip install torch==2.13.0 && pip install 'trl-migrate[smoke]'"

_TODO = re.compile(r"#\s*TODO\(trl-migrate (TRL\d{3})\)")


def missing_packages() -> list[str]:
    """The smoke extra's packages that are not importable here (checked without importing them)."""
    return [name for name in SMOKE_PACKAGES if importlib.util.find_spec(name) is None]


@dataclasses.dataclass
class SmokeResult:
    """What one smoke run of one script found. `outcome`: passed, failed, skipped, or harness."""

    path: str
    args: list[str]
    steps: int
    timeout: float
    findings: list[Finding] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    trainers: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    error: dict[str, Any] | None = None
    log_tail: str = ""
    tmpdir_removed: bool = True
    ran: str = (
        ""  # the file the harness executed: the script, or the script made of a notebook's cells
    )

    @property
    def losses(self) -> list[float | str]:
        return [x for t in self.trainers for x in t.get("losses", [])]

    @property
    def steps_run(self) -> int:
        return sum(int(t.get("global_step", 0)) for t in self.trainers)

    @property
    def outcome(self) -> str:
        codes = {f.code for f in self.findings}
        if HARNESS in codes:
            return "harness"
        if SKIPPED in codes:
            return "skipped"
        return "passed" if codes == {PASSED} else "failed"

    @property
    def exit_code(self) -> int:
        """0 trained; 1 the script failed (a human must look); 2 the smoke run itself could not run."""
        return {"passed": 0, "failed": 1}.get(self.outcome, 2)

    def file_result(self) -> FileResult:
        status = (
            Status.FAILED
            if self.outcome == "harness"
            else Status.SKIPPED
            if self.outcome == "skipped"
            else Status.UNCHANGED
        )
        message = (
            self.findings[0].message if status is not Status.UNCHANGED and self.findings else ""
        )
        return FileResult(self.path, status, findings=list(self.findings), message=message)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "args": self.args,
            "steps": self.steps,
            "timeout": self.timeout,
            "outcome": self.outcome,
            "seconds": round(self.seconds, 3),
            "steps_run": self.steps_run,
            "losses": self.losses,
            "trainers": [{k: v for k, v in t.items() if k != "log_history"} for t in self.trainers],
            "error": {k: v for k, v in self.error.items() if k != "traceback"}
            if self.error
            else None,
        }


def _finding(
    result: SmokeResult, code: str, severity: Severity, message: str, line: int = 0
) -> None:
    fix = Fix.NONE if code in (PASSED, SKIPPED) else Fix.MANUAL
    result.findings.append(
        Finding(code, severity, result.path, line, 1 if line else 0, message, fix)
    )


def skipped(
    path: str, missing: Sequence[str], *, steps: int = 2, timeout: float = 0
) -> SmokeResult:
    """The result for a script that could not be smoke-run because the smoke extra is missing."""
    result = SmokeResult(path, [], steps, timeout)
    _finding(
        result,
        SKIPPED,
        Severity.WARNING,
        f"not smoke-run: {', '.join(missing)} not installed; install the smoke extra with "
        f"`{INSTALL_HINT}` (CPU torch first), then run `trl-migrate smoke {path}`",
    )
    return result


def _project_root() -> str:
    import migrate

    return os.path.dirname(os.path.dirname(os.path.abspath(migrate.__file__)))


def _env(tmp: str, steps: int, store: str | None) -> dict[str, str]:
    env = dict(os.environ)
    home = os.path.join(tmp, "hf-home")
    env.update(
        {
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
) -> SmokeResult:
    """Run `script` with `args` for `steps` training steps on tiny offline stand-ins, in a subprocess.

    Never raises for a failing script: every outcome is a finding (TRL410-TRL418). `store` is a
    folder to keep the tiny models in between runs (default: inside the temporary folder).
    """
    result = SmokeResult(script, list(args), steps, timeout)
    if not os.path.isfile(script):
        _finding(result, HARNESS, Severity.ERROR, f"{script}: no such file")
        return result
    missing = missing_packages() if python is None else []
    if missing:
        return skipped(script, missing, steps=steps, timeout=timeout)
    tmp = tempfile.mkdtemp(prefix="trl-migrate-smoke-")
    started = time.perf_counter()
    try:
        for sub in ("run", "tmp", "hf-home"):
            os.makedirs(os.path.join(tmp, sub))
        out_json, log_path = os.path.join(tmp, "result.json"), os.path.join(tmp, "output.log")
        cells = None
        result.ran = os.path.abspath(script)
        if script.endswith(".ipynb"):
            cells = _notebook_script(result, tmp)
            if cells is None:
                return result
        cmd = [
            python or sys.executable,
            "-m",
            "migrate.reference.harness",
            out_json,
            result.ran,
            *args,
        ]
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                cmd,
                cwd=os.path.join(tmp, "run"),
                env=_env(tmp, steps, store),
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
            result.log_tail = (result.log_tail + fh.read())[-4000:]
        data = None
        if not timed_out and os.path.exists(out_json):
            with open(out_json, encoding="utf-8") as fh:
                data = json.load(fh)
        _judge(result, data, timed_out=timed_out, returncode=proc.returncode)
        if cells is not None:
            result.findings = [cells.locate(f) for f in result.findings]
    finally:
        if keep:
            result.tmpdir_removed = False
            result.log_tail += f"\n(kept {tmp})"
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def _notebook_script(result: SmokeResult, tmp: str):  # type: ignore[no-untyped-def]
    """Write the notebook's code cells as one script under `tmp` (IPython lines become `pass`);
    None, with a finding, when the notebook cannot be read."""
    from migrate.kernel import notebooks
    from migrate.kernel.files import SourceError

    try:
        with open(result.path, encoding="utf-8") as fh:
            cells = notebooks.runnable(fh.read())
    except (OSError, UnicodeDecodeError, SourceError) as e:
        _finding(result, HARNESS, Severity.ERROR, f"{result.path}: cannot run this notebook: {e}")
        return None
    result.ran = os.path.join(tmp, os.path.splitext(os.path.basename(result.path))[0] + ".py")
    with open(result.ran, "w", encoding="utf-8") as fh:
        fh.write(cells.text)
    if cells.skipped:
        result.log_tail = "IPython lines not run: " + "; ".join(cells.skipped) + "\n"
    return cells


def _kill(proc: subprocess.Popen) -> None:  # type: ignore[type-arg]
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the script's own children too
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _judge(
    result: SmokeResult, data: dict[str, Any] | None, *, timed_out: bool, returncode: int | None
) -> None:
    if timed_out:
        _finding(
            result,
            TIMEOUT,
            Severity.ERROR,
            f"the script ran past the {result.timeout:g} s timeout and was killed",
        )
        return
    if data is None:
        tail = result.log_tail.strip().splitlines()[-1:] or ["no output"]
        _finding(
            result,
            HARNESS,
            Severity.ERROR,
            f"the smoke harness died without a result (exit status {returncode}): {tail[0]}",
        )
        return
    result.trainers = list(data.get("trainers", []))
    result.error = data.get("error")
    outcome = data.get("outcome")
    err = result.error or {}
    line = int(err.get("line") or 0)
    todo = _todo_near(result.ran or result.path, line)
    if outcome == "harness":
        _finding(
            result,
            HARNESS,
            Severity.ERROR,
            f"the smoke harness could not start: {err.get('exception')}: {err.get('message')}",
        )
    elif outcome == "exit":
        last = [ln for ln in result.log_tail.splitlines() if ln.strip()]
        why = next(
            (ln.strip() for ln in reversed(last) if "error:" in ln),
            last[-1].strip() if last else "",
        )
        _finding(
            result,
            EXIT,
            Severity.ERROR,
            f"the script exited with status {data.get('exit_status')} before training: {why}"
            f"{err.get('message') and ' ' + err['message'] or ''}; if it parses its own command line, pass "
            f"the arguments it needs after `--` (docs/smoke.md lists those of TRL's example scripts)",
        )
    elif outcome == "error" and err.get("kind") == "import":
        _finding(
            result,
            IMPORT,
            Severity.ERROR,
            f"import error on TRL 1.13: {_import_what(err)}{todo}",
            line,
        )
    elif outcome == "error" and err.get("kind") == "offline":
        _finding(
            result,
            OFFLINE,
            Severity.ERROR,
            f"the script tried to reach the network, which smoke runs forbid (offline): "
            f"{err.get('exception')}: {err.get('message')}{todo}",
            line,
        )
    elif outcome == "error":
        where = "" if line else f" (raised in {err.get('raised_in')})"
        after = ""
        if result.steps_run:
            shown = ", ".join(f"{x:.4f}" if isinstance(x, float) else str(x) for x in result.losses)
            after = f"after training {result.steps_run} steps (loss {shown}), "
        _finding(
            result,
            CRASH,
            Severity.ERROR,
            f"{after}the script raised {err.get('exception')}: {err.get('message')}{where}{todo}",
            line,
        )
    if result.findings:
        return
    losses = result.losses
    bad = [x for x in losses if not isinstance(x, (int, float)) or not math.isfinite(x)]
    if result.steps_run == 0:
        todos = sorted(set(_TODO.findall(_read(result.ran or result.path))))
        hint = f"; the rewrite left TODOs ({', '.join(todos)}) in it" if todos else ""
        built = ", ".join(t["class"] for t in result.trainers)
        what = f"built {built} but never trained" if built else "built no Trainer"
        _finding(result, NO_STEP, Severity.ERROR, f"no training step ran: the script {what}{hint}")
    elif bad:
        _finding(
            result,
            NON_FINITE,
            Severity.ERROR,
            f"the loss is not finite: {bad[0]} (losses: {losses})",
        )
    else:
        trainer = ", ".join(
            f"{t['class']} {t['global_step']} steps" for t in result.trainers if t["global_step"]
        )
        shown = ", ".join(f"{x:.4f}" for x in losses) or "not logged"
        _finding(
            result,
            PASSED,
            Severity.INFO,
            f"trained: {trainer}, loss {shown} ({result.seconds:.1f} s)",
        )


def _import_what(err: dict[str, Any]) -> str:
    """`cannot import LengthSampler from trl.core (No module named 'trl.core')`, from the error and the line."""
    name, module = err.get("name") or "", err.get("module") or ""
    reason = re.sub(
        r" \(/[^)]*\)$", "", str(err.get("message") or "")
    )  # drop the file path ImportError appends
    match = re.match(r"\s*from\s+([\w.]+)\s+import\s+\(?([^#]+)", err.get("source") or "")
    if err.get("exception") == "ModuleNotFoundError" and match:
        names = ", ".join(
            f"`{n.split(' as ')[0].strip()}`"
            for n in match.group(2).rstrip(")").split(",")
            if n.strip()
        )
        return f"cannot import {names} from `{match.group(1)}`: {reason}"
    if name and module and name != module:
        return f"cannot import `{name}` from `{module}`: {reason}"
    return f"{err.get('exception')}: {reason}"


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _todo_near(path: str, line: int) -> str:
    """`; the rewrite left a TODO(trl-migrate TRLnnn) on this line` when comments above it carry one."""
    if not line:
        return ""
    lines = _read(path).splitlines()
    codes: list[str] = []
    i = line - 2
    while 0 <= i < len(lines) and lines[i].lstrip().startswith("#"):
        codes += _TODO.findall(lines[i])
        i -= 1
    if 0 < line <= len(lines):
        codes += _TODO.findall(lines[line - 1])
    if not codes:
        return ""
    return (
        f"; the rewrite left a TODO(trl-migrate {', '.join(sorted(set(codes)))}) here for a human"
    )

"""A smoke run's outcome: the harness's JSON (or its absence, a timeout, an exit) judged into one
TRL4nn finding at the user's line, with the TODO of ours nearest to an import that failed."""

from __future__ import annotations

import math
import re
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
    TIMEOUT,
)
from migrate.kernel.findings import Severity
from migrate.smoke.result import TODO, SmokeResult, finding


def judge(
    result: SmokeResult, data: dict[str, Any] | None, *, timed_out: bool, returncode: int | None
) -> None:
    if timed_out:
        finding(
            result,
            TIMEOUT,
            Severity.ERROR,
            f"the script ran past the {result.timeout:g} s timeout and was killed",
        )
        return
    if data is None:
        tail = result.log_tail.strip().splitlines()[-1:] or ["no output"]
        finding(
            result,
            HARNESS,
            Severity.ERROR,
            f"the smoke harness died without a result (exit status {returncode}): {tail[0]}",
        )
        return
    result.trainers = list(data.get("trainers", []))
    result.stand_ins = list(data.get("stand_ins", []))
    result.error = data.get("error")
    outcome = data.get("outcome")
    err = result.error or {}
    line = int(err.get("line") or 0)
    todo = _todo_near(result.ran or result.path, line)
    if outcome == "harness":
        finding(
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
        finding(
            result,
            EXIT,
            Severity.ERROR,
            f"the script exited with status {data.get('exit_status')} before training: {why}"
            f"{err.get('message') and ' ' + err['message'] or ''}; if it parses its own command "
            "line, pass "
            "the arguments it needs after `--` (docs/smoke.md lists those of TRL's example "
            "scripts)",
        )
    elif outcome == "error" and err.get("kind") == "import":
        finding(
            result,
            IMPORT,
            Severity.ERROR,
            f"import error on TRL 1.13: {_import_what(err)}{todo}",
            line,
        )
    elif outcome == "error" and err.get("kind") == "offline":
        finding(
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
        finding(
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
        todos = sorted(set(TODO.findall(_read(result.ran or result.path))))
        hint = f"; the rewrite left TODOs ({', '.join(todos)}) in it" if todos else ""
        built = ", ".join(t["class"] for t in result.trainers)
        what = f"built {built} but never trained" if built else "built no Trainer"
        finding(result, NO_STEP, Severity.ERROR, f"no training step ran: the script {what}{hint}")
    elif bad:
        finding(
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
        finding(
            result,
            PASSED,
            Severity.INFO,
            f"trained: {trainer}, loss {shown} ({result.seconds:.1f} s)" + _with_stand_ins(result),
        )


def _with_stand_ins(result: SmokeResult) -> str:
    if not result.stand_ins:
        return ""
    return (
        f", with stand-ins for: {', '.join(result.stand_ins)} (not installed here: install them "
        "to run for real, or pass --no-stand-ins to see the import fail)"
    )


def _import_what(err: dict[str, Any]) -> str:
    """`cannot import LengthSampler from trl.core (No module named 'trl.core')`, from the error and
    the line."""
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
    """`; the rewrite left a TODO(trl-migrate TRLnnn) on this line` when comments above it carry
    one."""
    if not line:
        return ""
    lines = _read(path).splitlines()
    codes: list[str] = []
    i = line - 2
    while 0 <= i < len(lines) and lines[i].lstrip().startswith("#"):
        codes += TODO.findall(lines[i])
        i -= 1
    if 0 < line <= len(lines):
        codes += TODO.findall(lines[line - 1])
    if not codes:
        return ""
    return (
        f"; the rewrite left a TODO(trl-migrate {', '.join(sorted(set(codes)))}) here for a human"
    )

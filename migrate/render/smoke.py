"""Text and JSON for `smoke`: one block per smoked script, and the reference stack's report."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from migrate.kernel.findings import FileResult, Status
from migrate.render import format_finding, summarize, use_color
from migrate.render import render_json as render

if TYPE_CHECKING:
    from migrate.reference.train import EnvResult


def render_script_text(results: list, *, color: bool | None = None) -> str:  # type: ignore[type-arg]
    """One block per smoked script: verdict, time, losses, findings (and the log tail on a
    crash)."""
    color = use_color(sys.stdout) if color is None else color
    lines = []
    for r in results:
        args = f" -- {' '.join(r.args)}" if r.args else ""
        lines.append(
            f"trl-migrate smoke {r.path}{args}: {r.outcome} in {r.seconds:.1f} s ({r.steps_run} "
            "steps)"
        )
        lines.extend(_how_it_ran(r))
        lines.extend("  " + format_finding(f, color=color) for f in r.findings)
        if r.outcome == "harness" and r.log_tail.strip():
            lines.extend("    | " + ln for ln in r.log_tail.strip().splitlines()[-15:])
        if not r.tmpdir_removed:
            lines.append("  " + r.log_tail.strip().splitlines()[-1])
    return "\n".join(lines) + ("\n" if lines else "")


def _how_it_ran(r) -> list[str]:  # type: ignore[no-untyped-def]
    """Where the entry point was found, the command line used and every cap the harness made."""
    out = []
    entry = getattr(r, "entry", None)
    if entry is not None:
        via = f"; proves {', '.join(entry.via)}" if entry.via else ""
        out.append(f"  found: {entry.found_in}{via}")
        if entry.unresolved:
            out.append(
                f"  dropped from the launch line (no value here): {' '.join(entry.unresolved)}"
            )
    if r.outcome in ("skipped", "harness") and not r.filled:
        return out
    where = f" (from {r.cwd})" if r.cwd and r.cwd != "." else ""
    out.append(f"  ran: {r.command}{where}")
    if r.filled:
        out.append(f"  filled with stand-ins (required, not given): {' '.join(r.filled)}")
    if r.overrides:
        shown = ", ".join(f"{o['field']} {o['was']!r}->{o['now']!r}" for o in r.overrides)
        out.append(f"  smoke caps: {shown}")
    return out


def render_json(result: EnvResult) -> str:
    files = [
        FileResult(
            path="<environment>",
            status=Status.FAILED if result.error else Status.UNCHANGED,
            findings=result.findings,
        )
    ]
    return render(
        "smoke",
        files,
        summarize(files, exit_code=result.exit_code),
        extra={"env": result.to_json()},
    )


def render_text(result: EnvResult, *, color: bool | None = None) -> str:
    color = use_color(sys.stdout) if color is None else color
    lines = [
        "trl-migrate smoke --env: the reference stack (tiny model, bf16 autocast, chunked lm_head "
        "loss)"
    ]
    lines.append("  " + "  ".join(f"{k} {v}" for k, v in result.versions.items()))
    if result.device:
        mode = "LoRA" if result.lora else "full"
        lines.append(
            f"  device {result.device}, {result.dtype}, {result.arch} "
            f"({result.parameters:,} parameters, {result.trainable:,} trained, {mode})"
        )
    for i, loss in enumerate(result.losses, 1):
        lines.append(f"  step {i:>3}  loss {loss:.4f}")
    if result.losses:
        lines.append(
            f"  {result.tokens} tokens in {result.seconds:.2f} s: {result.tokens_per_s:,.0f} "
            "tokens/s"
        )
    p = result.parity
    if p is not None:
        trl = (
            "TRL 1.13 n/a"
            if p.trl is None
            else f"TRL 1.13 {p.trl:.6f} (rel {p.trl_rel:.1e}, grad {p.trl_grad_rel:.1e})"
        )
        lines.append(
            f"  loss parity: plain {p.plain:.6f}, ours {p.ours:.6f} (rel {p.ours_rel:.1e}, grad "
            f"{p.ours_grad_rel:.1e}), "
            f"{trl}; tolerance {p.tolerance:.0e} (grad {p.grad_tolerance:.0e})"
        )
    lines.extend(format_finding(f, color=color) for f in result.findings)
    lines.append(f"verdict: {result.verdict}")
    return "\n".join(lines) + "\n"

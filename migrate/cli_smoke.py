"""`trl-migrate smoke`: parse options, call the reference stack, render. Nothing else.

torch is imported only inside the command (through migrate.reference), never at module level:
importing the CLI must stay cheap for `trl-migrate fix`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from migrate.reference.train import EnvResult


@click.command("smoke")
@click.argument("script", required=False, type=click.Path())
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--env", "env", is_flag=True, help="Train the bundled reference stack: proves this environment trains like TRL 1.13.")
@click.option("--loss-parity", is_flag=True, help="Also compare our and TRL 1.13's chunked loss with the plain loss.")
@click.option("--steps", type=click.IntRange(min=1), default=None, help="Training steps [default: 2 for a SCRIPT, 8 for --env].")
@click.option("--timeout", type=click.FloatRange(min=1), default=300.0, show_default=True,
              help="SCRIPT: wall-clock seconds before the run is killed.")
@click.option("--keep", is_flag=True, help="SCRIPT: keep the temporary folder (outputs, log) and print where it is.")
@click.option("--lora", is_flag=True, help="Train LoRA adapters (peft) instead of all weights.")
@click.option("--arch", type=click.Choice(["qwen3", "llama"]), default="qwen3", show_default=True, help="Tiny model shape.")
@click.option("--device", default=None, metavar="DEVICE", help="cpu, cuda, cuda:1 ... (default: cuda if present).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def smoke_command(
    script: str | None, script_args: tuple[str, ...], env: bool, loss_parity: bool, steps: int | None, timeout: float,
    keep: bool, lora: bool, arch: str, device: str | None, fmt: str
) -> None:
    """Prove that training works here: run SCRIPT for a few steps on tiny offline stand-ins,
    or (`--env`) train the bundled tiny reference stack.

    SCRIPT runs unmodified against the installed TRL, in a subprocess, offline, in a temporary
    folder; arguments after `--` are its own. A notebook (.ipynb) runs its code cells in order,
    IPython lines skipped, with findings by cell and line. Exit 0 when it trains, 1 when it fails (import
    error, crash, no step, non-finite loss, timeout, network), 2 when the check itself could not run.

    \b
    Examples:
      trl-migrate smoke train_grpo.py
      trl-migrate smoke notebooks/ppo_sentiment.ipynb
      trl-migrate smoke ppo_tldr.py -- --dataset_name trl-lib/tldr --model_name_or_path Qwen/Qwen3-0.6B
      trl-migrate smoke --env
      trl-migrate smoke --env --lora --loss-parity --steps 8
    """
    if script is None and not env:
        raise click.UsageError("pass --env to check this environment, or a SCRIPT to smoke-run")
    if script is not None and env:
        raise click.UsageError("pass either --env or a SCRIPT, not both")
    if script is not None:
        _smoke_script(script, list(script_args), steps=steps or 2, timeout=timeout, keep=keep, fmt=fmt)
        return
    steps = 8 if steps is None else steps
    if steps < 2:
        raise click.BadParameter("--env needs at least 2 steps to tell whether the loss goes down", param_hint="--steps")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from migrate.reference.train import check_env

    result = check_env(steps=steps, lora=lora, loss_parity=loss_parity, arch=arch, device=device)
    click.echo(render_json(result) if fmt == "json" else render_text(result), nl=False)
    sys.exit(result.exit_code)


def _smoke_script(script: str, args: list[str], *, steps: int, timeout: float, keep: bool, fmt: str) -> None:
    from migrate.render import render_json as render, summarize
    from migrate.smoke import smoke_script

    result = smoke_script(script, args, steps=steps, timeout=timeout, keep=keep)
    if fmt == "json":
        files = [result.file_result()]
        click.echo(render("smoke", files, summarize(files, exit_code=result.exit_code), extra={"smoke": [result.to_json()]}), nl=False)
    else:
        click.echo(render_script_text([result]), nl=False)
    sys.exit(result.exit_code)


def render_script_text(results: list, *, color: bool | None = None) -> str:  # type: ignore[type-arg]
    """One block per smoked script: verdict, time, losses, findings (and the log tail on a crash)."""
    from migrate.render import format_finding, use_color

    color = use_color(sys.stdout) if color is None else color
    lines = []
    for r in results:
        args = f" -- {' '.join(r.args)}" if r.args else ""
        lines.append(f"trl-migrate smoke {r.path}{args}: {r.outcome} in {r.seconds:.1f} s ({r.steps_run} steps)")
        lines.extend("  " + format_finding(f, color=color) for f in r.findings)
        if r.outcome == "harness" and r.log_tail.strip():
            lines.extend("    | " + ln for ln in r.log_tail.strip().splitlines()[-15:])
        if not r.tmpdir_removed:
            lines.append("  " + r.log_tail.strip().splitlines()[-1])
    return "\n".join(lines) + ("\n" if lines else "")


def render_json(result: EnvResult) -> str:
    from migrate.findings import FileResult, Status
    from migrate.render import render_json as render
    from migrate.render import summarize

    files = [FileResult(path="<environment>", status=Status.FAILED if result.error else Status.UNCHANGED, findings=result.findings)]
    return render("smoke", files, summarize(files, exit_code=result.exit_code), extra={"env": result.to_json()})


def render_text(result: EnvResult, *, color: bool | None = None) -> str:
    from migrate.render import format_finding, use_color

    color = use_color(sys.stdout) if color is None else color
    lines = ["trl-migrate smoke --env: the reference stack (tiny model, bf16 autocast, chunked lm_head loss)"]
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
        lines.append(f"  {result.tokens} tokens in {result.seconds:.2f} s: {result.tokens_per_s:,.0f} tokens/s")
    p = result.parity
    if p is not None:
        trl = "TRL 1.13 n/a" if p.trl is None else f"TRL 1.13 {p.trl:.6f} (rel {p.trl_rel:.1e}, grad {p.trl_grad_rel:.1e})"
        lines.append(
            f"  loss parity: plain {p.plain:.6f}, ours {p.ours:.6f} (rel {p.ours_rel:.1e}, grad {p.ours_grad_rel:.1e}), "
            f"{trl}; tolerance {p.tolerance:.0e} (grad {p.grad_tolerance:.0e})"
        )
    lines.extend(format_finding(f, color=color) for f in result.findings)
    lines.append(f"verdict: {result.verdict}")
    return "\n".join(lines) + "\n"

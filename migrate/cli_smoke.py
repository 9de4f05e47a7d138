"""`trl-migrate smoke`: parse options, call the reference stack, render. Nothing else.

torch is imported only inside the command (through migrate.api and the reference stack), never at
module level:
importing the CLI must stay cheap for `trl-migrate fix`.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click


@click.command("smoke")
@click.argument("script", required=False, type=click.Path())
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--env",
    "env",
    is_flag=True,
    help="Train the bundled reference stack: proves this environment trains like TRL 1.13.",
)
@click.option(
    "--loss-parity",
    is_flag=True,
    help="Also compare our and TRL 1.13's chunked loss with the plain loss.",
)
@click.option(
    "--steps",
    type=click.IntRange(min=1),
    default=None,
    help="Training steps [default: 2 for a SCRIPT, 8 for --env].",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="SCRIPT: wall-clock seconds before the run is killed.",
)
@click.option(
    "--keep",
    is_flag=True,
    help="SCRIPT: keep the temporary folder (outputs, log) and print where it is.",
)
@click.option(
    "--no-stand-ins",
    is_flag=True,
    help="SCRIPT: no no-op stand-ins for missing non-training modules (PIL, loguru, openai, ...).",
)
@click.option(
    "--from-launcher",
    "launcher",
    type=click.Path(),
    default=None,
    metavar="FILE",
    help="SCRIPT: take the script, its arguments and its folder from the first Python launch "
    "line of FILE (a .sh, Makefile or README); with SCRIPT, the first line that runs it.",
)
@click.option(
    "--python",
    "python",
    type=click.Path(),
    default=None,
    metavar="PATH",
    help="SCRIPT: run it with this interpreter (your project's venv, with trl installed) instead "
    "of trl-migrate's own.",
)
@click.option("--lora", is_flag=True, help="Train LoRA adapters (peft) instead of all weights.")
@click.option(
    "--arch",
    type=click.Choice(["qwen3", "llama"]),
    default="qwen3",
    show_default=True,
    help="Tiny model shape.",
)
@click.option(
    "--device",
    default=None,
    metavar="DEVICE",
    help="cpu, cuda, cuda:1 ... (default: cuda if present).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def smoke_command(
    script: str | None,
    script_args: tuple[str, ...],
    env: bool,
    loss_parity: bool,
    steps: int | None,
    timeout: float,
    keep: bool,
    no_stand_ins: bool,
    launcher: str | None,
    python: str | None,
    lora: bool,
    arch: str,
    device: str | None,
    fmt: str,
) -> None:
    """Prove that training works here: run SCRIPT for a few steps on tiny offline stand-ins,
    or (`--env`) train the bundled tiny reference stack.

    SCRIPT runs unmodified against the installed TRL, in a subprocess, offline, in a temporary
    folder; arguments after `--` are its own. A notebook (.ipynb) runs its code cells in order,
    IPython lines skipped, with findings by cell and line. Exit 0 when it trains, 1 when it fails
    (import
    error, crash, no step, non-finite loss, timeout, network), 2 when the check itself could not
    run.

    \b
    Examples:
      trl-migrate smoke train_grpo.py
      trl-migrate smoke notebooks/ppo_sentiment.ipynb
      trl-migrate smoke ppo_tldr.py -- --dataset_name trl-lib/tldr --model_name_or_path
      Qwen/Qwen3-0.6B
      trl-migrate smoke --from-launcher run_ppo.sh
      trl-migrate smoke --env
      trl-migrate smoke --env --lora --loss-parity --steps 8
    """
    if script is None and not env and not launcher:
        raise click.UsageError("pass --env to check this environment, or a SCRIPT to smoke-run")
    if launcher and env:
        raise click.UsageError("pass either --env or --from-launcher, not both")
    if launcher:
        from migrate.smoke.entry_points import from_launcher

        if script is not None and not os.path.isfile(script):  # `-- --flag`: the script's own
            script_args, script = (script, *script_args), None
        try:
            entry = from_launcher(launcher, script)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--from-launcher") from e
        _smoke_script(
            entry.path,
            [*entry.args, *script_args],
            steps=steps or 2,
            timeout=timeout,
            keep=keep,
            stand_ins=not no_stand_ins,
            fmt=fmt,
            entry=entry,
            python=python,
        )
        return
    if script is not None and env:
        raise click.UsageError("pass either --env or a SCRIPT, not both")
    if script is not None:
        _smoke_script(
            script,
            list(script_args),
            steps=steps or 2,
            timeout=timeout,
            keep=keep,
            stand_ins=not no_stand_ins,
            fmt=fmt,
            python=python,
        )
        return
    steps = 8 if steps is None else steps
    if steps < 2:
        raise click.BadParameter(
            "--env needs at least 2 steps to tell whether the loss goes down", param_hint="--steps"
        )
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from migrate import api
    from migrate.render.smoke import render_json, render_text

    result = api.check_env(
        steps=steps, lora=lora, loss_parity=loss_parity, arch=arch, device=device
    )
    click.echo(render_json(result) if fmt == "json" else render_text(result), nl=False)
    sys.exit(result.exit_code)


def _smoke_script(
    script: str,
    args: list[str],
    *,
    steps: int,
    timeout: float,
    keep: bool,
    stand_ins: bool,
    fmt: str,
    entry: Any = None,
    python: str | None = None,
) -> None:
    from migrate import api
    from migrate.render import render_json as render
    from migrate.render import summarize
    from migrate.render.smoke import render_script_text

    launch = {"cwd": entry.cwd or None, "module": entry.module, "entry": entry} if entry else {}
    result = api.smoke_script(
        script,
        args,
        steps=steps,
        timeout=timeout,
        keep=keep,
        stand_ins=stand_ins,
        python=python,
        **launch,
    )
    if fmt == "json":
        files = [result.file_result()]
        click.echo(
            render(
                "smoke",
                files,
                summarize(files, exit_code=result.exit_code),
                extra={"smoke": [result.to_json()]},
            ),
            nl=False,
        )
    else:
        click.echo(render_script_text([result]), nl=False)
    sys.exit(result.exit_code)

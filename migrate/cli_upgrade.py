"""`trl-migrate upgrade` and `trl-migrate demo`: parse options, call migrate.api, print."""

from __future__ import annotations

import sys
from typing import Any

import click

# `--trl-version`, shared by `fix` (migrate/cli.py imports it from here) and `upgrade`.
trl_version_option = click.option(
    "--trl-version",
    "trl_version",
    default=None,
    metavar="SPEC",
    help="The TRL release the code ran on (0.11.4, or a range such as '>=0.8,<0.12'): where a "
    "PPO config default changed between releases, that release's is kept [default: the trl "
    "pin of the project's requirement files].",
)


def rewrite_options(target: str | None, trl_version: str | None, settings: Any) -> Any:
    """The rewrite's Options from `--target`, `--trl-version` and the project's settings; a
    `--trl-version` that says nothing is a usage error naming the problem."""
    from migrate import api

    options = api.Options(
        target=target or settings.target,
        target_chosen=target is not None or settings.target_set,
    )
    if trl_version is not None:
        try:
            options = api.trl_version(trl_version, options)
        except ValueError as e:
            raise click.UsageError(str(e)) from e
    return options


@click.command()
@click.argument("path", type=click.Path(exists=True))
@click.option(
    "--dry-run",
    is_flag=True,
    help="Only show the diff (fix --diff) and check pins; write and run nothing.",
)
@click.option(
    "--no-smoke", is_flag=True, help="Rewrite and check pins, but do not smoke-run the scripts."
)
@click.option(
    "--target",
    type=click.Choice(["rloo", "grpo"]),
    default=None,
    help="Trainer that PPO code moves to [default: rloo, or [tool.trl-migrate] target].",
)
@trl_version_option
@click.option(
    "--steps",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Smoke training steps per script.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="Seconds per smoke run.",
)
@click.option(
    "--no-installed", is_flag=True, help="Check only declared pins, not this environment."
)
@click.option(
    "--python",
    "python",
    type=click.Path(),
    default=None,
    metavar="PATH",
    help="Smoke-run the entry points with this interpreter (your project's venv) instead of "
    "trl-migrate's own.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def upgrade(
    path: str,
    dry_run: bool,
    no_smoke: bool,
    target: str | None,
    trl_version: str | None,
    steps: int,
    timeout: float,
    no_installed: bool,
    python: str | None,
    fmt: str,
) -> None:
    """Upgrade PATH to TRL 1.13: fix the code, fix the pins, smoke-train every migrated script.

    Runs `fix` (writing), then `compat --fix` on PATH and this environment, then `smoke` of
    every rewritten entry-point script (a __main__ guard or a top-level .train()), and prints
    one report. Exit 0: nothing left for a human; 1: TODOs, pins or smoke failures remain;
    2: something could not be processed or run.

    \b
    Examples:
      trl-migrate upgrade .
      trl-migrate upgrade --dry-run src/
      trl-migrate upgrade --target grpo --no-smoke .
    """
    report = _upgrade(
        path,
        dry_run=dry_run,
        no_smoke=no_smoke,
        target=target,
        trl_version=trl_version,
        steps=steps,
        timeout=timeout,
        installed=not no_installed,
        fmt=fmt,
        python=python,
    )
    sys.exit(report.exit_code)


def _upgrade(
    path: str,
    *,
    dry_run: bool,
    no_smoke: bool,
    target: str | None,
    steps: int,
    timeout: float,
    installed: bool,
    fmt: str,
    python: str | None = None,
    trl_version: str | None = None,
):  # type: ignore[no-untyped-def]
    from migrate import api
    from migrate.kernel.config import ConfigError, load
    from migrate.render import render_json
    from migrate.render.upgrade import render_upgrade

    try:
        settings = load(path)
    except ConfigError as e:
        raise click.UsageError(str(e)) from e
    say = (
        (lambda message: click.echo(f"trl-migrate upgrade: {message} ...", err=True))
        if fmt == "text"
        else None
    )
    report = api.upgrade_path(
        path,
        options=rewrite_options(target, trl_version, settings),
        dry_run=dry_run,
        smoke=not no_smoke,
        steps=steps,
        timeout=timeout,
        installed=installed,
        progress=say,
        python=python,
    )
    if fmt == "json":
        click.echo(
            render_json(
                "upgrade", report.results(), report.summary(), extra=report.to_json_extra()
            ),
            nl=False,
        )
    else:
        click.echo(render_upgrade(report, dry_run=dry_run), nl=False)
    return report


@click.command()
@click.option(
    "--dest",
    type=click.Path(file_okay=False),
    default=None,
    help="Copy the example here instead of a new temporary folder.",
)
@click.option("--no-smoke", is_flag=True, help="Do not smoke-run the migrated scripts.")
@click.option("--target", type=click.Choice(["rloo", "grpo"]), default="rloo", show_default=True)
def demo(dest: str | None, no_smoke: bool, target: str) -> None:
    """Run `upgrade` on a copy of a bundled example PPO project and show what it did.

    The example has a legacy sentiment-loop script, a v2 script, a value-head notebook, and a
    requirements.txt and pyproject.toml pinning pre-1.13 versions. Exit 0 when every stage ran
    (TODOs left for a human are the point of the demo); 2 when one could not.

    \b
    Example:
      trl-migrate demo
    """
    import time

    from migrate import api

    started = time.perf_counter()
    where = api.copy_example(dest)
    click.echo(f"trl-migrate demo: copied the example PPO project to {where}\n")
    preview = api.fix_paths([where], mode=api.DIFF, options=api.Options(target=target))
    for res in preview.results:
        if res.diff:
            click.echo(res.diff, nl=False)
    click.echo("")
    report = _upgrade(
        where,
        dry_run=False,
        no_smoke=no_smoke,
        target=target,
        steps=2,
        timeout=300.0,
        installed=True,
        fmt="text",
    )
    click.echo(
        f"\nThe upgraded copy is in {where}; TODO(trl-migrate ...) comments mark what needs a "
        "human. "
        f"Demo wall time {time.perf_counter() - started:.1f} s."
    )
    sys.exit(2 if report.exit_code == 2 else 0)


COMMANDS = (upgrade, demo)

"""`trl-migrate compat`: parse options, call compat.check_path, render; nothing else."""

from __future__ import annotations

import os
import sys

import click


@click.command("compat")
@click.argument("path", default=".", type=click.Path())
@click.option("--no-installed", is_flag=True, help="Check only the declared requirement sources.")
@click.option(
    "--python",
    "python",
    metavar="PATH",
    help="Check this interpreter's environment instead of the running one.",
)
@click.option(
    "--all-platforms",
    is_flag=True,
    help="Check requirements whose markers are false on this platform too.",
)
@click.option(
    "--fix",
    is_flag=True,
    help="Rewrite declared floors in place (lock files and hash pins are reported).",
)
@click.option(
    "--resolve",
    is_flag=True,
    help="Prove each requirements file / pyproject.toml (as fixed) resolves with the target TRL "
    "(uv pip compile; needs the package index).",
)
@click.option(
    "--target-trl", default="1.13.0", show_default=True, help="The TRL release to check against."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "sarif"]),
    default="text",
    show_default=True,
)
def compat_command(
    path: str,
    no_installed: bool,
    python: str | None,
    all_platforms: bool,
    fix: bool,
    resolve: bool,
    target_trl: str,
    fmt: str,
) -> None:
    """Check the installed environment and every requirements file under PATH against TRL 1.13.

    Reads requirements*.txt (req.txt, requirement.txt, ...) / *.in, pyproject.toml, setup.cfg,
    setup.py (statically), Pipfile, environment.yml, uv.lock / poetry.lock / pylock.toml and
    `%pip install` lines in notebooks.

    \b
    Examples:
      trl-migrate compat .
      trl-migrate compat --no-installed --fix .
      trl-migrate compat --no-installed --fix --resolve .
      trl-migrate compat --python .venv/bin/python --format json .
    """
    from migrate import api

    if not os.path.exists(path):
        click.echo(f"error: {path}: no such file or folder", err=True)
        sys.exit(2)
    try:
        report = api.check_compat(
            path,
            installed=not no_installed,
            python=python,
            all_platforms=all_platforms,
            fix=fix,
            target_trl=target_trl,
            resolve=resolve,
        )
    except api.RulesError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(_render(report, fmt), nl=False)
    sys.exit(report.exit_code)


def _render(report, fmt: str) -> str:  # type: ignore[no-untyped-def]
    from migrate.kernel.codes import compat_entries
    from migrate.render import render_json, render_sarif, summarize, use_color

    if fmt == "json":
        summary = summarize(report.results, exit_code=report.exit_code)
        return render_json("compat", report.results, summary, extra=report.to_json_extra())
    if fmt == "sarif":
        return render_sarif(report.results, compat_entries())
    from migrate.render.compat import render_text

    return render_text(report, color=use_color(sys.stdout))

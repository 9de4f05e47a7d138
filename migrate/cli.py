"""The `trl-migrate` command: parses options, calls migrate.api, renders. Nothing else.

Import cost matters here (every `fix` pays it): torch, transformers and trl are never imported
by this module; subcommands that need them import them inside their functions.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from migrate import __version__
from migrate.cli_upgrade import rewrite_options, trl_version_option

FIX_FORMATS = ("text", "json", "sarif", "github")


def _codes(values: tuple[str, ...]) -> list[str]:
    """`--select TRL101,TRL102 --select TRL2` -> ["TRL101", "TRL102", "TRL2"]."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="trl-migrate")
def main() -> None:
    """Move PPO-era TRL code, pins and environments to TRL 1.13.

    \b
    Examples:
      trl-migrate fix --diff src/          show what would change
      trl-migrate fix src/ notebooks/      rewrite in place
      trl-migrate rules TRL101             explain one rule
    """


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--diff", "diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if anything would change.")
@click.option(
    "--select",
    multiple=True,
    metavar="CODES",
    help="Only these rule codes or prefixes (comma-separated).",
)
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes.")
@click.option(
    "--target",
    type=click.Choice(["rloo", "grpo"]),
    default=None,
    help="Trainer that PPO code moves to [default: rloo, or [tool.trl-migrate] target].",
)
@trl_version_option
@click.option("--format", "fmt", type=click.Choice(FIX_FORMATS), default="text", show_default=True)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes [default: CPU count].",
)
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--quiet", "-q", is_flag=True, help="Only failures and the summary line.")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Also list unchanged and skipped files, and where settings came from.",
)
def fix(
    paths: tuple[str, ...],
    diff: bool,
    check: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    target: str | None,
    trl_version: str | None,
    fmt: str,
    jobs: int | None,
    statistics: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Rewrite TRL code under PATHS (.py files and notebooks) for TRL 1.13.

    Folders are walked recursively, honouring .gitignore; files named here are always
    processed. Settings may come from [tool.trl-migrate] in the nearest pyproject.toml;
    flags win. Exit 0: nothing left to do; 1: changes to make (--check/--diff) or TODOs
    left for a human; 2: a file could not be processed.

    \b
    Examples:
      trl-migrate fix --check .
      trl-migrate fix --diff train_ppo.py notebooks/
      trl-migrate fix --select TRL101 --format json src/
      trl-migrate fix --target grpo --statistics .
      trl-migrate fix --trl-version 0.7.10 train_ppo.py
    """
    from migrate import api
    from migrate.kernel.config import ConfigError, load
    from migrate.render import (
        fix_summary_line,
        render_github,
        render_json,
        render_sarif,
        render_statistics,
        render_text_findings,
        use_color,
    )

    if diff and check:
        raise click.UsageError(
            "--diff and --check do not go together: --diff already writes nothing"
        )
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose do not go together")
    try:
        settings = load(paths[0])
    except ConfigError as e:
        raise click.UsageError(str(e)) from e
    mode = api.DIFF if diff else api.CHECK if check else api.WRITE
    options = rewrite_options(target, trl_version, settings)
    err = sys.stderr
    bar = _Progress(err) if fmt == "text" and not quiet and err.isatty() else None
    try:
        report = api.fix_paths(
            list(paths),
            mode=mode,
            select=_codes(select) or list(settings.select),
            ignore=_codes(ignore) or list(settings.ignore),
            options=options,
            jobs=jobs or settings.jobs,
            exclude=settings.exclude,
            exclude_root=settings.root,
            progress=bar.update if bar else None,
        )
    except api.UnknownRuleError as e:
        where = f" (from {settings.source})" if settings.source and not (select or ignore) else ""
        raise click.UsageError(f"{e}{where}") from e
    finally:
        if bar:
            bar.close()
    results = report.results if verbose else report.reported()
    if fmt == "json":
        click.echo(render_json("fix", results, report.summary()), nl=False)
    elif fmt == "sarif":
        click.echo(render_sarif(results, api.fix_catalogue()), nl=False)
    elif fmt == "github":
        click.echo(render_github(results), nl=False)
    else:
        if diff:
            for res in report.results:
                if res.diff:
                    click.echo(res.diff, nl=False)
        color = use_color(err)
        if verbose and settings.source:
            click.echo(f"settings from {settings.source}", err=True)
        if statistics:
            click.echo(
                render_statistics(results, {r["id"]: r["name"] for r in api.fix_rules()}),
                nl=False,
                err=True,
            )
        else:
            shown = [r for r in results if r.status.value == "failed"] if quiet else results
            click.echo(
                render_text_findings(shown, color=color, findings=not quiet, statuses=verbose),
                nl=False,
                err=True,
            )
        click.echo(fix_summary_line(report), err=True)
    sys.exit(report.exit_code)


class _Progress:
    """A progress bar on stderr for runs with enough files to parse; drawn only on a terminal."""

    MIN_FILES = 50

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self.stream = stream
        self.bar: Any = None  # click.progressbar, once enough files are known

    def update(self, done: int, total: int) -> None:
        if total < self.MIN_FILES:
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label="trl-migrate", file=self.stream)
            self.bar.__enter__()
        self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


@main.command()
@click.argument("code", required=False)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def rules(code: str | None, fmt: str) -> None:
    """List every rule, or explain one: code, summary and a before/after example.

    Code rules (TRL1nn, `fix`) come with examples; the checks of `compat` (TRL2nn declared
    requirements, TRL3nn installed environment) and the outcomes of `smoke` (TRL4nn) with their
    summaries.

    \b
    Examples:
      trl-migrate rules
      trl-migrate rules TRL102
      trl-migrate rules TRL201
      trl-migrate rules TRL410
    """
    import json

    from migrate.api import rules_catalogue

    catalogue = rules_catalogue()
    if code is not None:
        catalogue = [r for r in catalogue if r["id"] == code.upper() or r["name"] == code.lower()]
        if not catalogue:
            raise click.UsageError(f"unknown rule {code!r}; `trl-migrate rules` lists them")
    if fmt == "json":
        click.echo(json.dumps(catalogue, indent=2))
        return
    for rule in catalogue:
        click.echo(f"{rule['id']}  {rule['name']:<14} {rule['summary']}")
        if code is not None:
            if "before" in rule:
                click.echo(
                    "\nBefore:\n" + _indent(rule["before"]) + "\nAfter:\n" + _indent(rule["after"])
                )
            click.echo(f"Docs: {rule['link']}")


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


# subcommands registered by their own modules
main.add_command(__import__("migrate.cli_compat", fromlist=["compat_command"]).compat_command)
main.add_command(__import__("migrate.cli_smoke", fromlist=["smoke_command"]).smoke_command)
for _command in __import__("migrate.cli_upgrade", fromlist=["COMMANDS"]).COMMANDS:
    main.add_command(_command)

"""The `trl-migrate` command: parses options, calls migrate.api, renders. Nothing else.

Import cost matters here (every `fix` pays it): torch, transformers and trl are never imported
by this module; subcommands that need them import them inside their functions.
"""

from __future__ import annotations

import sys

import click

from migrate import __version__

FORMATS = ("text", "json", "sarif")


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
@click.option("--select", multiple=True, metavar="CODES", help="Only these rule codes or prefixes (comma-separated).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes.")
@click.option("--target", type=click.Choice(["rloo", "grpo"]), default="rloo", show_default=True,
              help="Trainer that PPO code moves to.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Worker processes [default: CPU count].")
def fix(paths: tuple[str, ...], diff: bool, check: bool, select: tuple[str, ...], ignore: tuple[str, ...],
        target: str, fmt: str, jobs: int | None) -> None:
    """Rewrite TRL code under PATHS for TRL 1.13.

    Folders are walked recursively, honouring .gitignore; files named here are always
    processed. Exit 0: nothing left to do; 1: changes to make (--check/--diff) or TODOs
    left for a human; 2: a file could not be processed.

    \b
    Examples:
      trl-migrate fix --check .
      trl-migrate fix --diff train_ppo.py
      trl-migrate fix --select TRL101 --format json src/
    """
    from codemods import UnknownRuleError
    from migrate import api
    from migrate.render import render_json, render_sarif, render_text_findings, use_color

    if diff and check:
        raise click.UsageError("--diff and --check do not go together: --diff already writes nothing")
    mode = api.DIFF if diff else api.CHECK if check else api.WRITE
    try:
        report = api.fix_paths(list(paths), mode=mode, select=_codes(select), ignore=_codes(ignore),
                               options=api.Options(target=target), jobs=jobs)
    except UnknownRuleError as e:
        raise click.UsageError(str(e)) from e
    if fmt == "json":
        click.echo(render_json("fix", report.reported(), report.summary()), nl=False)
    elif fmt == "sarif":
        click.echo(render_sarif(report.reported(), api.rules_catalogue()), nl=False)
    else:
        if diff:
            for res in report.results:
                if res.diff:
                    click.echo(res.diff, nl=False)
        click.echo(render_text_findings(report.reported(), color=use_color(sys.stderr)), nl=False, err=True)
        click.echo(_summary_line(report), err=True)
    sys.exit(report.exit_code)


def _summary_line(report) -> str:  # type: ignore[no-untyped-def]
    s = report.summary()
    verb = {"write": "rewritten", "check": "would be rewritten", "diff": "would be rewritten"}[report.mode]
    manual = s["by_fix"].get("manual", 0)
    parts = [
        f"{s['changed']} file{'s' if s['changed'] != 1 else ''} {verb}",
        f"{s['unchanged']} unchanged",
        f"{s['failed']} failed",
        f"{manual} TODO{'s' if manual != 1 else ''} for a human",
    ]
    return f"trl-migrate: {', '.join(parts)} ({s['discovered']} files found, {s['parsed']} parsed, {s['seconds']:.2f} s)"


@main.command()
@click.argument("code", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules(code: str | None, fmt: str) -> None:
    """List every rule, or explain one: code, summary and a before/after example.

    \b
    Examples:
      trl-migrate rules
      trl-migrate rules TRL102
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
            click.echo("\nBefore:\n" + _indent(rule["before"]) + "\nAfter:\n" + _indent(rule["after"]))
            click.echo(f"Docs: {rule['link']}")


@main.command()
@click.option("--dest", type=click.Path(file_okay=False), default=None,
              help="Copy the example here instead of a new temporary folder.")
def demo(dest: str | None) -> None:
    """Upgrade a bundled example PPO project (a copy of it) and show what changed.

    \b
    Example:
      trl-migrate demo
    """
    from migrate import api
    from migrate.render import render_text_findings, use_color

    where = api.copy_example(dest)
    click.echo(f"trl-migrate demo: copied the example PPO project to {where}\n")
    preview = api.fix_paths([where], mode=api.DIFF)
    for res in preview.results:
        if res.diff:
            click.echo(res.diff, nl=False)
    report = api.fix_paths([where])
    click.echo("")
    click.echo(render_text_findings(report.reported(), color=use_color(sys.stdout)), nl=False)
    click.echo(_summary_line(report))
    click.echo(f"\nThe upgraded copy is in {where}; TODO(trl-migrate ...) comments mark what needs a human.")
    sys.exit(2 if report.exit_code == 2 else 0)


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


# subcommands registered by their own modules
main.add_command(__import__("migrate.cli_compat", fromlist=["compat_command"]).compat_command)
main.add_command(__import__("migrate.cli_smoke", fromlist=["smoke_command"]).smoke_command)

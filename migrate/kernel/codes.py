"""The codes of every job besides the codemod rules (which register themselves in `codemods`):
compat's checks (TRL2nn declared requirements, TRL3nn installed environment) and smoke's
outcomes (TRL4nn). `trl-migrate rules`, SARIF output and the docs read them from here."""

from __future__ import annotations

from migrate.kernel.findings import Severity, link_for

# `fix` itself (not a rule): code -> (name, severity, one line)
FIX: dict[str, tuple[str, Severity, str]] = {
    "TRL190": (
        "vendored-trl",
        Severity.WARNING,
        "a copy of TRL inside the repo shadows the installed TRL; its files are not rewritten",
    ),
    "TRL191": (
        "cell-not-python",
        Severity.WARNING,
        "a notebook cell that is not Python is left as it is; the other cells are rewritten",
    ),
}

# code -> (name, severity, one line)
COMPAT: dict[str, tuple[str, Severity, str]] = {
    # declared requirements
    "TRL200": (
        "source-unreadable",
        Severity.ERROR,
        "a requirements source could not be read or parsed",
    ),
    "TRL201": (
        "no-version-works",
        Severity.ERROR,
        "no version the requirement admits works with the target TRL",
    ),
    "TRL202": (
        "floor-too-low",
        Severity.WARNING,
        "the requirement admits versions older than the target TRL needs",
    ),
    "TRL203": (
        "above-ceiling",
        Severity.WARNING,
        "the requirement admits versions newer than the target TRL supports",
    ),
    "TRL204": (
        "unpinned-url",
        Severity.WARNING,
        "a URL or VCS requirement with no version the check can judge",
    ),
    "TRL205": (
        "requests-undeclared",
        Severity.WARNING,
        "trl is declared without `requests`, which its GRPO/RLOO trainers import",
    ),
    "TRL206": (
        "include-cycle",
        Severity.INFO,
        "a -r/-c include that leads back to a file already being read",
    ),
    "TRL207": (
        "gradient-checkpointing-offload",
        Severity.INFO,
        "TRL 1.13's GRPO/RLOO trainers crash with gradient-checkpointing offload",
    ),
    "TRL208": (
        "conflicting-pins",
        Severity.WARNING,
        "two sources of one repo declare trl ranges no version satisfies together",
    ),
    "TRL209": (
        "does-not-resolve",
        Severity.ERROR,
        "a manifest's requirements do not resolve together with the target TRL (--resolve)",
    ),
    "TRL210": (
        "resolve-skipped",
        Severity.INFO,
        "--resolve could not run: no resolver, or the package index is unreachable",
    ),
    # installed environment
    "TRL300": (
        "environment-unreadable",
        Severity.ERROR,
        "the interpreter could not be run or its metadata could not be read",
    ),
    "TRL301": ("missing", Severity.ERROR, "trl or a package it always needs is not installed"),
    "TRL302": (
        "too-old",
        Severity.ERROR,
        "an installed version is older than the target TRL needs",
    ),
    "TRL303": (
        "too-new",
        Severity.WARNING,
        "an installed version is newer than the target TRL supports",
    ),
    "TRL304": (
        "duplicate-install",
        Severity.WARNING,
        "one distribution is installed more than once on sys.path",
    ),
    "TRL305": (
        "broken-metadata",
        Severity.WARNING,
        "a dist-info whose metadata has no readable name or version",
    ),
    "TRL306": (
        "requests-missing",
        Severity.ERROR,
        "trl 1.12-1.14.1 is installed without `requests`: GRPOTrainer/RLOOTrainer fail to import",
    ),
    "TRL307": (
        "gradient-checkpointing-offload-env",
        Severity.INFO,
        "the installed TRL crashes with gradient-checkpointing offload in GRPO/RLOO",
    ),
    "TRL308": (
        "python-too-old",
        Severity.ERROR,
        "the interpreter is older than the target TRL supports",
    ),
    "TRL309": (
        "torch-bf16",
        Severity.INFO,
        "torch's version and whether bf16 works on this machine",
    ),
}

PASSED, IMPORT, CRASH, NO_STEP, NON_FINITE, TIMEOUT, OFFLINE, EXIT, HARNESS, SKIPPED = (
    "TRL410",
    "TRL411",
    "TRL412",
    "TRL413",
    "TRL414",
    "TRL415",
    "TRL416",
    "TRL417",
    "TRL418",
    "TRL419",
)
AT_SCALE = "TRL420"
# code -> (name, one line): what `trl-migrate rules TRL41n` prints; docs/smoke.md has the details.
SMOKE: dict[str, tuple[str, str]] = {
    PASSED: (
        "trained",
        "The script trained: every Trainer it built ran its steps and every logged loss is finite.",
    ),
    IMPORT: (
        "import-error",
        "The script imports a name TRL 1.13 (or another package) does not have; do what the "
        "TODO on that line says.",
    ),
    CRASH: (
        "raised",
        "The script raised; the finding sits on the last line of the script the exception came "
        "through.",
    ),
    NO_STEP: (
        "no-step",
        "No training step ran: no Trainer was built, or train() was never called.",
    ),
    NON_FINITE: ("non-finite-loss", "A logged loss is NaN or infinite."),
    TIMEOUT: ("timeout", "The script ran past --timeout and was killed with its children."),
    OFFLINE: (
        "network",
        "The script tried to reach the network (a download the stand-ins do not cover).",
    ),
    EXIT: (
        "exited",
        "The script exited before training with a non-zero status, usually its argument parser: "
        "pass "
        "its arguments after `--`.",
    ),
    HARNESS: (
        "not-started",
        "The smoke run could not start: no such script, or the harness died without a result.",
    ),
    AT_SCALE: (
        "fails-at-scale",
        "The capped smoke run trained, but the script's own settings fail a check of its config "
        "on this machine (batch sizes and num_generations, a precision the device lacks): the "
        "real run would stop there. After a precision the device lacks, the checks run again "
        "with it off, for what a device that has it would stop at. Also: a flag of the launch "
        "line that the rewritten config lacks, which the smoke run left out.",
    ),
    SKIPPED: (
        "not-run",
        "Not smoke-run: the smoke extra (torch, transformers, trl, datasets, accelerate) is "
        "missing.",
    ),
}


def entry(code: str, name: str, summary: str) -> dict[str, str]:
    """One code in the shape `trl-migrate rules` and SARIF rules use."""
    return {"id": code, "name": name, "summary": summary, "link": link_for(code)}


def compat_entries() -> list[dict[str, str]]:
    return [entry(code, name, summary) for code, (name, _, summary) in sorted(COMPAT.items())]


def smoke_entries() -> list[dict[str, str]]:
    return [entry(code, name, summary) for code, (name, summary) in sorted(SMOKE.items())]


def fix_entries() -> list[dict[str, str]]:
    return [entry(code, name, summary) for code, (name, _, summary) in sorted(FIX.items())]

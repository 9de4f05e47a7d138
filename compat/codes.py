"""Every compat code, its severity and one-line summary: for docs, SARIF rules and `rules`."""

from __future__ import annotations

from migrate.findings import Severity, link_for

CODES: dict[str, tuple[str, Severity, str]] = {
    # declared requirements
    "TRL200": ("source-unreadable", Severity.ERROR, "a requirements source could not be read or parsed"),
    "TRL201": ("no-version-works", Severity.ERROR, "no version the requirement admits works with the target TRL"),
    "TRL202": ("floor-too-low", Severity.WARNING, "the requirement admits versions older than the target TRL needs"),
    "TRL203": ("above-ceiling", Severity.WARNING, "the requirement admits versions newer than the target TRL supports"),
    "TRL204": ("unpinned-url", Severity.WARNING, "a URL or VCS requirement with no version the check can judge"),
    "TRL205": ("requests-undeclared", Severity.WARNING, "trl is declared without `requests`, which its GRPO/RLOO trainers import"),
    "TRL206": ("include-cycle", Severity.INFO, "a -r/-c include that leads back to a file already being read"),
    "TRL207": ("gradient-checkpointing-offload", Severity.INFO, "TRL 1.13's GRPO/RLOO trainers crash with gradient-checkpointing offload"),
    # installed environment
    "TRL300": ("environment-unreadable", Severity.ERROR, "the interpreter could not be run or its metadata could not be read"),
    "TRL301": ("missing", Severity.ERROR, "trl or a package it always needs is not installed"),
    "TRL302": ("too-old", Severity.ERROR, "an installed version is older than the target TRL needs"),
    "TRL303": ("too-new", Severity.WARNING, "an installed version is newer than the target TRL supports"),
    "TRL304": ("duplicate-install", Severity.WARNING, "one distribution is installed more than once on sys.path"),
    "TRL305": ("broken-metadata", Severity.WARNING, "a dist-info whose metadata has no readable name or version"),
    "TRL306": ("requests-missing", Severity.ERROR, "trl 1.12-1.14.1 is installed without `requests`: GRPOTrainer/RLOOTrainer fail to import"),
    "TRL307": ("gradient-checkpointing-offload-env", Severity.INFO, "the installed TRL crashes with gradient-checkpointing offload in GRPO/RLOO"),
    "TRL308": ("python-too-old", Severity.ERROR, "the interpreter is older than the target TRL supports"),
    "TRL309": ("torch-bf16", Severity.INFO, "torch's version and whether bf16 works on this machine"),
}


def sarif_rules() -> list[dict[str, str]]:
    return [
        {"id": code, "name": name, "summary": summary, "link": link_for(code)}
        for code, (name, _, summary) in sorted(CODES.items())
    ]


def severity(code: str) -> Severity:
    return CODES[code][1]

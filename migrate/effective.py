"""The effective-settings checker: what a PPO run trained with before the rewrite and what the
rewritten TRL 1.13 run trains with, setting by setting, and whether `fix` said so.

For each PPO config call of the original file, the old run's settings come from the defaults of
its era (`codemods/data/ppo_defaults.json`, read from every TRL wheel) and the call's literal
keywords, through what each era's trainer did with them (legacy PPO never used a scheduler or
mixed precision of its own; the v2 trainers never clipped gradients). For the rewritten file,
the target config is built for real from the rewritten call's literal keywords in a subprocess
(the installed TRL 1.13, on the CPU), and its fields read back. A setting whose old value is
known and differs from the new one must be named by a finding; one whose old default changed
between releases of the era counts as differing unless the new value matches every release.

    python -m migrate.effective SCRIPT.py [--target rloo|grpo]    # runs `fix` on it in memory, then checks

It needs `trl` (the smoke extra); `fix` never imports it.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
import math
import subprocess
import sys
from collections.abc import Sequence
from importlib import resources
from typing import Any

from migrate.kernel.findings import Finding

UNKNOWN: Any = "<not a literal>"
CONFIG_CLASSES = {"PPOConfig", "PPOv2Config"}
TARGET_CLASSES = {"RLOOConfig", "GRPOConfig"}
LEGACY_ONLY = {
    "ppo_epochs",
    "init_kl_coef",
    "adap_kl_ctrl",
    "mini_batch_size",
    "forward_batch_size",
    "steps",
    "batch_size",
    "log_with",
    "model_name",
    "query_dataset",
    "horizon",
    "target",
    "use_score_scaling",
    "use_score_norm",
    "score_clip",
    "optimize_cuda_cache",
    "accelerator_kwargs",
    "tracker_project_name",
}
V2_ONLY = {
    "num_ppo_epochs",
    "total_episodes",
    "num_mini_batches",
    "response_length",
    "kl_coef",
    "output_dir",
    "kl_estimator",
    "missing_eos_penalty",
    "stop_token",
    "sft_model_path",
    "reward_model_path",
    "per_device_train_batch_size",
    "local_rollout_forward_batch_size",
}
GENERIC = {
    "batch_size",
    "steps",
    "target",
    "output_dir",
    "per_device_train_batch_size",
    "model_name",
}
# Words a finding uses when it speaks of a setting: any one of them covers a difference.
NAMES = {
    "precision": ("bf16", "fp16"),
    "learning_rate": ("learning_rate",),
    "lr_schedule": ("lr_scheduler_type",),
    "grad_clip": ("max_grad_norm",),
    "epochs_per_generation": ("num_iterations", "ppo_epochs", "num_ppo_epochs"),
    "kl_coef": ("beta", "kl_coef", "init_kl_coef"),
    "kl_control": ("adap_kl_ctrl",),
    "micro_batch": ("per_device_train_batch_size", "mini_batch_size"),
    "grad_accumulation": ("gradient_accumulation_steps",),
    "samples_per_generation": ("steps_per_generation", "batch_size"),
    "completions_per_prompt": ("num_generations",),
    "max_completion_length": ("max_completion_length", "response_length"),
    "temperature": ("temperature",),
    "seed": ("seed",),
    "gradient_checkpointing": ("gradient_checkpointing",),
}


@dataclasses.dataclass(frozen=True)
class Difference:
    setting: str
    old: Any  # a value, or a tuple of the values the era's releases had
    new: Any
    covered_by: str  # the code of the finding that names it, "" when none does

    @property
    def covered(self) -> bool:
        return bool(self.covered_by)


@dataclasses.dataclass
class CallReport:
    line: int
    era: str
    old: dict[str, Any]
    new: dict[str, Any]
    differences: list[Difference]
    error: str = ""  # why the new config could not be built, if it could not

    @property
    def uncovered(self) -> list[Difference]:
        return [d for d in self.differences if not d.covered]


@functools.cache
def era_defaults() -> dict[str, dict[str, tuple[Any, ...]]]:
    """era -> field -> the distinct defaults its releases had (newest first)."""
    raw = json.loads(resources.files("codemods").joinpath("data/ppo_defaults.json").read_text())
    out: dict[str, dict[str, list[Any]]] = {}
    for version in reversed(list(raw["versions"])):
        for era, fields in raw["versions"][version].items():
            for name, value in fields.items():
                seen = out.setdefault(era, {}).setdefault(name, [])
                if value not in seen:
                    seen.append(value)
    return {era: {k: tuple(v) for k, v in fields.items()} for era, fields in out.items()}


# -- reading calls ------------------------------------------------------------------------------------
@dataclasses.dataclass
class Call:
    cls: str
    line: int
    kwargs: dict[str, Any]  # literal values, UNKNOWN where not literal
    star: bool  # has *args/**kwargs


def _value(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return UNKNOWN


PARSERS = {"HfArgumentParser", "TRLParser"}


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")


def calls(text: str, classes: set[str]) -> list[Call]:
    """Config calls, and configs a command-line parser builds (`HfArgumentParser((Args, PPOConfig))`):
    those run with the class defaults, changed by the file's `parser.set_defaults(...)`."""
    tree = ast.parse(text)
    out = []
    defaults: dict[str, Any] = {}
    parsed: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        if name in classes:
            star = bool(node.args) or any(k.arg is None for k in node.keywords)
            out.append(
                Call(
                    name,
                    node.lineno,
                    {k.arg: _value(k.value) for k in node.keywords if k.arg},
                    star,
                )
            )
        elif name in PARSERS and node.args:
            inner = node.args[0]
            elements = inner.elts if isinstance(inner, (ast.Tuple, ast.List)) else [inner]
            parsed += [(_name(e), node.lineno) for e in elements if _name(e) in classes]
        elif name == "set_defaults":
            defaults.update({k.arg: _value(k.value) for k in node.keywords if k.arg})
    out += [Call(cls, line, dict(defaults), False) for cls, line in parsed]
    return sorted(out, key=lambda c: c.line)


def era_of(call: Call, text: str) -> str:
    if "trl.experimental" in text:
        return "experimental"
    if call.cls == "PPOv2Config":
        return "ppov2"
    keys = set(call.kwargs)
    if keys & LEGACY_ONLY and not keys & V2_ONLY:
        return "legacy"
    if keys & V2_ONLY:
        return "v2"
    # A parsed config: the fields the file reads tell (distinctive ones only), then the loop.
    reads = {n.attr for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Attribute)}
    legacy, v2 = reads & (LEGACY_ONLY - GENERIC), reads & (V2_ONLY - GENERIC)
    if legacy and not v2:
        return "legacy"
    if v2 and not legacy:
        return "v2"
    # Value-head wrappers and the step() loop belong to the legacy trainer.
    return "legacy" if any(s in text for s in (".step(", ".generate(", "ValueHead")) else "v2"


# -- the old run ------------------------------------------------------------------------------------------
def old_settings(call: Call, era: str) -> dict[str, Any]:
    """Setting -> value (or a tuple of the values the era's releases had; UNKNOWN when not literal)."""
    defaults = era_defaults()[era]

    def get(name: str, fallback: Any = None) -> Any:
        if name in call.kwargs:
            return call.kwargs[name]
        values = defaults.get(name, (fallback,))
        return values[0] if len(values) == 1 else values

    out: dict[str, Any] = {
        "learning_rate": get("learning_rate"),
        "seed": get("seed"),
        "grad_accumulation": get("gradient_accumulation_steps", 1),
        "gradient_checkpointing": get("gradient_checkpointing", False),
        "completions_per_prompt": 1,
    }
    if era == "legacy":
        mini = call.kwargs.get("forward_batch_size") or get("mini_batch_size")
        out.update(
            {
                # Legacy PPO built its own Accelerator (mixed precision only through accelerator_kwargs) and
                # Adam optimizer with no scheduler unless one was passed to the trainer.
                "precision": UNKNOWN if "accelerator_kwargs" in call.kwargs else "fp32",
                "lr_schedule": "constant",
                "grad_clip": _clip(get("max_grad_norm")),
                "epochs_per_generation": get("ppo_epochs"),
                "kl_coef": get("init_kl_coef"),
                "kl_control": _kl_control(get("adap_kl_ctrl")),
                "micro_batch": mini,
                "samples_per_generation": get("batch_size"),
            }
        )
    else:
        bf16, fp16 = get("bf16", False), get("fp16", False)
        out.update(
            {
                "precision": _precision(bf16, fp16),
                "lr_schedule": get("lr_scheduler_type"),
                "grad_clip": "off",  # the PPOv2/v2/experimental trainers never clip gradients
                "epochs_per_generation": get("num_ppo_epochs"),
                "kl_coef": get("kl_coef"),
                "kl_control": "fixed",
                "micro_batch": get("per_device_train_batch_size"),
                "max_completion_length": get("response_length"),
                "temperature": get("temperature"),
            }
        )
    return out


def _clip(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_clip(v) for v in value)
    if value is None or value == 0:
        return "off"
    return value


def _kl_control(value: Any) -> Any:
    if value is UNKNOWN:
        return UNKNOWN
    return "adaptive" if value in (True, None) else "fixed"


def _precision(bf16: Any, fp16: Any) -> Any:
    if isinstance(bf16, tuple):
        return tuple(dict.fromkeys(_precision(b, fp16) for b in bf16))
    if UNKNOWN in (bf16, fp16):
        return UNKNOWN
    return "fp16" if fp16 else "bf16" if bf16 else "fp32"


# -- the new run ----------------------------------------------------------------------------------------
_BUILD = r"""
import dataclasses, json, sys, tempfile, warnings
warnings.simplefilter("ignore")
import trl

def plain(v):
    return v if isinstance(v, (int, float, str, bool, type(None), list)) else str(v)

def build(cls_name, kwargs):
    cls = getattr(trl, cls_name)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            cfg = cls(**{"output_dir": tmp, **kwargs})
            fields = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}
        except Exception as e:  # the config the rewrite wrote is rejected: say why, and read the defaults
            out["error"] = f"{type(e).__name__}: {e}"
            fields = {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}
            fields.update(kwargs)
            if fields.get("bf16") is None:
                fields["bf16"] = not fields.get("fp16")
    out["fields"] = {k: plain(v) for k, v in fields.items()}
    return out

for line in sys.stdin:
    cls_name, kwargs = json.loads(line)
    print(json.dumps(build(cls_name, kwargs)), flush=True)
"""


class _Builder:
    """One interpreter with TRL imported, building configs on request (importing trl takes seconds)."""

    def __init__(self, python: str) -> None:
        self.proc = subprocess.Popen(
            [python, "-c", _BUILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": ""},
        )
        self.cache: dict[str, tuple[dict[str, Any], str]] = {}

    def build(self, cls: str, kwargs: dict[str, Any]) -> tuple[dict[str, Any], str]:
        key = json.dumps([cls, kwargs], sort_keys=True)
        if key not in self.cache:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(key + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"could not build {cls}: the builder process ended")
            res = json.loads(line)
            self.cache[key] = (res["fields"], res.get("error", ""))
        fields, error = self.cache[key]
        return dict(fields), error


_BUILDERS: dict[str, _Builder] = {}


def build_new(
    cls: str, kwargs: dict[str, Any], *, python: str = sys.executable
) -> tuple[dict[str, Any], str]:
    """The fields of the real TRL 1.13 config built from these keywords (and why it failed, if)."""
    literal = {
        k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items() if v is not UNKNOWN
    }
    builder = _BUILDERS.get(python)
    if builder is None or builder.proc.poll() is not None:
        builder = _BUILDERS[python] = _Builder(python)
    fields, error = builder.build(cls, literal)
    for k, v in kwargs.items():
        if v is UNKNOWN:
            fields[k] = UNKNOWN
    return fields, error


def new_settings(fields: dict[str, Any]) -> dict[str, Any]:
    ga = fields.get("gradient_accumulation_steps", 1)
    micro = fields.get("per_device_train_batch_size")
    spg = fields.get("steps_per_generation") or ga
    return {
        "precision": _precision(fields.get("bf16"), fields.get("fp16")),
        "learning_rate": fields.get("learning_rate"),
        "lr_schedule": fields.get("lr_scheduler_type"),
        "grad_clip": _clip(fields.get("max_grad_norm")),
        "epochs_per_generation": fields.get("num_iterations"),
        "kl_coef": fields.get("beta"),
        "kl_control": "fixed",
        "micro_batch": micro,
        "grad_accumulation": ga,
        "samples_per_generation": micro * spg
        if isinstance(micro, int) and isinstance(spg, int)
        else UNKNOWN,
        "completions_per_prompt": fields.get("num_generations"),
        "max_completion_length": fields.get("max_completion_length"),
        "temperature": fields.get("temperature"),
        "seed": fields.get("seed"),
        "gradient_checkpointing": fields.get("gradient_checkpointing"),
    }


# -- comparing --------------------------------------------------------------------------------------
def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9)
        except (TypeError, ValueError):
            return False
    return a == b


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    out = []
    for name, before in old.items():
        after = new.get(name, UNKNOWN)
        if before is UNKNOWN or after is UNKNOWN or name not in new:
            continue
        if isinstance(before, tuple):  # the era's releases disagreed: same only if it matches all
            if not all(_same(b, after) for b in before):
                out.append((name, before, after))
        elif not _same(before, after):
            out.append((name, before, after))
    return out


def covering(setting: str, findings: Sequence[Finding]) -> str:
    words = NAMES.get(setting, (setting,))
    for f in findings:
        if any(w in f.message for w in words):
            return f.code
    return ""


def check(
    original: str, rewritten: str, findings: Sequence[Finding], *, python: str = sys.executable
) -> list[CallReport]:
    """One report per PPO config call of `original` matched, in order, to the target config calls of
    `rewritten` (a call the rewrite left as it was gets no report: its TODO says why)."""
    old_calls = [c for c in calls(original, CONFIG_CLASSES) if not c.star]
    new_calls = calls(rewritten, TARGET_CLASSES)
    reports = []
    for old, new in zip(old_calls, new_calls):
        era = era_of(old, original)
        before = old_settings(old, era)
        fields, error = build_new(new.cls, new.kwargs, python=python)
        after = new_settings(fields)
        diffs = [
            Difference(n, b, a, covering(n, findings)) for n, b, a in differences(before, after)
        ]
        reports.append(CallReport(old.line, era, before, after, diffs, error))
    return reports


def main(argv: list[str] | None = None) -> int:
    import argparse

    from codemods import RULES
    from codemods.base import Options
    from codemods.engine import process

    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("original")
    p.add_argument("--target", default="rloo", choices=["rloo", "grpo"])
    args = p.parse_args(argv)
    data = open(args.original, "rb").read()
    result = process(
        args.original, data, codes=[r.code for r in RULES], options=Options(target=args.target)
    )
    rewritten = (result.new or data).decode("utf-8")
    uncovered = 0
    for r in check(data.decode("utf-8"), rewritten, result.findings):
        print(
            f"{args.original}:{r.line} ({r.era}){' - new config rejected: ' + r.error if r.error else ''}"
        )
        for d in r.differences:
            print(
                f"  {d.setting}: {d.old!r} -> {d.new!r}  {'covered by ' + d.covered_by if d.covered else 'NOT REPORTED'}"
            )
        uncovered += len(r.uncovered)
    return 1 if uncovered else 0


if __name__ == "__main__":
    raise SystemExit(main())

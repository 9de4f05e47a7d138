"""The old run's settings: each PPO config call of the original file read with `ast`, its era told,
and its literal keywords taken through the era's defaults and what its trainer did with them."""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
from importlib import resources
from typing import Any

from packaging.version import Version

from migrate.effective.values import UNKNOWN

CONFIG_CLASSES = {"PPOConfig", "PPOv2Config"}


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
    "max_completion_length": (
        "max_completion_length",
        "response_length",
        "max_new_tokens",
        "length_sampler",
    ),
    "temperature": ("temperature",),
    # the sampling settings of a legacy loop's generate() calls (migrate/effective/loop.py)
    "sampling": ("do_sample",),
    "top_k": ("top_k",),
    "top_p": ("top_p",),
    "min_p": ("min_p",),
    "repetition_penalty": ("repetition_penalty",),
    "min_length": ("min_length", "min_new_tokens"),
    "other_generation": ("generation_kwargs",),
    # the dtype the models load in (migrate/effective/models.py)
    "model_dtype": ("dtype",),
    "seed": ("seed",),
    "gradient_checkpointing": ("gradient_checkpointing",),
    "dropout": ("disable_dropout",),
    "stops_at_eos": ("stop_token",),
}


@functools.cache
def era_defaults(before: str | None = None) -> dict[str, dict[str, tuple[Any, ...]]]:
    """era -> field -> the distinct defaults its releases had (newest first); `before`: only
    the releases older than it (codemods.ppo.release_cap)."""
    raw = json.loads(resources.files("codemods").joinpath("data/ppo_defaults.json").read_text())
    out: dict[str, dict[str, list[Any]]] = {}
    for version in reversed(list(raw["versions"])):
        if before is not None and Version(version) >= Version(before):
            continue
        for era, fields in raw["versions"][version].items():
            for name, value in fields.items():
                seen = out.setdefault(era, {}).setdefault(name, [])
                if value not in seen:
                    seen.append(value)
    return {era: {k: tuple(v) for k, v in fields.items()} for era, fields in out.items()}


# -- reading calls
# ------------------------------------------------------------------------------------
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


PARSERS = {"HfArgumentParser", "TrlParser"}


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")


def calls(text: str, classes: set[str]) -> list[Call]:
    """Config calls, and configs a command-line parser builds (`HfArgumentParser((Args,
    PPOConfig))`):
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


# -- the old run
# ------------------------------------------------------------------------------------------
def old_settings(call: Call, era: str, before: str | None = None) -> dict[str, Any]:
    """Setting -> value (or a tuple of the values the era's releases had; UNKNOWN when not
    literal). `before`: the first release the file cannot have run on (v2 era only)."""
    defaults = era_defaults(before if era == "v2" else None)[era]

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
        # legacy PPO ran its forward passes in eval mode; the v2 trainers zeroed every dropout
        "dropout": "off",
    }
    if era == "legacy":
        mini = call.kwargs.get("forward_batch_size") or get("mini_batch_size")
        out.update(
            {
                # Legacy PPO built its own Accelerator (mixed precision only through
                # accelerator_kwargs) and
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
                # PPO v2 stopped a completion at EOS only with stop_token="eos"
                "stops_at_eos": _stops(get("stop_token")),
            }
        )
    return out


def _stops(stop_token: Any) -> Any:
    if isinstance(stop_token, tuple):
        return tuple(dict.fromkeys(_stops(t) for t in stop_token))
    return stop_token if stop_token is UNKNOWN else stop_token == "eos"


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

"""The new run's settings: the rewritten call's target config built for real by the installed TRL in
a
persistent subprocess (on the CPU), and its fields read back as settings."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from migrate.effective.old import _clip, _precision
from migrate.effective.values import UNKNOWN

TARGET_CLASSES = {"RLOOConfig", "GRPOConfig"}


# -- the new run
# ----------------------------------------------------------------------------------------
_BUILD = r"""
import dataclasses, json, sys, tempfile, warnings
warnings.simplefilter("ignore")
import trl

def plain(v):
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    return v if isinstance(v, (int, float, str, bool, type(None), list)) else str(v)

def build(cls_name, kwargs):
    cls = getattr(trl, cls_name)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            cfg = cls(**{"output_dir": tmp, **kwargs})
            fields = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}
        except Exception as e:  # the rewritten config is rejected: say why, read the defaults
            out["error"] = f"{type(e).__name__}: {e}"
            fields = {
                f.name: f.default
                for f in dataclasses.fields(cls)
                if f.default is not dataclasses.MISSING
            }
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
    """One interpreter with TRL imported, building configs on request (importing trl takes
    seconds)."""

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
        "dropout": _dropout(fields.get("disable_dropout")),
        "stops_at_eos": True,  # RLOO/GRPO always stop at, and mask after, the EOS token
        "seed": fields.get("seed"),
        "gradient_checkpointing": fields.get("gradient_checkpointing"),
    }


def _dropout(disable: Any) -> Any:
    return disable if disable is UNKNOWN else "off" if disable else "on"

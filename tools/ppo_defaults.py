"""Build codemods/data/ppo_defaults.json: the default of every field of every PPO config class, per
TRL release, read from the real wheels (as tools/build_symbol_table.py builds the symbol table).

    python tools/ppo_defaults.py            # wheels from .wheels/ (fetched with pip download when
    missing)

Per version and era (legacy `PPOConfig` <= 0.11, `PPOv2Config` 0.9-0.11, v2 `PPOConfig` 0.12-0.28,
`trl.experimental.ppo.PPOConfig` 0.26-1.12) the class's own literal defaults are read with `ast`,
merged over those of its TRL base classes (`OnPolicyConfig`) and, for classes built on
`transformers.TrainingArguments`, over the TrainingArguments defaults of the transformers the
release ran with (TRAINING_ARGUMENTS below; stable across transformers 4.x for these fields). A
`bf16=None` that `__post_init__` turns into `not fp16` is recorded as True. 0.4.0-0.4.1's
`PPOConfig` has no fields: its own `__init__` takes the settings, whose defaults are read instead.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WHEELS = ROOT / ".wheels"
OUT = ROOT / "codemods" / "data" / "ppo_defaults.json"
# Every release from 0.4.0 (the first with a PPO config) to 1.12.0 (the last): a project's
# declared pin (`trl==0.7.10`) may name any of them, and defaults changed within minor series.
VERSIONS = (
    "0.4.0",
    "0.4.1",
    "0.4.2",
    "0.4.3",
    "0.4.4",
    "0.4.5",
    "0.4.6",
    "0.4.7",
    "0.5.0",
    "0.6.0",
    "0.7.0",
    "0.7.1",
    "0.7.2",
    "0.7.3",
    "0.7.4",
    "0.7.5",
    "0.7.6",
    "0.7.7",
    "0.7.8",
    "0.7.9",
    "0.7.10",
    "0.7.11",
    "0.8.0",
    "0.8.1",
    "0.8.2",
    "0.8.3",
    "0.8.4",
    "0.8.5",
    "0.8.6",
    "0.9.2",
    "0.9.3",
    "0.9.4",
    "0.9.6",
    "0.10.1",
    "0.11.0",
    "0.11.1",
    "0.11.2",
    "0.11.3",
    "0.11.4",
    "0.12.0",
    "0.12.1",
    "0.12.2",
    "0.13.0",
    "0.14.0",
    "0.15.0",
    "0.15.1",
    "0.15.2",
    "0.16.0",
    "0.16.1",
    "0.17.0",
    "0.18.0",
    "0.18.1",
    "0.18.2",
    "0.19.0",
    "0.19.1",
    "0.20.0",
    "0.21.0",
    "0.22.0",
    "0.22.1",
    "0.22.2",
    "0.23.0",
    "0.23.1",
    "0.24.0",
    "0.25.0",
    "0.25.1",
    "0.26.0",
    "0.26.1",
    "0.26.2",
    "0.27.0",
    "0.27.1",
    "0.27.2",
    "0.28.0",
    "0.29.0",
    "0.29.1",
    "1.0.0",
    "1.1.0",
    "1.2.0",
    "1.3.0",
    "1.4.0",
    "1.5.0",
    "1.5.1",
    "1.6.0",
    "1.7.0",
    "1.7.1",
    "1.8.0",
    "1.9.0",
    "1.9.1",
    "1.9.2",
    "1.10.0",
    "1.11.0",
    "1.12.0",
)
# (era, module path in the wheel, class name)
CLASSES = (
    ("legacy", "trl/trainer/ppo_config.py", "PPOConfig"),
    ("ppov2", "trl/trainer/ppov2_config.py", "PPOv2Config"),
    ("v2", "trl/trainer/ppo_config.py", "PPOConfig"),
    ("experimental", "trl/experimental/ppo/ppo_config.py", "PPOConfig"),
)
# transformers.TrainingArguments defaults of the fields PPO training depends on (transformers
# 4.40-4.57, the versions TRL 0.9-0.28 ran with; unchanged across them).
TRAINING_ARGUMENTS = {
    "learning_rate": 5e-05,
    "lr_scheduler_type": "linear",
    "max_grad_norm": 1.0,
    "seed": 42,
    "num_train_epochs": 3.0,
    "max_steps": -1,
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "bf16": False,
    "fp16": False,
    "warmup_ratio": 0.0,
    "warmup_steps": 0,
    "weight_decay": 0.0,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adam_epsilon": 1e-08,
    "optim": "adamw_torch",
    "gradient_checkpointing": False,
    "logging_steps": 500,
    "save_steps": 500,
}
_FACTORY = "<factory>"


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None if isinstance(node, ast.Constant) else _FACTORY


def _field_default(value: ast.expr) -> tuple[bool, Any]:
    """(has a default, the default) of a dataclass field's right-hand side."""
    if (
        isinstance(value, ast.Call)
        and getattr(value.func, "id", getattr(value.func, "attr", "")) == "field"
    ):
        for kw in value.keywords:
            if kw.arg == "default":
                return True, _literal(kw.value)
            if kw.arg == "default_factory":
                return True, _FACTORY
        return False, None
    return True, _literal(value)


def _class(tree: ast.Module, name: str) -> ast.ClassDef | None:
    return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)


def _own_fields(cls: ast.ClassDef) -> tuple[dict[str, Any], bool]:
    """The class's field defaults, and whether __post_init__ turns a None bf16 into `not fp16`."""
    fields: dict[str, Any] = {}
    bf16_auto = False
    for node in cls.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.value is not None
        ):
            has, default = _field_default(node.value)
            if has:
                fields[node.target.id] = default
        if isinstance(node, ast.FunctionDef) and node.name == "__post_init__":
            text = ast.unparse(node)
            bf16_auto = "self.bf16 is None" in text or "bf16 = not" in text
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            # 0.4.0-0.4.1: a @dataclass with no fields whose own __init__ takes the settings
            # (`def __init__(self, model_name=None, steps=20000, ...)`)
            positional = node.args.args[1:]  # without self
            given = node.args.defaults
            for arg, default in zip(positional[len(positional) - len(given) :], given, strict=True):
                fields.setdefault(arg.arg, _literal(default))
            for arg, kw_default in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True):
                if kw_default is not None:
                    fields.setdefault(arg.arg, _literal(kw_default))
    return fields, bf16_auto


def _bases(cls: ast.ClassDef) -> list[str]:
    return [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in cls.bases]


def _find(zf: zipfile.ZipFile, name: str) -> tuple[ast.Module, ast.ClassDef] | None:
    """A TRL class of that name anywhere in the wheel (OnPolicyConfig moved between modules)."""
    for entry in zf.namelist():
        if entry.startswith("trl/") and entry.endswith(".py"):
            data = zf.read(entry)
            if f"class {name}(".encode() in data:
                tree = ast.parse(data)
                cls = _class(tree, name)
                if cls is not None:
                    return tree, cls
    return None


def defaults_of(zf: zipfile.ZipFile, module: str, name: str) -> dict[str, Any] | None:
    try:
        tree = ast.parse(zf.read(module))
    except KeyError:
        return None
    cls = _class(tree, name)
    if cls is None:
        return None
    chain = [cls]
    while True:
        base = next(
            (b for b in _bases(chain[-1]) if b not in ("TrainingArguments", "object")), None
        )
        found = _find(zf, base) if base else None
        if found is None:
            break
        chain.append(found[1])
    merged: dict[str, Any] = {}
    if any("TrainingArguments" in _bases(c) for c in chain):
        merged.update(TRAINING_ARGUMENTS)
    auto = False
    for c in reversed(chain):
        own, bf16_auto = _own_fields(c)
        merged.update(own)
        auto = auto or bf16_auto
    if auto and merged.get("bf16") is None:
        merged["bf16"] = not merged.get("fp16", False)
    return {k: merged[k] for k in sorted(merged) if merged[k] != _FACTORY}


def _has_module(zf: zipfile.ZipFile, module: str) -> bool:
    return module in zf.namelist()


def _is_legacy(fields: dict[str, Any]) -> bool:
    return "ppo_epochs" in fields or "init_kl_coef" in fields


def wheel(version: str) -> Path:
    path = WHEELS / f"trl-{version}-py3-none-any.whl"
    if not path.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                f"trl=={version}",
                "-d",
                str(WHEELS),
            ],
            check=True,
        )
    return path


def build() -> dict[str, Any]:
    versions: dict[str, dict[str, dict[str, Any]]] = {}
    for v in VERSIONS:
        with zipfile.ZipFile(wheel(v)) as zf:
            found: dict[str, dict[str, Any]] = {}
            for era, module, name in CLASSES:
                fields = defaults_of(zf, module, name)
                if fields is None or era in found:
                    continue
                if era in ("legacy", "v2") and _is_legacy(fields) != (era == "legacy"):
                    continue  # the same module holds the other era's class in this release
                if (
                    fields
                ):  # 0.26-0.28: trl.trainer's PPOConfig only re-exports the experimental one
                    found[era] = fields
            if (
                "experimental" in found
                and "v2" not in found
                and _has_module(zf, "trl/trainer/ppo_config.py")
            ):
                found["v2"] = found["experimental"]
            versions[v] = found
    return {
        "about": __doc__.split("\n\n")[0].strip()
        + " Generated by tools/ppo_defaults.py; do not edit.",
        "training_arguments": TRAINING_ARGUMENTS,
        "versions": versions,
    }


def main() -> None:
    OUT.write_text(json.dumps(build(), indent=1, sort_keys=False) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

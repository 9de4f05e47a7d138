"""Build codemods/data/trainer_kwargs.json: the keyword arguments older TRL trainers took that
TRL 1.13's trainers do not, and where each went, read from the real wheels.

    python tools/trainer_kwargs.py          # wheels from .wheels/ (pip download --no-deps trl==X)

For each trainer (SFT, DPO, Reward), every release's `__init__` parameters are read with `ast`
from the wheel; a parameter TRL 1.13's `__init__` lacks is `moved` when 1.13's config has a
field of that name (or of its known new name, RENAMED), else `gone`. `pins`: the fields whose
default differs between transformers' TrainingArguments and the 1.13 config (read from the
installed packages): a `TrainingArguments(...)` call the rule turns into the config keeps the
TrainingArguments value, as TRL 1.13's own conversion (`SFTConfig(**args.to_dict())`) does.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import sys
import warnings
import zipfile
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
WHEELS = ROOT / ".wheels"
OUT = ROOT / "codemods" / "data" / "trainer_kwargs.json"
CONFIGS = {"SFTTrainer": "SFTConfig", "DPOTrainer": "DPOConfig", "RewardTrainer": "RewardConfig"}
# Old keyword -> the 1.13 field that holds the same setting under another name.
RENAMED = {("SFTTrainer", "max_seq_length"): "max_length"}
# The last release whose trainer ran on a plain TrainingArguments, for the trainers TRL 1.13
# gives only their own config (read from the wheels: RewardTrainer warned "deprecated" from 0.7
# and took it through 0.12.2; DPOTrainer's `args: Optional[TrainingArguments]` ends at 0.8.6,
# 0.9 reads DPOConfig fields off `args`). A TrainingArguments the rule turns into the config
# for these keeps what those trainers did: `keeps` (fields of the config only, which the old
# trainer did not have and the 1.13 default changes), with why.
TRAINING_ARGUMENTS_UNTIL = {"DPOTrainer": "0.8.6", "RewardTrainer": "0.12.2"}
KEEPS = {
    "RewardTrainer": {
        "disable_dropout": {
            "value": False,
            "why": "RewardTrainer of TRL 0.4-0.13 trained with the model's dropout on; "
            "RewardConfig of TRL 1.13 turns it off by default",
        }
    }
}
# Said (a warning) when a TrainingArguments the rule turns into the config leaves the field
# unset: what the old trainer did with it is not one value to keep.
UNSET_NOTES = {
    "RewardTrainer": {
        "max_length": "RewardTrainer of TRL 1.13 drops every pair longer than max_length tokens "
        "(1024 when unset); TRL 0.12-0.13 dropped those over 512 when it tokenized a text "
        "dataset itself (max_length unset, or a TrainingArguments: reward_trainer.py of 0.12.0 "
        "and 0.13.0), and earlier releases dropped none: set max_length to what your data needs"
    }
}
# Handled elsewhere: `tokenizer=` is TRL108's (processing_class=); `model_init` and
# `preprocess_logits_for_metrics` are transformers Trainer features, not settings.
SKIP = {"tokenizer", "model_init", "preprocess_logits_for_metrics", "optimizer_cls_and_kwargs"}
HINTS = {
    "infinite": "the packed dataset of old TRL could repeat forever; set max_steps instead",
    "num_of_sequences": "a knob of the old ConstantLengthDataset packing; TRL 1.13 packs by "
    "max_length",
    "chars_per_token": "a knob of the old ConstantLengthDataset packing; TRL 1.13 packs by "
    "max_length",
    "dataset_batch_size": "TRL 1.13 tokenizes with dataset.map defaults",
    "max_prompt_length": "DPOConfig has no prompt limit in TRL 1.13; truncate the prompts in your "
    "dataset (max_length still bounds prompt + completion)",
    "max_target_length": "an encoder-decoder limit DPOConfig no longer has; truncate the "
    "completions in your dataset",
    "label_pad_token_id": "TRL 1.13 masks padded labels itself",
    "padding_value": "TRL 1.13 pads with the tokenizer's pad token; set processing_class.pad_token",
    "is_encoder_decoder": "read from the model's config in TRL 1.13",
    "generate_during_eval": "TRL 1.13's DPOTrainer does not generate during evaluation",
    "ref_model_init_kwargs": "load the reference model yourself and pass it as ref_model",
    "model_adapter_name": "TRL 1.13 selects the adapter from the PEFT model itself",
    "ref_adapter_name": "TRL 1.13 selects the adapter from the PEFT model itself",
    "reference_free": "TRL 1.13's DPOTrainer always uses a reference",
    "force_use_ref_model": "TRL 1.13 uses ref_model whenever it is given",
}


def versions() -> list[tuple[str, Path]]:
    found = []
    for wheel in WHEELS.glob("trl-*-py3-none-any.whl"):
        m = re.match(r"trl-([\d.]+)-py3", wheel.name)
        if m:
            found.append((m.group(1), wheel))
    return sorted(found, key=lambda vw: Version(vw[0]))


def class_defs(wheel: Path, names: Collection[str], suffix: str = ".py") -> Iterator[ast.ClassDef]:
    """The top-level classes named one of `names` in that release's trl modules whose file name
    ends with `suffix` (read with `ast`; a module that does not parse is passed over)."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if not (name.startswith("trl/") and name.endswith(suffix)):
                continue
            src = z.read(name).decode("utf-8", "replace")
            if not any(f"class {n}" in src for n in names):
                continue
            try:
                tree = ast.parse(src)
            except SyntaxError:
                continue
            yield from (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in names)


def init_params(wheel: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for node in class_defs(wheel, CONFIGS):
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                a = item.args
                out[node.name] = [p.arg for p in a.args[1:] + a.kwonlyargs]
    return out


# The config fields whose changed default changes every run (the step size, the precision,
# recomputed activations, how often the loss is logged). Other changed defaults read from the
# wheels only change what a rarely used option does (`ref_model_sync_steps`), only spell a
# default another way (`loss_type="sigmoid"` -> `["sigmoid"]`) or need the old trainer's own
# reading of them (DPO's `max_length=None`), and are left out.
COMPARED = ("learning_rate", "logging_steps", "gradient_checkpointing", "bf16")
# What a config's field meant in a release whose config class did not have it (the old trainer's
# behaviour, read from its source): RewardTrainer never turned dropout off before RewardConfig
# gained `disable_dropout` (0.14).
ABSENT_MEANT = {("RewardConfig", "disable_dropout"): False}
_MISSING = object()


def config_fields(wheel: Path) -> dict[str, dict[str, Any]]:
    """Per config class of CONFIGS: the defaults its own body and its TRL base classes declare
    (literal values only; a default that is not one is left out), read with `ast`."""
    bodies: dict[str, ast.ClassDef] = {}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith("trl/") and name.endswith("config.py"):
                try:
                    tree = ast.parse(z.read(name).decode("utf-8", "replace"))
                except SyntaxError:
                    continue
                for node in tree.body:
                    if isinstance(node, ast.ClassDef):
                        bodies.setdefault(node.name, node)

    def declared(cls: str, seen: frozenset[str] = frozenset()) -> dict[str, Any]:
        node = bodies.get(cls)
        if node is None or cls in seen:
            return {}
        out: dict[str, Any] = {}
        for base in node.bases:
            if isinstance(base, ast.Name):
                out.update(declared(base.id, seen | {cls}))
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                out[item.target.id] = _literal_default(item.value)
        return {k: v for k, v in out.items() if v is not _MISSING}

    return {c: declared(c) for c in CONFIGS.values() if c in bodies}


def _literal_default(value: ast.expr | None) -> Any:
    if value is None:
        return _MISSING
    if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "field":
        given = {k.arg: k.value for k in value.keywords}
        if "default" not in given:
            return _MISSING
        value = given["default"]
    try:
        return ast.literal_eval(value)
    except ValueError:
        return _MISSING


def default_history(
    per_version: list[tuple[str, dict[str, dict[str, Any]]]],
    ta: dict[str, Any],
) -> dict[str, dict[str, Any]]:
    """Per config class: its fields whose default in an older release differs from TRL 1.13's,
    each with the 1.13 default (`now`) and the older ones by release span (`then`). An older
    release's default is its class's own (or a TRL base class's), else TrainingArguments'
    (`ta`, transformers 4.x and 5 agree on the fields concerned), else ABSENT_MEANT's."""
    import trl

    out: dict[str, dict[str, Any]] = {}
    for config in CONFIGS.values():
        now_fields = {f.name: _default(f) for f in dataclasses.fields(getattr(trl, config))}
        history: dict[str, Any] = {}
        for name, now in sorted(now_fields.items()):
            if name not in COMPARED and (config, name) not in ABSENT_MEANT:
                continue
            if name == "bf16" and now is None:
                now = True  # `bf16 = not fp16` when unset (every release from 0.19 on)
            spans: list[list[Any]] = []  # [first release, last release, default]
            last_seen = None  # the release before this one that has the class
            for version, classes in per_version:
                if version == "1.13.0" or config not in classes:
                    continue
                old = classes[config].get(
                    name, ta.get(name, ABSENT_MEANT.get((config, name), _MISSING))
                )
                if name == "bf16" and old is None:
                    old = True
                if spans and spans[-1][1] == last_seen and spans[-1][3] is None:
                    spans[-1][3] = version  # the first release read after the span
                if old is not _MISSING and repr(old) != repr(now):
                    if spans and spans[-1][1] == last_seen and repr(spans[-1][2]) == repr(old):
                        spans[-1][1] = version
                        spans[-1][3] = None
                    else:
                        spans.append([version, version, old, None])
                last_seen = version
            if spans:
                history[name] = {"now": now, "then": spans}
        out[config] = history
    return out


def _default(f: dataclasses.Field) -> Any:  # type: ignore[type-arg]
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def build() -> dict[str, Any]:
    warnings.simplefilter("ignore")
    import transformers
    import trl

    if not trl.__version__.startswith("1.13."):
        sys.exit(f"needs trl 1.13 installed to read its configs; found {trl.__version__}")
    per_version = [(v, init_params(w)) for v, w in versions()]
    now = dict(per_version)["1.13.0"]
    ta = {f.name: f for f in dataclasses.fields(transformers.TrainingArguments)}
    data: dict[str, Any] = {
        "about": __doc__.split("\n\n")[0].strip(),
        "trl": trl.__version__,
        "transformers": transformers.__version__,
        "trainers": {},
    }
    for trainer, config in CONFIGS.items():
        fields = {f.name: f for f in dataclasses.fields(getattr(trl, config))}
        seen: dict[str, list[str]] = {}
        for v, params in per_version:
            for p in params.get(trainer, []):
                if p not in now[trainer] and p not in SKIP:
                    seen.setdefault(p, []).append(v)
        moved, gone = {}, {}
        for kw, vs in seen.items():
            to = RENAMED.get((trainer, kw), kw)
            span = f"{vs[0]}-{vs[-1]}" if len(vs) > 1 else vs[0]
            if to in fields:
                moved[kw] = {"to": to, "in": span}
            else:
                gone[kw] = {"in": span, "do": HINTS.get(kw, f"{config} has no such setting")}
        pins = {}
        for name, f in ta.items():
            if name in fields and repr(_default(f)) != repr(_default(fields[name])):
                value = _default(f)
                pins[name] = False if name == "gradient_checkpointing" and value is None else value
        data["trainers"][trainer] = {
            "config": config,
            "takes_training_arguments": "TrainingArguments"
            in str(__import__("inspect").signature(getattr(trl, trainer).__init__)),
            "training_arguments_until": TRAINING_ARGUMENTS_UNTIL.get(trainer),
            "moved": moved,
            "gone": gone,
            "pins": pins,
            "keeps": KEEPS.get(trainer, {}),
            "unset_notes": UNSET_NOTES.get(trainer, {}),
        }
    data["trainers"]["SFTTrainer"]["kbit_prepared"] = KBIT_PREPARED
    data["trainers"]["SFTTrainer"]["appends_eos"] = eos_history()
    data["trainers"]["RewardTrainer"]["appends_eos"] = eos_history("reward_trainer", "RewardConfig")
    ta_defaults = {name: _default(f) for name, f in ta.items()}
    ta_defaults["gradient_checkpointing"] = False  # transformers 4.x: False (5 allows None)
    per_config = [(v, config_fields(w)) for v, w in versions()]
    data["config_defaults"] = {
        "about": "Defaults of TRL's SFT, DPO and Reward configs that TRL 1.13 changed: per "
        "field, the 1.13 default (`now`) and the older releases' (`then`: [first, last, value, "
        "the next release read, whose default differs]), among the wheels read.",
        **default_history(per_config, ta_defaults),
    }
    return data


# Read from the wheels by hand (the calls are in branches of __init__ this tool does not walk):
# SFTTrainer's preparation of an 8/4-bit model given a peft_config.
KBIT_PREPARED = {
    "why": "SFTTrainer given an 8/4-bit model and a peft_config ran peft's "
    "prepare_model_for_int8_training(model) (gradient checkpointing always on) up to 0.7.1, "
    "prepare_model_for_kbit_training(model, "
    "use_gradient_checkpointing=args.gradient_checkpointing) from 0.7.2 to 0.21; 0.22 dropped "
    "it, and 1.13 casts the trainable weights to bf16 (sft_trainer.py, _is_quantized_model)",
    "int8_until": "0.7.1",
    "last": "0.21.0",
    "first_without": "0.22.0",
}


def appends_eos(wheel: Path, module: str = "sft_trainer") -> bool:
    """Whether that release's trainer appends the EOS token to each text it tokenizes (a
    function named `add_eos` in trl/trainer/<module>.py, read with `ast`): SFTTrainer's texts
    and completions, RewardTrainer's chosen and rejected texts."""
    with zipfile.ZipFile(wheel) as z:
        try:
            tree = ast.parse(z.read(f"trl/trainer/{module}.py").decode("utf-8", "replace"))
        except (KeyError, SyntaxError):
            return False
    return any(isinstance(n, ast.FunctionDef) and n.name == "add_eos" for n in ast.walk(tree))


def own_fields(wheel: Path, config: str) -> set[str]:
    """The fields `config`'s own class body declares in that release."""
    return {
        item.target.id
        for node in class_defs(wheel, (config,), "config.py")
        for item in node.body
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
    }


def eos_history(module: str = "sft_trainer", config: str = "SFTConfig") -> dict[str, Any]:
    """The first release read whose trainer (trl/trainer/<module>.py) appends EOS, the last one
    before it that did not, and the `config` fields no release before it had (a call that sets
    one was written for a release that appends EOS). TrainingArguments' own fields, which the
    configs declared again in some releases (to change their defaults), say nothing of the
    release."""
    import transformers

    base = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    last_without = ""
    before: set[str] = set()
    read = versions()
    for at, (version, wheel) in enumerate(read):
        if appends_eos(wheel, module):
            later = set().union(*(own_fields(w, config) for _, w in read[at:]))
            return {
                "first": version,
                "last_without": last_without,
                "config_fields_since": sorted(later - before - base),
            }
        before |= own_fields(wheel, config)
        last_without = version
    return {}


def main() -> None:
    OUT.write_text(json.dumps(build(), indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

"""Write codemods/data/ppo_targets.json: the 1.13 config fields and trainer keywords TRL103-TRL105
may emit, and the fields of every config class TRL 1.13 exports (TRL108's flag clashes).

Run with TRL 1.13 installed: `python tools/ppo_target_fields.py`. The codemods read the file
(they never import trl); tests/codemods/test_ppo_mapping.py checks it against the installed classes.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import pathlib

import transformers
import trl

OUT = pathlib.Path(__file__).parents[1] / "codemods" / "data" / "ppo_targets.json"


def _defaults(cls: type) -> dict[str, object]:
    return {
        f.name: f.default
        for f in dataclasses.fields(cls)
        if f.default is None or isinstance(f.default, (bool, int, float, str))
    }


def parser_fields() -> dict[str, list[str]]:
    """The flags each dataclass TRL 1.13 exports for HfArgumentParser/TrlParser gives: its fields
    (for a TrainingArguments subclass, only those beyond `TrainingArguments`, which is listed
    once under that name)."""
    base = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    out = {"TrainingArguments": sorted(base)}
    for name in sorted(dir(trl)):
        if not name.endswith(("Config", "Arguments")):
            continue
        cls = getattr(trl, name)
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            continue
        fields = {f.name for f in dataclasses.fields(cls)}
        if issubclass(cls, transformers.TrainingArguments):
            fields -= base
        out[name] = sorted(fields)
    return out


def main() -> None:
    data = {
        "trl": trl.__version__,
        "transformers": transformers.__version__,
        "config_fields": {
            "rloo": sorted(f.name for f in dataclasses.fields(trl.RLOOConfig)),
            "grpo": sorted(f.name for f in dataclasses.fields(trl.GRPOConfig)),
        },
        # plain defaults (None, bool, int, float, str): TRL103 compares script fields with them
        "config_defaults": {
            "rloo": _defaults(trl.RLOOConfig),
            "grpo": _defaults(trl.GRPOConfig),
        },
        # every config class's flags: TRL108 finds a script's own field that one of them also
        # declares, which HfArgumentParser rejects (argparse: conflicting option strings)
        "parser_fields": parser_fields(),
        "parser_extends": sorted(  # the classes whose flags include TrainingArguments'
            name
            for name in parser_fields()
            if name != "TrainingArguments"
            and issubclass(getattr(trl, name), transformers.TrainingArguments)
        ),
        "trainer_kwargs": {
            "rloo": [
                p for p in inspect.signature(trl.RLOOTrainer.__init__).parameters if p != "self"
            ],
            "grpo": [
                p for p in inspect.signature(trl.GRPOTrainer.__init__).parameters if p != "self"
            ],
        },
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()

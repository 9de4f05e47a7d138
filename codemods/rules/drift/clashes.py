"""TRL108: a field of the script's own dataclass that a TRL 1.13 config class also declares, in
the same `HfArgumentParser((ScriptArguments, SFTConfig, ...))`. Both give the flag (`--max_length`,
which SFTConfig took from `max_seq_length` in TRL 0.16; `--trust_remote_code`, which the trainer
configs took from ModelConfig in 1.7), and argparse stops the parser on the second ("conflicting
option strings"). Which of the two settings the script's code means cannot be told from the
names, so the parser gets a TODO that names both (TRL103 resolves the same clash for a parsed
PPO config, whose reads it follows).

TRL 1.13's TrlParser also rejects a dataclass field named `config` (it reads `--config`, a YAML
file of flag values, itself), which TRL 0.8's own example classes had: a TODO too.

Data: `parser_fields` of codemods/data/ppo_targets.json (tools/ppo_target_fields.py).
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import ppo, walk
from codemods.base import RuleTransformer
from codemods.config_vars import PARSERS, is_parser

NAMES = PARSERS


class ParserClashes(RuleTransformer):
    """The clash check, for the drift pass's `leave_Call`."""

    def clashes_call(self, call: cst.Call) -> None:
        """A TODO above the statement of `HfArgumentParser((A, B, ...))` for each flag that one
        of the file's own dataclasses and one of TRL 1.13's config classes both declare."""
        name = (get_full_name_for_node(call.func) or "").rpartition(".")[2]
        if not is_parser(name) or not call.args:
            return
        seq = call.args[0].value
        if not isinstance(seq, (cst.Tuple, cst.List)):
            return
        own: list[tuple[str, list[str]]] = []  # (class, its fields), the file's own classes
        library: list[tuple[str, set[str]]] = []  # (class, its flags), TRL's and transformers'
        for element in seq.elements:
            local = self._own_class(element.value)
            if local is not None:
                own.append(local)
                continue
            theirs = self._library_flags(element.value)
            if theirs is not None:
                library.append(theirs)
        for cls, fields in own:
            if name == "TrlParser" and "config" in fields:
                self.todo(
                    call,
                    f"`{cls}` has a field named `config`, which TRL 1.13's TrlParser rejects "
                    "(it reads `--config`, a YAML file of flag values, itself): rename the field, "
                    "or drop it where it held that path",
                )
            for lib, flags in library:
                for field in fields:
                    if field in flags:
                        self.todo(
                            call,
                            f"`--{field}` is a flag of both the script's `{cls}` and {lib}, so "
                            "HfArgumentParser stops on it (argparse: conflicting "
                            f"option strings): rename the script's field (and the flag on its "
                            f"launch lines), or drop it and read the parsed config's `{field}`",
                        )

    def _own_class(self, value: cst.BaseExpression) -> tuple[str, list[str]] | None:
        """(name, fields) of a class the module defines at its top level, else None."""
        if not isinstance(value, cst.Name):
            return None
        module = self.context.wrapper.module if self.context.wrapper is not None else None
        for stmt in module.body if module is not None else ():
            if isinstance(stmt, cst.ClassDef) and stmt.name.value == value.value:
                return value.value, [
                    a.target.value
                    for a in walk.find_all(stmt.body, cst.AnnAssign)
                    if isinstance(a.target, cst.Name)
                ]
        return None

    def _library_flags(self, value: cst.BaseExpression) -> tuple[str, set[str]] | None:
        """(how a finding names it, its flags) for the TRL 1.13 config class or transformers'
        TrainingArguments that `value` names. A parsed RLOOConfig/GRPOConfig of a file with PPO
        code is TRL103's."""
        names = self.qualified_names(value)
        if not names:
            return None
        last = {q.rpartition(".")[2] for q in names}
        root = {q.split(".")[0] for q in names}
        if len(last) != 1 or len(root) != 1:
            return None
        cls, package = last.pop(), root.pop()
        data = ppo.targets()
        fields = data["parser_fields"]
        if package == "transformers" and cls in ("TrainingArguments", "Seq2SeqTrainingArguments"):
            return f"transformers' `{cls}`", set(fields["TrainingArguments"])
        if package != "trl" or cls not in fields or cls == "TrainingArguments":
            return None
        if cls in ("RLOOConfig", "GRPOConfig") and self.state.shared.ppo_era is not None:
            return None
        flags = set(fields[cls])
        if cls in data["parser_extends"]:
            flags |= set(fields["TrainingArguments"])
        return f"TRL 1.13's `{cls}`", flags

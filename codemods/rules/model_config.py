"""TRL110 model-config: `ModelConfig.torch_dtype` is `ModelConfig.dtype` since TRL 0.23 (the old
name was removed in 0.27), and `ModelConfig.trust_remote_code` is gone since TRL 1.7, in any
script, not only PPO ones.

`ModelConfig(torch_dtype=...)` becomes `ModelConfig(dtype=...)`, and a read `x.torch_dtype` of a
name the file binds only to a ModelConfig (built by a call, or unpacked from the
`parse_args_into_dataclasses()` of a parser whose dataclasses include ModelConfig) becomes
`x.dtype`. The same value: an unset old `torch_dtype` (None) loaded float32 under the
transformers of its day, and 1.13's default `dtype="float32"` loads float32. A name bound to a
ModelConfig in one place and to something else in another is left alone (a transformers
config has its own `torch_dtype`).

TRL 1.7 moved `trust_remote_code` from ModelConfig to the trainer configs (`SFTConfig`,
`GRPOConfig`, ...: TRUSTING). A read `model_args.trust_remote_code` of a ModelConfig parsed beside
one of them (`HfArgumentParser((ScriptArguments, GRPOConfig, ModelConfig))`, unpacked into
`script_args, training_args, model_args`) reads `training_args.trust_remote_code`: the
`--trust_remote_code` flag now lands there, with the same default (False). Without such a config
beside it (a ModelConfig built by a call, a parser of transformers' TrainingArguments), the read
gets a TODO, as does `ModelConfig(trust_remote_code=...)`, unless nothing can read the field:
`v = ModelConfig(..., trust_remote_code=True)` whose name `v` the file only reads other fields
of, or hands to TRL's `get_peft_config`/`get_quantization_config` (which read none of it), loses
the keyword (the script's own `from_pretrained` calls pass theirs). Where the file also reads
`v.trust_remote_code`, `v` being bound once, to that call, with `True` or `False`, and never
set, each read is that literal and the keyword goes (sea-abc/LLM-from-trl-to-GRPO:
`ModelConfig(..., trust_remote_code=True)`, then `from_pretrained(...,
trust_remote_code=model_args.trust_remote_code)`); a call that does not set it gave the
field's default, `False`.
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, walk
from codemods.base import Rule, RuleTransformer
from codemods.config_vars import config_vars, parsed_beside

OLD, NEW = "torch_dtype", "dtype"
TRUST = "trust_remote_code"
# TRL 1.13's configs that have `trust_remote_code` (ModelConfig lost it in 1.7).
TRUSTING = frozenset(
    {
        "DPOConfig",
        "DistillationConfig",
        "GRPOConfig",
        "KTOConfig",
        "RLOOConfig",
        "RewardConfig",
        "SFTConfig",
    }
)
# TRL's helpers that take a ModelConfig and read none of its `trust_remote_code`.
BLIND = frozenset({"get_peft_config", "get_quantization_config"})
TRUST_GONE = (
    "ModelConfig has no `trust_remote_code` since TRL 1.7 (TRL's trainer configs took it and "
    "the `--trust_remote_code` flag)"
)


class RenameModelConfigDtype(RuleTransformer):
    NAMES = (OLD, TRUST)

    def focus(self) -> tuple[str, ...]:
        return (OLD, TRUST)

    @classmethod
    def wanted(cls, state, names) -> bool:  # type: ignore[no-untyped-def]
        # Both fields are ModelConfig's: a file that never names it has nothing to move
        # (`trust_remote_code=` alone is on most model loads).
        return names.has_any(cls.NAMES) and names.has_any(("ModelConfig",))

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._module = node
        found = config_vars(node, self._config_class)
        self.model_vars = {name for name, cls in found.items() if cls == "ModelConfig"}
        self._partner: dict[str, str] | None = None  # made on the first `trust_remote_code` read
        self._unread: frozenset[cst.Call] | None = None  # made on the first trust keyword
        # var -> the literal (`True`/`False`) its one ModelConfig call gives `trust_remote_code`,
        # where every read of the field takes it (made with `_unread`)
        self._literal: dict[str, cst.Name] = {}
        self._literal_calls: frozenset[cst.Call] = frozenset()  # those that set it
        self._literal_set: set[str] = set()  # their names

    def _trust_unread(self) -> frozenset[cst.Call]:
        """The `v = ModelConfig(...)` calls whose `trust_remote_code` nothing can read: every
        other use of the name `v` reads another field, hands `v` to TRL's helpers (BLIND), or is
        `v` alone as a statement (a notebook cell showing it).
        Also fills `_literal`: the names whose field reads take their one call's literal."""
        if self._unread is not None:
            return self._unread
        module = self._module
        calls: dict[str, list[cst.Call]] = {}
        allowed: dict[str, int] = {}
        reads: dict[str, int] = {}  # `v.trust_remote_code` read (never set)
        written: set[str] = set()  # `v.trust_remote_code = ...`

        def allow(node: cst.CSTNode, into: dict[str, int] = allowed) -> None:
            if isinstance(node, cst.Name) and node.value in self.model_vars:
                into[node.value] = into.get(node.value, 0) + 1

        for assign in walk.find_all(module, cst.Assign):
            value = assign.value
            if (
                len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)
                and isinstance(value, cst.Call)
                and self._config_class(value.func) == "ModelConfig"
            ):
                calls.setdefault(assign.targets[0].target.value, []).append(value)
                allow(assign.targets[0].target)
        for expr in walk.find_all(module, cst.Expr):
            allow(expr.value)  # `model_args` alone: a notebook cell showing it reads no field
        for target in _assigned(module):
            if isinstance(target, cst.Attribute) and target.attr.value == TRUST:
                written.add(get_full_name_for_node(target.value) or "")
        for attr in walk.find_all(module, cst.Attribute):
            if attr.attr.value != TRUST:
                allow(attr.value)
            else:
                allow(attr.value, reads)
        for call in walk.find_all(module, cst.Call):
            if len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
                names = self.names_from(call.func, "trl")
                if names and all(q.rpartition(".")[2] in BLIND for q in names):
                    allow(call.args[0].value)
        uses: dict[str, int] = {}
        for name in walk.find_all(module, cst.Name):
            if name.value in calls:
                uses[name.value] = uses.get(name.value, 0) + 1
        self._unread = frozenset(
            call
            for var, made in calls.items()
            if uses.get(var) == allowed.get(var)
            for call in made
        )
        for var, made in calls.items():
            literal = _trust_literal(made[0]) if len(made) == 1 else None
            read = reads.get(var, 0)
            every = uses.get(var) == allowed.get(var, 0) + read  # each other use is allowed
            if literal is not None and read and var not in written and every:
                self._literal[var] = literal
        self._literal_set = {
            var
            for var in self._literal
            if any(a.keyword is not None and a.keyword.value == TRUST for a in calls[var][0].args)
        }
        self._literal_calls = frozenset(calls[var][0] for var in self._literal_set)
        return self._unread

    def _config_class(self, func: cst.BaseExpression) -> str | None:
        """The class a call of `func` builds, when it is ModelConfig or a TRL config that has
        `trust_remote_code` (TRUSTING); else None."""
        names = self.qualified_names(func) if self.resolves_to_trl(func) else ()
        last = {q.rpartition(".")[2] for q in names}
        if not names or len(last) != 1 or not all(q.startswith("trl.") for q in names):
            return None
        cls = last.pop()
        return cls if cls == "ModelConfig" or cls in TRUSTING else None

    def _partner_of(self, model_var: str) -> str | None:
        """The TRL config the parser that builds `model_var` builds beside it (parsed_beside)."""
        if self._partner is None:
            self._partner = parsed_beside(self._module, self._config_class, "ModelConfig", TRUSTING)
        return self._partner.get(model_var)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if self._config_class(original_node.func) != "ModelConfig":
            return updated_node
        args = list(updated_node.args)
        trust = [
            i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == TRUST
        ]
        if trust and _plain(args[trust[0]].value) and original_node in self._trust_unread():
            self.report(
                original_node.args[trust[0]],
                f"`{TRUST}=` dropped: {TRUST_GONE}; nothing in this file reads it from this "
                "ModelConfig (the model loads pass their own)",
            )
            del args[trust[0]]
            args = edits.relayout(updated_node, args, set())
        elif trust and original_node in self._literal_calls:
            value = edits.code(args[trust[0]].value)
            self.report(
                original_node.args[trust[0]],
                f"`{TRUST}={value}` dropped: {TRUST_GONE}; this file's reads of the field "
                f"from this ModelConfig are `{value}` now",
            )
            del args[trust[0]]
            args = edits.relayout(updated_node, args, set())
        elif trust:
            self.todo(
                original_node,
                f"{TRUST_GONE}: pass `trust_remote_code=` to your trainer config instead, or to "
                "the `from_pretrained` calls that load the model",
            )
        for i, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == OLD:
                if any(a.keyword is not None and a.keyword.value == NEW for a in args):
                    self.todo(
                        original_node, "`torch_dtype=` and `dtype=` are both given; keep `dtype=`"
                    )
                    return updated_node
                args[i] = arg.with_changes(keyword=cst.Name(NEW))
                self.report(
                    original_node.args[i],
                    "ModelConfig's `torch_dtype=` is `dtype=` (renamed in TRL 0.23, removed in "
                    "0.27); the same values",
                )
        return updated_node.with_changes(args=args)

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        if original_node.attr.value not in (OLD, TRUST) or self.in_import:
            return updated_node
        owner = get_full_name_for_node(original_node.value)
        if owner not in self.model_vars:
            return updated_node
        if original_node.attr.value == TRUST:
            config = self._partner_of(owner)
            self._trust_unread()
            if config is None and owner in self._literal:
                value = self._literal[owner]
                how = "sets it to" if owner in self._literal_set else "leaves it at its default,"
                self.report(
                    original_node,
                    f"`{owner}.{TRUST}` is `{value.value}`: {TRUST_GONE}, and `{owner}` is "
                    f"bound once, to a ModelConfig that {how} `{value.value}`",
                )
                return value
            if config is None:
                self.todo(
                    original_node,
                    f"`{owner}.{TRUST}`: {TRUST_GONE}, and no TRL config is parsed beside "
                    f"`{owner}` here: read the flag from your trainer config, or give your "
                    "script its own flag for it",
                )
                return updated_node
            self.report(
                original_node,
                f"`{owner}.{TRUST}` is `{config}.{TRUST}`: {TRUST_GONE}; the parser builds "
                f"`{config}` beside `{owner}`, so the flag lands there, with the same default "
                "(False)",
            )
            return updated_node.with_changes(value=cst.Name(config))
        self.report(
            original_node,
            f"`{owner}.torch_dtype` is `{owner}.dtype` (ModelConfig renamed it in TRL 0.23 and "
            "removed the old name in 0.27; the `--torch_dtype` flag is `--dtype`)",
        )
        return updated_node.with_changes(attr=cst.Name(NEW))


def _trust_literal(call: cst.Call) -> cst.Name | None:
    """`True`/`False` where `call` passes `trust_remote_code=True` (or `False`); `False`, the
    field's default in every TRL release that had it, where it passes neither that keyword nor
    a `*`/`**` argument nor more than the one positional (`model_name_or_path`); else None."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == TRUST:
            value = arg.value
            if isinstance(value, cst.Name) and value.value in ("True", "False"):
                return cst.Name(value.value)
            return None
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or len(positional) > 1:
        return None
    return cst.Name("False")


def _assigned(module: cst.Module) -> list[cst.BaseExpression]:
    """The targets of the module's assignments (plain, augmented, annotated) and `del`s."""
    out: list[cst.BaseExpression] = []
    for assign in walk.find_all(module, cst.Assign):
        out.extend(t.target for t in assign.targets)
    out.extend(node.target for node in walk.find_all(module, cst.AugAssign))
    out.extend(node.target for node in walk.find_all(module, cst.AnnAssign))
    out.extend(node.target for node in walk.find_all(module, cst.Del))
    return out


def _plain(value: cst.BaseExpression) -> bool:
    """A value that dropping evaluates nothing of: a name or a literal."""
    return isinstance(value, (cst.Name, cst.BaseNumber, cst.BaseString))


class ModelConfigDtype(Rule):
    code = "TRL110"
    name = "model-config"
    summary = (
        "Rename ModelConfig's `torch_dtype` (removed in TRL 0.27) to `dtype`; read its "
        "`trust_remote_code` (removed in TRL 1.7) from the trainer config parsed beside it."
    )
    before = (
        "from transformers import HfArgumentParser\n"
        "from trl import ModelConfig, SFTConfig\n"
        "parser = HfArgumentParser((SFTConfig, ModelConfig))\n"
        "training_args, model_args = parser.parse_args_into_dataclasses()\n"
        "dtype = model_args.torch_dtype\n"
    )
    after = (
        "from transformers import HfArgumentParser\n"
        "from trl import ModelConfig, SFTConfig\n"
        "parser = HfArgumentParser((SFTConfig, ModelConfig))\n"
        "training_args, model_args = parser.parse_args_into_dataclasses()\n"
        "dtype = model_args.dtype\n"
    )
    transformers = (RenameModelConfigDtype,)
    triggers = (OLD, TRUST)

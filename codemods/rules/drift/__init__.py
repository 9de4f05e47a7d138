"""TRL108 drift: APIs of transformers, accelerate, peft and datasets that the floors of TRL 1.13
removed, moved to what replaced them with the same behaviour (data: codemods/data/drift.json).

`from peft import prepare_model_for_int8_training` imports `prepare_model_for_kbit_training`
under the old name (the old function was an alias of it); `from accelerate.utils import
DummyOptim` imports it from `accelerate.utils.deepspeed`; `evaluation_strategy=` on
TrainingArguments and TRL configs becomes `eval_strategy=`; `use_auth_token=` on
`from_pretrained`, `pipeline` and `load_dataset` becomes `token=`; `tokenizer=` on
`Trainer` and TRL's trainers becomes `processing_class=`. What has no exact
replacement gets a TODO that says what it did; removed helpers small enough to keep exactly
(`top_k_top_p_filtering`, `send_example_telemetry`) are written into the file, their
definitions in codemods/data/inline.toml.
"""

from __future__ import annotations

import fnmatch
import functools
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any, cast

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, inline, quantization, walk
from codemods.base import Rule, RuleTransformer
from codemods.config_vars import config_vars
from codemods.edits import KEEP, REMOVE, alias_asname, alias_name, new_alias, rewrite_import_from
from codemods.rules.drift import clashes, dtypes, hooks, positional, scores, tokenizers
from codemods.rules.drift.clashes import ParserClashes
from codemods.rules.drift.dtypes import ModelDtypes
from codemods.rules.drift.hooks import TrainerHooks
from codemods.rules.drift.positional import TrainerPositions
from codemods.rules.drift.quantized import QuantizedLoads
from codemods.rules.drift.scores import PipelineScores
from codemods.rules.drift.tokenizers import TokenizerCalls
from migrate.kernel.findings import Severity


@functools.cache
def table() -> dict[str, Any]:
    text = resources.files("codemods").joinpath("data/drift.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


# removed helpers of the stack TRL 1.13 installs, written into the file
WRITTEN_IN = tuple(inline.paths("transformers")) + tuple(inline.paths("datasets"))


@functools.cache
def config_fields() -> dict[str, dict[str, dict[str, str]]]:
    """Class name (`GRPOConfig`) -> field TRL 1.13 no longer accepts -> what became of it."""
    return {k: v for k, v in table()["config_fields"].items() if k != "about"}


CONFIG_FIELDS = frozenset(f for rows in config_fields().values() for f in rows)


def removed(cls: str, field: str, row: dict[str, str]) -> str:
    """`TRL 0.28.0 removed GRPOConfig's `max_prompt_length``: where a finding says why."""
    return f"TRL {row['removed']} removed {cls}'s `{field}`"


def sentence(text: str) -> str:
    """`text` to follow a colon: its first word lower-cased unless it is an acronym or a name
    (`Prefix caching ...` -> `prefix caching ...`; `W&B ...`, `1.13 ...` stay)."""
    return text[0].lower() + text[1:] if text[:2].istitle() and text[:2].isalpha() else text


def config_class(qualified: Sequence[str]) -> str | None:
    """`GRPOConfig` when every qualified name of a callee is that TRL config (`trl.GRPOConfig`,
    `trl.trainer.grpo_config.GRPOConfig`, `trl.experimental.kto.KTOConfig`), else None."""
    if not qualified or any(not q.startswith("trl.") for q in qualified):
        return None
    last = {q.rpartition(".")[2] for q in qualified}
    name = last.pop() if len(last) == 1 else ""
    return name if name in config_fields() else None


class RewriteDrift(
    inline.WritesIn,
    TokenizerCalls,
    PipelineScores,
    ModelDtypes,
    QuantizedLoads,
    TrainerHooks,
    TrainerPositions,
    ParserClashes,
    RuleTransformer,
):
    # The identifiers the table acts on: a file without any of them skips the pass.
    NAMES = tuple(
        sorted(
            {*table()["keywords"], *table()["dropped"], *table()["switches"]}
            | {scores.FLAG, *tokenizers.NAMES, *clashes.NAMES}
            | {*quantization.FLAGS, "model_kwargs", *hooks.HOOKS, *positional.NAMES}
            # an old value is the trigger, or its keyword where the value is None (in every file)
            | {
                key if old == "None" else old
                for key, values in table()["values"].items()
                for old in values
            }
            | {
                path.rpartition(".")[2]
                for path in (*table()["imports"], *table()["todo"], *WRITTEN_IN)
            }
            | set(config_fields())  # a call of the class, or a parser of it, names it
        )
    )

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.scores_prescan(node)
        self.tokenizer_prescan(node)
        self.hooks_prescan(node)
        self._module = node
        self._own: set[str] | None = None  # made on the first read of a dropped setting
        self._configs: dict[str, str] | None = None  # names holding a TRL config (first read)
        # names holding TrainingArguments or any TRL config (first read of a switch)
        self._training: dict[str, str] | None = None
        self._assigned: set[str] | None = None  # plain names the module assigns (first ask)
        self._by_attribute: list[cst.BaseStatement] = []  # written in for `module.helper` reads
        self._taken: dict[str, bool] = {}  # path -> its name is bound to something else

    def _config_field(
        self, original: cst.Attribute, updated: cst.Attribute
    ) -> cst.BaseExpression | None:
        """`args.max_prompt_length` where `args` holds a TRL config (`config_vars`) that lost
        that field: renamed when a 1.13 field holds the same setting; else, for a read, a TODO
        (it raises AttributeError on 1.13). None when it is not such a read."""
        field = original.attr.value
        if field not in CONFIG_FIELDS:
            return None
        if self._configs is None:
            self._configs = config_vars(
                self._module, lambda func: config_class(self.qualified_names(func))
            )
        owner = get_full_name_for_node(original.value) or ""
        cls = self._configs.get(owner)
        row = config_fields().get(cls or "", {}).get(field)
        if row is None:
            return None
        where = removed(cls or "", field, row)
        if row["action"] == "rename":
            self.report(
                original,
                f"`{owner}.{field}` is `{owner}.{row['to']}` ({where}; the same setting)",
                severity=Severity.INFO,
            )
            return updated.with_changes(attr=cst.Name(row["to"]))
        if not self.in_mutation:
            self.todo(
                original,
                f"`{owner}.{field}`: {where}, so reading it from the parsed config raises "
                "AttributeError on TRL 1.13; give your script its own field for it (in its own "
                f"dataclass) if it needs the value. {row['do']}",
            )
        return updated

    def _own_fields(self) -> set[str]:
        """Dropped settings and switches the file's own classes declare (fields of its
        dataclasses)."""
        if self._own is None:
            gone = table()["dropped"].keys() | table()["switches"].keys()
            self._own = {
                a.target.value
                for a in walk.find_all(self._module, cst.AnnAssign)
                if isinstance(a.target, cst.Name) and a.target.value in gone
            }
        return self._own

    def _training_config(self, owner: str) -> bool:
        """Whether `owner` (a dotted name) holds TrainingArguments or a TRL config: built by a
        call of one, or a slot of a parser's unpack (`config_vars`)."""
        if self._training is None:
            self._training = config_vars(self._module, self._training_class)
        return owner in self._training

    def _config_like(self, owner: cst.BaseExpression) -> bool:
        """Whether `owner` holds TrainingArguments or a TRL config as far as a read can tell:
        a name `_training_config` knows, or one the file does not assign that is named as
        such configs are (`self.args` of a Trainer, a function's `training_args`). A name
        the file binds to something else (`script_args` of its own parser, argparse's
        `args`) is not one."""
        name = get_full_name_for_node(owner) or ""
        if self._training_config(name):
            return True
        if self._assigned is None:
            self._assigned = {
                bound
                for assign in walk.find_all(self._module, cst.Assign)
                for target in assign.targets
                for bound in edits.target_names(target.target)
            }
        return name not in self._assigned and name.rpartition(".")[2] in _CONFIG_NAMES

    def _training_class(self, func: cst.BaseExpression) -> str | None:
        names = self.qualified_names(func)
        if names and all(_listed([q], TRAINING_CONFIGS) for q in names):
            return names[0].rpartition(".")[2]
        return None

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        module = self.place_written(self.scores_module(updated_node))
        if self._by_attribute:
            module = inline.after_imports(module, inline.laid_out(self._by_attribute))
        return module

    @classmethod
    def wanted(cls, state, names) -> bool:  # type: ignore[no-untyped-def]
        # A model load matters only in a file whose PPO code told the era (ModelDtypes).
        return names.has_any(cls.NAMES) or (
            state.shared.ppo_era is not None and names.has_any((dtypes.METHOD, dtypes.PIPELINE))
        )

    def focus(self) -> tuple[str, ...]:
        # Imports, keywords and attributes of the table all name one; so do the calls of a
        # pipeline given `return_all_scores` and those that unpack a dict holding it, and the
        # model loads of a file with PPO code.
        loads = (dtypes.METHOD, dtypes.PIPELINE) if self.state.shared.ppo_era is not None else ()
        # the fields TRL configs lost, where the file names such a config: keywords of a config
        # call, or reads of a parsed config
        ids = self.state.identifiers
        named = ids is None or ids.has_any(tuple(config_fields()))
        fields = CONFIG_FIELDS if named else ()
        # `super().__init__(...)` of a Trainer subclass names neither the class nor the table
        inits = ("__init__",) if ids is None or ids.has_any(positional.FOCUS) else ()
        return (*self.NAMES, *fields, *self.scores_focus(), *loads, *inits)

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ):  # type: ignore[no-untyped-def]
        found = edits.named_import_from(original_node)
        if found is None:
            return updated_node
        node, module, aliases = found
        decisions: list = []
        written: list[cst.BaseStatement] = []
        for alias in aliases:
            name = alias_name(alias)
            path = f"{module}.{name}"
            move = table()["imports"].get(path)
            todo = table()["todo"].get(path, {}).get("do")
            source = inline.lookup(path) if path in WRITTEN_IN else None
            if source is not None:
                decisions.append(REMOVE)
                stmts, where = self.write_in(
                    self.state.helpers, inline.key_of(path), alias_asname(alias) or name
                )
                written.extend(stmts)
                self.report(
                    alias,
                    f"`{path}` is gone in the {module.split('.')[0]} TRL 1.13 needs; an "
                    f"equivalent definition was written into {where}",
                )
            elif move is not None:
                new_name = move.get("name", name)
                bound = alias_asname(alias) or name
                decisions.append(
                    (move["to"], [new_alias(new_name, bound if bound != new_name else None)])
                )
                self.report(
                    alias,
                    f"`{path}` is gone: imported `{move['to']}.{new_name}`, "
                    f"which does the same ({move['why'].split(';')[0]})",
                )
            else:
                decisions.append(KEEP)
                if todo is not None:
                    self.todo(alias, f"`{path}` is gone: {todo}")
        return self.followed_by(rewrite_import_from(updated_node, decisions), written, updated_node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        self.clashes_call(original_node)
        self._gone_kwargs(original_node)
        call = self.tokenizer_call(original_node, self._keywords(original_node, updated_node))
        call = self.dtype_call(original_node, call)
        call = self.quantized_call(original_node, call)
        call = self.positional_call(original_node, call)
        return self.scores_call(original_node, call)

    def _gone_kwargs(self, call: cst.Call) -> None:
        """Keywords a moved function of the imports table no longer takes (`gone_kwargs`): a
        TODO saying what they did, for the function under its new name rejects them."""
        given = [a for a in call.args if a.keyword is not None]
        if not given or not self.may_resolve_to(call.func, "peft"):
            return
        for path in self.qualified_names(call.func):
            gone = table()["imports"].get(path, {}).get("gone_kwargs")
            if isinstance(gone, str):  # the same as another path's
                gone = table()["imports"][gone]["gone_kwargs"]
            if not gone:
                continue
            named = [a for a in given if a.keyword.value in gone["names"]]  # type: ignore[union-attr]
            if named:
                shown = ", ".join(f"`{edits.arg_text(a)}`" for a in named)
                self.todo(call, f"{shown} of `{path}`: {gone['why']}")
            return

    def _keywords(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        updated_node = self._keywords_by_name(original_node, updated_node)
        present = {a.keyword.value for a in updated_node.args if a.keyword is not None}
        if present & CONFIG_FIELDS:
            updated_node = self._config_fields(original_node, updated_node)
        return updated_node

    def _config_fields(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """Keywords of a TRL config call that TRL 1.13's class lacks (`config_fields`): renamed,
        dropped (they changed nothing in training), or kept under a TODO that says what to do
        instead (the call then fails where the TODO is, never trains otherwise)."""
        cls = config_class(self.qualified_names(original.func))
        rows = config_fields().get(cls or "", {})
        if not rows:
            return updated
        present = {a.keyword.value for a in updated.args if a.keyword is not None}
        keep: list[cst.Arg] = []
        for arg in updated.args:
            name = arg.keyword.value if arg.keyword is not None else ""
            row = rows.get(name)
            if row is None:
                keep.append(arg)
                continue
            at = next(a for a in original.args if a.keyword and a.keyword.value == name)
            where = removed(cls or "", name, row)
            if row["action"] == "rename" and row["to"] in present:
                self.todo(
                    original, f"`{name}=` and `{row['to']}=` are both given ({where}): keep one"
                )
                keep.append(arg)
            elif row["action"] == "rename":
                keep.append(arg.with_changes(keyword=cst.Name(row["to"])))
                self.report(
                    at,
                    f"`{name}=` is gone ({where}): renamed `{row['to']}=`, the same setting. "
                    + row["do"],
                    severity=Severity.INFO,
                )
            elif row["action"] == "drop":
                self.report(
                    at,
                    f"`{edits.arg_text(arg)}` was removed ({where}); it changed "
                    f"nothing in training: {sentence(row['do'])}",
                    severity=Severity.INFO,
                )
            else:
                self.todo(original, f"`{name}=` is gone ({where}): remove it. {row['do']}")
                keep.append(arg)
        if len(keep) == len(updated.args):
            return updated.with_changes(args=keep)
        return updated.with_changes(args=edits.relayout(updated, keep, set()))

    def _keywords_by_name(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        rules = table()["keywords"]
        present = {a.keyword.value for a in updated_node.args if a.keyword is not None}
        if present & table()["dropped"].keys():
            updated_node = self._dropped(original_node, updated_node)
        if present & table()["values"].keys():
            updated_node = self._values(original_node, updated_node)
        if present & table()["switches"].keys():
            updated_node = self._switches(original_node, updated_node)
        if not present & rules.keys():
            return updated_node
        callee = self._callee(original_node)
        args = list(updated_node.args)
        dropped: set[int] = set()  # a ratio beside the steps it gave way to (`_steps_or_ratio`)
        for i, arg in enumerate(args):
            rule = rules.get(arg.keyword.value) if arg.keyword is not None else None
            if rule is None or not any(
                fnmatch.fnmatchcase(c, p) for c in callee for p in rule["callees"]
            ):
                continue
            old = arg.keyword.value  # type: ignore[union-attr]
            # a ratio that is an expression (`script_args.warmup_ratio`): transformers 4.x took
            # only values in [0, 1], and 5 reads each below 1 as the same ratio; 1.0 is said
            read_as_ratio = ""
            if rule.get("ratio") and not _ratio(arg.value):
                if edits.literal(arg.value) is not edits.NOT_LITERAL:
                    self.todo(
                        original_node,
                        f"`{old}=` is gone ({rule['why'].split(';')[0]}): pass the ratio as "
                        f"`{rule['to']}=` when it is below 1 (1.0 or more counts steps there)",
                    )
                    continue
                shown = " ".join(edits.code(arg.value).split())
                read_as_ratio = (
                    f"; `{shown}` is read as a ratio, which trains as before for every value "
                    f"transformers 4.x accepted (0 to 1) but 1.0, warmup over the whole run, "
                    f"which transformers 5 reads as 1 step: check that it stays below 1"
                )
            if rule["to"] in present:
                steps = _given(updated_node, rule["to"])
                both = _steps_or_ratio(steps.value, arg.value) if rule.get("ratio") else None
                if both is None:
                    self.todo(
                        original_node,
                        f"`{old}=` and `{rule['to']}=` are both given; "
                        f"`{old}` is gone ({rule['why'].split(';')[0]}): keep `{rule['to']}=`",
                    )
                    continue
                value, said = both
                caveat = read_as_ratio if value is not steps.value else ""  # the ratio is read
                self.report(
                    _given(original_node, old),
                    f"`{old}=` and `{rule['to']}=` are both given: transformers 4.x trained "
                    f"with `{rule['to']}` when it was above 0 and with `{old}` otherwise, and "
                    f"transformers 5 reads a `{rule['to']}` below 1 as the ratio; {said}{caveat}",
                    severity=Severity.WARNING if caveat else Severity.INFO,
                )
                j = updated_node.args.index(steps)
                args[j] = args[j].with_changes(value=value)
                dropped.add(i)
                continue
            args[i] = arg.with_changes(keyword=cst.Name(rule["to"]))
            self.report(
                next(a for a in original_node.args if a.keyword and a.keyword.value == old),
                f"`{old}=` is gone: renamed `{rule['to']}=`, the "
                f"same setting ({rule['why'].split(';')[0]}){read_as_ratio}",
                severity=Severity.WARNING if read_as_ratio else Severity.ERROR,
            )
        if dropped:
            kept = [a for k, a in enumerate(args) if k not in dropped]
            return updated_node.with_changes(args=edits.relayout(updated_node, kept, set()))
        return updated_node.with_changes(args=args)

    def _dropped(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """Keywords of the `dropped` table leave the calls that took them: they changed
        nothing in training (a row's `same_for`: only those values did; any other is said, as
        its `differs` says)."""
        callee = self._callee(original)
        keep = []
        for orig, arg in zip(original.args, updated.args):
            rule = table()["dropped"].get(arg.keyword.value) if arg.keyword is not None else None
            if rule is None or not any(
                fnmatch.fnmatchcase(c, p) for c in callee for p in rule["callees"]
            ):
                keep.append(arg)
                continue
            same = rule.get("same_for")
            if same is None or edits.literal(arg.value) in same:
                self.report(
                    orig,
                    f"`{edits.arg_text(arg)}` was removed: "
                    f"{rule['why'].split(';')[0]}; {rule['why'].split(';', 1)[1].strip()}, so "
                    "dropping it changes nothing in training",
                    severity=Severity(rule.get("severity", "info")),
                )
            else:  # a value whose setting nothing keeps (or one read at run time)
                values = " or ".join(f"`{v}`" for v in same)
                self.report(
                    orig,
                    f"`{edits.arg_text(arg)}` was removed: {rule['why'].split(';')[0]}; "
                    f"dropping it changes nothing only where it is {values}: "
                    f"{rule['differs']}",
                    severity=Severity.WARNING,
                )
        if len(keep) == len(updated.args):
            return updated
        return updated.with_changes(args=edits.relayout(original, keep, set()))

    def _values(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """A value of the `values` table given as a string literal to a callee it lists
        (`optim="adamw_hf"` to TrainingArguments) becomes the value that replaced it."""
        callee = self._callee(original)
        args = list(updated.args)
        for i, arg in enumerate(updated.args):
            if arg.keyword is None:
                continue
            orig = _given(original, arg.keyword.value)  # the same keyword: an earlier step may
            # have dropped another argument
            new = self._new_value(orig.value, arg.keyword.value, callee=callee)
            if new is not None:
                args[i] = arg.with_changes(value=new)
        return updated.with_changes(args=args)

    def _switches(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """A boolean keyword of the `switches` table, given to a callee it lists, becomes the
        value of the keyword that replaced it: `group_by_length=True` ->
        `train_sampling_strategy="group_by_length"`; any other expression `x` -> `... if x
        else "random"`; a False leaves the call (it is the new keyword's default)."""
        callee = self._callee(original)
        present = {a.keyword.value for a in updated.args if a.keyword is not None}
        keep: list[cst.Arg] = []
        for arg in updated.args:
            rule = table()["switches"].get(arg.keyword.value) if arg.keyword is not None else None
            if rule is None or not _listed(callee, rule["callees"]):
                keep.append(arg)
                continue
            old, to = arg.keyword.value, rule["to"]  # type: ignore[union-attr]
            at = _given(original, old)
            why = rule["why"].split(";")[0]
            if to in present:
                self.todo(
                    original,
                    f"`{old}=` and `{to}=` are both given; `{old}` is gone ({why}): keep `{to}=`",
                )
                keep.append(arg)
                continue
            on, off = _value_code(rule["on"]), _value_code(rule["off"])
            given = edits.literal(arg.value)
            if given is False:
                self.report(
                    at,
                    f"`{old}=False` was removed ({why}); `{to}={off}`, the default, is what it "
                    "did, so the call goes on without it",
                    severity=Severity.INFO,
                )
                continue
            if given is True:
                value: cst.BaseExpression = cst.parse_expression(on)
                said = f"`{to}={on}`"
            else:
                value = cst.IfExp(
                    test=_tested(arg.value),
                    body=cst.parse_expression(on),
                    orelse=cst.parse_expression(off),
                )
                said = f"`{to}={on} if ... else {off}`"
            keep.append(arg.with_changes(keyword=cst.Name(to), value=value))
            self.report(
                at,
                f"`{old}=` is gone ({why}): it is now {said}, the same setting "
                f"({rule['why'].split(';', 1)[1].strip()})",
                severity=Severity.INFO,
            )
        if len(keep) == len(updated.args):
            return updated.with_changes(args=keep)
        return updated.with_changes(args=edits.relayout(updated, keep, set()))

    def _switch_read(
        self, original: cst.Attribute, updated: cst.Attribute, rule: dict[str, Any]
    ) -> cst.BaseExpression:
        """`args.group_by_length` where `args` holds TrainingArguments or a TRL config: the
        test of the keyword that replaced it (`args.train_sampling_strategy ==
        "group_by_length"`); a TODO where the code sets it, or where the owner is only named
        like one (`self.args`). A field of the script's own dataclasses, or another object's
        attribute, is left alone."""
        field = original.attr.value
        owner = edits.code(original.value).strip()
        test = rule["read"].format(owner=owner)
        why = rule["why"].split(";")[0]
        known = self._training_config(get_full_name_for_node(original.value) or "")
        if not known and field in self._own_fields():
            return updated
        if self.in_mutation and (known or self._config_like(original.value)):
            self.todo(
                original,
                f"`{owner}.{field}` is set here, but {why}: set `{owner}.{rule['to']}` to "
                f"{_value_code(rule['on'])} (or {_value_code(rule['off'])}) instead",
            )
            return updated
        if not known:
            if not self._config_like(original.value):
                return updated  # another object's attribute of that name
            self.todo(
                original,
                f"`{owner}.{field}`: {why}, so reading it from TrainingArguments or a TRL "
                f"config raises AttributeError; read `{test}` there instead",
            )
            return updated
        value = cst.parse_expression(rule["read"].format(owner=edits.code(updated.value).strip()))
        if not self._bare_ok(original):
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self.report(
            original,
            f"`{owner}.{field}` is gone ({why}): read as `{test}`, the same setting",
            severity=Severity.INFO,
        )
        return value

    def _bare_ok(self, node: cst.CSTNode) -> bool:
        """Whether a comparison can stand where `node` is without parentheses: a condition, an
        operand of `and`/`or`/`not`, an argument, an element, an assigned or returned value."""
        tree = self.walked_tree()
        at = tree.index.get(id(node)) if tree is not None else None
        if tree is None or at is None or tree.parents[at] < 0:
            return False
        parent = tree.nodes[tree.parents[at]]
        if isinstance(parent, cst.UnaryOperation):
            return isinstance(parent.operator, cst.Not)
        return isinstance(parent, _BARE_OK)

    def _new_value(
        self, value: cst.BaseExpression, key: str, *, callee: list[str] | None = None
    ) -> cst.SimpleString | None:
        """The string literal `value` of setting `key` with the `values` table's replacement
        (reported), or None. `callee`: the call that takes it, which must be one the table lists;
        None for the default of a script's own field of that name."""
        none = isinstance(value, cst.Name) and value.value == "None"
        if not (isinstance(value, cst.SimpleString) or (none and callee is not None)):
            return None  # a script's own field defaulting to None may mean anything to it
        rule = table()["values"].get(key, {}).get(str(edits.literal(value)))
        if rule is None:
            return None
        if callee is not None and not any(
            fnmatch.fnmatchcase(c, p) for c in callee for p in rule["callees"]
        ):
            return None
        old = edits.literal(value)
        where = (
            (f"`{key}=None`" if none else f'`{key}="{old}"`')
            if callee is not None
            else f'the default of the script\'s own `{key}` field, "{old}",'
        )
        self.report(
            value,
            f'{where} is gone: {rule["why"]}; it is now "{rule["to"]}": {rule["note"]}',
            severity=Severity.WARNING,
        )
        if not isinstance(value, cst.SimpleString):
            return cst.SimpleString(f'"{rule["to"]}"')
        quote = value.prefix + value.quote
        return cst.SimpleString(f"{quote}{rule['to']}{value.quote}")

    def leave_AnnAssign(
        self, original_node: cst.AnnAssign, updated_node: cst.AnnAssign
    ) -> cst.AnnAssign:
        """`optim: str = field(default="adamw_hf", ...)` (or `= "adamw_hf"`) in a class body:
        a script's own flag of a setting it hands the Trainer, whose old value is gone."""
        target = original_node.target
        if (
            not isinstance(target, cst.Name)
            or target.value not in table()["values"]
            or original_node.value is None
        ):
            return updated_node
        value = original_node.value
        if isinstance(value, cst.Call) and (get_full_name_for_node(value.func) or "").endswith(
            "field"
        ):
            default = edits.kwarg(value, "default")
            if default is None:
                return updated_node
            new = self._new_value(default.value, target.value)
            if new is None:
                return updated_node
            assert isinstance(updated_node.value, cst.Call)
            kept = edits.kwarg(updated_node.value, "default")
            assert kept is not None
            return updated_node.with_deep_changes(kept, value=new)
        new = self._new_value(value, target.value)
        return updated_node if new is None else updated_node.with_changes(value=new)

    def _callee(self, call: cst.Call) -> list[str]:
        """What the call may be: qualified names of its function, or its dotted name; for a
        Trainer subclass of the module with no `__init__` of its own, also the library trainer
        whose `__init__` takes its keywords (`RewardTrainer(Trainer)` of the stack-llama reward
        script: `tokenizer=` is `transformers.Trainer`'s)."""
        names = list(self.qualified_names(call.func))
        dotted = get_full_name_for_node(call.func)
        inherited = list(self.trainer_bases.get(dotted or "", ()))
        return [*names, dotted, *inherited] if dotted else names

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        if self.in_import:
            return updated_node
        field = self._config_field(original_node, updated_node)
        if field is not None:
            return field
        if original_node.attr.value not in self.NAMES:
            return updated_node
        switch = table()["switches"].get(original_node.attr.value)
        if switch is not None:
            return self._switch_read(original_node, updated_node, switch)
        gone = table()["dropped"].get(original_node.attr.value)
        if gone is not None and gone.get("reads") != "never":  # `never`: a read is another API's
            if (
                original_node.attr.value not in self._own_fields()
                and not self.in_mutation
                and (gone.get("reads") != "configs" or self._config_like(original_node.value))
            ):
                self.todo(
                    original_node,
                    f"`{edits.code(original_node).strip()}`: {gone['why'].split(';')[0]}, so "
                    "reading it from TrainingArguments or a TRL config raises AttributeError; "
                    "give your script its own flag for it (a field of its dataclass), or drop "
                    "the check",
                )
            return updated_node
        for path in self.qualified_names(original_node):
            if path in WRITTEN_IN:
                return self._written_for_attribute(original_node, updated_node, path)
            move = table()["imports"].get(path)
            if move is not None and move["to"] == path.rpartition(".")[0] and "name" in move:
                new = updated_node.with_changes(attr=cst.Name(move["name"]))
                self.report(
                    original_node, f"`{path}` is gone: `{edits.code(new).strip()}` does the same"
                )
                return new
            todo = table()["todo"].get(path, {}).get("do")
            if move is not None or todo is not None:
                why = todo or f"import it from `{move['to']}`"  # type: ignore[index]
                self.todo(original_node, f"`{path}` is gone: {why}")
                return updated_node
        return updated_node

    def _written_for_attribute(
        self, original: cst.Attribute, updated: cst.Attribute, path: str
    ) -> cst.BaseExpression:
        """`transformers.AdamW(...)`, a removed helper read off its module: the definition is
        written in (at the top, after the imports) under the helper's own name, which the read
        becomes; a TODO where the file already uses that name for something else."""
        bound = path.rpartition(".")[2]
        key = inline.key_of(path)
        if path not in self._taken:
            self._taken[path] = bound in self._bound_otherwise(path)
        if self._taken[path]:
            self.todo(
                original,
                f"`{path}` is gone in the {path.split('.')[0]} TRL 1.13 needs, and this file "
                f"uses the name `{bound}` for something else: write in the definition of "
                f"docs/rules.md (TRL108) under another name and call that",
            )
            return updated
        done: set[tuple[str, str]] = self.__dict__.setdefault("_written_keys", set())
        if (key, bound) not in done:  # once per helper, with an import of it written in too
            stmts, where = inline.written(self.state.helpers, key, bound)
            self._by_attribute.extend(stmts)
            done.add((key, bound))
        else:
            where = inline.place(self.state.helpers, key)
        self.report(
            original,
            f"`{path}` is gone in the {path.split('.')[0]} TRL 1.13 needs; an equivalent "
            f"definition was written into {where}, and `{edits.code(original).strip()}` reads "
            f"it as `{bound}`",
        )
        return cst.Name(bound)

    def _bound_otherwise(self, path: str) -> set[str]:
        """The names this module binds (assigned, defined, imported) but by an import of the
        helper `path` names; every name where it imports `*`."""
        found = edits.bound_names(self._module)
        for defined in walk.find_all(self._module, (cst.FunctionDef, cst.ClassDef)):
            found.add(cast("cst.FunctionDef | cst.ClassDef", defined).name.value)
        for stmt in walk.find_all(self._module, (cst.Import, cst.ImportFrom)):
            node = cast("cst.Import | cst.ImportFrom", stmt)
            if isinstance(node.names, cst.ImportStar):
                return {path.rpartition(".")[2]}
            module = None
            if isinstance(node, cst.ImportFrom) and node.module is not None:
                module = get_full_name_for_node(node.module)
            for alias in node.names:
                if alias.asname is not None:
                    continue  # bound_names has it
                if module is None:
                    found.add(alias_name(alias).partition(".")[0])
                elif not _same_helper(f"{module}.{alias_name(alias)}", path):
                    found.add(alias_name(alias))
        return found


class Drift(Rule):
    code = "TRL108"
    summary = (
        "Move transformers/accelerate/peft/datasets APIs the TRL 1.13 floors removed to what "
        "replaced them."
    )
    before = (
        "from peft import prepare_model_for_int8_training\n"
        "from transformers import TrainingArguments\n"
        'args = TrainingArguments("out", evaluation_strategy="steps")\n'
    )
    after = (
        "from peft import prepare_model_for_kbit_training as prepare_model_for_int8_training\n"
        "from transformers import TrainingArguments\n"
        'args = TrainingArguments("out", eval_strategy="steps")\n'
    )
    transformers = (RewriteDrift,)
    triggers = (*RewriteDrift.NAMES, dtypes.METHOD, dtypes.PIPELINE)
    # Every name but `tokenizer`, which nearly every ML file has: in a file that does not use
    # TRL, `tokenizer=` alone is not reason enough to parse it. (`from_pretrained` is not one
    # either: a load's dtype is changed only where the file's PPO code tells the transformers
    # it ran on.)
    # `push_to_hub` neither: every Hugging Face script calls it, and what TRL108 drops is a
    # tokenizer load's keyword, in a file of PPO code.
    beyond_trl = tuple(n for n in RewriteDrift.NAMES if n not in ("tokenizer", "push_to_hub"))


# Where a comparison reads the same without parentheses (`_bare_ok`).
_BARE_OK = (
    cst.If,
    cst.While,
    cst.IfExp,
    cst.BooleanOperation,
    cst.Arg,
    cst.Assign,
    cst.AnnAssign,
    cst.Return,
    cst.Element,
    cst.Assert,
)
# The callees the table lists for TrainingArguments and TRL's configs (every such row lists the
# same ones).
TRAINING_CONFIGS = tuple(table()["dropped"]["overwrite_output_dir"]["callees"])


# How code names a TrainingArguments or TRL config it did not build itself (`_config_like`).
_CONFIG_NAMES = ("args", "training_args", "train_args", "training_arguments")


def _same_helper(imported: str, path: str) -> bool:
    """Whether an import of `imported` binds the helper `path` names (the same table entry:
    `transformers.AdamW` and `transformers.optimization.AdamW`)."""
    if imported == path:
        return True
    try:
        return inline.key_of(imported) == inline.key_of(path)
    except KeyError:
        return False


def _listed(callee: Sequence[str], patterns: Sequence[str]) -> bool:
    """Whether one of the names a call may have matches one of `patterns` (fnmatch)."""
    return any(fnmatch.fnmatchcase(c, p) for c in callee for p in patterns)


def _given(call: cst.Call, keyword: str) -> cst.Arg:
    """The argument of `call` given as `keyword=` (which it has)."""
    return next(a for a in call.args if a.keyword is not None and a.keyword.value == keyword)


def _value_code(value: object) -> str:
    """A table's JSON value (a string, a list of strings) as Python code."""
    return json.dumps(value)


def _tested(value: cst.BaseExpression) -> cst.BaseExpression:
    """`value` as the test of a conditional expression: parenthesized where it binds looser."""
    if isinstance(value, (cst.Lambda, cst.IfExp, cst.NamedExpr, cst.Yield)) and not value.lpar:
        return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return value


def is_ratio(text: str) -> bool:
    """`text` is a number in [0, 1): a ratio that reads the same as a float `warmup_steps`."""
    try:
        return 0 <= float(text) < 1
    except ValueError:
        return False


def _steps_or_ratio(
    steps: cst.BaseExpression, ratio: cst.BaseExpression
) -> tuple[cst.BaseExpression, str] | None:
    """`warmup_steps=` given beside `warmup_ratio=<r>` (a ratio literal): transformers 4.x
    warmed up for `warmup_steps` when above 0, else for the ratio (TrainingArguments.
    get_warmup_steps). What `warmup_steps` gets so transformers 5 does the same, and how that
    reads; None where the steps are an expression the rule will not repeat."""
    shown = edits.code(ratio).strip()
    count = edits.literal(steps)
    if isinstance(count, int | float) and not isinstance(count, bool):
        if isinstance(count, int) and count > 0:  # a float would read as a ratio in 5
            return steps, f"`{shown}` did nothing beside `{count}` and is dropped"
        if count == 0:
            return ratio, f"the ratio was used: `warmup_steps={shown}`"
        return None
    name = get_full_name_for_node(steps)  # a name or `args.warmup_steps`: read twice, the same
    if name is not None and name == edits.code(steps).strip():
        value = cst.parse_expression(f"{name} if {name} > 0 else {shown}")
        return value, f"`warmup_steps={name} if {name} > 0 else {shown}` does the same"
    return None


def _ratio(value: cst.BaseExpression) -> bool:
    """A number literal in [0, 1) (`is_ratio`)."""
    return isinstance(value, (cst.Float, cst.Integer)) and is_ratio(value.value)

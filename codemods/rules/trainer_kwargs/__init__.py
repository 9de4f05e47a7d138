"""TRL109 trainer-kwargs: settings that TRL <= 0.12's SFTTrainer, DPOTrainer and RewardTrainer
took as keyword arguments (`max_seq_length=`, `packing=`, `dataset_text_field=`, `beta=`,
`max_length=`, ...) move into the config TRL 1.13 reads them from (data, built from every
wheel by tools/trainer_kwargs.py: codemods/data/trainer_kwargs.json).

The config is the trainer's `args`: a `TrainingArguments(...)` or `SFTConfig(...)` call, inline or
bound once to the name passed. A `TrainingArguments(...)` call becomes the trainer's config with
the fields whose defaults differ pinned to the TrainingArguments values (`learning_rate`,
`logging_steps`, `bf16`, `gradient_checkpointing`), as TRL 1.13's own conversion of a
TrainingArguments keeps them. `packing=True` also sets `packing_strategy="wrapped"`: old TRL
concatenated the texts and cut them into `max_seq_length` chunks, which is what "wrapped" does
(1.13's default "bfd" packs whole samples). A keyword with no 1.13 setting is removed with a
TODO that says what to do; a config the rule cannot see (parsed, built elsewhere, assigned
twice) has the settings put on it where the trainer is built:
`args=trl_config_with(SFTConfig, training_args, packing=...)`, a helper written into the file
that copies a config of that class with them, or converts a TrainingArguments as TRL 1.13's
SFTTrainer does (every value kept). Only a trainer built with no `args` at all keeps a TODO.

Values old TRL did not apply as they read: `max_seq_length=None` meant
`min(tokenizer.model_max_length, 1024)` (TRL 1.13's `max_length=None` means no limit), so it
becomes that expression where the trainer's tokenizer is named, else the 1.13 default (1024) with
a warning; packing with a value that is not a literal False also gets `packing_strategy="wrapped"`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection
from importlib import resources
from typing import Any, cast

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node
from packaging.version import Version

from codemods import edits, inline, quantization, reaching, walk
from codemods.base import Rule, RuleTransformer
from codemods.config_vars import is_parser
from codemods.rules.trainer_kwargs.reward_columns import RewardColumns
from migrate.kernel.findings import Fix, Severity

# Where `args` sits among the positional arguments of each trainer, in every release.
ARGS_AT = {"SFTTrainer": 1, "DPOTrainer": 2, "RewardTrainer": 1}
CONFIGS = ("SFTConfig", "DPOConfig", "RewardConfig")  # their defaults TRL 1.13 changed
TRAINING_ARGUMENTS = (
    "transformers.TrainingArguments",
    "transformers.training_args.TrainingArguments",
)
HELPER = "trl_config_with"  # written in where the trainer's config is built out of sight
HELPER_PATH = "trl-migrate:config_with"
COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
OLD_MAX_LENGTH = 1024  # TRL <= 0.12: max_seq_length=None meant min(model_max_length, 1024)
WRAPPED = (
    "old TRL concatenated the texts and cut them into max_seq_length chunks; "
    'packing_strategy="wrapped" does that (TRL 1.13\'s default, "bfd", packs whole samples)'
)


@functools.cache
def table() -> dict[str, Any]:
    text = resources.files("codemods").joinpath("data/trainer_kwargs.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)["trainers"]
    return data


class RewriteTrainerKwargs(RuleTransformer):
    NAMES = (*ARGS_AT, *CONFIGS)

    def focus(self):  # type: ignore[no-untyped-def]
        # The trainer calls name a trl import; their configs are bound to the names passed.
        return self.trl_focus("TrainingArguments", *CONFIGS, *sorted(self._config_names))

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._plans: dict[int, tuple[str, list[cst.Arg]]] = {}  # id(config call) -> plan
        self._trainers: dict[int, str] = {}  # id(trainer call) -> trainer class
        self._trainer_configs: dict[int, cst.Call | None] = {}  # id(trainer call) -> its args
        self._config_names: set[str] = set()
        self._planned: set[int] = set()  # id(trainer call) whose config this rule rewrites
        self._unpacked: dict[int, str] = {}  # id(trainer call) -> `**x` its config call unpacks
        # id(trainer call) whose config call is a TrainingArguments(...) that unpacks values and
        # that the trainer cannot take in TRL 1.13: converted where the trainer is built
        self._unpacked_ta: set[int] = set()
        self._module = node
        self._rebound: dict[tuple[int, str], reaching.Rebound[bool]] | None = None
        self._helper_defined = inline.defines(node, HELPER)
        self._taken: bool | None = None  # made when a config is first wrapped
        self._write_helper = False
        assigns: dict[str, list[cst.Assign]] = {}
        for assign in walk.find_all(node, cst.Assign):
            for t in assign.targets:
                name = get_full_name_for_node(t.target)
                if name:
                    assigns.setdefault(name, []).append(assign)
        self._drifted: dict[int, str] = {}  # id(config call) -> its class, defaults changed
        # id(SFTTrainer or RewardTrainer call) -> its trainer: said to append EOS
        self._sft_calls: dict[int, str] = {}
        self._kbit_names: dict[str, str] | None = None  # BitsAndBytesConfig names, when asked
        self._late: set[int] = set()  # trainer calls whose moved values are bound below the config
        self._sft_formatting: set[int] = set()  # id(SFTTrainer call): its formatting_func read
        # the file's module-level functions by name, for a `formatting_func=` they name
        self._functions = {s.name.value: s for s in node.body if isinstance(s, cst.FunctionDef)}
        # id(statement) -> (the variable it binds or "", the parser call, TRL configs it parses)
        self._parsers: dict[int, tuple[str, cst.Call, list[str]]] = {}
        self._set_defaults: dict[str, set[str]] = {}  # parser variable -> fields it sets
        for line in walk.find_all(node, cst.SimpleStatementLine):
            small = line.body[0] if len(line.body) == 1 else None
            value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
            if not isinstance(value, cst.Call):
                continue
            var = ""
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                var = target.value if isinstance(target, cst.Name) else ""
            if isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call):
                # `HfArgumentParser((...)).parse_args_into_dataclasses()`: no parser to name
                value, var = value.func.value, ""
            classes = self._parsed_configs(value)
            if classes:
                self._parsers[id(line)] = (var, value, classes)
        for call in walk.find_all(node, cst.Call):
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value == "set_defaults"
                and isinstance(func.value, cst.Name)
            ):
                self._set_defaults.setdefault(func.value.value, set()).update(
                    _kw(a) if a.keyword is not None else "**" for a in call.args
                )
                continue
            config_class = self._trl_config(call)
            if config_class is not None:
                self._drifted[id(call)] = config_class
            trainer = self._trainer(call)
            if trainer is None:
                continue
            config = self._config_call(call, trainer, assigns)
            if trainer == "SFTTrainer":
                self._sft_formatting.add(id(call))
            if trainer in ("SFTTrainer", "RewardTrainer") and not _sets_newer_fields(
                config, trainer
            ):
                self._sft_calls[id(call)] = trainer
            if not self._old_kwargs(call, trainer) and not self._needs_config(config, trainer):
                continue
            self._trainers[id(call)] = trainer
            self._trainer_configs[id(call)] = config
            if config is None:
                continue
            unpacked = next((a for a in config.args if a.star), None)
            if unpacked is not None:
                # `TrainingArguments(**vars(training_args))`: the unpacked values may hold any
                # field, so a keyword added beside them could be given twice (TypeError) or
                # be overridden; the trainer converts the built config instead
                # (`trl_config_with`: every value kept)
                self._unpacked[id(call)] = edits.code(unpacked).strip().rstrip(",").strip()
                if self._needs_config(config, trainer):
                    self._unpacked_ta.add(id(call))
                continue
            if id(config) in self._plans and self._plans[id(config)][0] != trainer:
                continue  # one config for two kinds of trainer: the trainer calls get TODOs
            moved = [
                a for a in self._old_kwargs(call, trainer) if _kw(a) in table()[trainer]["moved"]
            ]
            if self._bound_after(config, call, moved):
                # `model_init_kwargs=model_kwargs`, bound in a cell below the config's (rcalix1's
                # Math_SFT_GPT2 notebook): the trainer converts its config where it is built
                self._trainer_configs[id(call)] = None
                self._late.add(id(call))
                continue
            previous = self._plans.get(id(config), (trainer, []))[1]
            self._plans[id(config)] = (trainer, [*previous, *moved])
            self._planned.add(id(call))
            self._config_names.update(
                n for n, a in assigns.items() if any(x.value is config for x in a)
            )

    def _trainer(self, call: cst.Call) -> str | None:
        return self._trl_class(call, ARGS_AT.keys())

    def _bound_after(self, config: cst.Call, call: cst.Call, moved: list[cst.Arg]) -> bool:
        """Whether a value of `moved` reads a name the file assigns between the config call and
        the trainer call: in the config, it would be read before it is bound."""
        tree = self.walked_tree()
        at = tree.index.get(id(config)) if tree is not None else None
        end = tree.index.get(id(call)) if tree is not None else None
        if tree is None or at is None or end is None:
            return False
        attrs = {id(a.attr) for m in moved for a in walk.find_all(m.value, cst.Attribute)}
        read = {
            n.value for m in moved for n in walk.find_all(m.value, cst.Name) if id(n) not in attrs
        }
        if not read:
            return False
        for assign in walk.find_all(self._module, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            where = tree.index.get(id(assign))
            if where is not None and at < where < end and read & edits.bound_names(assign):
                return True
        return False

    def _trl_config(self, call: cst.Call) -> str | None:
        """The TRL config class `call` builds, when it is one whose defaults TRL 1.13 changed."""
        return self._trl_class(call, changed_defaults().keys())

    def _trl_class(self, call: cst.Call, classes: Collection[str]) -> str | None:
        """The one of `classes` that `call` calls, when its function names TRL's alone."""
        names = self.qualified_names(call.func) if self.resolves_to_trl(call.func) else ()
        if not names or any(not q.startswith("trl.") for q in names):
            return None
        found = {q.rpartition(".")[2] for q in names} & set(classes)
        return next(iter(found)) if len(found) == 1 else None

    # -- defaults TRL 1.13 changed ------------------------------------------------------------
    def _changed_defaults(
        self, original: cst.Call, updated: cst.Call, config_class: str
    ) -> cst.Call:
        """Settings a TRL config call leaves to defaults TRL 1.13 changed: kept at the old
        default where the project's TRL release tells it (`--trl-version`, its requirement
        files), else said (a warning) with the defaults of each release span."""
        if any(a.star for a in updated.args):
            return updated  # the unpacked values may set any of them
        given = {_kw(a) for a in updated.args if a.keyword is not None}
        # TRL 1.13 makes an unset bf16 `not fp16`: only a literal fp16=True leaves it as before
        # (bkd7911's `fp16=True if torch.cuda.is_available() else False` turned bf16 on on CPU)
        if "fp16" in given and not any(
            _kw(a) == "fp16" and edits.literal(a.value) is True for a in updated.args
        ):
            given = given - {"fp16"}
        unsure, kept = self._old_defaults(config_class, given)
        if unsure:
            self.report(
                original,
                f"`{config_class}(...)` leaves settings to defaults TRL 1.13 changed, so the run "
                f"trains differently: {'; '.join(unsure)}; set each to the value your TRL "
                "release used (or pass --trl-version, and the rewrite keeps that release's)",
                severity=Severity.WARNING,
                fix=Fix.NONE,  # nothing written: the values are the user's to choose
            )
        if not kept:
            return updated
        self.report(
            original,
            f"`{config_class}(...)` left "
            + ", ".join(f"`{n}`" for n, _ in kept)
            + f" to defaults TRL 1.13 changed; kept at those of {self._declared()}: "
            + _kept_values(config_class, kept),
            severity=Severity.WARNING,
        )
        args = list(updated.args)
        fresh: set[int] = set()
        for name, value in kept:
            arg = _literal_kwarg(name, value)
            args.append(arg)
            fresh.add(id(arg))
        first = updated.args[0] if updated.args else None
        args = edits.relayout(original, args, fresh | ({id(updated.args[-1])} if first else set()))
        return updated.with_changes(args=args)

    def _old_defaults(
        self, config_class: str, given: Collection[str]
    ) -> tuple[list[str], list[tuple[str, Any]]]:
        """The fields of `config_class` outside `given` whose default TRL 1.13 changed: those
        whose old default the project's TRL release does not tell (`name=now (history)`, for a
        message), and those it tells (name, old default)."""
        releases = self.state.options.trl_releases
        unsure: list[str] = []
        kept: list[tuple[str, Any]] = []
        for name, entry in changed_defaults()[config_class].items():
            if name in given or (name == "bf16" and "fp16" in given):
                continue
            old = _old_default(entry, releases) if releases else _UNKNOWN
            if old is _SAME:
                continue
            if old is _UNKNOWN:
                spans = ", ".join(
                    f"{value!r} in TRL {_span(first, last)}"
                    for first, last, value, _ in entry["then"]
                )
                unsure.append(f"{name}={entry['now']!r} ({spans})")
            else:
                kept.append((name, old))
        return unsure, kept

    def _declared(self) -> str:
        releases = self.state.options.trl_releases
        return self.state.options.trl_declared or ", ".join(releases or ())

    def _appends_eos(self, call: cst.Call, trainer: str) -> None:
        """TRL 1.13's SFTTrainer appends the EOS token to each text (or completion) it tokenizes,
        and its RewardTrainer to each chosen and rejected text, which releases before the
        table's `appends_eos.first` did not: said (nothing to set turns it off), unless the
        project's TRL release already did it."""
        entry = table()[trainer].get("appends_eos") or {}
        first, before = entry.get("first"), entry.get("last_without")
        if not first:
            return
        releases = self.state.options.trl_releases or ()
        if releases and all(Version(r) >= Version(first) for r in releases):
            return
        unchanged = "(a dataset already tokenized, or of conversations, is left as it is)"
        texts, learns = (
            (
                "every text (and completion)",
                "the model now also learns to end each example with EOS",
            )
            if trainer == "SFTTrainer"
            else (
                "every chosen and rejected text",
                "the reward model now scores each text with an EOS at its end (a PPO or RLOO "
                "run that decodes completions without one reads its score elsewhere)",
            )
        )
        if self._old_kwargs(call, trainer) or (
            releases and all(Version(r) < Version(first) for r in releases)
        ):
            ran = (
                self._declared()
                if releases
                else "the TRL release this call was written for (its keywords ran up to 0.12)"
            )
            said = (
                f"TRL 1.13's {trainer} appends the tokenizer's EOS token to {texts} it "
                f"tokenizes, as TRL {first} on did, and {ran} did not: {learns} {unchanged}"
            )
        else:
            said = (
                f"TRL 1.13's {trainer} appends the tokenizer's EOS token to {texts} it "
                f"tokenizes, which TRL {before} and earlier did not: if this script ran on "
                f"those, {learns} {unchanged}"
            )
        self.report(call, said, severity=Severity.WARNING, fix=Fix.NONE)

    # -- configs parsed from the command line -------------------------------------------------
    def _parsed_configs(self, call: cst.Call) -> list[str]:
        """The TRL configs with changed defaults that `call`, a dataclass parser
        (`HfArgumentParser((ScriptArguments, RewardConfig))`, `TrlParser(SFTConfig)`), parses."""
        if not call.args or not is_parser(get_full_name_for_node(call.func)):
            return []
        first = call.args[0].value
        classes = (
            [e.value for e in first.elements]
            if isinstance(first, (cst.Tuple, cst.List))
            else [first]
        )
        found = []
        for cls in classes:
            names = self.names_from(cls, "trl")
            if names and all(q.startswith("trl.") for q in names):
                last = {q.rpartition(".")[2] for q in names}
                if len(last) == 1 and next(iter(last)) in changed_defaults():
                    found.append(next(iter(last)))
        return found

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.BaseStatement]:
        """A parser of configs whose defaults TRL 1.13 changed: fields the command line leaves
        out start from 1.13's defaults. With the project's TRL release known, `parser.
        set_defaults(...)` below it keeps that release's (a flag or a config file still wins);
        else a warning lists them."""
        parsed = self._parsers.get(id(original_node))
        if parsed is None:
            return updated_node
        var, call, classes = parsed
        pinned: dict[str, Any] = {}
        said: list[str] = []
        given = self._set_defaults.get(var, set()) if var else set()
        if "**" in given:
            return updated_node  # `parser.set_defaults(**values)` may set any of them
        for config_class in classes:
            unsure, kept = self._old_defaults(config_class, given)
            if unsure:
                said.append(f"{config_class}: {'; '.join(unsure)}")
            if kept and var:
                self.report(
                    call,
                    f"the parsed {config_class} would start from defaults TRL 1.13 changed "
                    f"where the command line leaves them out; `{var}.set_defaults(...)` keeps "
                    f"those of {self._declared()} (a flag or config file value still wins): "
                    + _kept_values(config_class, kept),
                    severity=Severity.WARNING,
                )
                pinned.update((n, v) for n, v in kept if n not in pinned)
            elif kept:
                self.report(
                    call,
                    f"the parsed {config_class} starts from TRL 1.13's defaults where the "
                    f"command line leaves a field out, and those of {self._declared()} differ, "
                    "so the run trains differently: "
                    + _kept_values(config_class, kept)
                    + "; pass each as a flag, or bind the parser to a name and "
                    "`set_defaults(...)` them before parsing",
                    severity=Severity.WARNING,
                    fix=Fix.NONE,
                )
        for config_class in classes:  # settings whose unset value TRL 1.13 reads otherwise
            row = next(
                (
                    r
                    for r in table().values()
                    if isinstance(r, dict) and r.get("config") == config_class
                ),
                {},
            )
            for name, note in row.get("unset_notes", {}).items():
                if name not in given:
                    self.report(
                        call,
                        f"`{name}` of the parsed {config_class}, where the command line leaves it "
                        f"out: {note}",
                        severity=Severity.WARNING,
                        fix=Fix.NONE,
                    )
        if said:
            self.report(
                call,
                "the parsed config starts from TRL 1.13's defaults where the command line "
                f"leaves a field out, and these changed, so the run trains differently: "
                f"{' | '.join(said)}; pass each as a flag at the value your TRL release used, "
                + (f"or `{var}.set_defaults(...)` them" if var else "or set them on the parser")
                + " (or pass --trl-version, and the rewrite keeps that release's)",
                severity=Severity.WARNING,
                fix=Fix.NONE,
            )
        if not pinned:
            return updated_node
        args = [_literal_kwarg(n, v) for n, v in pinned.items()]
        args = [a.with_changes(comma=COMMA) for a in args[:-1]] + args[-1:]
        defaults = cst.SimpleStatementLine(
            body=[cst.Expr(cst.Call(func=cst.parse_expression(f"{var}.set_defaults"), args=args))]
        )
        return cst.FlattenSentinel([updated_node, defaults])

    def _needs_config(self, config: cst.Call | None, trainer: str) -> bool:
        """Whether `config`, the trainer's `args`, is a `TrainingArguments(...)` that TRL 1.13's
        trainer cannot take (only its own config): it becomes that config, moved keywords or
        none."""
        return (
            config is not None
            and not table()[trainer]["takes_training_arguments"]
            and self._config_kind(config, trainer) == "training_arguments"
        )

    def _old_kwargs(self, call: cst.Call, trainer: str) -> list[cst.Arg]:
        row = table()[trainer]
        return [a for a in call.args if _kw(a) in row["moved"] or _kw(a) in row["gone"]]

    def _config_call(
        self, call: cst.Call, trainer: str, assigns: dict[str, list[cst.Assign]]
    ) -> cst.Call | None:
        """The call that builds this trainer call's `args`, when the rule can see it."""
        arg = edits.kwarg(call, "args")
        if arg is None:
            positional = [a for a in call.args if a.keyword is None and not a.star]
            at = ARGS_AT[trainer]
            arg = positional[at] if len(positional) > at else None
        if arg is None:
            return None
        value = arg.value
        if isinstance(value, cst.Name):
            bound = assigns.get(value.value, [])
            if len(bound) != 1:
                # bound several times in one block (a config per trainer): the binding above
                assign = self._reaching_assign(call, value.value)
                if assign is None:
                    return None
                bound = [assign]
            value = bound[0].value
        if not isinstance(value, cst.Call) or self._config_kind(value, trainer) is None:
            return None
        return value

    def _reaching_assign(self, call: cst.Call, name: str) -> cst.Assign | None:
        """The assignment of `name` that `call` reads where its block binds it several times
        (`reaching`); None where that is not plain from the text."""
        if self._rebound is None:
            self._rebound = reaching.rebound(
                self._module,
                self.function_of,
                reaching.blocks_of(self._module),
                lambda assign: True,
            )
        scope = self.function_of(call)
        entry = self._rebound.get((scope, name)) if scope is not None else None
        if entry is None:
            return None
        return reaching.last_above(entry, call, self.state.tree_of(self._module))

    def _config_kind(self, call: cst.Call, trainer: str) -> str | None:
        names = set(self.qualified_names(call.func))
        if names and names <= set(TRAINING_ARGUMENTS):
            return "training_arguments"
        config = table()[trainer]["config"]
        if names and all(q.startswith("trl.") and q.endswith("." + config) for q in names):
            return "config"
        return None

    # -- the config call gains the settings ---------------------------------------------------
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if id(original_node) in self._sft_calls:
            self._appends_eos(original_node, self._sft_calls[id(original_node)])
        if id(original_node) in self._sft_formatting:
            self._kbit_unprepared(original_node)
            self._constant_length(original_node)
            updated_node = self._per_example(original_node, updated_node)
        plan = self._plans.get(id(original_node))
        if plan is not None:
            updated_node = self._config(original_node, updated_node, *plan)
        config_class = self._drifted.get(id(original_node))
        if config_class is not None:
            return self._changed_defaults(original_node, updated_node, config_class)
        if plan is not None:
            return updated_node
        trainer = self._trainers.get(id(original_node))
        if trainer is not None:
            return self._trainer_call(original_node, updated_node, trainer)
        return updated_node

    def _config(
        self, original: cst.Call, updated: cst.Call, trainer: str, moved: list[cst.Arg]
    ) -> cst.Call:
        row = table()[trainer]
        config = row["config"]
        have = {_kw(a): a for a in updated.args if a.keyword is not None}
        args = list(updated.args)
        fresh: set[int] = set()

        def add(name: str, value: cst.BaseExpression, origin: cst.Arg | None = None) -> None:
            arg = edits.new_kwarg(name, value)
            if origin is not None:  # its line comment comes along (relayout keeps it)
                arg = arg.with_changes(comma=origin.comma)
            args.append(arg)
            fresh.add(id(arg))
            have[name] = arg

        for arg in moved:
            to = row["moved"][_kw(arg)]["to"]
            if to in have:
                if edits.code(have[to].value).strip() != edits.code(arg.value).strip():
                    self.todo(
                        original,
                        f"`{_kw(arg)}={edits.code(arg.value).strip()}` was given to the trainer "
                        f"and `{to}=` to the config, with another value; keep one",
                    )
                continue
            if edits.literal(arg.value) is None:
                self._none_setting(arg, to, tokenizer=None)
                continue
            add(to, arg.value, arg)
            if to == "packing" and _packs(arg) and "packing_strategy" not in have:
                add("packing_strategy", cst.SimpleString('"wrapped"'))
                self.report(arg, _packing_note(arg), severity=Severity.INFO)
        if self._config_kind(original, trainer) == "training_arguments":
            pinned = [f"{n}={v!r}" for n, v in row["pins"].items() if n not in have]
            for name, value in row["pins"].items():
                if name not in have:
                    add(name, cst.parse_expression(repr(value)))
            kept = [(n, k) for n, k in row["keeps"].items() if n not in have]
            for name, keep in kept:
                add(name, cst.parse_expression(repr(keep["value"])))
            AddImportsVisitor.add_needed_import(self.context, "trl", config)
            until = row["training_arguments_until"]
            became = (
                f"`TrainingArguments` became `{config}`, which holds the settings the trainer "
                "took as keyword arguments"
                if moved or not until
                else f"`TrainingArguments` became `{config}`: {trainer} took a TrainingArguments "
                f"up to TRL {until}, and TRL 1.13's reads fields only {config} has (it fails "
                "on a TrainingArguments)"
            )
            if pinned:
                became += (
                    f"; {', '.join(pinned)} keep the TrainingArguments defaults where "
                    f"{config}'s differ"
                )
            became += _kept_said(kept)
            self.report(original, became, severity=Severity.WARNING)
            for name, note in row["unset_notes"].items():
                if name not in have:
                    self.report(original, f"`{name}` is not set: {note}", severity=Severity.WARNING)
            updated = updated.with_changes(func=cst.Name(config))
        if len(args) != len(updated.args):
            first = updated.args[0] if updated.args else None
            args = edits.relayout(
                original, args, fresh | ({id(updated.args[-1])} if first else set())
            )
        return updated.with_changes(args=args)

    # -- the trainer call loses them ----------------------------------------------------------
    def _trainer_call(self, original: cst.Call, updated: cst.Call, trainer: str) -> cst.Call:
        row = table()[trainer]
        config = row["config"]
        if trainer == "DPOTrainer":
            self._old_dpo(original)
        planned = id(original) in self._planned
        at = None if planned or self._helper_taken() else _args_at(updated, trainer)
        if at is not None:
            updated = self._wrap_args(original, updated, trainer, at)
        keep: list[cst.Arg] = []
        twice, maker = self._peft_twice(original, trainer)
        for orig, arg in zip(original.args, updated.args):
            kw = _kw(arg)
            if kw == "peft_config" and twice == "drop":
                self.report(
                    orig,
                    f"`peft_config=` dropped: `model` is a PeftModel already (`{maker}` "
                    f"above), which {trainer} of TRL 0.4-0.12 (this call's keywords ran there) "
                    "trained as it was, leaving peft_config unused; TRL 1.13 raises on the pair",
                    severity=Severity.INFO,
                )
                continue
            if kw == "peft_config" and twice == "todo":
                self.todo(
                    original,
                    f"`model` may be a PeftModel here (`{maker}` in a branch above): "
                    f"{trainer} of TRL 0.4-0.12 then left `peft_config` unused, and TRL 1.13 "
                    "raises on the pair; pass `peft_config` only where `model` is no PeftModel",
                )
            if kw in row["moved"]:
                to = row["moved"][kw]["to"]
                if planned:
                    if edits.literal(arg.value) is not None:  # a None is dropped, and said so
                        self.report(
                            orig,
                            f"`{trainer}({kw}=...)` was removed in TRL 0.13 (taken from "
                            f"{row['moved'][kw]['in']}); moved into the {config} as `{to}=`",
                        )
                    continue
                if at is not None:
                    continue  # carried by the helper call that wraps `args` below
                self.todo(
                    original,
                    f"`{trainer}({kw}=...)` was removed in TRL 0.13: set `{to}="
                    f"{edits.code(arg.value).strip()}` on the {config} passed as `args` (the "
                    "trainer is built without one)",
                )
                continue
            if kw in row["gone"]:
                self.todo(
                    original,
                    f"`{kw}={edits.code(arg.value).strip()}` was removed: {row['gone'][kw]['do']}",
                )
                continue
            keep.append(arg)
        if len(keep) == len(updated.args):
            return updated
        return updated.with_changes(args=edits.relayout(original, keep, set()))

    def _per_example(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """`SFTTrainer(..., formatting_func=f)` where `f`, a function of this file, returns a
        list (`[f"{b['q'][i]} ..." for i in range(len(b['q']))]`): written for TRL <= 0.20, which
        mapped it over batches of examples; TRL 1.13 calls it with one example and wants one
        text. It is handed a batch of one and gives back its one text: the same text per
        example (raschedh/ppo_reasoning's SFT script stopped on it, with no finding)."""
        arg = edits.kwarg(updated, "formatting_func")
        if arg is None or not isinstance(arg.value, cst.Name):
            return updated
        name = arg.value.value
        func = self._functions.get(name)
        if func is None or not _returns_lists(func):
            return updated
        if name in ("example", "key", "value"):
            return updated  # the lambda's own names would shadow the function
        wrapped = cst.parse_expression(
            f"lambda example: {name}({{key: [value] for key, value in example.items()}})[0]"
        )
        self.report(
            original,
            f"`{name}` builds a list of texts from a batch of examples, as the SFTTrainer of TRL "
            "0.20 and earlier called it; TRL 1.13's calls it with one example and wants one "
            f"text: it is handed a batch of that one example and gives back its text",
        )
        args = [a.with_changes(value=wrapped) if a is arg else a for a in updated.args]
        return updated.with_changes(args=args)

    def _old_dpo(self, call: cst.Call) -> None:
        """A DPOTrainer call written for TRL <= 0.12 (its keywords, or a TrainingArguments):
        what its trainer did by default that TRL 1.13's does otherwise, and no setting carries
        over the same way (TRL's wheels: 0.5-0.11 dpo_trainer.py, 1.13 dpo_config.py and
        dpo_trainer.py): said, as a warning."""
        config = self._trainer_configs.get(id(call))
        given = {_kw(a) for a in call.args} | (
            {_kw(a) for a in config.args} if config is not None else set()
        )
        said: list[str] = []
        if "max_length" not in given and not any(a.star for a in call.args):
            said.append(
                "its trainer cut a pair that did not fit in `max_length` (512 by default in TRL "
                "0.5-0.11) by the prompt first, to its last `max_prompt_length` tokens (128), "
                "and 0.7.5-0.8.6 put a BOS token before every prompt; TRL 1.13 cuts prompt and "
                "completion together to their first 1024 tokens, with no prompt limit, and adds "
                "BOS only where the tokenizer does: `max_length=512` on the DPOConfig keeps the "
                "old bound (the prompt-first cut has no setting)"
            )
        positional = [a for a in call.args if a.keyword is None and not a.star]
        ref = edits.kwarg(call, "ref_model")
        ref_value = (
            ref.value if ref is not None else (positional[1].value if len(positional) > 1 else None)
        )
        no_ref = ref_value is None or (
            isinstance(ref_value, cst.Name) and ref_value.value == "None"
        )
        # with `peft_config` the reference is the policy with its adapter off, then as now
        if no_ref and edits.kwarg(call, "peft_config") is None:
            said.append(
                "with no `ref_model`, TRL 0.6-0.28 froze a copy of the policy as it was handed "
                "in; TRL 1.13 loads the reference again from `model.config._name_or_path`, in "
                "float32 unless `model_init_kwargs` sets a dtype, so what was done to the policy "
                "in memory first (another dtype, resized embeddings, a merged adapter) is not in "
                "it"
            )
        if said:
            self.report(
                call,
                "this DPOTrainer call was written for TRL 0.12 or older: " + "; ".join(said),
                severity=Severity.WARNING,
                fix=Fix.NONE,
            )

    def _peft_twice(self, call: cst.Call, trainer: str) -> tuple[str | None, str]:
        """For a trainer call given `peft_config=` whose `model` the nearest assignment before
        it in the same function made a PeftModel (`get_peft_model(...)`,
        `PeftModel.from_pretrained(...)`): "drop" where that assignment always runs before the
        call (the same block), "todo" where it sits in a branch, else None; and how the file made
        it. SFTTrainer and RewardTrainer of TRL 0.4-0.12 wrapped only a model that was no
        PeftModel; DPOTrainer merged the adapter instead, so it is left alone."""
        if (
            trainer not in ("SFTTrainer", "RewardTrainer")
            or edits.kwarg(call, "peft_config") is None
        ):
            return None, ""
        last, tree = self._model_bound(call), self.walked_tree()
        if last is None or tree is None or not isinstance(last.value, cst.Call):
            return None, ""
        made = self.qualified_names(last.value.func)
        if not made or not all(q in PEFT_MODEL_MAKERS for q in made):
            return None, ""
        maker = edits.code(last.value.func).strip()
        return ("drop" if _block_of(tree, last) == _block_of(tree, call) else "todo"), maker

    def _constant_length(self, call: cst.Call) -> None:
        """An SFTTrainer call given a `ConstantLengthDataset` (TRL's torch IterableDataset of
        packed token ids, written into the file by TRL101 or the script's own) as its train or
        eval dataset: SFTTrainer up to TRL 0.12 trained on it as it was, TRL 1.13's refuses any
        dataset but `datasets`' (TypeError). A TODO: what replaces it is the user's choice
        (stack_llama_2's sft_llama2.py and its copies, dadpo-'s phi-2 script)."""
        known = self.state.identifiers
        if known is not None and not known.has_any(("ConstantLengthDataset",)):
            return  # the usual SFT script: no module walk
        names = _constant_length_names(self._module)
        for key in ("train_dataset", "eval_dataset"):
            arg = edits.kwarg(call, key)
            value = arg.value if arg is not None else None
            if not (
                _is_constant_length_call(value)
                or (isinstance(value, cst.Name) and value.value in names)
            ):
                continue
            self.todo(
                call,
                f"`{key}` is a ConstantLengthDataset (a torch IterableDataset of packed token "
                "ids), which SFTTrainer up to TRL 0.12 trained on as it was; TRL 1.13's "
                "SFTTrainer takes only a `datasets` Dataset or IterableDataset and raises "
                "TypeError on it: hand it the text dataset with `packing=True, "
                'packing_strategy="wrapped", max_length=<seq_length>` in its SFTConfig (texts '
                "concatenated and cut into chunks, as ConstantLengthDataset did), or train on "
                "it with transformers' Trainer, which takes a torch dataset",
            )
            return

    def _kbit_unprepared(self, call: cst.Call) -> None:
        """An SFTTrainer call given `peft_config=` and a model this function loads in 8 or 4
        bits: SFTTrainer up to TRL 0.21 ran peft's preparation for k-bit training on it, TRL
        1.13 does not (the table's `kbit_prepared`). Said, not written: which release the script
        ran on decides what the preparation did."""
        entry = table()["SFTTrainer"].get("kbit_prepared") or {}
        peft = edits.kwarg(call, "peft_config")
        if not entry or peft is None or edits.code(peft.value).strip() == "None":
            return
        releases = self.state.options.trl_releases or ()
        if releases and all(Version(r) >= Version(entry["first_without"]) for r in releases):
            return
        last = self._model_bound(call)
        load = last.value if last is not None else None
        if not (
            isinstance(load, cst.Call)
            and isinstance(load.func, cst.Attribute)
            and load.func.attr.value == "from_pretrained"
        ):
            return
        if self._kbit_names is None:
            self._kbit_names = quantization.config_names(self._module)
        state = quantization.load_state(load, self._kbit_names)
        if state == quantization.OFF or any(
            (get_full_name_for_node(c.func) or "").rpartition(".")[2]
            in ("prepare_model_for_kbit_training", "prepare_model_for_int8_training")
            for c in walk.find_all(self._module, cst.Call)
        ):
            return
        model = edits.code(load.func.value).strip()
        assert last is not None
        target = last.targets[0].target if isinstance(last, cst.Assign) else last.target
        name = edits.code(target).strip()
        maybe = " when the flag is true" if state == quantization.MAYBE else ""
        if releases and all(Version(r) <= Version(entry["last"]) for r in releases):
            ran = f" (the project's {self._declared()} among them)"
            when = "to train as it did"
        elif self._old_kwargs(call, "SFTTrainer"):
            ran = " (this call's keywords ran up to 0.12)"
            when = "to train as it did"
        else:
            ran, when = "", "if this script ran on one of those, to train as it did"
        self.report(
            call,
            f"`{name}` is loaded in 8/4 bits ({model}.from_pretrained{maybe}) and given with "
            f"`peft_config`: SFTTrainer of TRL {entry['last']} and older{ran} prepared such a "
            "model for k-bit training before adding the adapter (peft's "
            "`prepare_model_for_kbit_training`: the weights that are not quantized, layer norms "
            "and embeddings, cast to float32, and gradient checkpointing on as the config's "
            f"`gradient_checkpointing` says, always on up to {entry['int8_until']}); TRL 1.13 "
            "does neither and casts the adapter's weights to bf16: "
            f"{when}, write `{name} = peft.prepare_model_for_kbit_training({name}, "
            "use_gradient_checkpointing=...)` before building the trainer",
            severity=Severity.WARNING,
            fix=Fix.NONE,
        )

    def _model_bound(self, call: cst.Call) -> cst.Assign | cst.AnnAssign | None:
        """The nearest assignment, before `call` in the same function, of the name the trainer
        call takes as `model` (`model = ...`, `model: T = ...`); None where the model is no
        name, or the assignment unpacks (`model, tok = ...` says nothing of what it binds)."""
        model = edits.kwarg(call, "model")
        if model is None:
            positional = [a for a in call.args if a.keyword is None and not a.star]
            model = positional[0] if positional else None
        tree = self.walked_tree()
        if model is None or not isinstance(model.value, cst.Name) or tree is None:
            return None
        at = tree.index.get(id(call))
        if at is None:
            return None
        last: cst.Assign | cst.AnnAssign | None = None
        bindings = cast(
            "list[cst.Assign | cst.AnnAssign]",
            walk.find_all(self._module, (cst.Assign, cst.AnnAssign)),  # in source order
        )
        for assign in bindings:
            where = tree.index.get(id(assign))
            targets: list[cst.BaseExpression] = []
            if isinstance(assign, cst.Assign):
                targets = [t.target for t in assign.targets]
            elif assign.value is not None:  # `model: T` alone binds nothing
                targets = [assign.target]
            if (
                where is not None
                and where < at
                and tree.scope_at[where] == tree.scope_at[at]
                and any(model.value.value in edits.target_names(t) for t in targets)
            ):
                last = assign
        if isinstance(last, cst.Assign) and (
            len(last.targets) != 1 or not isinstance(last.targets[0].target, cst.Name)
        ):
            return None
        return last

    def _helper_taken(self) -> bool:
        """The file binds the helper's name to something of its own."""
        if self._taken is None:
            self._taken = not self._helper_defined and HELPER in edits.names(self._module)
        return self._taken

    def _kept_on_conversion(
        self, original: cst.Call, trainer: str, named: set[str]
    ) -> list[cst.Arg]:
        """For a TrainingArguments that unpacks values, converted where `original` (a trainer
        that cannot take one) is built: the settings that keep what the old trainer did (the
        table's `keeps`), said with the conversion and the settings left unset."""
        row = table()[trainer]
        config = row["config"]
        kept = [(n, k) for n, k in row["keeps"].items() if n not in named]
        said = (
            f"{trainer} took a TrainingArguments up to TRL {row['training_arguments_until']}, "
            f"and TRL 1.13's reads fields only {config} has (it fails on a TrainingArguments); "
            f"the one passed as `args` takes unpacked values (`{self._unpacked[id(original)]}`), "
            f"so `{HELPER}` (written into this file) converts it to {config} where the trainer "
            "is built, as TRL 1.13's SFTTrainer converts one: every value kept"
        )
        if named:  # the moved settings' findings said the conversion: only what it keeps
            said = f"`{HELPER}` converts the TrainingArguments to {config}"
        said += _kept_said(kept)
        if not named or kept:
            self.report(original, said, severity=Severity.WARNING)
        for name, note in row["unset_notes"].items():
            if name not in named:
                self.report(
                    original,
                    f"`{name}` is not set here (the unpacked values may hold it): {note}",
                    severity=Severity.WARNING,
                )
        named.update(n for n, _ in kept)
        return [_literal_kwarg(n, k["value"]) for n, k in kept]

    def _wrap_args(self, original: cst.Call, updated: cst.Call, trainer: str, at: int) -> cst.Call:
        """`args=X` becomes `args=trl_config_with(<Config>, X, <the moved settings>)`."""
        row = table()[trainer]
        config = row["config"]
        tokenizer = next(
            (
                a.value
                for a in updated.args
                if _kw(a) in ("tokenizer", "processing_class")
                and edits.literal(a.value) is not None
            ),
            None,
        )
        settings: list[cst.Arg] = []
        named: set[str] = set()
        for orig, arg in zip(original.args, updated.args):
            kw = _kw(arg)
            if kw not in row["moved"]:
                continue
            to = row["moved"][kw]["to"]
            value: cst.BaseExpression | None = arg.value
            if edits.literal(arg.value) is None:
                value = self._none_setting(orig, to, tokenizer=tokenizer)
            else:
                unpacked = self._unpacked.get(id(original))
                self.report(
                    orig,
                    f"`{trainer}({kw}=...)` was removed in TRL 0.13 (taken from "
                    f"{row['moved'][kw]['in']}); "
                    + (
                        f"the config passed as `args` takes unpacked values (`{unpacked}`), "
                        "which may hold any setting"
                        if unpacked
                        else "the config passed as `args` is built above where a name this "
                        "value reads is bound"
                        if id(original) in self._late
                        else "the config passed as `args` is built where this rule cannot see it"
                    )
                    + f", so `{HELPER}` (written into this file) gives the trainer "
                    f"a copy of it as {config} with `{to}=` set (a TrainingArguments is "
                    "converted as TRL 1.13's SFTTrainer converts one: every value kept)",
                )
            if value is None or to in named:
                continue
            named.add(to)
            settings.append(edits.new_kwarg(to, value))
            if to == "packing" and _packs(arg) and "packing_strategy" not in named:
                named.add("packing_strategy")
                settings.append(edits.new_kwarg("packing_strategy", '"wrapped"'))
                self.report(orig, _packing_note(arg), severity=Severity.INFO)
        if id(original) in self._unpacked_ta:
            settings += self._kept_on_conversion(original, trainer, named)
        target = updated.args[at]
        parts = [cst.Arg(cst.Name(config)), cst.Arg(target.value), *settings]
        last = len(parts) - 1
        call = cst.Call(
            func=cst.Name(HELPER),
            args=[
                a.with_changes(comma=COMMA if i < last else cst.MaybeSentinel.DEFAULT)
                for i, a in enumerate(parts)
            ],
        )
        AddImportsVisitor.add_needed_import(self.context, "trl", config)
        self._write_helper = True
        args = list(updated.args)
        args[at] = target.with_changes(value=call)
        return updated.with_changes(args=args)

    def _none_setting(
        self, arg: cst.Arg, to: str, *, tokenizer: cst.BaseExpression | None
    ) -> cst.BaseExpression | None:
        """What a literal `None` the old trainer was given becomes: old TRL applied none of
        them as they read; `max_seq_length=None` meant the tokenizer's limit, at most 1024."""
        if to != "max_length":
            self.report(
                arg,
                f"`{_kw(arg)}=None` left the config's `{to}` as it was in old TRL; it is dropped",
                severity=Severity.INFO,
            )
            return None
        if tokenizer is not None:
            expr = f"min({edits.code(tokenizer).strip()}.model_max_length, {OLD_MAX_LENGTH})"
            self.report(
                arg,
                f"`{_kw(arg)}=None` meant the tokenizer's limit, at most {OLD_MAX_LENGTH}, in "
                f"old TRL; TRL 1.13 reads `max_length=None` as no limit, so `max_length={expr}` "
                "keeps the old length",
            )
            return cst.parse_expression(expr)
        self.report(
            arg,
            f"`{_kw(arg)}=None` meant min(tokenizer.model_max_length, {OLD_MAX_LENGTH}) in old "
            f"TRL; TRL 1.13 reads `max_length=None` as no limit, so it is left at the 1.13 "
            f"default ({OLD_MAX_LENGTH}): set `max_length` if your tokenizer's limit is below "
            f"{OLD_MAX_LENGTH}",
            severity=Severity.WARNING,
        )
        return None

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._write_helper and not self._helper_defined:
            source = inline.lookup(HELPER_PATH) or ""
            updated_node = inline.after_imports(updated_node, inline.statements(source, HELPER))
        return updated_node


# What returns a PeftModel (`_peft_twice`).
PEFT_MODEL_MAKERS = frozenset(
    {
        "peft.get_peft_model",
        "peft.mapping.get_peft_model",
        "peft.mapping_func.get_peft_model",
        # an adapter loaded onto the model (YangRui2015/RiC's online rounds)
        "peft.PeftModel.from_pretrained",
        "peft.peft_model.PeftModel.from_pretrained",
        "peft.PeftModelForCausalLM.from_pretrained",
        "peft.peft_model.PeftModelForCausalLM.from_pretrained",
    }
)


def _returns_lists(func: cst.FunctionDef) -> bool:
    """Every `return` of the function (not of functions inside it) gives a list: a list
    literal or comprehension, or a name the function binds to one."""
    lists = {
        get_full_name_for_node(t.target)
        for a in walk.find_all(func.body, cst.Assign)
        if isinstance(a.value, (cst.List, cst.ListComp))
        for t in a.targets
    }
    inner = {
        id(r)
        for nested in walk.find_all(func.body, cst.FunctionDef)
        for r in walk.find_all(nested, cst.Return)
    }
    returns = [r for r in walk.find_all(func.body, cst.Return) if id(r) not in inner]
    return bool(returns) and all(
        isinstance(r.value, (cst.List, cst.ListComp))
        or (isinstance(r.value, cst.Name) and r.value.value in lists)
        for r in returns
    )


def _block_of(tree: walk.Tree, node: cst.CSTNode) -> int:
    """The position of the block (a function body, a branch, the module) whose statement holds
    `node`: its nearest enclosing statement's parent."""
    at = tree.index[id(node)]
    while at > 0 and not isinstance(
        tree.nodes[at], (cst.SimpleStatementLine, cst.BaseCompoundStatement)
    ):
        at = tree.parents[at]
    return tree.parents[at] if at > 0 else -1


def _args_at(call: cst.Call, trainer: str) -> int | None:
    """Where the trainer call's `args` is, keyword or positional; None when it has none."""
    for i, a in enumerate(call.args):
        if _kw(a) == "args":
            return i
    positional = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]
    if any(a.star for a in call.args):
        return None  # `*rest` could hold it
    at = ARGS_AT[trainer]
    return positional[at] if len(positional) > at else None


@functools.cache
def changed_defaults() -> dict[str, dict[str, Any]]:
    """Config class -> field -> {"now": TRL 1.13's default, "then": [[first release, last
    release, default, the next release read (whose default differs)], ...]}."""
    text = resources.files("codemods").joinpath("data/trainer_kwargs.json").read_text("utf-8")
    data = json.loads(text)["config_defaults"]
    return {k: v for k, v in data.items() if k != "about"}


_SAME = object()  # the releases had TRL 1.13's default
_UNKNOWN = object()  # they had several, or one the table cannot tell
_MISS = object()


def _old_default(entry: dict[str, Any], releases: tuple[str, ...]) -> Any:
    """The one default `releases` had for a field (`entry`: its history), `_SAME` when they all
    had 1.13's, `_UNKNOWN` otherwise. A release inside a span of the table had its value; one
    from the release read after a span on (up to the next span), 1.13's; one older than the
    first span or between a span and the release read after it, unknown (the wheels read skip
    some releases)."""
    found: dict[str, Any] = {}
    spans = [(Version(a), Version(b), v, Version(n) if n else None) for a, b, v, n in entry["then"]]
    for release in releases:
        r = Version(release)
        hit = next((v for a, b, v, _ in spans if a <= r <= b), _MISS)
        if hit is not _MISS:
            found[repr(hit)] = hit
        elif r > spans[0][0] and not any(b < r < n for _, b, _, n in spans if n is not None):
            found["same"] = _SAME
        else:
            return _UNKNOWN
    return next(iter(found.values())) if len(found) == 1 else _UNKNOWN


def _is_constant_length_call(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Call) and (
        (get_full_name_for_node(node.func) or "").rpartition(".")[2] == "ConstantLengthDataset"
    )


def _constant_length_names(module: cst.Module) -> set[str]:
    """The names the module binds to a `ConstantLengthDataset(...)` call, or to the result of
    one of its functions that builds one (`train_dataset, eval_dataset = create_datasets(...)`,
    stack_llama_2's)."""
    builders = {
        f.name.value
        for f in walk.find_all(module, cst.FunctionDef)
        if any(_is_constant_length_call(c) for c in walk.find_all(f, cst.Call))
    }
    return {
        name
        for assign in walk.find_all(module, cst.Assign)
        if _is_constant_length_call(assign.value)
        or (
            isinstance(assign.value, cst.Call)
            and get_full_name_for_node(assign.value.func) in builders
        )
        for name in edits.bound_names(assign)
    }


def _sets_newer_fields(config: cst.Call | None, trainer: str) -> bool:
    """Whether `config` (the trainer's `args` call) sets a field of its config that no release
    before the first to append EOS had: the script was written for one that appends it."""
    newer = set(table()[trainer].get("appends_eos", {}).get("config_fields_since", ()))
    return config is not None and any(_kw(a) in newer for a in config.args)


def _kept_values(config_class: str, kept: list[tuple[str, Any]]) -> str:
    now = changed_defaults()[config_class]
    return ", ".join(f"{n}={v!r} (1.13: {now[n]['now']!r})" for n, v in kept)


def _span(first: str, last: str) -> str:
    return first if first == last else f"{first}-{last}"


def _literal_kwarg(name: str, value: Any) -> cst.Arg:
    """`name=<value>` for a value from the table (a number, a bool, a string)."""
    return edits.new_kwarg(name, cst.parse_expression(repr(value)))


def _kept_said(kept: list[tuple[str, dict[str, Any]]]) -> str:
    """The table's `keeps` set on a conversion, for its finding."""
    return "".join(f"; {n}={k['value']!r}: {k['why']}" for n, k in kept)


def _packs(arg: cst.Arg) -> bool:
    """Packing that may be on: any value but a literal False."""
    return edits.literal(arg.value) is not False


def _packing_note(arg: cst.Arg) -> str:
    value = edits.code(arg.value).strip()
    return f"packing={value}: {WRAPPED}" + (
        "; the strategy only counts when packing is on" if value != "True" else ""
    )


def _kw(arg: cst.Arg) -> str:
    return arg.keyword.value if arg.keyword is not None else ""


class TrainerKwargs(Rule):
    code = "TRL109"
    summary = (
        "Move settings old SFT/DPO/Reward trainers took as keyword arguments into their TRL 1.13 "
        "config; say (or, for a known TRL release, keep) the config defaults TRL 1.13 changed."
    )
    before = (
        "from transformers import TrainingArguments\n"
        "from trl import SFTTrainer\n"
        'args = TrainingArguments("out", learning_rate=1e-4)\n'
        "trainer = SFTTrainer(model, args=args, train_dataset=ds, max_seq_length=512)\n"
    )
    after = (
        "from transformers import TrainingArguments\n"
        "from trl import SFTConfig, SFTTrainer\n"
        'args = SFTConfig("out", learning_rate=1e-4, max_length=512, bf16=False, '
        "gradient_checkpointing=False, logging_steps=500)\n"
        "trainer = SFTTrainer(model, args=args, train_dataset=ds)\n"
    )
    transformers = (RewriteTrainerKwargs, RewardColumns)
    triggers = (*ARGS_AT, *CONFIGS)

"""TRL103's pass: `PPOConfig(...)` calls become the target config, with every reference to the class
and to the config variables; its concepts (reads of fields, the usage docstring, flag clashes,
parsed configs) are mixins of their own modules."""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, walk
from codemods.config_vars import is_parser
from codemods.rules.ppo_config import flags, keep, parsed, parsed_edits, vendored
from codemods.rules.ppo_config.fields import FlagClashes
from codemods.rules.ppo_config.mapping import plan_call
from codemods.rules.ppo_config.plan import Plan
from codemods.rules.ppo_config.prescan import (
    _expand_dict_literal,
    _flag_renames,
    _Prescan,
)
from codemods.rules.ppo_config.reads import ConfigReads
from codemods.rules.ppo_config.state import ConfigPass
from codemods.rules.ppo_config.usage import UsageDocstring
from migrate.kernel.findings import Severity

# Methods that change the object they are called on: a field read inlined as its value there
# would change a throwaway copy.
MUTATORS = frozenset(
    ("update", "setdefault", "pop", "popitem", "clear", "append", "extend", "insert", "remove")
)


class RewritePPOConfig(ConfigReads, UsageDocstring, FlagClashes, ConfigPass):
    NAMES = CLASSES = ppo.CONFIG_NAMES

    def target_class(self) -> str:
        return ppo.target_config(self.target)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)  # ppo_class.PPOClassPass: the file's facts, target, new name
        self.reads: dict[str, Plan] = {}  # config variable -> the plan of the call that built it
        self.built_at: dict[str, cst.CSTNode] = {}  # config variable -> what built it
        self.parsers: dict[
            str, tuple[int, str | None]
        ] = {}  # HfArgumentParser variable -> (index of the config, era)
        self._targets: set[int] = set()
        # a v2 PPOTrainer call given `config=`/`policy=`: the file ran on TRL 0.12-0.14
        self.release_cap = ppo.release_cap(node)
        options = self.state.options
        self.declared = (
            ppo.Declared(frozenset(options.trl_releases), options.trl_declared)
            if options.trl_releases is not None
            else None
        )
        self.own_trainer = vendored.own_trainer(self, node)
        if self.own_trainer is not None:  # the config stays PPO's: nothing is planned
            self.param_plans, self.moves, self.handed, self.moved, self.appends = {}, [], {}, {}, {}
            self.clash_drop, self.clash_todo, self.clash_reads, self.model_reads = {}, {}, {}, {}
            self.clash_alias, self.clash_defaults, self.kept = {}, {}, {}
            return
        self.config_assigns = {}
        walk.visit(node, _Prescan(self))
        self.kept = keep.plan(self, node, self.config_assigns)
        seen = parsed.collect(
            self, node
        )  # parsers, their unpacks, classes, reads: one pass for the three plans
        self.param_plans = parsed.handed_plans(self, seen, self.reads)  # `def f(config)` reads
        self.moves, self.handed = parsed.plan(
            self, seen, self.file_era
        )  # script-only fields of a parsed config
        self.appends = {m.parser_seq: m.cls for m in self.moves} | {
            t: m.var for m in self.moves for t in m.targets
        }
        self.moved = {i: (m, *read) for m in self.moves for i, read in m.reads.items()}
        clashes = flags.plan(self, seen, self.target)  # script flags the new config also has
        self.clash_drop = {id(c.statement): c for c in clashes if c.config_var}
        self.clash_todo = {id(c.node): c for c in clashes if not c.config_var}
        self.clash_reads = {id(r): c for c in clashes for r in c.reads}
        self.clash_alias = {}
        self.clash_defaults = {}
        for c in clashes:
            for at, (script, config) in c.aliases.items():
                self.clash_alias.setdefault(at, []).append((script, config, c))
            if c.aliases and not c.same_default:
                self.clash_defaults.setdefault(c.parser_var, []).append(c)
        self.model_reads = flags.model_config_reads(self, seen)

    def era_of(self, call: cst.Call, hint: str | None) -> str | None:
        keys = {a.keyword.value for a in call.args if a.keyword is not None}
        legacy, v2 = ppo.era_keys(keys)
        if hint is not None:
            return None if legacy else hint
        if (
            legacy
            and not v2
            and keys & ppo.legacy_only() <= ppo.v2_runtime()
            and self.facts.signals & {ppo.V2, ppo.PPOV2, ppo.EXPERIMENTAL}
        ):
            # `batch_size`, `mini_batch_size` alone: the v2 config declared them too (its trainer
            # overwrote them), and this file has v2 code (Vedang1308/RLAIF)
            return None
        if legacy != v2:
            return ppo.LEGACY if legacy else ppo.V2
        return None if legacy else self.file_era

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        super().visit_AssignTarget(node)
        target: cst.BaseExpression = node.target
        self._targets.add(id(target))
        while isinstance(target, cst.Subscript):  # `config.field[k] = v` changes the field
            target = target.value
            self._targets.add(id(target))

    def visit_Call(self, node: cst.Call) -> None:
        if ppo.ppo_class(self.names_from(node.func, "trl"), ppo.CONFIG_NAMES):
            self._handled.add(id(node.func))
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS:
            self._targets.add(id(func.value))  # `config.field.update(...)` changes the field

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        found = ppo.ppo_class(self.names_from(original_node.func, "trl"), ppo.CONFIG_NAMES)
        if found is None:
            self.file_parse(original_node)
            return updated_node
        name, hint = found
        if self.own_trainer is not None:
            self.todo(original_node, self.retired_message(found))  # type: ignore[arg-type]
            return updated_node
        expanded = _expand_dict_literal(original_node)
        plan = plan_call(
            expanded,
            self.era_of(expanded, hint),
            self.target,
            before=self.release_cap,
            declared=self.declared,
        )
        # `_renamed` asks for the new class's import: only for a call that is rewritten
        func = None if plan.fail else self._renamed(original_node.func)
        if plan.fail or func is None:
            self.todo(
                original_node,
                f"`{name}` is gone in TRL 1.13 and this call was left as it is: "
                f"{plan.fail or 'import the new config from trl'}; rewrite it as "
                f"`{self.new_name}(...)` "
                "following docs/rules.md (TRL103)",
            )
            return updated_node
        call = _expand_dict_literal(updated_node)
        args: list[cst.Arg] = []
        fresh: set[int] = set()
        for i, new, value in sorted(plan.args):
            arg = call.args[i].with_changes(keyword=cst.Name(new))
            if value is not None:
                arg = arg.with_changes(value=cst.parse_expression(value))
                if "math." in value:  # a formula of values read at run time
                    AddImportsVisitor.add_needed_import(self.context, "math")
            if i == len(call.args) - 1:
                fresh.add(id(arg))  # the old last argument: its comma ends the call
            args.append(arg)
        for new, value in plan.extra:
            arg = edits.new_kwarg(new, value)
            fresh.add(id(arg))
            args.append(arg)
        for severity, message in plan.notes:
            self.report(original_node, message, severity=severity)
        for message in plan.todos:
            self.todo(original_node, message, severity=Severity.WARNING)
        self.report(
            original_node,
            f"`{name}` ({ppo.ERA_TEXT[plan.era]}) was removed; rewritten as `{self.new_name}`",
        )
        return call.with_changes(func=func, args=edits.relayout(call, args, fresh))

    def _renamed(self, ref: cst.BaseExpression) -> cst.BaseExpression | None:
        """`PPOConfig` -> `RLOOConfig`; `trl.PPOConfig` -> `trl.RLOOConfig`; None when it cannot
        say."""
        if isinstance(ref, cst.Name):
            self.state.shared.config_imports.add(self.new_name)
            return cst.Name(self.new_name)
        root = (get_full_name_for_node(ref) or "").split(".")[0]
        if root == "trl":
            return cst.parse_expression(f"trl.{self.new_name}")
        return None

    # -- other references: HfArgumentParser((..., PPOConfig)), annotations, reads of fields --------
    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    # -- the written-in dataclass of moved script-only fields
    # ----------------------------------------
    def leave_Tuple(self, original_node: cst.Tuple, updated_node: cst.Tuple) -> cst.BaseExpression:
        name = self.appends.get(id(original_node))
        return updated_node if name is None else parsed_edits.appended(updated_node, name)

    def leave_List(self, original_node: cst.List, updated_node: cst.List) -> cst.BaseExpression:
        name = self.appends.get(id(original_node))
        return updated_node if name is None else parsed_edits.appended(updated_node, name)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self.moves:
            return updated_node
        body: list[cst.BaseStatement] = list(updated_node.body)
        for move in sorted(self.moves, key=lambda m: -m.at):
            after = body[move.at : move.at + 1]
            if after:  # two blank lines after the class, as before it
                lines = edits.leading(after[0])
                blank = next(
                    (i for i, line in enumerate(lines) if line.comment is not None), len(lines)
                )
                after = [
                    after[0].with_changes(
                        leading_lines=[cst.EmptyLine(indent=False)] * max(0, 2 - blank) + lines
                    )
                ]
            body[move.at : move.at + 1] = [
                parsed_edits.class_statement(move, self.new_name),
                *after,
            ]
            self.report(
                move.parser,
                f"wrote dataclass `{move.cls}` for `{'`, `'.join(move.fields)}`, which "
                f"{self.new_name} lacks, and added it to the argument parser: the command-line "
                "flags are "
                "unchanged",
                severity=Severity.INFO,
            )
        AddImportsVisitor.add_needed_import(self.context, "dataclasses")
        return updated_node.with_changes(body=body)

    def retired_message(self, found: tuple[str, str | None]) -> str | None:
        if self.own_trainer is None:
            return None
        return (
            f"`{found[0]}` configures a PPO trainer of this repo, not TRL's ({self.own_trainer}). "
            f"A trainer written for PPO reads PPO's settings, the value-function ones among them, "
            f"which `{self.new_name}` lacks, and TRL 1.13 has no `{found[0]}`: copy `{found[0]}` "
            "from the TRL release the trainer was written for into the repo and import it from "
            f"there, or port the trainer to `{self.new_name.replace('Config', 'Trainer')}`"
        )

    def unsafe_reference(self, node: cst.CSTNode, found: tuple[str, str | None]) -> str | None:
        """A reference to the PPO config class that something may build with PPO's fields or
        defaults: in an annotation or an `isinstance`/`issubclass` check the rename changes
        nothing, in a parser's classes `set_defaults` keeps PPO's defaults (usage.py); anywhere
        else (`{"ppo": PPOConfig}[name](**kwargs)`, `cls = PPOConfig`) the class would be built
        from TRL 1.13's defaults, with PPO's field names, unseen."""
        place = self.reference_place(node)
        if place is None:
            return None
        call = place.outer
        if isinstance(call, cst.Call):
            callee = get_full_name_for_node(call.func)
            if callee in ("isinstance", "issubclass"):
                return None
            if (
                is_parser(callee)
                and call.args[0] is place.holder
                and place.in_sequence
                and isinstance(place.above, cst.Assign)
                and place.above.value is call
            ):
                return None  # `p = HfArgumentParser((..., PPOConfig))`: usage.py's set_defaults
        return (
            f"`{found[0]}` is used here other than as a type, in a check or in a parser's "
            f"classes; TRL 1.13 has no `{found[0]}`, and `{self.new_name}` has other fields and "
            "defaults: where this class is built, write the call out as "
            f"`{self.new_name}(...)` following docs/rules.md (TRL103)"
        )

    def mutation_message(self, found: tuple[str, str | None]) -> str:
        return (
            f"this changes `{found[0]}`, which TRL 1.13 removed; `{self.new_name}` has other "
            "fields and defaults: port the change to it by hand"
        )

    def renamed_message(self, found: tuple[str, str | None]) -> tuple[str, Severity]:
        era = found[1] or self.file_era
        return (
            f"`{found[0]}` was removed; `{self.new_name}` takes its place. Command-line flags "
            f"change too: {_flag_renames(era)}",
            Severity.WARNING,
        )

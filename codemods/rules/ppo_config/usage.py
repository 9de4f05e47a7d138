"""TRL103: the usage docstring of a script that parses its config gets one TODO naming the flags
TRL 1.13 renamed or lacks."""

from __future__ import annotations

import re

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo
from codemods.config_vars import is_parser
from codemods.rules.ppo_config import keep
from codemods.rules.ppo_config.mapping import plan_call
from codemods.rules.ppo_config.plan import Plan
from codemods.rules.ppo_config.state import ConfigPass
from migrate.kernel.findings import Severity

# HfArgumentParser's ways of building the dataclasses without argparse (and its defaults)
FILE_PARSES = ("parse_json_file", "parse_yaml_file", "parse_dict")


class UsageDocstring(ConfigPass):
    """The usage docstring of a script that parses its config: one TODO naming the flags 1.13
    renamed or lacks."""

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ):  # type: ignore[no-untyped-def]
        result = self._parser_statement(original_node, updated_node)
        small = original_node.body[0] if len(original_node.body) == 1 else None
        after: list[cst.BaseStatement] = []
        kept = self.kept.get(id(small))
        if kept is not None:
            after += keep.statements(kept)
            shown = ", ".join(f"`{kept.var}.{name} = {text}`" for name, text in kept.fields)
            keeps = "keeps the old value" if len(kept.fields) == 1 else "keep the old values"
            self.report(
                original_node,
                f"{self.new_name} has no {', '.join(f'`{n}`' for n, _ in kept.fields)}, and "
                f"{kept.why}: {shown} {keeps} readable there ({self.new_name} and its trainer "
                "ignore the attribute)",
                severity=Severity.INFO,
            )
        for script, config, clash in self.clash_alias.get(id(small), []):
            after.append(cst.parse_statement(f"{script}.{clash.field} = {config}.{clash.field}\n"))
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            var = get_full_name_for_node(small.targets[0].target) or ""
            call = small.value
            func = get_full_name_for_node(call.func) if isinstance(call, cst.Call) else None
            clashes = self.clash_defaults.get(var, [])
            if clashes and is_parser(func):
                shown = ", ".join(f"{c.field}={c.default!r}" for c in clashes)
                after.append(cst.parse_statement(f"{var}.set_defaults({shown})\n"))
        if not after:
            return result
        head = list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [result]
        return cst.FlattenSentinel([*head, *after])

    # -- a parsed config starts from PPO's defaults where they differ from the target's ------------
    def _parser_statement(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ):  # type: ignore[no-untyped-def]
        assign = original_node.body[0] if len(original_node.body) == 1 else None
        if isinstance(assign, cst.Expr) and self.parsers and self._usage_string(original_node):
            self._usage_flags(original_node, assign.value)
        if (
            not isinstance(assign, cst.Assign)
            or len(assign.targets) != 1
            or not isinstance(assign.value, cst.Call)
        ):
            return updated_node
        var = get_full_name_for_node(assign.targets[0].target) or ""
        func = get_full_name_for_node(assign.value.func) or ""
        if var not in self.parsers or not is_parser(func) or not self._builds_ppo(assign.value):
            return updated_node  # a parser of the same name built elsewhere may hold no PPO config
        era = self.parsers[var][1]
        if era is None:
            self.todo(
                original_node,
                f"the parsed {self.new_name} starts from TRL 1.13's defaults, which differ from "
                "PPO's, and this file does not say which PPO era it was written for: set the "
                "defaults you "
                f"trained with through `{var}.set_defaults(...)`",
            )
            return updated_node
        plan = self._parsed_plan(era)
        for severity, message in plan.notes:
            self.report(original_node, message, severity=severity)
        for message in plan.todos:
            self.todo(original_node, message)
        if not plan.extra:
            return updated_node
        args = [edits.new_kwarg(k, v) for k, v in plan.extra]
        args = [
            a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for a in args[:-1]
        ] + args[-1:]
        defaults = cst.SimpleStatementLine(
            body=[cst.Expr(cst.Call(func=cst.parse_expression(f"{var}.set_defaults"), args=args))]
        )
        shown = ", ".join(f"{k}={v}" for k, v in plan.extra)
        self.report(
            original_node,
            f"the parsed {self.new_name} would start from TRL 1.13's defaults: "
            f"`{var}.set_defaults({shown})` keeps {ppo.ERA_TEXT[era]}'s where they differ (a "
            "command-line "
            "flag or config file value still wins)",
            severity=Severity.INFO,
        )
        return cst.FlattenSentinel([updated_node, defaults])

    def file_parse(self, call: cst.Call) -> None:
        """`parser.parse_json_file(...)` (or `parse_yaml_file`, `parse_dict`) of a parser of the
        PPO config: it builds the config from the file and the dataclass's own defaults, which
        `set_defaults` (argparse's) does not reach, so fields the file leaves out take TRL
        1.13's defaults: a TODO naming PPO's (MaxLuo233/react-rl's JSON branch)."""
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value in (*FILE_PARSES, "parse")
            and isinstance(func.value, cst.Name)
            and func.value.value in self.parsers
        ):
            return
        era = self.parsers[func.value.value][1]
        if era is None:
            return  # the parser's statement has its TODO already
        plan = self._parsed_plan(era)
        if not plan.extra:
            return
        shown = ", ".join(f"{k}={v}" for k, v in plan.extra)
        if func.attr.value == "parse":  # H4ArgumentParser: a YAML file first on the command line
            self.todo(
                call,
                f"`{func.value.value}.parse()` reads a YAML file named first on the command line "
                f"(alignment-handbook's parser does) into {self.new_name} and the class's own "
                f"defaults, which `set_defaults` does not reach: where the file leaves them out, "
                f"{ppo.ERA_TEXT[era]}'s values differ from TRL 1.13's: put {shown} in the file, "
                "and rename or drop its PPO fields as the command-line flags change "
                "(`trl-migrate upgrade` does both for the files the repository's launch lines "
                "pass; docs/rules.md, TRL103)",
            )
            return
        self.todo(
            call,
            f"`{func.attr.value}` builds {self.new_name} from the file and the class's own "
            f"defaults, which `set_defaults` does not reach: where the file leaves them out, "
            f"{ppo.ERA_TEXT[era]}'s values differ from TRL 1.13's: put {shown} in the file, "
            "and rename or drop its PPO fields as the command-line flags change (docs/rules.md, "
            "TRL103)",
        )

    def _parsed_plan(self, era: str) -> Plan:
        """What a PPO config built by a parser (no keywords of the file's own) starts from."""
        return plan_call(
            cst.Call(func=cst.Name("PPOConfig")),
            era,
            self.target,
            parsed=True,
            before=self.release_cap,
            declared=self.declared,
        )

    def _builds_ppo(self, call: cst.Call) -> bool:
        """Whether this parser call's tuple holds a PPO config (the name may be bound to other
        parsers in other branches: `parser = TrlParser((ScriptArguments, RLOOConfig))`)."""
        seq = call.args[0].value if call.args else None
        return (
            any(
                ppo.ppo_class(self.names_from(e, "trl"), ppo.CONFIG_NAMES) is not None
                for e in edits.elements(seq)
            )
            if seq is not None
            else False
        )

    def _usage_string(self, stmt: cst.SimpleStatementLine) -> bool:
        """The module docstring, or a string statement of the module's body that runs this
        script (`python ppo.py --flag ...`: TRL's examples keep their usage there, after the
        imports)."""
        if stmt is self._first:
            return True
        module = self.context.wrapper.module if self.context.wrapper is not None else None
        if module is None or not any(s is stmt for s in module.body):
            return False
        text = edits.literal(stmt.body[0].value)  # type: ignore[attr-defined]
        return isinstance(text, str) and bool(re.search(r"(python|launch)\s+\S+\.py", text))

    def _usage_flags(self, stmt: cst.SimpleStatementLine, doc: cst.BaseExpression) -> None:
        """The module docstring of a script that parses a PPO config is its usage: flags of PPO
        fields in it that the new config renamed or lacks get a TODO (the prose is the user's)."""
        text = edits.literal(doc)
        if not isinstance(text, str):
            return
        flags = list(dict.fromkeys(re.findall(r"--([A-Za-z_]\w*)", text)))
        era = next((e for _, e in self.parsers.values() if e is not None), self.file_era)
        if (
            era is None
        ):  # the flags themselves may tell: `--num_ppo_epochs` is v2's, `--ppo_epochs` legacy's
            legacy, v2 = ppo.era_keys(flags)
            era = ppo.LEGACY if legacy and not v2 else ppo.V2 if v2 and not legacy else None
        if era is None:
            return
        from codemods import launch_flags  # its flag tables; only a usage string needs them

        table = ppo.mapping()["legacy_config" if era == ppo.LEGACY else "v2_config"]
        fields = ppo.config_fields(self.target)
        kept = {name for move in self.moves for name in move.fields}  # PPOScriptArguments' flags
        renamed, dropped, gone = [], [], []
        for flag in flags:
            row = table.get(flag)
            if row is None or flag in fields or flag in kept:
                continue
            to = row.get("to") if row["kind"] == "rename" else row.get("flag")
            value = re.search(rf"--{flag}(?:=|\s+)([^\s\\-][^\s\\]*)", text)
            shown = f"--{flag} {value.group(1)}" if value and row["kind"] == "flag" else f"--{flag}"
            if to in fields:
                renamed.append(f"`--{flag}` is `--{to}`")
            elif launch_flags.dropped(f"--{flag}", value.group(1) if value else "", row):
                dropped.append(f"`{shown}`")
            else:
                gone.append(f"`--{flag}`")
        if renamed or dropped or gone:
            parts = [", ".join(renamed)] if renamed else []
            if dropped:
                parts.append(
                    f"{', '.join(dropped)} can go (TRL 1.13 does not use "
                    f"{'it' if len(dropped) == 1 else 'them'}, or does the same)"
                )
            if gone:
                parts.append(
                    f"{', '.join(gone)} {'has' if len(gone) == 1 else 'have'} no "
                    f"{self.new_name} flag"
                )
            self.todo(
                stmt,
                f"the usage in this docstring passes PPO flags: {'; '.join(parts)} "
                "(the config's findings say what replaces each)",
                severity=Severity.WARNING,
            )

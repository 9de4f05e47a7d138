"""TRL103's first pass: a PPO config built from a dict literal the file writes just for it.

`ppo_config = {"batch_size": 8, "ppo_epochs": 1}` then `config = PPOConfig(**ppo_config)` is the
call `PPOConfig(batch_size=8, ppo_epochs=1)` written in two statements. Where nothing else reads
the dict, its entries become the call's keywords (the assignment goes, its comments stay), so
the config rewrite renames, converts and drops each field as it does for any call. Only where
that is the same program: the keys are plain identifiers the call does not also name, and the
entries' values mean the same at the call (the call's statement follows the assignment, or
every value is a literal).
"""

from __future__ import annotations

import keyword
from collections.abc import Sequence

import libcst as cst

from codemods import edits, ppo, walk
from codemods.base import FileState, Identifiers, RuleTransformer
from migrate.kernel.findings import Severity


class InlineConfigDict(RuleTransformer):
    NAMES = ppo.CONFIG_NAMES

    @classmethod
    def wanted(cls, state: FileState, names: Identifiers) -> bool:
        return names.has_any(cls.NAMES) and names.unpacks_a_name()

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._assigns: dict[int, str] = {}  # id(assignment line) -> the dict's name
        self._calls: dict[int, cst.Dict] = {}  # id(config call) -> the dict it unpacks
        counts: dict[str, int] = {}
        for name in walk.find_all(node, cst.Name):
            counts[name.value] = counts.get(name.value, 0) + 1
        self._plan_block(node.body, counts)
        for block in walk.find_all(node, cst.IndentedBlock):
            self._plan_block(block.body, counts)  # type: ignore[attr-defined]

    def focus(self):  # type: ignore[no-untyped-def]
        return None if self._calls else ()

    def _plan_block(self, body: Sequence[cst.BaseStatement], counts: dict[str, int]) -> None:
        dicts: dict[str, tuple[int, cst.SimpleStatementLine, cst.Dict]] = {}
        for at, stmt in enumerate(body):
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            found = _dict_assignment(stmt)
            if found is not None:
                dicts[found[0]] = (at, stmt, found[1])
                continue
            deferred = {  # run later, or many times: the dict's values were read once, here
                id(call)
                for later in walk.find_all(stmt, _DEFERRED)
                for call in walk.find_all(later, cst.Call)
            }
            for call in walk.find_all(stmt, cst.Call):
                name = None if id(call) in deferred else self._unpacked_name(call)
                if name is None or name not in dicts or counts.get(name) != 2:
                    continue  # the dict is read elsewhere (or rebound): it stays
                where, line, value = dicts.pop(name)
                given = {a.keyword.value for a in call.args if a.keyword is not None}
                keys = [_key(e) for e in value.elements]
                if len(set(keys)) != len(keys) or given & set(keys):
                    continue
                adjacent = where == at - 1
                if not adjacent and not all(
                    edits.literal(e.value) is not edits.NOT_LITERAL
                    for e in value.elements
                    if isinstance(e, cst.DictElement)
                ):
                    continue  # statements between could change what a value means
                self._assigns[id(line)] = name
                self._calls[id(call)] = value
                self.report(
                    call,
                    f"`**{name}` unpacked a dict literal the file builds for this call alone: its "
                    "entries are written as the call's keywords (and the assignment removed), so "
                    "each field is rewritten as any keyword is",
                    severity=Severity.INFO,
                )

    def _unpacked_name(self, call: cst.Call) -> str | None:
        """The name of `**name` when `call` is a TRL PPO config built from it alone."""
        stars = [a for a in call.args if a.star]
        if (
            len(stars) != 1
            or stars[0].star != "**"
            or not isinstance(stars[0].value, cst.Name)
            or any(a.keyword is None and not a.star for a in call.args)
        ):
            return None
        if ppo.ppo_class(self.names_from(call.func, "trl"), ppo.CONFIG_NAMES) is None:
            return None
        return stars[0].value.value

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        value = self._calls.get(id(original_node))
        if value is None:
            return updated_node
        entries = [e for e in value.elements if isinstance(e, cst.DictElement)]
        written: list[cst.Arg] = []
        for i, entry in enumerate(entries):
            comma = entry.comma
            closing = value.rbrace.whitespace_before
            if i == len(entries) - 1 and isinstance(closing, cst.ParenthesizedWhitespace):
                # the dict's closing line (`\n}`, with a comment on the line before it) becomes
                # the call's (`\n)`), which a call keeps after its last comma
                comma = cst.Comma(whitespace_after=closing)
            written.append(
                cst.Arg(
                    keyword=cst.Name(_key(entry)),
                    value=entry.value,
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""),
                        whitespace_after=cst.SimpleWhitespace(""),
                    ),
                    comma=comma,
                )
            )
        args: list[cst.Arg] = []
        for arg in updated_node.args:
            if arg.star == "**":
                if written and not isinstance(arg.comma, cst.MaybeSentinel):
                    written[-1] = written[-1].with_changes(comma=arg.comma)
                args.extend(written)
            else:
                args.append(arg)
        if updated_node.args and updated_node.args[0].star == "**":
            # the dict's opening line (`{\n`) becomes the call's (`(\n`)
            return updated_node.with_changes(
                args=args, whitespace_before_args=value.lbrace.whitespace_after
            )
        return updated_node.with_changes(args=args)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body, footer = self._without_assigns(original_node.body, updated_node.body)
        if body is None:
            return updated_node
        return updated_node.with_changes(body=body, footer=[*footer, *updated_node.footer])

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        body, footer = self._without_assigns(original_node.body, updated_node.body)
        if body is None:
            return updated_node
        return updated_node.with_changes(body=body, footer=[*footer, *updated_node.footer])

    def _without_assigns(
        self, original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]
    ) -> tuple[list[cst.BaseStatement] | None, list[cst.EmptyLine]]:
        """The block without the planned dict assignments; their comments and blank lines go
        above the next statement (or end the block)."""
        if not any(id(s) in self._assigns for s in original):
            return None, []
        return edits.without_statements(updated, [id(s) in self._assigns for s in original])


_DEFERRED = (cst.Lambda, cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp)


def _dict_assignment(stmt: cst.SimpleStatementLine) -> tuple[str, cst.Dict] | None:
    """(name, dict) for a line that is only `name = {"key": value, ...}`, every key a plain
    string that is an identifier, no `**` entry."""
    if len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return None
    assign = stmt.body[0]
    if (
        len(assign.targets) != 1
        or not isinstance(assign.targets[0].target, cst.Name)
        or not isinstance(assign.value, cst.Dict)
        or assign.value.lpar
    ):
        return None
    for element in assign.value.elements:
        if not isinstance(element, cst.DictElement) or _key(element) == "":
            return None
    return assign.targets[0].target.value, assign.value


def _key(element: cst.BaseDictElement) -> str:
    """The identifier a dict entry's key spells, or ""."""
    if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
        return ""
    text = element.key.evaluated_value
    if not isinstance(text, str) or not text.isidentifier() or keyword.iskeyword(text):
        return ""
    return text

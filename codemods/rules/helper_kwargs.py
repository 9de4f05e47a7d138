"""TRL111 helper-kwargs: TRL's chat-template helpers took the tokenizer as `tokenizer`; TRL 1.3
renamed that parameter `processing_class` and kept no alias, so TRL 1.13 answers the old keyword
with `TypeError: apply_chat_template() missing 1 required positional argument:
'processing_class'`, in any script (SFT, DPO and reward data preparation as often as PPO).

The keyword is renamed wherever the call can be seen: `apply_chat_template(example,
tokenizer=tok)`, `functools.partial(maybe_apply_chat_template, tokenizer=tok)`, and the way
TRL's own documentation maps a dataset, `ds.map(apply_chat_template, fn_kwargs={"tokenizer":
tok})` (or `fn_kwargs=dict(tokenizer=tok)`). The same value reaches the same parameter. A
`fn_kwargs` the file builds elsewhere (a name) gets a TODO: its keys are out of sight.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from codemods.base import Rule, RuleTransformer
from migrate.kernel.findings import Severity

# TRL helpers whose keyword TRL 1.3 renamed, and where they live.
HELPERS = ("apply_chat_template", "maybe_apply_chat_template")
MODULES = ("trl", "trl.data_utils")
OLD, NEW = "tokenizer", "processing_class"
PARTIAL = ("functools.partial",)


def _renamed(helper: str) -> str:
    return (
        f"`{helper}`'s `{OLD}` parameter is `{NEW}` since TRL 1.3 (no alias: TRL 1.13 raises "
        f"TypeError on `{OLD}=`); renamed, the same value"
    )


class RenameHelperKwargs(RuleTransformer):
    NAMES = HELPERS

    def _helper(self, expr: cst.BaseExpression) -> str | None:
        """The TRL helper `expr` names (`apply_chat_template` imported from trl), or None."""
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        for name in self.qualified_names(expr):
            module, _, attr = name.rpartition(".")
            if module in MODULES and attr in HELPERS:
                return attr
        return None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        helper = self._helper(original_node.func)
        if helper is not None:  # `apply_chat_template(example, tokenizer=tok)`
            return self._keywords(original_node, updated_node, helper)
        args = original_node.args
        first = args[0] if args else None
        if (
            first is not None
            and first.keyword is None
            and not first.star
            and any(q in PARTIAL for q in self.qualified_names(original_node.func))
            and (helper := self._helper(first.value)) is not None
        ):  # `partial(apply_chat_template, tokenizer=tok)`
            return self._keywords(original_node, updated_node, helper)
        if m.matches(original_node.func, m.Attribute(attr=m.Name("map"))):
            return self._mapped(original_node, updated_node)
        return updated_node

    def _keywords(self, original: cst.Call, updated: cst.Call, helper: str) -> cst.Call:
        if not any(m.matches(a, m.Arg(keyword=m.Name(OLD))) for a in original.args):
            return updated
        if any(m.matches(a, m.Arg(keyword=m.Name(NEW))) for a in original.args):
            return updated  # both given: TRL 1.13 itself says which is wrong
        self.report(original, _renamed(helper))
        return updated.with_changes(
            args=[
                a.with_changes(keyword=cst.Name(NEW))
                if m.matches(a, m.Arg(keyword=m.Name(OLD)))
                else a
                for a in updated.args
            ]
        )

    def _mapped(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """`ds.map(apply_chat_template, fn_kwargs={"tokenizer": tok})`: the helper as the
        mapped function (first positional argument, or `function=`), its keywords in
        `fn_kwargs`."""
        function = next(
            (
                a.value
                for i, a in enumerate(original.args)
                if (i == 0 and a.keyword is None and not a.star)
                or m.matches(a, m.Arg(keyword=m.Name("function")))
            ),
            None,
        )
        helper = self._helper(function) if function is not None else None
        at = next(
            (
                i
                for i, a in enumerate(original.args)
                if m.matches(a, m.Arg(keyword=m.Name("fn_kwargs")))
            ),
            None,
        )
        if helper is None or at is None:
            return updated
        given = original.args[at].value
        new = updated.args[at].value
        if isinstance(given, cst.Dict) and isinstance(new, cst.Dict):
            keys = [
                e.key.evaluated_value
                for e in given.elements
                if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
            ]
            if OLD not in keys or NEW in keys:
                return updated
            elements = [
                e.with_changes(key=_same_quotes(e.key, NEW))
                if isinstance(e, cst.DictElement)
                and isinstance(e.key, cst.SimpleString)
                and e.key.evaluated_value == OLD
                else e
                for e in new.elements
            ]
            value: cst.BaseExpression = new.with_changes(elements=elements)
        elif m.matches(given, m.Call(func=m.Name("dict"))) and isinstance(new, cst.Call):
            names = [a.keyword.value for a in given.args if a.keyword is not None]  # type: ignore[attr-defined]
            if OLD not in names or NEW in names:
                return updated
            value = new.with_changes(
                args=[
                    a.with_changes(keyword=cst.Name(NEW))
                    if m.matches(a, m.Arg(keyword=m.Name(OLD)))
                    else a
                    for a in new.args
                ]
            )
        else:
            self.todo(
                original,
                f"`fn_kwargs` hands `{helper}` its keywords from a value built elsewhere: "
                f"rename its `{OLD}` key to `{NEW}` (TRL 1.3 renamed the parameter and kept no "
                "alias)",
                severity=Severity.WARNING,
            )
            return updated
        self.report(original, _renamed(helper) + " (in `fn_kwargs`)")
        args = list(updated.args)
        args[at] = args[at].with_changes(value=value)
        return updated.with_changes(args=args)


def _same_quotes(key: cst.SimpleString, text: str) -> cst.SimpleString:
    """`text` as a string literal written with `key`'s prefix and quotes."""
    quote = key.quote
    return cst.SimpleString(f"{key.prefix}{quote}{text}{quote}")


class HelperKwargs(Rule):
    code = "TRL111"
    name = "helper-kwargs"
    summary = (
        "Rename the `tokenizer` keyword of TRL's `apply_chat_template` and "
        "`maybe_apply_chat_template` (renamed `processing_class` in TRL 1.3), also in "
        "`ds.map(..., fn_kwargs={...})`."
    )
    before = (
        "from trl import apply_chat_template\n"
        'ds = ds.map(apply_chat_template, fn_kwargs={"tokenizer": tokenizer})\n'
    )
    after = (
        "from trl import apply_chat_template\n"
        'ds = ds.map(apply_chat_template, fn_kwargs={"processing_class": tokenizer})\n'
    )
    transformers = (RenameHelperKwargs,)
    triggers = HELPERS

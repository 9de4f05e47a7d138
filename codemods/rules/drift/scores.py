"""TRL108: `return_all_scores=True` on text-classification pipelines, gone in transformers 5.

The old flag gave every label's score, in the model's label order, one list per text (a lone
string too). Its replacement, `top_k=None`, sorts each list by score instead, so reward code of
the gpt2-sentiment kind (`output[1]["score"]`, the POSITIVE label) would read whichever label
scored lower. The flag becomes `top_k=None` and each call that passes it is wrapped in
`scores_in_label_order(pipe, ...)`, a helper written into the file, which restores the old order
and nesting. The flag is found as a keyword of the call, in a dict literal the call unpacks
(`**sent_kwargs`), or on the `pipeline(...)` call that built the object called.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import edits, inline, walk
from codemods.base import RuleTransformer

FLAG = "return_all_scores"
HELPER = "scores_in_label_order"
KEY = "scores_in_label_order"  # its definition: codemods/data/inline.toml


def _why(where: str) -> str:
    return (
        "transformers 5 removed `return_all_scores`; `top_k=None` gives every label's score but "
        f"sorted by score, so `{HELPER}` (written into {where}) puts them back in label order"
    )


class PipelineScores(RuleTransformer):
    """The part of RewriteDrift that moves `return_all_scores`."""

    def scores_prescan(self, module: cst.Module) -> None:
        self.flag_dicts: set[str] = set()  # names bound to dict literals holding the flag
        self.flag_pipes: set[str] = set()  # names bound to pipeline(...) calls given the flag
        self.unread_dicts: set[int] = set()  # ids of such literals no call unpacks by name
        self.helper_needed = False
        self.helper_defined = any(
            isinstance(s, cst.FunctionDef) and s.name.value == HELPER for s in module.body
        )
        # The pass's module is the code its identifiers were read from: no code to generate.
        known = self.state.identifiers
        if FLAG not in module.code if known is None else not known.has_any((FLAG,)):
            return
        unpacked = {  # the names and dict literals some call unpacks with `**`
            get_full_name_for_node(a.value) or id(a.value)
            for call in walk.find_all(module, cst.Call)
            for a in call.args
            if a.star == "**"
        }
        for assign in walk.find_all(module, cst.Assign):
            names = [get_full_name_for_node(t.target) for t in assign.targets]
            value = assign.value
            if isinstance(value, cst.Dict):
                found = _flag_element(value)
                if found is not None and edits.literal(found[1].value) is True:
                    self.flag_dicts.update(n for n in names if n)
                    if not unpacked & set(names):
                        self.unread_dicts.add(id(value))
            elif isinstance(value, cst.Call) and _is_pipeline(self, value):
                arg = _flag_arg(value)
                if arg is not None and edits.literal(arg.value) is True:
                    self.flag_pipes.update(n for n in names if n)

    def scores_focus(self) -> tuple[str, ...]:
        return (FLAG, *sorted(self.flag_dicts), *sorted(self.flag_pipes))

    def leave_Dict(self, original_node: cst.Dict, updated_node: cst.Dict) -> cst.BaseExpression:
        found = _flag_element(updated_node)
        if found is None:
            return updated_node
        index, element = found
        value = edits.literal(element.value)
        elements = list(updated_node.elements)
        if value is True:
            quote = element.key.quote if isinstance(element.key, cst.SimpleString) else '"'
            elements[index] = element.with_changes(
                key=cst.SimpleString(f"{quote}top_k{quote}"), value=cst.Name("None")
            )
            if id(original_node) in self.unread_dicts:
                why = (
                    "transformers 5 removed `return_all_scores`; `top_k=None` gives every "
                    "label's score, sorted by score; no call of this file unpacks this dict (if "
                    f"code elsewhere hands it to a pipeline, read the scores with `{HELPER}`)"
                )
            else:
                why = _why(self._helper_place())
            self.report(original_node.elements[index], f'`"{FLAG}": True`: {why}')
        elif value is False:
            del elements[index]
            if index == len(elements) and elements:  # the old last element ended the literal
                elements[-1] = elements[-1].with_changes(comma=element.comma)
            self.report(
                original_node.elements[index],
                f'`"{FLAG}": False` was the default (the top label only); dropped, as '
                "transformers 5 has no such flag",
            )
        else:
            self.todo(
                original_node,
                f"`{FLAG}` is set from a variable here; transformers 5 removed it: pass "
                f"`top_k=None` where it was True and read the scores with `{HELPER}`",
            )
            return updated_node
        return updated_node.with_changes(elements=elements)

    def scores_call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """A call given the flag (as a keyword, through `**dict`, or by the pipe it calls)."""
        arg = _flag_arg(updated)
        if arg is not None:
            value = edits.literal(arg.value)
            if value not in (True, False):
                self.todo(
                    original,
                    f"`{FLAG}=` is set from a variable here; transformers 5 removed it: pass "
                    f"`top_k=None` where it was True and read the scores with `{HELPER}`",
                )
                return updated
            args = [a for a in updated.args if a is not arg]
            if value is True:
                args = [edits.new_kwarg("top_k", "None") if a is arg else a for a in updated.args]
                args = edits.relayout(original, args, {id(args[updated.args.index(arg)])})
            else:
                args = edits.relayout(original, args, set())
            updated = updated.with_changes(args=args)
            self.report(
                original,
                f"`{FLAG}=True`: {_why(self._helper_place())}"
                if value is True
                else f"`{FLAG}=False` was the default; dropped (transformers 5 has no such flag)",
            )
            if value is False or _is_pipeline(self, original):
                return updated  # a pipeline built with the flag: its calls are wrapped
            return self._wrapped(original, updated)
        callee = get_full_name_for_node(original.func)
        if callee is not None and callee in self.flag_pipes:
            return self._wrapped(original, updated)
        if callee is not None and callee.rpartition(".")[2] == "generate":
            # `ppo_trainer.generate(q, **sent_kwargs)` (a script's slip, eddieguo-1128): a
            # model's or trainer's generate, never a pipeline; its scores are not reordered
            return updated
        unpacked = {
            get_full_name_for_node(a.value) for a in original.args if a.star == "**"
        } & self.flag_dicts
        if unpacked:  # the dict by its name: also where a function is handed it under that name
            return self._wrapped(original, updated)
        if any(  # `pipe(texts, **{"return_all_scores": True})`
            a.star == "**"
            and isinstance(a.value, cst.Dict)
            and (found := _flag_element(a.value)) is not None
            and edits.literal(found[1].value) is True
            for a in original.args
        ):
            return self._wrapped(original, updated)
        return updated

    def _wrapped(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not isinstance(original.func, (cst.Name, cst.Attribute)):
            self.todo(
                original,
                f"this call's scores come sorted by score in transformers 5 (`top_k=None`); "
                f"read them with `{HELPER}(pipe, outputs)` to keep the label order",
            )
            return updated
        self.helper_needed = True
        return cst.Call(
            func=cst.Name(HELPER),
            args=[
                cst.Arg(
                    original.func,
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                ),
                cst.Arg(updated),
            ],
        )

    def _helper_place(self) -> str:
        return inline.place(self.state.helpers, KEY)

    def scores_module(self, module: cst.Module) -> cst.Module:
        if not self.helper_needed or self.helper_defined:
            return module
        helpers = self.state.helpers
        statements, _ = inline.written(helpers, KEY, HELPER)
        if helpers is not None and KEY in helpers.shared:
            AddImportsVisitor.add_needed_import(
                self.context, inline.SHARED_MODULE, HELPER, relative=helpers.level
            )
            return module
        return inline.after_imports(module, statements)


def _flag_element(node: cst.Dict) -> tuple[int, cst.DictElement] | None:
    for i, element in enumerate(node.elements):
        if isinstance(element, cst.DictElement) and edits.literal(element.key) == FLAG:
            return i, element
    return None


def _flag_arg(call: cst.Call) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == FLAG), None)


def _is_pipeline(owner: RuleTransformer, call: cst.Call) -> bool:
    """A `pipeline(...)` call: the name itself, or transformers' under another name
    (`from transformers import pipeline as hf_pipeline`, jahidhasanlinix/Sentiment-RLHF-GPT2)."""
    name = get_full_name_for_node(call.func) or ""
    if name == "pipeline" or name.endswith(".pipeline"):
        return True
    return any(
        q in ("transformers.pipeline", "transformers.pipelines.pipeline")
        for q in owner.names_from(call.func, "transformers")
    )

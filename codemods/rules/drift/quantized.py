"""TRL108: `load_in_8bit=` / `load_in_4bit=` on a model load that is not a value-head model's
(TRL102 moves those): transformers 5 rejects them (`__init__() got an unexpected keyword argument
'load_in_8bit'`). They become `quantization_config=BitsAndBytesConfig(...)`
(codemods/quantization.py), on `from_pretrained` of a transformers or peft class and in a
`pipeline(..., model_kwargs={...})` dict literal."""

from __future__ import annotations

import fnmatch

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codemods import edits, quantization
from codemods.base import RuleTransformer
from migrate.kernel.findings import Severity

# The loads that hand their keywords to a transformers model's constructor.
LOADS = ("transformers.*.from_pretrained", "peft.*.from_pretrained")
PIPELINES = ("transformers.pipeline", "transformers.pipelines.pipeline")


class QuantizedLoads(RuleTransformer):
    """The part of RewriteDrift that moves the 8/4-bit flags."""

    def quantized_call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        present = {a.keyword.value for a in updated.args if a.keyword is not None}
        if present & set(quantization.FLAGS):
            return self._load(original, updated, present)
        if "model_kwargs" in present:
            return self._pipeline(original, updated)
        return updated

    def _callee_is(self, call: cst.Call, patterns: tuple[str, ...]) -> bool:
        """Whether the callee resolves to one of `patterns` (asking the scope only for a name
        an import of transformers or peft binds)."""
        if not any(self.may_resolve_to(call.func, p) for p in ("transformers", "peft")):
            return False
        return any(
            fnmatch.fnmatchcase(q, p) for q in self.qualified_names(call.func) for p in patterns
        )

    def _load(self, original: cst.Call, updated: cst.Call, present: set[str]) -> cst.Call:
        if "quantization_config" in present or not self._callee_is(original, LOADS):
            return updated
        flags = [a for a in updated.args if a.keyword and a.keyword.value in quantization.FLAGS]
        value, state = quantization.bnb_config(flags)
        originals = {a.keyword.value: a for a in original.args if a.keyword is not None}
        for arg in flags:
            name = arg.keyword.value  # type: ignore[union-attr]
            if value is None:
                self.report(
                    originals[name], quantization.dropped_message(arg), severity=Severity.INFO
                )
            else:
                self.report(
                    originals[name],
                    quantization.moved_message(name, state),
                    severity=Severity.WARNING,
                )
        keep: list[cst.Arg] = []
        for arg in updated.args:
            if arg is flags[0] and value is not None:
                keep.append(arg.with_changes(keyword=cst.Name("quantization_config"), value=value))
            elif not any(arg is f for f in flags):  # by identity: equal nodes are not the same
                keep.append(arg)
        if value is not None:
            AddImportsVisitor.add_needed_import(self.context, "transformers", "BitsAndBytesConfig")
        return updated.with_changes(args=edits.relayout(updated, keep, set()))

    def _pipeline(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """`pipeline(..., model_kwargs={"load_in_8bit": True})`: the dict's flags become its
        `"quantization_config"` entry."""
        arg = edits.kwarg(updated, "model_kwargs")
        if arg is None or not isinstance(arg.value, cst.Dict):
            return updated
        elements = list(arg.value.elements)
        flags = [
            e
            for e in elements
            if isinstance(e, cst.DictElement) and edits.literal(e.key) in quantization.FLAGS
        ]
        keys = {edits.literal(e.key) for e in elements if isinstance(e, cst.DictElement)}
        if not flags or "quantization_config" in keys or not self._callee_is(original, PIPELINES):
            return updated
        tight = cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        )
        as_args = [
            cst.Arg(keyword=cst.Name(str(edits.literal(e.key))), value=e.value, equal=tight)
            for e in flags
        ]
        value, state = quantization.bnb_config(as_args)
        for flag in as_args:
            name = flag.keyword.value  # type: ignore[union-attr]
            self.report(
                original,
                "`model_kwargs` of this pipeline: "
                + (
                    quantization.dropped_message(flag)
                    if value is None
                    else quantization.moved_message(name, state)
                ),
                severity=Severity.INFO if value is None else Severity.WARNING,
            )
        out: list[cst.BaseDictElement] = []
        for e in elements:
            if e is flags[0] and value is not None:
                out.append(
                    e.with_changes(key=cst.SimpleString('"quantization_config"'), value=value)
                )
            elif not any(e is f for f in flags):
                out.append(e)
        if out and not isinstance(elements[-1].comma, cst.Comma):
            out[-1] = out[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        if value is not None:
            AddImportsVisitor.add_needed_import(self.context, "transformers", "BitsAndBytesConfig")
        new_dict = arg.value.with_changes(elements=out)
        return updated.with_deep_changes(arg, value=new_dict)

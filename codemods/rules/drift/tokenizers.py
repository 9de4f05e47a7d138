"""TRL108: tokenizer calls whose meaning transformers 5 changed.

* `tok.encode_plus(text, ...)` / `tok.batch_encode_plus(texts, ...)` are gone; calling the
  tokenizer, `tok(text, ...)`, takes the same arguments (a text pair, or a list of texts or of
  `(a, b)` pairs) and returns the same BatchEncoding.
* `tok.apply_chat_template(messages, ...)` tokenizes by default as before, but now returns a
  BatchEncoding (`return_dict=True` is the new default) where it returned the list of ids (or a
  tensor with `return_tensors`): code that indexes it as ids (`ids[-1]`, `len(ids)`) then reads a
  key. `return_dict=False` keeps the old result. Calls that already read it as a mapping (a
  string key, `.input_ids`, `**`, or a name read that way) or set `return_dict` are left alone.
"""

from __future__ import annotations

import libcst as cst

from codemods import edits, walk
from codemods.base import RuleTransformer

ENCODE = ("encode_plus", "batch_encode_plus")
CHAT = "apply_chat_template"
NAMES = (*ENCODE, CHAT)
MAPPING_ATTRS = frozenset({"input_ids", "attention_mask", "keys", "items", "values", "data"})


def _method(call: cst.Call) -> str:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else ""


class TokenizerCalls(RuleTransformer):
    """The part of RewriteDrift that moves tokenizer calls."""

    def tokenizer_prescan(self, module: cst.Module) -> None:
        """The apply_chat_template calls whose result is already read as a mapping."""
        self.chat_as_mapping: set[int] = set()
        # The pass's module is the code its identifiers were read from: no code to generate.
        known = self.state.identifiers
        if CHAT not in module.code if known is None else not known.has_any((CHAT,)):
            return
        read_as_mapping = _names_read_as_mapping(module)
        for sub in walk.find_all(module, cst.Subscript):
            if _is_chat(sub.value) and _string_index(sub):
                self.chat_as_mapping.add(id(sub.value))
        for attr in walk.find_all(module, cst.Attribute):
            if _is_chat(attr.value) and attr.attr.value in MAPPING_ATTRS:
                self.chat_as_mapping.add(id(attr.value))
        for arg in walk.find_all(module, cst.Arg):
            if arg.star == "**" and _is_chat(arg.value):
                self.chat_as_mapping.add(id(arg.value))
        for assign in walk.find_all(module, cst.Assign):
            targets = [t.target for t in assign.targets]
            if _is_chat(assign.value) and any(
                isinstance(t, cst.Name) and t.value in read_as_mapping for t in targets
            ):
                self.chat_as_mapping.add(id(assign.value))

    def tokenizer_call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        method = _method(updated)
        if method in ENCODE:
            assert isinstance(updated.func, cst.Attribute)
            self.report(
                original,
                f"`.{method}(...)` is gone in transformers 5: calling the tokenizer takes the "
                "same arguments and returns the same BatchEncoding",
            )
            return updated.with_changes(func=updated.func.value)
        if method != CHAT or id(original) in self.chat_as_mapping:
            return updated
        given = {a.keyword.value for a in updated.args if a.keyword is not None}
        if "return_dict" in given or any(a.star == "**" for a in updated.args):
            return updated
        tokenize = edits.kwarg(updated, "tokenize")
        if tokenize is not None and edits.literal(tokenize.value) is False:  # text: unchanged
            return updated
        self.report(
            original,
            "transformers 5's `apply_chat_template` returns a BatchEncoding by default where it "
            "returned the token ids: `return_dict=False` keeps the ids this code reads",
        )
        arg = edits.new_kwarg("return_dict", "False")
        args = [*updated.args, arg]
        fresh = {id(arg), id(updated.args[-1])} if updated.args else {id(arg)}
        return updated.with_changes(args=edits.relayout(updated, args, fresh))


def _is_chat(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and _method(node) == CHAT


def _string_index(node: cst.Subscript) -> bool:
    return any(
        isinstance(s.slice, cst.Index) and isinstance(s.slice.value, cst.SimpleString)
        for s in node.slice
    )


def _names_read_as_mapping(module: cst.Module) -> set[str]:
    """Names the module subscripts with a string (`x["input_ids"]`), or reads `.input_ids` of."""
    out: set[str] = set()
    for sub in walk.find_all(module, cst.Subscript):
        if isinstance(sub.value, cst.Name) and _string_index(sub):
            out.add(sub.value.value)
    for attr in walk.find_all(module, cst.Attribute):
        if isinstance(attr.value, cst.Name) and attr.attr.value in MAPPING_ATTRS:
            out.add(attr.value.value)
    return out

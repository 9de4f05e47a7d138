"""TRL105 ppo-datasets: the datasets a PPO trainer read hold tokenized `input_ids`; RLOO/GRPO read a
`"prompt"` column of text (or chat messages) and tokenize it themselves.

Runs after TRL104, on the datasets that rule passed to the new trainer, and in a file whose
function builds the dataset a trainer of another file of the run is given (`RunFacts.builders`),
on what that function returns. The `.map(fn)` functions rewritten: the legacy one that stores the
decoded text as `sample["query"]` (the key becomes `"prompt"`, or both stay), the same without the
decoded text (`sample["prompt"] = X` is added below the ids), the v2 one that returns
`{"input_ids": tokenizer...(X)}` (it returns `{"prompt": X}` instead), one that returns the ids
with the text decoded from them (that text is the prompt), and one that returns the tokenizer's
output itself. Otherwise the dataset's assignment gets a TODO naming the column.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, project, walk
from codemods.base import Rule, RuleTransformer
from migrate.kernel.findings import Severity

TOKENIZER_METHODS = ("apply_chat_template", "encode")
# apply_chat_template's own keywords (transformers 5); any other keyword is a variable of the
# template itself (Qwen3's `enable_thinking`), which RLOO/GRPO take as `chat_template_kwargs`
CHAT_CALL_KEYWORDS = frozenset(
    {
        "tokenize",
        "add_generation_prompt",
        "continue_final_message",
        "return_tensors",
        "return_dict",
        "return_assistant_tokens_mask",
        "padding",
        "truncation",
        "max_length",
        "tools",
        "documents",
        "chat_template",
        "tokenizer_kwargs",
    }
)


class RewritePPODatasets(RuleTransformer):
    # It works on the trainer call TRL104 already rewrote, so the target names count too.
    NAMES = (*ppo.TRAINER_NAMES, *(trainer for _, trainer in ppo.TARGETS.values()))

    @classmethod
    def wanted(cls, state, names) -> bool:  # type: ignore[no-untyped-def]
        # or the file builds the dataset another file of the run hands a PPO trainer
        return bool(state.facts.builders) or super().wanted(state, names)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.datasets = _datasets(self, node)
        self.mapped = _mapped_functions(node)
        self.strings = _string_literals(node)
        self.fed_elsewhere = _fed_elsewhere(self, node, self.mapped)
        self.query_kept = _query_read_elsewhere(node, self.mapped)
        # why "query" stays beside "prompt": read here, or by the files this one builds for
        self.kept_why = "other code of this file reads it"
        if not self.query_kept and self.state.facts.builders:
            self.query_kept = True
            self.kept_why = "the files that import this dataset may read it"
        self.rewrote = False
        self.prompted: set[str] = set()  # the mapped functions given a "prompt"
        self.scopes: list[cst.CSTNode] = [node]  # the module, then the functions entered
        self.last_assign = _last_assignments(node, self.datasets)
        self.trainer = ppo.target_trainer(self.state.target)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node)

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        self.scopes.pop()
        out = self._prompted(original_node, updated_node)
        if out is not updated_node:
            self.prompted.add(original_node.name.value)
        return out

    def _prompted(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        if (
            not self.datasets
            or original_node.name.value not in self.mapped
            or not original_node.params.params
        ):
            return updated_node
        param = original_node.params.params[0].name.value
        if _stores_prompt(updated_node, param):
            return updated_node  # done: by the user, or by an earlier run
        legacy = self._legacy(original_node, updated_node, param)
        if legacy is not None:
            return legacy
        batched = self._batched(original_node) if updated_node.deep_equals(original_node) else None
        if batched is not None:
            return batched
        return (
            self._v2(original_node, updated_node)
            or self._assigned(original_node, updated_node, param)
            or updated_node
        )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        """`split.remove_columns([c for c in split.column_names if c not in ("input_ids",
        "attention_mask")])` (tyronen/bb-finetune) or `select_columns(["input_ids", ...])`
        after a tokenizing function this rule gave a "prompt": the list of columns kept gains
        "prompt", which the trainer reads, instead of dropping it."""
        if not self.prompted or len(updated_node.args) != 1:
            return updated_node
        func = updated_node.func
        if not isinstance(func, cst.Attribute):
            return updated_node
        method, arg = func.attr.value, updated_node.args[0].value
        kept: cst.BaseExpression | None = None
        if method == "select_columns":
            kept = arg
        elif method == "remove_columns":
            kept = _kept_by_comprehension(arg)
        if not isinstance(kept, (cst.List, cst.Tuple, cst.Set)):
            return updated_node
        names = [edits.literal(e.value) for e in kept.elements]
        if (
            "input_ids" not in names
            or "prompt" in names
            or not all(isinstance(n, str) for n in names)
        ):
            return updated_node
        # only where a function given "prompt" is mapped in the same scope (the same rows)
        if not (_mapped_functions(self.scopes[-1]) & self.prompted):
            return updated_node
        self.report(
            original_node,
            f'`{method}(...)` keeps "prompt" too, the column {self.trainer} reads, beside the '
            "token columns it kept",
            severity=Severity.WARNING,
        )
        return updated_node.deep_replace(kept, _with_prompt(kept))  # type: ignore[return-value, arg-type]

    def _assigned(
        self, original: cst.FunctionDef, fn: cst.FunctionDef, param: str
    ) -> cst.FunctionDef | None:
        """`sample["input_ids"] = tokenizer.encode(sample["text"])` with no decoded "query"
        (the legacy shape without it): the text it tokenized is stored as `sample["prompt"]`
        too, right below; the token columns stay for whatever else reads them."""
        body: list[cst.BaseStatement] = list(fn.body.body)  # type: ignore[arg-type]
        at = [i for i, st in enumerate(body) if _column_assigned(st, param) == "input_ids"]
        if len(at) != 1:
            return None
        stmt = body[at[0]]
        found = self._tokenized_text(stmt.body[0].value, body[: at[0]])  # type: ignore[attr-defined]
        if found is None:
            return None
        text, cut, _ = found
        self.rewrote = True
        self._cut_todo(original, cut)
        self.report(
            original,
            f'`{original.name.value}` also stores the text it tokenized as "prompt", the column '
            f"{self.trainer} reads (it tokenizes prompts itself)",
            severity=Severity.WARNING,
        )
        prompt = cst.parse_statement(f'{param}["prompt"] = {edits.code(text).strip()}\n')
        new_body = [*body[: at[0] + 1], prompt, *body[at[0] + 1 :]]
        return fn.with_changes(body=fn.body.with_changes(body=new_body))

    def _cut_todo(self, fn: cst.FunctionDef, cut: str) -> None:
        if cut:
            # "768 then -1": `max_length=768`, then `[:-1]`, the last token dropped
            steps = [
                (
                    "without its last token"
                    if c[1:].strip() == "1"
                    else f"without its last {c[1:].strip()} tokens"
                )
                if c.startswith("-")
                else f"to at most {c} tokens"
                for c in cut.split(" then ")
            ]
            self.todo(
                fn,
                f"`{fn.name.value}` cut each prompt {', then '.join(steps)}; "
                f'{self.trainer} tokenizes the whole "prompt" text and TRL 1.13 has no setting '
                "that cuts prompts: shorten the text here (or filter long rows) to train on the "
                "same prompts",
            )

    def _batched(self, fn: cst.FunctionDef) -> cst.FunctionDef | None:
        """The batched legacy shape (stack-llama): `out = {"query": [], "input_ids": []}` filled
        with `out["query"].append(text)`; the "query" list is the "prompt" column now (both,
        when other code reads "query")."""
        appends = _find(
            fn,
            cst.Call,
            m.Call(
                func=m.Attribute(
                    value=m.Subscript(
                        value=m.Name(),
                        slice=[m.SubscriptElement(m.Index(m.SimpleString()))],
                    ),
                    attr=m.Name("append"),
                ),
                args=[m.Arg(keyword=None, star="")],
            ),
        )
        query = [
            c
            for c in appends
            if edits.literal(c.func.value.slice[0].slice.value) == "query"  # type: ignore[attr-defined]
        ]
        if len(query) != 1:
            return None
        owner = query[0].func.value.value.value  # type: ignore[attr-defined]
        literals = [
            a.value
            for a in _find(fn, cst.Assign, m.Assign(targets=[m.AssignTarget(m.Name(owner))]))
            if isinstance(a, cst.Assign) and isinstance(a.value, cst.Dict)
        ]
        if len(literals) != 1:
            return None
        lists = {
            edits.literal(e.key): e for e in literals[0].elements if isinstance(e, cst.DictElement)
        }
        entry = lists.get("query")
        if "prompt" in lists or entry is None or not m.matches(entry.value, m.List(elements=[])):
            return None
        self.rewrote = True
        call = query[0]
        text = call.func.value.slice[0].slice.value  # type: ignore[attr-defined]
        self._batched_cut(fn, owner, call.args[0].value)  # type: ignore[attr-defined]
        also = self.query_kept  # other code reads "query": collect the text under both names
        self.report(
            call,
            f'the text collected as "query" is also collected as "prompt", the column '
            f'{self.trainer} reads ("query" stays: {self.kept_why})'
            if also
            else f'the text collected as "query" is the "prompt" column now, the one '
            f"{self.trainer} reads",
        )
        return fn.visit(_CollectAsPrompt(literals[0], entry.key, call, text, also))  # type: ignore[return-value, arg-type]

    def _batched_cut(self, fn: cst.FunctionDef, owner: str, text: cst.BaseExpression) -> None:
        """The batched shape's `out["input_ids"].append(tokenized["input_ids"])`, where the text
        tokenized is the text collected as "query": the cut and padding its tokenizer call gave
        the prompt tokens (said as the other shapes say them), which the "prompt" text lacks."""
        appended: list[cst.Call] = [
            c  # type: ignore[misc]
            for c in _find(fn, cst.Call, m.Call(func=m.Attribute(attr=m.Name("append"))))
            if m.matches(
                c.func.value,  # type: ignore[attr-defined]
                m.Subscript(
                    value=m.Name(owner),
                    slice=[m.SubscriptElement(m.Index(m.SimpleString()))],
                ),
            )
            and edits.literal(c.func.value.slice[0].slice.value) == "input_ids"  # type: ignore[attr-defined]
            and len(c.args) == 1  # type: ignore[attr-defined]
        ]
        if len(appended) != 1:
            return
        lines = walk.find_all(fn, cst.SimpleStatementLine)
        at = next(
            (
                i
                for i, ln in enumerate(lines)
                if any(c is appended[0] for c in walk.find_all(ln, cst.Call))
            ),
            None,
        )
        if at is None:
            return
        found = self._tokenized_text(appended[0].args[0].value, lines[:at])
        if found is None or edits.code(found[0]).strip() != edits.code(text).strip():
            return  # another text than the one collected: nothing to say of its cut
        self._cut_todo(fn, found[1])

    def _legacy(
        self, original: cst.FunctionDef, fn: cst.FunctionDef, param: str
    ) -> cst.FunctionDef | None:
        query = m.Subscript(
            value=m.Name(param),
            slice=[
                m.SubscriptElement(m.Index(m.SimpleString('"query"') | m.SimpleString("'query'")))
            ],
        )
        found = _find(fn, cst.Assign, m.Assign(targets=[m.AssignTarget(query)]))
        if len(found) != 1:
            return None
        self.rewrote = True
        # The finding points at the assignment as the file has it: the updated function's
        # nodes are new ones wherever an earlier rule rebuilt something inside it.
        where = _find(original, cst.Assign, m.Assign(targets=[m.AssignTarget(query)]))
        spot = where[0] if len(where) == 1 else found[0]
        what = self._legacy_text(original, param, spot.value)  # type: ignore[attr-defined]
        if self.query_kept:
            # Code other than the PPO loop reads "query" (a collator, an evaluation): keep that
            # column and store the same text as "prompt" too.
            self.report(
                spot,
                f'the {what} is also stored as "prompt", the column {self.trainer} reads '
                f'("query" stays: {self.kept_why})',
            )
            assign = found[0]
            target = assign.targets[0]  # type: ignore[attr-defined]
            prompt = target.with_changes(
                target=target.target.with_changes(
                    slice=[cst.SubscriptElement(cst.Index(cst.SimpleString('"prompt"')))]
                )
            )
            return fn.deep_replace(
                assign,
                assign.with_changes(targets=[*assign.targets, prompt]),  # type: ignore[attr-defined]
            )  # type: ignore[return-value]
        self.report(
            spot,
            f'the {what} is stored as "prompt", the column {self.trainer} reads (it was "query")',
        )
        return m.replace(
            fn,
            query,
            lambda node, _: node.with_changes(
                slice=[cst.SubscriptElement(cst.Index(cst.SimpleString('"prompt"')))]
            ),
        )  # type: ignore[return-value]

    def _special_tokens(self, spot: cst.CSTNode, value: cst.BaseExpression) -> None:
        """A prompt decoded with its special tokens (`tokenizer.decode(ids)`, no
        `skip_special_tokens=True`): the trainer tokenizes that text again and adds the
        tokenizer's own special tokens, so a BOS the ids began with comes twice."""
        if not _is_decode(value) or any(
            a.keyword is not None
            and a.keyword.value == "skip_special_tokens"
            and edits.literal(a.value) is True
            for a in value.args  # type: ignore[attr-defined]
        ):
            return
        self.report(
            spot,
            f"`{' '.join(edits.code(value).split())}` keeps the special tokens of the ids in the "
            f"prompt text, and {self.trainer} tokenizes that text again with the tokenizer's own: "
            "where the tokenizer adds a BOS token (Llama's, Mistral's, OPT's; GPT-2's adds none), "
            "the prompt now begins with two; decode with `skip_special_tokens=True` there",
            severity=Severity.INFO,
        )

    def _legacy_text(self, fn: cst.FunctionDef, param: str, value: cst.BaseExpression) -> str:
        """What the legacy shape stores as "query": "decoded text" (the prompt tokens decoded,
        cut as they were) or "text" (the text itself); where that text is what the function
        tokenized with a cut (`tokenizer.encode(text, truncation=True, max_length=128)`), the
        cut's TODO, since the "prompt" text is whole."""
        decoded = "decoded text" if _is_decode(value) else "text"
        self._special_tokens(value, value)
        body: list[cst.BaseStatement] = list(fn.body.body)  # type: ignore[arg-type]
        at = [i for i, st in enumerate(body) if _column_assigned(st, param) == "input_ids"]
        if len(at) != 1 or decoded == "decoded text":
            return decoded
        ids = body[at[0]].body[0].value  # type: ignore[attr-defined]
        found = self._tokenized_text(ids, body[: at[0]])
        read_back = found is not None and m.matches(
            found[0],
            m.Subscript(
                value=m.Name(param),
                slice=[
                    m.SubscriptElement(
                        m.Index(m.SimpleString('"query"') | m.SimpleString("'query'"))
                    )
                ],
            ),
        )  # `tokenizer.encode(sample["query"], ...)` below the query's assignment
        if found is not None and (read_back or _same_text(found[0], value, body)):
            self._cut_todo(fn, found[1])
        return decoded

    def _v2(self, original: cst.FunctionDef, fn: cst.FunctionDef) -> cst.FunctionDef | None:
        body = list(fn.body.body)  # type: ignore[attr-defined]
        last = body[-1] if body else None
        ret = (
            last.body[0]
            if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return)
            else None
        )
        if ret is not None and isinstance(ret.value, cst.Call):
            return self._returns_encoding(original, fn, ret)
        folded = _assigned_then_returned(body)
        if folded is not None:  # `sample = tokenizer(X, ...)` then `return sample`
            line = folded.body[0]
            assert isinstance(line, cst.Return)
            fn = fn.with_changes(body=fn.body.with_changes(body=[*body[:-2], folded]))
            return self._returns_encoding(original, fn, line)
        if ret is None or not isinstance(ret.value, cst.Dict):
            return None
        keys = {
            edits.literal(e.key): e.value
            for e in ret.value.elements
            if isinstance(e, cst.DictElement)
        }
        if "input_ids" not in keys or "prompt" in keys:
            return None
        if "query" in keys and _decodes(keys["query"], keys["input_ids"], body[:-1]):
            return self._query_as_prompt(original, fn, ret)
        found = self._tokenized_text(keys["input_ids"], body[:-1])
        if found is None:
            return None
        text, cut, source = found
        self.rewrote = True
        self._cut_todo(original, cut)
        inside = _string_literals(original)  # the function's own mentions are not reads
        if original.name.value in self.fed_elsewhere or any(
            self.strings.get(k, 0) > inside.get(k, 0) for k in keys if isinstance(k, str)
        ):
            # A returned column is read elsewhere (`lengths` by a length filter, `input_ids` by
            # a check): every column stays as computed, and the text is added as "prompt".
            return self._add_prompt(original, fn, ret, text)
        self.report(
            original,
            f'`{original.name.value}` returns the text it tokenized as "prompt", the column '
            f"{self.trainer} "
            "reads (it tokenizes prompts itself)",
            severity=Severity.WARNING,
        )
        new_ret = cst.parse_statement(f'return {{"prompt": {edits.code(text).strip()}}}\n')
        kept = _kept_before(body[:-1], source)
        if not kept:
            new_ret = new_ret.with_changes(leading_lines=edits.leading(body[0]))
        elif kept[0] is not body[0]:
            kept[0] = kept[0].with_changes(leading_lines=edits.leading(body[0]))
        return fn.with_changes(body=fn.body.with_changes(body=[*kept, new_ret]))

    def _query_as_prompt(
        self, original: cst.FunctionDef, fn: cst.FunctionDef, ret: cst.Return
    ) -> cst.FunctionDef:
        """`return {"input_ids": ids, "query": tokenizer.decode(ids)}`: the decoded text, cut as
        the tokens were, is the "prompt" column (both, when other code reads "query")."""
        self.rewrote = True
        assert isinstance(ret.value, cst.Dict)
        elements = list(ret.value.elements)
        i = next(
            k
            for k, e in enumerate(elements)
            if isinstance(e, cst.DictElement) and edits.literal(e.key) == "query"
        )
        prompt = elements[i].with_changes(key=cst.SimpleString('"prompt"'))  # type: ignore[call-arg]
        self._special_tokens(original, elements[i].value)
        if self.query_kept:
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            last = elements[-1]
            if last.comma is cst.MaybeSentinel.DEFAULT:
                elements[-1] = last.with_changes(comma=comma)
            elements.append(prompt.with_changes(comma=cst.MaybeSentinel.DEFAULT))
            said = f'("query" stays: {self.kept_why})'
        else:
            elements[i] = prompt
            said = '(it was "query")'
        self.report(
            original,
            f'`{original.name.value}` returns the text it decoded as "prompt", the column '
            f"{self.trainer} reads {said}",
        )
        new_ret = ret.with_changes(value=ret.value.with_changes(elements=elements))
        return fn.deep_replace(ret, new_ret)  # type: ignore[return-value, arg-type]

    def _returns_encoding(
        self, original: cst.FunctionDef, fn: cst.FunctionDef, ret: cst.Return
    ) -> cst.FunctionDef | None:
        """`return tokenizer(X, ...)`: the map returns `{"prompt": X}` instead, or
        `{"prompt": X, **tokenizer(X, ...)}` when other code reads a token column."""
        assert ret.value is not None
        found = self._tokenized_text(ret.value, [])
        if found is None:
            return None
        text, cut, _ = found
        self.rewrote = True
        self._cut_todo(original, cut)
        read = any(self.strings.get(k, 0) for k in ("input_ids", "attention_mask"))
        consumer = self.fed_elsewhere.get(original.name.value)
        value = f'{{"prompt": {edits.code(text).strip()}'
        value += f", **{edits.code(ret.value).strip()}}}" if read or consumer else "}"
        why = ""
        if consumer:
            why = f"; the token columns stay, since `{consumer}(...)` of this file also takes them"
        elif read:
            why = "; the token columns stay, since other code of this file reads them"
        self.report(
            original,
            f'`{original.name.value}` returns the text it tokenized as "prompt", the column '
            f"{self.trainer} reads (it tokenizes prompts itself)" + why,
            severity=Severity.WARNING,
        )
        new_ret = ret.with_changes(value=cst.parse_expression(value))
        return fn.deep_replace(ret, new_ret)  # type: ignore[return-value, arg-type]

    def _add_prompt(
        self,
        original: cst.FunctionDef,
        fn: cst.FunctionDef,
        ret: cst.Return,
        text: cst.BaseExpression,
    ) -> cst.FunctionDef:
        self.report(
            original,
            f'`{original.name.value}` also returns the text it tokenized as "prompt", the column '
            f"{self.trainer} reads (it tokenizes prompts itself); its other columns stay, since "
            "other code of this file reads them",
            severity=Severity.WARNING,
        )
        assert isinstance(ret.value, cst.Dict)
        first = ret.value.elements[0]
        prompt = cst.DictElement(
            cst.SimpleString('"prompt"'),
            text,
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
        )
        if isinstance(first.comma, cst.Comma):
            prompt = prompt.with_changes(comma=first.comma)
        new_ret = ret.with_changes(
            value=ret.value.with_changes(elements=[prompt, *ret.value.elements])
        )
        return fn.deep_replace(ret, new_ret)  # type: ignore[return-value, arg-type]

    def _tokenized_text(
        self, expr: cst.BaseExpression, before: list
    ) -> tuple[cst.BaseExpression, str, cst.CSTNode | None] | None:
        """X in `tokenizer(X, ...)["input_ids"]`, `tokenizer.encode(X)`,
        `tokenizer.apply_chat_template(X, ...)`,
        following one local name (`outputs = tokenizer(X)`; `outputs["input_ids"]`), the
        cut the tokens got (`max_length=64` with truncation, `[:64]`), as code ("" when none),
        and the statement of `before` that tokenized, when the name was followed."""
        cuts: list[str] = []
        expr = _unwrapped(expr, cuts)
        source = None
        if isinstance(expr, cst.Name):
            name = expr.value
            for stmt in before:
                for small in _smalls(stmt):
                    if (
                        isinstance(small, cst.Assign)
                        and get_full_name_for_node(small.targets[0].target) == name
                    ):
                        expr, source = small.value, stmt
        expr = _unwrapped(expr, cuts)
        if not isinstance(expr, cst.Call) or not expr.args or expr.args[0].keyword is not None:
            return None
        func = get_full_name_for_node(expr.func) or ""
        if "tokenizer" in func.split(".")[0] and (
            func.count(".") == 0 or func.rsplit(".", 1)[1] in TOKENIZER_METHODS
        ):
            kwargs = {a.keyword.value: a.value for a in expr.args if a.keyword is not None}
            chat = func.endswith(".apply_chat_template")
            generation_prompt = kwargs.get("add_generation_prompt")
            if chat and not (generation_prompt and m.matches(generation_prompt, m.Name("True"))):
                return None  # RLOO/GRPO add the generation prompt; without it, not the same
            # transformers truncates to `max_length` unless told not to (`truncation=None`
            # defaults to longest-first once a max_length is given); apply_chat_template
            # truncates only when told to
            off = m.Name("False") | m.SimpleString('"do_not_truncate"')
            truncation = kwargs.get("truncation")
            if chat:
                cut = truncation is not None and m.matches(truncation, m.Name("True"))
            else:
                cut = truncation is None or not m.matches(truncation, off)
            if "max_length" in kwargs and cut:
                cuts.insert(0, edits.code(kwargs["max_length"]).strip())
            extra = sorted(set(kwargs) - CHAT_CALL_KEYWORDS) if chat else []
            if extra:  # template variables (Qwen3's `enable_thinking=False`)
                given = ", ".join(f"{k}={edits.code(kwargs[k]).strip()}" for k in extra)
                wanted = ", ".join(f'"{k}": {edits.code(kwargs[k]).strip()}' for k in extra)
                self.report(
                    expr,
                    f"the prompt was rendered with `{given}`; {self.trainer} renders the "
                    'conversational "prompt" again with its config\'s `chat_template_kwargs` '
                    f"(none by default): set `chat_template_kwargs={{{wanted}}}` on the config, or "
                    "the policy sees another prompt",
                    severity=Severity.WARNING,
                )
            if edits.literal(kwargs.get("padding", cst.Name("None"))) == "max_length":
                self.report(
                    expr,
                    "the prompt was padded to `max_length` with pad tokens, which PPO's "
                    "`generate` and `step` read as part of the prompt; "
                    f"{self.trainer} pads its batches itself and masks the padding, so the "
                    "policy now sees the prompt alone",
                    severity=Severity.WARNING,
                )
            return expr.args[0].value, " then ".join(cuts), source
        return None


def _assigned_then_returned(body: Sequence[cst.CSTNode]) -> cst.SimpleStatementLine | None:
    """`return <call>` for a body ending `v = <call>` then `return v` (Pranavbp525/StoryGen:
    `sample = tokenizer(sample['query'], ...)`, `return sample`), its first line's comments kept;
    else None."""
    first, last = body[-2:] if len(body) >= 2 else (None, None)
    if not (
        isinstance(first, cst.SimpleStatementLine) and isinstance(last, cst.SimpleStatementLine)
    ):
        return None
    assign, ret = first.body, last.body
    if not (
        len(assign) == 1
        and len(ret) == 1
        and isinstance(assign[0], cst.Assign)
        and isinstance(ret[0], cst.Return)
        and isinstance(assign[0].value, cst.Call)
        and len(assign[0].targets) == 1
        and isinstance(assign[0].targets[0].target, cst.Name)
        and isinstance(ret[0].value, cst.Name)
        and ret[0].value.value == assign[0].targets[0].target.value
    ):
        return None
    return first.with_changes(body=[cst.Return(assign[0].value)])


def _column_assigned(stmt: cst.BaseStatement, param: str) -> object:
    """The key of `param["input_ids"] = ...` (a statement of its own), or None."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    small = stmt.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None
    t = small.targets[0].target
    if (
        isinstance(t, cst.Subscript)
        and isinstance(t.value, cst.Name)
        and t.value.value == param
        and len(t.slice) == 1
        and isinstance(t.slice[0].slice, cst.Index)
    ):
        return edits.literal(t.slice[0].slice.value)
    return None


def _stores_prompt(fn: cst.FunctionDef, param: str) -> bool:
    """Whether the function stores `param["prompt"] = ...` anywhere."""
    return any(
        isinstance(t.target, cst.Subscript)
        and isinstance(t.target.value, cst.Name)
        and t.target.value.value == param
        and any(
            isinstance(e.slice, cst.Index) and edits.literal(e.slice.value) == "prompt"
            for e in t.target.slice
        )
        for t in walk.find_all(fn, cst.AssignTarget)
    )


def _decodes(value: cst.BaseExpression, ids: cst.BaseExpression, before: list) -> bool:
    """Whether `value` is `tokenizer.decode(ids)` (either side through one local name bound in
    `before`): the text the prompt tokens stand for, cut as they were."""
    bound = _local_bindings(before)
    if isinstance(value, cst.Name):
        value = bound.get(value.value, value)
    if not (
        isinstance(value, cst.Call)
        and (get_full_name_for_node(value.func) or "").endswith("tokenizer.decode")
        and len(value.args) >= 1
        and value.args[0].keyword is None
    ):
        return False
    return edits.code(value.args[0].value).strip() == edits.code(ids).strip()


def _smalls(stmt: cst.CSTNode) -> Sequence[cst.BaseSmallStatement]:
    """The small statements of a simple statement line; none of a compound statement (an `if`,
    a `for`: what it binds is not bound for sure)."""
    return stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()


def _is_decode(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and (get_full_name_for_node(value.func) or "").endswith(
        ".decode"
    )


def _same_text(a: cst.BaseExpression, b: cst.BaseExpression, before: list) -> bool:
    """Whether two expressions are the same text: the same code, or a local name bound in
    `before` to the other's code."""
    bound = _local_bindings(before)

    def code(e: cst.BaseExpression) -> str:
        if isinstance(e, cst.Name) and e.value in bound:
            e = bound[e.value]
        return edits.code(e).strip()

    return code(a) == code(b)


def _local_bindings(before: list) -> dict[str, cst.BaseExpression]:
    """Each name the simple statements of `before` assign (`x = ...`), with its last value."""
    bound: dict[str, cst.BaseExpression] = {}
    for stmt in before:
        for small in _smalls(stmt):
            if isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Name):
                bound[small.targets[0].target.value] = small.value
    return bound


def _kept_before(before: list, source: cst.CSTNode | None) -> list:
    """The statements before a tokenizing function's return that stay once it returns the text:
    all but the one that tokenized (`source`), which stays too when a kept statement reads a
    name it binds. A docstring stays; the text may read any name the others bind."""
    rest = [s for s in before if s is not source]
    if source is None:
        return rest
    bound = {
        get_full_name_for_node(t.target)
        for small in getattr(source, "body", [])
        if isinstance(small, cst.Assign)
        for t in small.targets
    }
    read = {n.value for s in rest for n in walk.find_all(s, cst.Name)}
    return before if bound & read else rest


def _unwrapped(expr: cst.BaseExpression, cuts: list[str]) -> cst.BaseExpression:
    """`expr` without a token slice `[:N]` (N goes to `cuts`, outermost last) and one key
    (`["input_ids"]`): `tokenizer(X)["input_ids"][:64]` -> `tokenizer(X)`."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        part = expr.slice[0].slice
        if isinstance(part, cst.Slice) and part.lower is None and part.upper is not None:
            cuts.insert(0, edits.code(part.upper).strip())
            expr = expr.value
    if isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr


class PPODatasetTodos(RuleTransformer):
    """Second pass: a dataset whose tokenizing map was not recognised gets a TODO where it is
    built; one built by a function of another file of the run, there (that file's run)."""

    NAMES = RewritePPODatasets.NAMES
    wanted = RewritePPODatasets.wanted

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.datasets = _datasets(self, node)
        self.done = _writes_prompt(node, self.datasets)
        self.last = _last_assignments(node, self.datasets)
        self.trainer = ppo.target_trainer(self.state.target)
        self.deferred = dict(self.state.facts.deferred)
        # builders of another file's PPO dataset whose result this file does not bind (a
        # parameter, another function's result): the TODO goes on the function
        self.unbound = {
            id(fn)
            for fn in _builder_functions(node, self.state.facts.builders)
            if not any(name in self.last and _inside(self.last[name], fn) for name in _returned(fn))
        }

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.done and id(node) in self.unbound:
            self.todo(
                node,
                f'{self.trainer} reads a "prompt" column (text or chat messages) from what '
                f"`{node.name.value}` returns (another file of the run gives it to a PPO "
                "trainer) and tokenizes it itself; PPO read tokenized `input_ids`: keep the "
                'text you tokenize as "prompt"',
            )

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.done:
            return
        for name, assign in self.last.items():
            if assign is not node:
                continue
            builder = _builder_call(node.value)
            if builder in self.deferred:
                where = os.path.relpath(
                    self.deferred[builder], os.path.dirname(os.path.abspath(self.state.path))
                )
                self.report(
                    node,
                    f"`{name}` comes from `{builder}(...)`, defined in {where}: {self.trainer} "
                    'reads a "prompt" text column, and TRL105 gives the dataset one where that '
                    "function tokenizes it (see that file's findings)",
                    severity=Severity.INFO,
                )
            else:
                self.todo(
                    node,
                    f'{self.trainer} reads a "prompt" column (text or chat messages) from `{name}` '
                    "and "
                    "tokenizes it itself; PPO read tokenized `input_ids`: keep the text you "
                    'tokenize as "prompt"',
                )


def _query_read_elsewhere(module: cst.Module, mapped: set[str]) -> bool:
    """Whether `x["query"]` is read outside the tokenizing functions and outside the PPO step
    loops (which TRL106 rewrites or marks): by a collator or an evaluation, say."""
    found = False

    class _V(walk.Visitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node.name.value not in mapped

        def visit_For(self, node: cst.For) -> bool:
            return ".step(" not in edits.code(node.body)

        def visit_Subscript(self, node: cst.Subscript) -> None:
            nonlocal found
            if any(
                isinstance(e.slice, cst.Index) and edits.literal(e.slice.value) == "query"
                for e in node.slice
            ):
                found = True

    walk.visit(module, _V())
    return found


def _prompt_dicts(module: cst.Module) -> list[tuple[cst.Dict, cst.FunctionDef | None]]:
    """Each `{"prompt": ...}` literal with the function it sits in (None: the module, or a
    lambda's body, which a `.map` may be handed)."""
    found: list[tuple[cst.Dict, cst.FunctionDef | None]] = []
    stack: list[cst.FunctionDef | None] = [None]

    class _V(walk.Visitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            stack.append(node)

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            stack.pop()

        def visit_Lambda(self, node: cst.Lambda) -> None:
            stack.append(None)

        def leave_Lambda(self, node: cst.Lambda) -> None:
            stack.pop()

        def visit_Dict(self, node: cst.Dict) -> None:
            if any(
                isinstance(e, cst.DictElement) and edits.literal(e.key) == "prompt"
                for e in node.elements
            ):
                found.append((node, stack[-1]))

    walk.visit(module, _V())
    return found


def _writes_prompt(module: cst.Module, datasets: Collection[str] = ()) -> bool:
    """Whether the file makes a "prompt" column: a `{"prompt": ...}` literal, `x["prompt"] = ...`,
    or `rename_column`/`add_column`/`rename_columns` naming it. Reading `x["prompt"]` (or the word
    in a comment) makes none; nor does a file that also removes it (`remove_columns=["prompt"]`,
    `.remove_columns("prompt")`: AimeeAyat/ATML-PA5 renames its question column "prompt", then
    tokenizes it into input_ids and drops it)."""
    if _removes_prompt(module):
        return False
    mapped = _mapped_functions(module)
    for _, fn in _prompt_dicts(module):
        # a dict of a function that neither makes rows (mapped, a Dataset's `__getitem__`) nor
        # builds a PPO dataset is some other record (doelleb's `result = {"prompt": p, ...}`
        # comparing generations after training)
        if (
            fn is None
            or fn.name.value in mapped
            or fn.name.value == "__getitem__"
            or not datasets
            or _binds_any(fn, datasets)
        ):
            return True
    for target in walk.find_all(module, cst.AssignTarget):
        t = target.target
        if isinstance(t, cst.Subscript) and any(
            isinstance(e.slice, cst.Index) and edits.literal(e.slice.value) == "prompt"
            for e in t.slice
        ):
            return True
    for call in walk.find_all(module, cst.Call):
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else ""
        if method not in ("rename_column", "add_column", "rename_columns"):
            continue
        # the name a column gets: rename_column's second argument (its first is the name it
        # loses: `rename_column("prompt", "query")` leaves no "prompt"), add_column's first
        at, keyword = (1, "new_column_name") if method == "rename_column" else (0, "name")
        positional = [a for a in call.args if a.keyword is None]
        named = edits.kwarg(call, keyword)
        made = named if named is not None else (positional[at] if len(positional) > at else None)
        if made is not None and edits.literal(made.value) == "prompt":
            return True
        for arg in call.args:
            if isinstance(arg.value, cst.Dict) and any(
                isinstance(e, cst.DictElement) and edits.literal(e.value) == "prompt"
                for e in arg.value.elements
            ):
                return True
    return False


def _binds_any(fn: cst.FunctionDef, names: Collection[str]) -> bool:
    return not edits.bound_names(fn).isdisjoint(names)


def _removes_prompt(module: cst.Module) -> bool:
    """A `remove_columns=` keyword or `.remove_columns(...)` call naming "prompt" (a string, or a
    list or tuple of them)."""
    for call in walk.find_all(module, cst.Call):
        func = call.func
        values = [a.value for a in call.args if a.keyword and a.keyword.value == "remove_columns"]
        if isinstance(func, cst.Attribute) and func.attr.value == "remove_columns":
            values += [a.value for a in call.args if a.keyword is None][:1]
        for value in values:
            items = (
                [e.value for e in value.elements]
                if isinstance(value, (cst.List, cst.Tuple))
                else [value]
            )
            if any(edits.literal(item) == "prompt" for item in items):
                return True
    return False


def _builder_call(value: cst.BaseExpression) -> str:
    """`build_dataset` of `build_dataset(...)` or `build_dataset(...)["train"]` (dotted for
    `module.build_dataset(...)`); "" for anything else."""
    while isinstance(value, cst.Subscript):
        value = value.value
    if isinstance(value, cst.Call):
        return get_full_name_for_node(value.func) or ""
    return ""


def _built(module: cst.Module, builders: frozenset[str]) -> set[str]:
    """The datasets the module's functions named in `builders` return."""
    return {n for fn in _builder_functions(module, builders) for n in _returned(fn)}


def _builder_functions(module: cst.Module, builders: frozenset[str]) -> list[cst.FunctionDef]:
    return [
        fn for fn in module.body if isinstance(fn, cst.FunctionDef) and fn.name.value in builders
    ]


def _returned(fn: cst.FunctionDef) -> set[str]:
    """The names of the datasets `fn` returns (`return ds`, `return ds["train"]`,
    `return ds.shuffle(seed=0)`: `ds`), its own nested functions' returns left out."""
    found = set()
    for ret in _own_returns(fn):
        value = ret.value
        while isinstance(value, (cst.Subscript, cst.Call, cst.Attribute)):
            if isinstance(value, cst.Call):
                if not isinstance(value.func, cst.Attribute):
                    break
                value = value.func
            value = value.value
        if isinstance(value, cst.Name):
            found.add(value.value)
    return found


def _inside(node: cst.CSTNode, fn: cst.FunctionDef) -> bool:
    return any(n is node for n in walk.find_all(fn, type(node)))


def _own_returns(fn: cst.FunctionDef) -> list[cst.Return]:
    out: list[cst.Return] = []

    class _V(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is fn

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            if node.value is not None:
                out.append(node)

    fn.visit(_V())
    return out


def _datasets(owner: RuleTransformer, module: cst.Module) -> set[str]:
    """Datasets TRL104 gave a new trainer, those still passed to a PPO trainer (TRL104 not
    run), and those the module's dataset builders return (`RunFacts.builders`)."""
    found = set(owner.state.shared.ppo_datasets) | _built(module, owner.state.facts.builders)
    for call in walk.find_all(module, cst.Call):
        if ppo.ppo_class(owner.names_from(call.func, "trl"), ppo.TRAINER_NAMES):
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in (
                    "dataset",
                    "train_dataset",
                    "eval_dataset",
                ):
                    found.add(get_full_name_for_node(arg.value) or "")
    found.discard("")
    return found


def _fed_elsewhere(owner: RuleTransformer, module: cst.Module, mapped: set[str]) -> dict[str, str]:
    """The mapped functions whose rows (`ds = raw.map(fn, ...)`, then `ds` or `ds["train"]`)
    another trainer or a DataLoader of the module also takes (doelleb/guard-fair-rlhf trains
    its reward model with transformers' Trainer on the rows it then gives the PPO trainer):
    each with that consumer's name. Those keep their token columns."""
    rows: dict[str, str] = {}  # dataset name -> the function mapped to make it
    for node in walk.find_all(module, cst.Assign):
        value = node.value
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "map"
            and value.args
            and edits.code(value.args[0].value).strip() in mapped
        ):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    rows[target.target.value] = edits.code(value.args[0].value).strip()
    if not rows:
        return {}
    ours = {*ppo.TRAINER_NAMES, *(trainer for _, trainer in ppo.TARGETS.values())}
    found: dict[str, str] = {}
    for call in walk.find_all(module, cst.Call):
        name = (get_full_name_for_node(call.func) or "").rpartition(".")[2]
        if name in ours or not (name.endswith("Trainer") or name == "DataLoader"):
            continue
        for arg in call.args:
            root: cst.BaseExpression = arg.value
            while isinstance(root, (cst.Subscript, cst.Attribute)):
                root = root.value
            if isinstance(root, cst.Name) and root.value in rows:
                found.setdefault(rows[root.value], name)
    return found


def _mapped_functions(module: cst.CSTNode) -> set[str]:
    """Names of functions passed first to a `.map(...)` call."""
    return {
        edits.code(c.args[0].value).strip()
        for c in walk.find_all(module, cst.Call)
        if isinstance(c.func, cst.Attribute)
        and c.func.attr.value == "map"
        and c.args
        and isinstance(c.args[0].value, cst.Name)
    }


def _string_literals(module: cst.CSTNode) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in walk.find_all(module, cst.SimpleString):
        value = edits.literal(node)
        if isinstance(value, str):
            counts[value] = counts.get(value, 0) + 1
    return counts


def _last_assignments(module: cst.Module, names: set[str]) -> dict[str, cst.Assign]:
    out: dict[str, cst.Assign] = {}
    for node in walk.find_all(module, cst.Assign):
        for t in node.targets:
            name = get_full_name_for_node(t.target)
            if name in names:
                out[name] = node
    return out


class PPODatasetsRule(Rule):
    code = "TRL105"
    name = "ppo-datasets"
    summary = (
        'Give the datasets of a rewritten PPO trainer the "prompt" text column RLOO/GRPO read.'
    )
    before = (
        "from trl import PPOTrainer\n"
        "def tokenize(element):\n"
        '    outputs = tokenizer(element["text"], padding=False)\n'
        '    return {"input_ids": outputs["input_ids"]}\n'
        "ds = ds.map(tokenize, remove_columns=ds.column_names)\n"
        "trainer = PPOTrainer(args=a, processing_class=tokenizer, model=m, reward_model=rm, "
        "value_model=vm, train_dataset=ds)\n"
    )
    after = (
        "from trl import PPOTrainer\n"
        "def tokenize(element):\n"
        '    return {"prompt": element["text"]}\n'
        "ds = ds.map(tokenize, remove_columns=ds.column_names)\n"
        "trainer = PPOTrainer(args=a, processing_class=tokenizer, model=m, reward_model=rm, "
        "value_model=vm, train_dataset=ds)\n"
    )
    transformers = (RewritePPODatasets, PPODatasetTodos)
    triggers = ("PPOTrainer", "PPOv2Trainer")

    def by_facts(self, facts: project.RunFacts) -> bool:
        return bool(facts.builders)


def _kept_by_comprehension(arg: cst.BaseExpression) -> cst.BaseExpression | None:
    """The literal of `[c for c in X.column_names if c not in LITERAL]`, else None."""
    if not isinstance(arg, cst.ListComp) or arg.for_in.inner_for_in is not None:
        return None
    target, ifs = arg.for_in.target, arg.for_in.ifs
    if not (
        isinstance(target, cst.Name)
        and m.matches(arg.elt, m.Name(target.value))
        and m.matches(arg.for_in.iter, m.Attribute(attr=m.Name("column_names")))
        and len(ifs) == 1
    ):
        return None
    test = ifs[0].test
    if not (
        isinstance(test, cst.Comparison)
        and m.matches(test.left, m.Name(target.value))
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.NotIn)
    ):
        return None
    return test.comparisons[0].comparator


def _with_prompt(kept: cst.List | cst.Tuple | cst.Set) -> cst.BaseExpression:
    """`kept` with `"prompt"` as its last element, in the literal's own comma style."""
    elements = list(kept.elements)
    last = elements[-1]
    between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if len(elements) > 1 and isinstance(elements[-2].comma, cst.Comma):
        between = elements[-2].comma  # the separator the literal already uses (a new line)
    added = cst.Element(cst.SimpleString('"prompt"'), comma=last.comma)
    elements[-1] = last.with_changes(comma=between)
    return kept.with_changes(elements=[*elements, added])


class _CollectAsPrompt(cst.CSTTransformer):
    """TRL105's batched shape: the "query" key of `lists` (and of the `append` call) becomes
    "prompt"; with `also`, both stay: a `"prompt": []` entry and a second append."""

    def __init__(
        self,
        lists: cst.Dict,
        key: cst.BaseExpression,
        call: cst.Call,
        text: cst.CSTNode,
        also: bool,
    ) -> None:
        super().__init__()
        self.lists, self.key, self.call, self.text, self.also = lists, key, call, text, also
        self.prompt = cst.SimpleString('"prompt"')

    def leave_SimpleString(
        self, original_node: cst.SimpleString, updated_node: cst.SimpleString
    ) -> cst.SimpleString:
        if not self.also and original_node in (self.key, self.text):
            return self.prompt
        return updated_node

    def leave_Dict(self, original_node: cst.Dict, updated_node: cst.Dict) -> cst.Dict:
        if not self.also or original_node is not self.lists:
            return updated_node
        last = updated_node.elements[-1]
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return updated_node.with_changes(
            elements=[
                *updated_node.elements[:-1],
                last.with_changes(comma=comma) if last.comma is cst.MaybeSentinel.DEFAULT else last,
                cst.DictElement(self.prompt, cst.List([])),
            ]
        )

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.SimpleStatementLine]:
        if not self.also or not any(
            isinstance(x, cst.Expr) and x.value is self.call for x in original_node.body
        ):
            return updated_node
        twin = cst.parse_statement(
            edits.code(self.call).strip().replace(edits.code(self.text).strip(), '"prompt"', 1)
            + "\n"
        )
        return cst.FlattenSentinel([updated_node, twin])  # type: ignore[list-item]


def _find(
    root: cst.CSTNode, kind: type[cst.CSTNode], pattern: m.BaseMatcherNode
) -> list[cst.CSTNode]:
    """`m.findall(root, pattern)` for a pattern of node type `kind`: the `kind` nodes under
    root from the tree's listing (`walk.find_all`), each matched alone, where libcst's findall
    walks the subtree with a matcher visitor."""
    return [node for node in walk.find_all(root, kind) if m.matches(node, pattern)]

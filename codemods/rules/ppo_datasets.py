"""TRL105 ppo-datasets: the datasets a PPO trainer read hold tokenized `input_ids`; RLOO/GRPO read a
`"prompt"` column of text (or chat messages) and tokenize it themselves.

Runs after TRL104, on the datasets that rule passed to the new trainer. Two shapes of the
`.map(fn)` function are rewritten: the legacy one that stores the decoded text as `sample["query"]`
(the key becomes `"prompt"`), and the v2 one that returns `{"input_ids": tokenizer...(X)}` (it
returns `{"prompt": X}` instead). Otherwise the dataset's assignment gets a TODO naming the column.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, walk
from codemods.base import Rule, RuleTransformer
from migrate.kernel.findings import Severity

TOKENIZER_METHODS = ("apply_chat_template", "encode")


class RewritePPODatasets(RuleTransformer):
    # It works on the trainer call TRL104 already rewrote, so the target names count too.
    NAMES = (*ppo.TRAINER_NAMES, *(trainer for _, trainer in ppo.TARGETS.values()))

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.datasets = _datasets(self, node)
        self.mapped = _mapped_functions(node)
        self.strings = _string_literals(node)
        self.query_kept = _query_read_elsewhere(node, self.mapped)
        self.rewrote = False
        self.last_assign = _last_assignments(node, self.datasets)
        self.trainer = ppo.target_trainer(self.state.target)

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        if (
            not self.datasets
            or original_node.name.value not in self.mapped
            or not original_node.params.params
        ):
            return updated_node
        param = original_node.params.params[0].name.value
        legacy = self._legacy(original_node, updated_node, param)
        if legacy is not None:
            return legacy
        batched = self._batched(original_node) if updated_node.deep_equals(original_node) else None
        if batched is not None:
            return batched
        return self._v2(original_node, updated_node) or updated_node

    def _batched(self, fn: cst.FunctionDef) -> cst.FunctionDef | None:
        """The batched legacy shape (stack-llama): `out = {"query": [], "input_ids": []}` filled
        with `out["query"].append(text)`; the "query" list is the "prompt" column now (both,
        when other code reads "query")."""
        appends = m.findall(
            fn,
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
            for a in m.findall(fn, m.Assign(targets=[m.AssignTarget(m.Name(owner))]))
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
        also = self.query_kept  # other code reads "query": collect the text under both names
        self.report(
            call,
            f'the text collected as "query" is also collected as "prompt", the column '
            f'{self.trainer} reads ("query" stays: other code of this file reads it)'
            if also
            else f'the text collected as "query" is the "prompt" column now, the one '
            f"{self.trainer} reads",
        )
        return fn.visit(_CollectAsPrompt(literals[0], entry.key, call, text, also))  # type: ignore[return-value, arg-type]

    def _legacy(
        self, original: cst.FunctionDef, fn: cst.FunctionDef, param: str
    ) -> cst.FunctionDef | None:
        query = m.Subscript(
            value=m.Name(param),
            slice=[
                m.SubscriptElement(m.Index(m.SimpleString('"query"') | m.SimpleString("'query'")))
            ],
        )
        found = m.findall(fn, m.Assign(targets=[m.AssignTarget(query)]))
        if len(found) != 1:
            return None
        self.rewrote = True
        # The finding points at the assignment as the file has it: the updated function's
        # nodes are new ones wherever an earlier rule rebuilt something inside it.
        where = m.findall(original, m.Assign(targets=[m.AssignTarget(query)]))
        spot = where[0] if len(where) == 1 else found[0]
        if self.query_kept:
            # Code other than the PPO loop reads "query" (a collator, an evaluation): keep that
            # column and store the same text as "prompt" too.
            self.report(
                spot,
                f'the decoded text is also stored as "prompt", the column {self.trainer} reads '
                '("query" stays: other code of this file reads it)',
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
            f'the decoded text is stored as "prompt", the column {self.trainer} reads (it was '
            '"query")',
        )
        return m.replace(
            fn,
            query,
            lambda node, _: node.with_changes(
                slice=[cst.SubscriptElement(cst.Index(cst.SimpleString('"prompt"')))]
            ),
        )  # type: ignore[return-value]

    def _v2(self, original: cst.FunctionDef, fn: cst.FunctionDef) -> cst.FunctionDef | None:
        body = list(fn.body.body)  # type: ignore[attr-defined]
        last = body[-1] if body else None
        ret = (
            last.body[0]
            if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return)
            else None
        )
        if ret is None or not isinstance(ret.value, cst.Dict):
            return None
        keys = {
            edits.literal(e.key): e.value
            for e in ret.value.elements
            if isinstance(e, cst.DictElement)
        }
        if "input_ids" not in keys or "prompt" in keys:
            return None
        found = self._tokenized_text(keys["input_ids"], body[:-1])
        if found is None:
            return None
        text, cut, source = found
        self.rewrote = True
        if cut:
            self.todo(
                original,
                f"`{original.name.value}` cut each prompt to at most {cut} tokens; "
                f'{self.trainer} tokenizes the whole "prompt" text and TRL 1.13 has no setting '
                "that cuts prompts: shorten the text here (or filter long rows) to train on the "
                "same prompts",
            )
        inside = _string_literals(original)  # the function's own mentions are not reads
        if any(self.strings.get(k, 0) > inside.get(k, 0) for k in keys if isinstance(k, str)):
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
                for small in getattr(stmt, "body", []):
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
            # transformers truncates to `max_length` unless told not to (`truncation=None`
            # defaults to longest-first once a max_length is given)
            off = m.Name("False") | m.SimpleString('"do_not_truncate"')
            truncation = kwargs.get("truncation")
            if "max_length" in kwargs and (truncation is None or not m.matches(truncation, off)):
                cuts.insert(0, edits.code(kwargs["max_length"]).strip())
            return expr.args[0].value, " then ".join(cuts), source
        return None


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
    built."""

    NAMES = (*ppo.TRAINER_NAMES, *(trainer for _, trainer in ppo.TARGETS.values()))

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.datasets = _datasets(self, node)
        self.done = _writes_prompt(node)
        self.last = _last_assignments(node, self.datasets)
        self.trainer = ppo.target_trainer(self.state.target)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.done:
            return
        for name, assign in self.last.items():
            if assign is node:
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


def _writes_prompt(module: cst.Module) -> bool:
    """Whether the file makes a "prompt" column: a `{"prompt": ...}` literal, `x["prompt"] = ...`,
    or `rename_column`/`add_column`/`rename_columns` naming it. Reading `x["prompt"]` (or the word
    in a comment) makes none."""
    for d in walk.find_all(module, cst.Dict):
        if any(
            isinstance(e, cst.DictElement) and edits.literal(e.key) == "prompt" for e in d.elements
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
        if isinstance(func, cst.Attribute) and func.attr.value in (
            "rename_column",
            "add_column",
            "rename_columns",
        ):
            for arg in call.args:
                if edits.literal(arg.value) == "prompt":
                    return True
                if isinstance(arg.value, cst.Dict) and any(
                    isinstance(e, cst.DictElement) and edits.literal(e.value) == "prompt"
                    for e in arg.value.elements
                ):
                    return True
    return False


def _datasets(owner: RuleTransformer, module: cst.Module) -> set[str]:
    """Datasets TRL104 gave a new trainer, and those still passed to a PPO trainer (TRL104 not
    run)."""
    found = set(owner.state.shared.ppo_datasets)
    for call in walk.find_all(module, cst.Call):
        if ppo.ppo_class(owner.qualified_names(call.func), ppo.TRAINER_NAMES):
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in (
                    "dataset",
                    "train_dataset",
                    "eval_dataset",
                ):
                    found.add(get_full_name_for_node(arg.value) or "")
    found.discard("")
    return found


def _mapped_functions(module: cst.Module) -> set[str]:
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

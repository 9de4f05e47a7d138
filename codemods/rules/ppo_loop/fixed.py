"""TRL106: loops over `range(n)` that generate from one fixed prompt: the prompt becomes a dataset
and the generation call's settings move to the config."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import edits
from codemods.rules.ppo_loop.loop_pass import LoopPass
from codemods.rules.ppo_loop.shape import (
    first_row,
    loop_state,
    once_literal,
    prompt_arg,
    reward_function,
)
from codemods.rules.ppo_loop.state import Refused
from migrate.kernel.findings import Severity


class FixedPrompts(LoopPass):
    # -- `for _ in range(N)`: one fixed query, respond_to_batch or generate, a reward that ignores
    # the text --
    def _rewrite_fixed(
        self,
        body: list[cst.BaseStatement],
        index: int,
        loop: cst.For,
        trainer: str,
        count: cst.BaseExpression,
        *,
        top: bool,
    ) -> list[cst.BaseStatement]:
        statements = list(edits.statements(loop.body))
        step = next(c for s in statements if (c := self._trainer_call(s, "step")) is not None)
        if len(step.args) != 3 or any(a.keyword or a.star for a in step.args):
            raise Refused("`.step(...)` does not take (queries, responses, rewards)")
        queries, responses = (first_row(a.value) for a in step.args[:2])
        rewards = get_full_name_for_node(step.args[2].value)
        if queries is None or responses is None or rewards is None:
            raise Refused(
                "`.step(...)` does not take `[query[0]]`, `[response[0]]` and a rewards list"
            )
        trainer_at = self._trainer_and_config(body[:index], trainer)[0]
        text = self._prompt_text(body[:index], queries, trainer_at)
        gen: dict[str, cst.BaseExpression] | None = None
        banned = {queries, responses, trainer} | edits.names(loop.target)
        reward_body: list[cst.BaseStatement] = []
        shown = _shown(statements, responses)
        for s in statements:
            if (
                self._trainer_call(s, "step") is not None
                or self._trainer_call(s, "log_stats") is not None
            ):
                banned |= edits.bound(s)  # the step's stats
                continue
            if id(s) in shown:
                continue
            if isinstance(s, cst.Assign) and edits.bound(s) == {responses} and gen is None:
                gen = self._fixed_generation(s.value, queries, body[trainer_at])
                continue
            code = edits.code(s).strip()
            stmt = cst.parse_statement(code + "\n")
            if edits.names(stmt) & banned:
                raise Refused(
                    f"`{code}` reads the query, the response, the trainer or the loop counter; a "
                    "reward of the "
                    "response text belongs in a reward function over `completions`"
                )
            reward_body.append(stmt)
        if gen is None:
            raise Refused(
                f"`{responses}` is not made by `respond_to_batch(model, {queries})` or "
                f"`{trainer}.generate({queries}[0])`"
            )
        if not any(rewards in edits.bound(s) for s in statements):
            raise Refused(f"`{rewards}` is not computed inside the loop")
        if shown:
            self.report(
                loop,
                "the script printed the generated response ("
                + ", ".join(
                    f"`{' '.join(edits.code(x).split())}`" for x in statements if id(x) in shown
                )
                + "); dropped: TRL 1.13 generates inside `train()` (set `log_completions=True` "
                "in the config to log samples)",
                severity=Severity.WARNING,
            )
        count, text = once_literal(self.tree, count), once_literal(self.tree, text)
        for name in edits.names(count) | edits.names(text):
            if any(name in edits.bound_names(s) for s in body[trainer_at + 1 : index]):
                raise Refused(f"`{name}` is set after `{trainer}` is built")
        if "Dataset" in self.module_names and "datasets" not in self.module_names:
            raise Refused("`Dataset` in this file is not `datasets.Dataset`")
        AddImportsVisitor.add_needed_import(self.context, "datasets", "Dataset")
        name = next(
            n
            for n in ("train_dataset", *(f"train_dataset_{i}" for i in range(1, 100)))
            if n not in self.module_names
        )
        self.module_names.add(name)
        prompts = f"[{edits.code(text).strip()}] * {edits.code(count).strip()}"
        dataset = cst.parse_statement(f'{name} = Dataset.from_dict({{"prompt": {prompts}}})\n')
        loop_state(reward_body, loop.target, None)
        fn = reward_function(
            reward_body, f"[float({rewards}[0])] * len(completions)", self.reward_name
        )
        return self._install(
            body, index, loop, trainer, gen=gen, fn=fn, top=top, dataset=(name, dataset)
        )

    def _prompt_text(
        self, before: list[cst.BaseStatement], queries: str, trainer_at: int
    ) -> cst.BaseExpression:
        """The text of `q = tok.encode(<text>, return_tensors="pt")` (or `tok(<text>,
        ...).input_ids`),
        its only assignment in the block above the loop."""
        found = [
            a.value
            for s in before
            if (a := edits.assignment(s)) is not None and edits.bound(a) == {queries}
        ]
        if len(found) != 1 or any(
            queries in edits.bound_names(s) for s in before if edits.assignment(s) is None
        ):
            raise Refused(f"`{queries}` is not assigned once in the block above the loop")
        value = found[0]
        if m.matches(value, m.Call(func=m.Attribute(attr=m.Name("to")))):
            value = value.func.value  # type: ignore[attr-defined]  # `.to(device)`: the same ids
        if m.matches(value, m.Attribute(attr=m.Name("input_ids"), value=m.Call())):
            value = value.value  # type: ignore[attr-defined]
        elif not m.matches(value, m.Call(func=m.Attribute(attr=m.Name("encode")))):
            value = None  # type: ignore[assignment]
        text = prompt_arg(value) if isinstance(value, cst.Call) else None
        if text is None:
            raise Refused(
                f'`{queries}` is not `tokenizer.encode(<text>, return_tensors="pt")` of a string '
                "or a name"
            )
        return text

    def _fixed_generation(
        self, value: cst.BaseExpression, queries: str, trainer_stmt: cst.BaseStatement
    ) -> dict[str, cst.BaseExpression]:
        if not isinstance(value, cst.Call):
            raise Refused("the responses are not made by a call")
        if "trl.core.respond_to_batch" in self.qualified_names(value.func):
            return self._respond_to_batch(value, queries, trainer_stmt)
        if (
            isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "generate"
            and (get_full_name_for_node(value.func.value) or "") in self.trainers
            and value.args
            and _one_query(value.args[0].value) == queries
        ):
            call = value.with_changes(
                args=[value.args[0].with_changes(value=cst.Name(queries)), *value.args[1:]]
            )
            return self._generation(call, queries, at=value)
        raise Refused(
            f"the responses are not made by `respond_to_batch(model, {queries})` or "
            f"`<trainer>.generate({queries}[0])`"
        )

    def _respond_to_batch(
        self, call: cst.Call, queries: str, trainer_stmt: cst.BaseStatement
    ) -> dict[str, cst.BaseExpression]:
        """respond_to_batch(model, queries, txt_len=20, top_k=0, top_p=1.0) (W:0.11.4 trl/core.py)
        sampled
        exactly txt_len tokens; 1.13 samples up to max_completion_length and stops at EOS."""
        names = ("model", "queries", "txt_len", "top_k", "top_p")
        given: dict[str, cst.BaseExpression] = {}
        for i, arg in enumerate(call.args):
            key = (
                arg.keyword.value
                if arg.keyword is not None
                else (names[i] if i < len(names) and not arg.star else "")
            )
            if key not in names:
                raise Refused(
                    f"`respond_to_batch` has an argument that is not one of {', '.join(names)}"
                )
            given[key] = arg.value
        model = edits.kwarg(edits.assignment(trainer_stmt).value, "model")  # type: ignore[union-attr, arg-type]
        if (
            get_full_name_for_node(given.get("queries", cst.Name("_"))) != queries
            or model is None
            or edits.code(given.get("model", cst.Name("_"))).strip()
            != edits.code(model.value).strip()
        ):
            raise Refused(
                f"`respond_to_batch` does not sample from the trainer's model with `{queries}`"
            )
        out = {"max_completion_length": given.get("txt_len", cst.Integer("20"))}
        out.update({k: given[k] for k in ("top_k", "top_p") if k in given})
        self.report(
            call,
            "`respond_to_batch` sampled exactly txt_len tokens; TRL 1.13 samples up to "
            "max_completion_length and stops at the EOS token",
            severity=Severity.INFO,
        )
        func = call.func
        if isinstance(func, cst.Name):
            self.orphaned.add(func.value)
        return out


def _shown(statements: list[cst.BaseSmallStatement], responses: str) -> set[int]:
    """Statements (by id) that only show the generated response: assignments that read the
    responses and that nothing but prints reads (`response_txt = tokenizer.decode(r[0])`), and
    the prints of the responses or of those names. A print of anything else is the script's
    own output, not a display of the sample."""
    prints = {
        id(s): s
        for s in statements
        if isinstance(s, cst.Expr) and m.matches(s.value, m.Call(func=m.Name("print")))
    }
    decoded: dict[int, set[str]] = {}
    for s in statements:
        if isinstance(s, cst.Assign) and responses in edits.names(s.value):
            bound = edits.bound(s)
            readers = [t for t in statements if t is not s and edits.names(t) & bound]
            if readers and all(id(t) in prints for t in readers):
                decoded[id(s)] = bound
    sample = {responses}.union(*decoded.values())
    return set(decoded) | {i for i, s in prints.items() if edits.names(s) & sample}


def _one_query(arg: cst.BaseExpression) -> str | None:
    """`q` for the query a generate call takes: `q[0]` (one row), or `list(q)` or `[item for
    item in q]` (its rows, a one-row tensor's one row in a list: TRL 0.7-0.11's README
    quickstart)."""
    if m.matches(arg, m.Call(func=m.Name("list"))):
        return first_row(arg)
    if (
        isinstance(arg, cst.ListComp)
        and isinstance(arg.elt, cst.Name)
        and isinstance(arg.for_in.target, cst.Name)
        and arg.for_in.target.value == arg.elt.value
        and isinstance(arg.for_in.iter, cst.Name)
        and not arg.for_in.ifs
        and arg.for_in.inner_for_in is None
        and arg.for_in.asynchronous is None
    ):
        return arg.for_in.iter.value
    return first_row(cst.List([cst.Element(arg)]))

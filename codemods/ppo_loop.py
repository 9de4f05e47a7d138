"""TRL106 ppo-loop: the legacy `for batch in ppo_trainer.dataloader: generate / reward / step` loop
becomes a reward function, `reward_funcs=reward_fn` on the trainer, and `trainer.train()`.

All or nothing: every statement of the loop must be recognised (the query tensors, one
`.generate(...)` with `return_prompt=False`, the decode of the responses, the user's own reward
computation, `.step(q, r, rewards)`, `.log_stats(...)`), and the trainer and its config (a call,
or a command-line parse) must be built in the same block. Generation settings move to the config.
Reference responses (`generate_ref_response=True`) that only fed logging are dropped with a warning.
Otherwise the loop stays with one TODO holding a skeleton of the reward function and the trainer call.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import TypeVar

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import ppo, walk
from codemods.base import FileState, Rule, RuleTransformer, _with_todos
from codemods.edits import alias_asname, alias_name
from codemods.ppo_paths import PARSE_METHODS, PARSERS
from migrate.kernel.findings import Fix, Severity

# generate() keyword -> config field (W:0.11.4 ppo_trainer.generate passes them to model.generate;
# 1.13 GRPO/RLOO build GenerationConfig from these fields, grpo_trainer L1126-1141).
GEN_FIELDS = {
    "max_new_tokens": "max_completion_length",
    "temperature": "temperature",
    "top_k": "top_k",
    "top_p": "top_p",
    "min_p": "min_p",
    "repetition_penalty": "repetition_penalty",
}
GEN_DROPPED = {
    "do_sample": True,
    "min_length": -1,
    "pad_token_id": None,
    "eos_token_id": None,
}  # what 1.13 does itself
REWARD_FN = "reward_fn"


_Block = TypeVar("_Block", cst.Module, cst.IndentedBlock)


class _Fail(Exception):
    """The loop is not the recognised shape; the message says which part."""


class RewritePPOLoop(RuleTransformer):
    NAMES = ("step",)
    CODE = "TRL106"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        facts = ppo.FileFacts(self)
        node.visit(facts)
        self.trainers = set(facts.trainer_vars) | _target_trainer_vars(
            self, node
        )  # TRL104 may have run first
        self.dicts = _dict_literals(node)
        self.samplers = _length_samplers(node)
        self.trainer_cls = ppo.target_trainer(self.state.options.target)
        self.config_cls = ppo.target_config(self.state.options.target)
        self.module_names = _names(node)
        self.tree = node  # the file as it was, for uses outside a loop
        self.orphaned: set[str] = (
            set()
        )  # local names of `respond_to_batch` whose uses this rule rewrote

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        module = _with_body(
            updated_node, self._body(original_node.body, updated_node.body, top=True)
        )
        if self.orphaned:
            module = _drop_orphaned_imports(
                module, self.orphaned - _names(module, skip_imports=True), self.state
            )
        return module

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        return _with_body(
            updated_node, self._body(original_node.body, updated_node.body, top=False)
        )

    # -- one block: find the loops, rewrite each whole or leave it with a TODO -------------------------
    def _body(
        self, original: Sequence[cst.BaseStatement], body: Sequence[cst.BaseStatement], *, top: bool
    ) -> list[cst.BaseStatement]:
        out = list(body)
        for i, stmt in enumerate(original):
            if not isinstance(stmt, cst.For) or not self._is_ppo_loop(stmt):
                continue
            trainer = self._trainer_of(stmt)
            reported = len(self.state.findings)
            try:
                out = self._rewrite(out, i, stmt, trainer, top=top)
            except _Fail as e:
                del self.state.findings[
                    reported:
                ]  # all or nothing: no finding of a half-made rewrite
                skeleton = (
                    f"`def {REWARD_FN}(prompts, completions, **kwargs): return [<your score for p + c> for p, c in "
                    f"zip(prompts, completions)]`, then `{trainer} = {self.trainer_cls}(model=..., "
                    f"reward_funcs={REWARD_FN}, args=config, train_dataset=dataset, processing_class=tokenizer)` "
                    f"and `{trainer}.train()` in place of this loop"
                )
                message = (
                    f"TRL 1.13 has no PPO step loop and this one was left as it is ({e}); write {skeleton}; "
                    "generation settings go in the config (max_completion_length, temperature, top_k, top_p, "
                    "generation_kwargs)"
                )
                self.report(stmt, message, fix=Fix.MANUAL)
                out[i] = _with_todos(out[i], self.CODE, [message], set())
                out = self._needs_rewards(original, out, i, trainer)
            break  # one loop per block: the statement indexes below it have moved
        return out

    def _needs_rewards(
        self,
        original: Sequence[cst.BaseStatement],
        out: list[cst.BaseStatement],
        loop_at: int,
        trainer: str,
    ) -> list[cst.BaseStatement]:
        """The trainer built above a loop left as it is has no reward yet, and TRL 1.13 refuses to build
        it without one: that line gets a TODO too, so a run that stops there says why."""
        for k in range(loop_at - 1, -1, -1):
            assign = _assign(original[k])
            if assign is None or get_full_name_for_node(assign.targets[0].target) != trainer:
                continue
            if (
                not isinstance(assign.value, cst.Call)
                or ppo.kwarg(assign.value, "reward_funcs") is not None
            ):
                return out
            message = (
                f"{self.trainer_cls} needs `reward_funcs`: the rewards came from the PPO loop below, which is "
                f"left for you (see its TODO); pass `reward_funcs={REWARD_FN}` here once it is written"
            )
            self.report(original[k], message, fix=Fix.MANUAL)
            out[k] = _with_todos(out[k], self.CODE, [message], set())
            return out
        return out

    def _is_ppo_loop(self, loop: cst.For) -> bool:
        return any(self._trainer_call(s, "step") for s in _statements(loop.body))

    def _trainer_of(self, loop: cst.For) -> str:
        for s in _statements(loop.body):
            call = self._trainer_call(s, "step")
            if call is not None:
                return get_full_name_for_node(call.func.value) or "trainer"  # type: ignore[attr-defined]
        return "trainer"

    def _trainer_call(self, stmt: cst.BaseSmallStatement, method: str) -> cst.Call | None:
        value = stmt.value if isinstance(stmt, (cst.Expr, cst.Assign)) else None
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == method
        ):
            if (get_full_name_for_node(value.func.value) or "") in self.trainers:
                return value
        return None

    def _rewrite(
        self, body: list[cst.BaseStatement], index: int, loop: cst.For, trainer: str, *, top: bool
    ) -> list[cst.BaseStatement]:
        if loop.orelse is not None:
            raise _Fail("it has an else block")
        count = _range_count(loop.iter)
        if count is not None:
            return self._rewrite_fixed(body, index, loop, trainer, count, top=top)
        if trainer + ".dataloader" not in ppo.code(loop.iter):
            raise _Fail(f"it iterates over neither `{trainer}.dataloader` nor `range(<n>)`")
        batch = _loop_batch(loop.target)
        lines = _lines(loop.body)
        step = next(c for ln in lines if (c := self._trainer_call(ln.stmt, "step")) is not None)
        if len(step.args) != 3 or any(a.keyword or a.star for a in step.args):
            raise _Fail("`.step(...)` does not take (queries, responses, rewards)")
        queries, responses, rewards = (get_full_name_for_node(a.value) for a in step.args)
        gen_kwargs: dict[str, cst.BaseExpression] | None = None
        ref: str | None = None
        kept: list[_Line] = []
        to_train: list[
            cst.EmptyLine
        ] = []  # comments above dropped statements go above train(), which does their work
        completions = None
        for ln in lines:
            s = ln.stmt
            if (
                self._trainer_call(s, "step") is not None
                or self._trainer_call(s, "log_stats") is not None
            ):
                to_train += ln.comments
                continue
            if self._trainer_call(s, "generate") is not None:
                if gen_kwargs is not None:
                    raise _Fail("it calls `.generate(...)` more than once")
                gen_kwargs, ref = self._loop_generate(s, queries, responses)
                to_train += ln.comments
                continue
            if isinstance(s, cst.Assign) and len(s.targets) == 1:
                target = get_full_name_for_node(s.targets[0].target)
                if target == queries and m.matches(s.value, m.Subscript(value=m.Name(batch or ""))):
                    to_train += ln.comments
                    continue
                if (
                    m.matches(s.value, m.Call(func=m.Attribute(attr=m.Name("batch_decode"))))
                    and get_full_name_for_node(s.value.args[0].value) == responses
                ):  # type: ignore[attr-defined]
                    completions = _column(s.targets[0].target, batch)
                    if completions is None:
                        raise _Fail("the decoded responses are not stored in the batch")
                    to_train += ln.comments
                    continue
            kept.append(ln)
        if completions is None:
            raise _Fail("the responses are not decoded with `tokenizer.batch_decode`")
        if ref is not None:
            kept = self._drop_reference_chain(
                kept, ref, batch=batch, rewards=rewards, step=step, loop=loop, comments=to_train
            )
        new_body = self._reward_body(
            kept, batch, completions, {queries, responses, trainer}, rewards
        )
        fn = _reward_function(new_body, f"[float(r) for r in {rewards}]")
        return self._install(
            body,
            index,
            loop,
            trainer,
            gen=gen_kwargs or {},
            fn=fn,
            top=top,
            comments=[*to_train, *_footer(loop.body)],
        )

    def _loop_generate(
        self, s: cst.BaseSmallStatement, queries: str | None, responses: str | None
    ) -> tuple[dict[str, cst.BaseExpression], str | None]:
        """Generation settings of `r = trainer.generate(q, ...)`, and the name of the reference
        responses of `r, ref = trainer.generate(q, generate_ref_response=True, ...)` (or None)."""
        call = self._trainer_call(s, "generate")
        assert call is not None
        shown = " ".join(ppo.code(s).split())
        if not isinstance(s, cst.Assign) or len(s.targets) != 1:
            raise _Fail(f"`{shown}` does not assign the responses of `.generate(...)` to one name")
        target = s.targets[0].target
        ref = None
        if isinstance(target, (cst.Tuple, cst.List)):
            names = [
                e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements
            ]
            if len(names) != 2 or None in names:
                raise _Fail(
                    f"`{shown}` unpacks `.generate(...)` into {len(names)} targets; it returns the responses, or "
                    "(responses, reference responses) with generate_ref_response=True"
                )
            got, ref = names
        else:
            got = get_full_name_for_node(target)
        if got != responses:
            raise _Fail(
                f"`.generate(...)` gives `{got}`, not the responses `{responses}` that `.step(...)` takes"
            )
        return self._generation(call, queries, ref=ref is not None), ref

    def _drop_reference_chain(
        self,
        lines: list[_Line],
        ref: str,
        *,
        batch: str | None,
        rewards: str | None,
        step: cst.Call,
        loop: cst.For,
        comments: list[cst.EmptyLine],
    ) -> list[_Line]:
        """`lines` without the statements fed by the reference responses `ref`: assignments to names or
        batch columns that only logged them. Raises when one reaches the rewards or anything else."""
        tainted: set[str] = {ref}
        columns: set[str] = set()
        dropped = [ref]
        why = "from the reference responses (`generate_ref_response=True`), which TRL 1.13 does not generate"
        kept: list[_Line] = []
        for ln in lines:
            s = ln.stmt
            hit = _reads(s, tainted, columns, batch)
            if not hit:
                kept.append(ln)
                continue
            shown = " ".join(ppo.code(s).split())
            targets = [t.target for t in s.targets] if isinstance(s, cst.Assign) else []
            if not targets or not all(
                isinstance(t, cst.Name) or _column(t, batch) is not None for t in targets
            ):
                raise _Fail(
                    f"`{shown}` uses {_listed(hit)}, computed {why}, for more than logging it in the batch"
                )
            bound = {t.value for t in targets if isinstance(t, cst.Name)}
            if rewards in bound:
                raise _Fail(
                    f"the step's rewards `{rewards}` are computed {why}; the reference model enters "
                    "only through the KL term (`beta`)"
                )
            tainted |= bound
            columns |= {c for t in targets if (c := _column(t, batch)) is not None}
            dropped += [ppo.code(t).strip() for t in targets]
            comments += ln.comments
        for node in [
            *(ln.stmt for ln in kept),
            step,
        ]:  # read before the chain computes it: the last batch's value
            late = _names(node) & tainted
            if late:
                raise _Fail(
                    f"`{' '.join(ppo.code(node).split())}` reads {_listed(late)}, computed {why}, in the loop "
                    "before it is computed"
                )
        outside = tainted & _names_outside(self.tree, loop)
        if outside:
            raise _Fail(f"`{min(outside)}`, computed {why}, is used outside the loop")
        self.report(
            loop,
            "`generate_ref_response=True`: TRL 1.13 does not generate reference-model responses (the "
            "reference model enters only through the KL term, `beta`); dropped what only logged them: "
            + ", ".join(f"`{d}`" for d in dropped),
            severity=Severity.WARNING,
        )
        return kept

    def _install(
        self,
        body: list[cst.BaseStatement],
        index: int,
        loop: cst.For,
        trainer: str,
        *,
        gen: dict[str, cst.BaseExpression],
        fn: cst.FunctionDef,
        top: bool,
        dataset: tuple[str, cst.BaseStatement] | None = None,
        comments: Sequence[cst.EmptyLine] = (),
    ) -> list[cst.BaseStatement]:
        """The block with `fn` above the trainer (and `dataset` as its train_dataset), generation
        settings in the config, and `trainer.train()` (with the loop's other `comments`) in place of
        the loop at `index`."""
        trainer_at, config_at, config_name = self._trainer_and_config(body[:index], trainer)
        for name in sorted(set().union(*(_names(v) for v in gen.values()))):
            if any(name in _bound_names(s) for s in body[config_at:index]):
                raise _Fail(
                    f"`{name}` in the generation settings is set after `{config_name}` is built"
                )
        body = list(body)
        blank = [cst.EmptyLine(indent=False)] * (2 if top else 1)
        trainer_stmt = _with_kwarg(body[trainer_at], "reward_funcs", REWARD_FN)
        above = [line for line in trainer_stmt.leading_lines if line.comment is not None]
        new: list[cst.BaseStatement] = [fn.with_changes(leading_lines=blank)]
        if dataset is not None:
            trainer_stmt = _with_kwarg(
                trainer_stmt, "train_dataset", dataset[0], before="reward_funcs"
            )
            new.append(dataset[1].with_changes(leading_lines=[*blank, *above]))
            new.append(trainer_stmt.with_changes(leading_lines=[]))
        else:
            new.append(trainer_stmt.with_changes(leading_lines=[*blank, *above]))
        body[trainer_at : trainer_at + 1] = new
        at = index + len(new) - 1
        train = cst.SimpleStatementLine(
            body=[cst.Expr(cst.parse_expression(f"{trainer}.train()"))],
            leading_lines=[*body[at].leading_lines, *_comment_lines(comments)],
        )
        body[at] = train
        body[config_at : config_at + 1] = self._with_generation(body[config_at], gen)
        self.report(
            loop,
            f"the PPO loop became `{REWARD_FN}` (your reward code), `reward_funcs={REWARD_FN}` on the trainer "
            f"and `{trainer}.train()`; generation settings moved to `{config_name}`",
        )
        return body

    # -- `for _ in range(N)`: one fixed query, respond_to_batch or generate, a reward that ignores the text --
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
        statements = list(_statements(loop.body))
        step = next(
            self._trainer_call(s, "step") for s in statements if self._trainer_call(s, "step")
        )
        if len(step.args) != 3 or any(a.keyword or a.star for a in step.args):
            raise _Fail("`.step(...)` does not take (queries, responses, rewards)")
        queries, responses = (_first_row(a.value) for a in step.args[:2])
        rewards = get_full_name_for_node(step.args[2].value)
        if queries is None or responses is None or rewards is None:
            raise _Fail(
                "`.step(...)` does not take `[query[0]]`, `[response[0]]` and a rewards list"
            )
        trainer_at = self._trainer_and_config(body[:index], trainer)[0]
        text = self._prompt_text(body[:index], queries, trainer_at)
        gen: dict[str, cst.BaseExpression] | None = None
        banned = {queries, responses, trainer} | _names(loop.target)
        reward_body: list[cst.BaseStatement] = []
        for s in statements:
            if (
                self._trainer_call(s, "step") is not None
                or self._trainer_call(s, "log_stats") is not None
            ):
                banned |= _bound(s)  # the step's stats
                continue
            if isinstance(s, cst.Assign) and _bound(s) == {responses} and gen is None:
                gen = self._fixed_generation(s.value, queries, body[trainer_at])
                continue
            code = ppo.code(s).strip()
            stmt = cst.parse_statement(code + "\n")
            if _names(stmt) & banned:
                raise _Fail(
                    f"`{code}` reads the query, the response, the trainer or the loop counter; a reward of the "
                    "response text belongs in a reward function over `completions`"
                )
            reward_body.append(stmt)
        if gen is None:
            raise _Fail(
                f"`{responses}` is not made by `respond_to_batch(model, {queries})` or `{trainer}.generate({queries}[0])`"
            )
        if not any(rewards in _bound(s) for s in statements):
            raise _Fail(f"`{rewards}` is not computed inside the loop")
        for name in _names(count) | _names(text):
            if any(name in _bound_names(s) for s in body[trainer_at + 1 : index]):
                raise _Fail(f"`{name}` is set after `{trainer}` is built")
        if "Dataset" in self.module_names and "datasets" not in self.module_names:
            raise _Fail("`Dataset` in this file is not `datasets.Dataset`")
        AddImportsVisitor.add_needed_import(self.context, "datasets", "Dataset")
        name = next(
            n
            for n in ("train_dataset", *(f"train_dataset_{i}" for i in range(1, 100)))
            if n not in self.module_names
        )
        self.module_names.add(name)
        prompts = f"[{ppo.code(text).strip()}] * {ppo.code(count).strip()}"
        dataset = cst.parse_statement(f'{name} = Dataset.from_dict({{"prompt": {prompts}}})\n')
        fn = _reward_function(reward_body, f"[float({rewards}[0])] * len(completions)")
        return self._install(
            body, index, loop, trainer, gen=gen, fn=fn, top=top, dataset=(name, dataset)
        )

    def _prompt_text(
        self, before: list[cst.BaseStatement], queries: str, trainer_at: int
    ) -> cst.BaseExpression:
        """The text of `q = tok.encode(<text>, return_tensors="pt")` (or `tok(<text>, ...).input_ids`),
        its only assignment in the block above the loop."""
        found = [
            a.value for s in before if (a := _assign(s)) is not None and _bound(a) == {queries}
        ]
        if len(found) != 1 or any(queries in _bound_names(s) for s in before if _assign(s) is None):
            raise _Fail(f"`{queries}` is not assigned once in the block above the loop")
        value = found[0]
        if m.matches(value, m.Attribute(attr=m.Name("input_ids"), value=m.Call())):
            value = value.value  # type: ignore[attr-defined]
        elif not m.matches(value, m.Call(func=m.Attribute(attr=m.Name("encode")))):
            value = None  # type: ignore[assignment]
        text = _prompt_arg(value) if isinstance(value, cst.Call) else None
        if text is None:
            raise _Fail(
                f'`{queries}` is not `tokenizer.encode(<text>, return_tensors="pt")` of a string or a name'
            )
        return text

    def _fixed_generation(
        self, value: cst.BaseExpression, queries: str, trainer_stmt: cst.BaseStatement
    ) -> dict[str, cst.BaseExpression]:
        if not isinstance(value, cst.Call):
            raise _Fail("the responses are not made by a call")
        if "trl.core.respond_to_batch" in self.qualified_names(value.func):
            return self._respond_to_batch(value, queries, trainer_stmt)
        if (
            isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "generate"
            and (get_full_name_for_node(value.func.value) or "") in self.trainers
            and value.args
            and _first_row(cst.List([cst.Element(value.args[0].value)])) == queries
        ):
            call = value.with_changes(
                args=[value.args[0].with_changes(value=cst.Name(queries)), *value.args[1:]]
            )
            return self._generation(call, queries)
        raise _Fail(
            f"the responses are not made by `respond_to_batch(model, {queries})` or `<trainer>.generate({queries}[0])`"
        )

    def _respond_to_batch(
        self, call: cst.Call, queries: str, trainer_stmt: cst.BaseStatement
    ) -> dict[str, cst.BaseExpression]:
        """respond_to_batch(model, queries, txt_len=20, top_k=0, top_p=1.0) (W:0.11.4 trl/core.py) sampled
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
                raise _Fail(
                    f"`respond_to_batch` has an argument that is not one of {', '.join(names)}"
                )
            given[key] = arg.value
        model = ppo.kwarg(_assign(trainer_stmt).value, "model")  # type: ignore[union-attr, arg-type]
        if (
            get_full_name_for_node(given.get("queries", cst.Name("_"))) != queries
            or model is None
            or ppo.code(given.get("model", cst.Name("_"))).strip() != ppo.code(model.value).strip()
        ):
            raise _Fail(
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

    def _generation(
        self, call: cst.Call, queries: str | None, *, ref: bool = False
    ) -> dict[str, cst.BaseExpression]:
        """generate(...) keywords -> config fields; raises for what has no place. `ref`: the result
        is unpacked into (responses, reference responses)."""
        if not call.args or get_full_name_for_node(call.args[0].value) != queries:
            raise _Fail("`.generate(...)` does not take the batch's query tensors")
        out: dict[str, cst.BaseExpression] = {}
        extra: dict[str, str] = {}
        for arg in call.args[1:]:
            if arg.star == "**":
                literal = self.dicts.get(get_full_name_for_node(arg.value) or "")
                if literal is None:
                    raise _Fail(
                        f"`**{ppo.code(arg.value).strip()}` is not a dict literal in this file"
                    )
                pairs = literal
            elif arg.keyword is not None:
                pairs = {arg.keyword.value: arg.value}
            else:
                raise _Fail("`.generate(...)` has extra positional arguments")
            for key, value in pairs.items():
                shown = ppo.code(value).strip()
                if key == "return_prompt":
                    if ppo.literal(value) is not False:
                        raise _Fail(
                            "`.generate(...)` returns the prompt too (return_prompt is not False)"
                        )
                elif key == "length_sampler":
                    bounds = self.samplers.get(shown)
                    if bounds is None:
                        raise _Fail(
                            f"`length_sampler={shown}` is not a LengthSampler(min, max) with literal bounds"
                        )
                    out.setdefault(
                        "max_completion_length", cst.parse_expression(str(bounds[1] - 1))
                    )
                    self.report(
                        value,
                        f"`length_sampler={shown}` drew a random length per sample; TRL 1.13 generates up to "
                        f"max_completion_length={bounds[1] - 1} (its largest draw)",
                        severity=Severity.WARNING,
                    )
                elif key in GEN_FIELDS:
                    lit = ppo.literal(value)
                    if key == "top_k" and isinstance(lit, float) and lit.is_integer():
                        value = cst.parse_expression(
                            str(int(lit))
                        )  # GenerationConfig top_k is an int
                    out[GEN_FIELDS[key]] = value
                elif key in GEN_DROPPED:
                    continue
                elif key == "generate_ref_response":
                    if ppo.literal(value) is not ref:
                        raise _Fail(
                            f"`generate_ref_response={shown}` does not match the result's assignment to "
                            + ("(responses, reference responses)" if ref else "one name")
                        )
                elif key == "batch_size":
                    raise _Fail(f"`{key}` has no place in TRL 1.13 generation")
                else:
                    extra[key] = shown
        if extra:
            out["generation_kwargs"] = cst.parse_expression(
                "{" + ", ".join(f"{k!r}: {v}" for k, v in extra.items()) + "}"
            )
        return out

    def _reward_body(
        self,
        lines: list[_Line],
        batch: str | None,
        completions: str,
        forbidden: set[str | None],
        rewards: str | None,
    ) -> list[cst.BaseStatement]:
        """The user's reward statements, with batch["query"]/batch[<completions>] as the function's
        arguments; their comments and blank lines come along."""
        out: list[cst.BaseStatement] = []
        banned = {n for n in (*forbidden, batch) if n}
        for ln in lines:
            s = ln.stmt
            code = ppo.code(
                s.with_changes(leading_lines=[]) if isinstance(s, cst.BaseCompoundStatement) else s
            ).strip()
            replaced = code.replace(f'{batch}["query"]', "prompts").replace(
                f'{batch}["{completions}"]', "completions"
            )
            stmt = cst.parse_statement(replaced + "\n")
            hit = _names(stmt) & banned
            if hit:
                raise _Fail(
                    f"`{' '.join(code.split())}` reads {_listed(hit)}; a reward function sees only the prompts "
                    f'(`{batch}["query"]`) and the completions (`{batch}["{completions}"]`)'
                )
            leading = (
                ln.comments
                if out
                else list(itertools.dropwhile(lambda e: e.comment is None, ln.comments))
            )
            stmt = stmt.with_changes(leading_lines=leading)
            if ln.trailing is not None and isinstance(stmt, cst.SimpleStatementLine):
                stmt = stmt.with_changes(trailing_whitespace=ln.trailing)
            out.append(stmt)
        if not any(rewards in _bound(ln.stmt) for ln in lines):
            raise _Fail(f"`{rewards}` is not computed inside the loop")
        return out

    def _trainer_and_config(
        self, before: list[cst.BaseStatement], trainer: str
    ) -> tuple[int, int, str]:
        """Indexes of the trainer and of its config (a config call, or the parse of a command-line
        parser of the config class) in `before`, and the config's name."""
        trainer_at = config_at = None
        config_name = ""
        for i, stmt in enumerate(before):
            assign = _assign(stmt)
            if assign is None:
                continue
            target = get_full_name_for_node(assign.targets[0].target)
            if target == trainer and isinstance(assign.value, cst.Call):
                trainer_at = i
                arg = ppo.kwarg(assign.value, "args")
                config_name = get_full_name_for_node(arg.value) if arg else ""  # type: ignore[assignment]
        if trainer_at is None:
            raise _Fail(f"`{trainer}` is not built in the same block as the loop")
        parsers = set()
        for i, stmt in enumerate(before[:trainer_at]):
            assign = _assign(stmt)
            if assign is None or not isinstance(assign.value, cst.Call):
                continue
            func = get_full_name_for_node(assign.value.func) or ""
            target = assign.targets[0].target
            if (
                isinstance(target, cst.Name)
                and func.rpartition(".")[2] in PARSERS
                and assign.value.args
                and any(
                    (get_full_name_for_node(e) or "").endswith(self.config_cls)
                    for e in _elements(assign.value.args[0].value)
                )
            ):
                parsers.add(target.value)
            elif (
                get_full_name_for_node(target) == config_name and func.endswith(self.config_cls)
            ) or (
                config_name in {get_full_name_for_node(e) for e in _elements(target)}
                and func.rpartition(".")[0] in parsers
                and func.rpartition(".")[2] in PARSE_METHODS
            ):
                config_at = i
        if config_at is None:
            raise _Fail(
                f"the trainer's config `{config_name}` is neither a `{self.config_cls}(...)` call nor parsed by a "
                f"parser of `{self.config_cls}` in the same block"
            )
        return trainer_at, config_at, config_name

    def _with_generation(
        self, stmt: cst.BaseStatement, gen: dict[str, cst.BaseExpression]
    ) -> list[cst.BaseStatement]:
        """The config statement with the generation settings: new keywords of a config call, or
        `parser.set_defaults(...)` above a parse (a command-line flag still wins)."""
        assign = _assign(stmt)
        assert assign is not None and isinstance(assign.value, cst.Call)
        call = assign.value
        func = get_full_name_for_node(call.func) or ""
        parsed = func.rpartition(".")[2] in PARSE_METHODS
        have = set() if parsed else {a.keyword.value for a in call.args if a.keyword is not None}
        if "max_steps" not in have and "num_train_epochs" not in have:
            gen = {
                **gen,
                "num_train_epochs": cst.Integer("1"),
            }  # the loop made one pass over the dataloader
        new = [ppo.new_kwarg(k, v) for k, v in gen.items() if k not in have]
        if parsed:
            args = [
                a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                for a in new[:-1]
            ] + new[-1:]
            defaults = cst.SimpleStatementLine(
                body=[
                    cst.Expr(
                        cst.Call(
                            func=cst.parse_expression(func.rpartition(".")[0] + ".set_defaults"),
                            args=args,
                        )
                    )
                ],
                leading_lines=stmt.leading_lines,
            )
            return [defaults, stmt.with_changes(leading_lines=[])]
        if not new:
            return [stmt]
        args = [*call.args, *new]
        fresh = {id(a) for a in new} | ({id(call.args[-1])} if call.args else set())
        new_call = call.with_changes(args=ppo.relayout(call, args, fresh))
        return [stmt.with_deep_changes(assign, value=new_call)]  # type: ignore[arg-type]


def _statements(block: cst.BaseSuite) -> list[cst.BaseSmallStatement]:
    """The small statements of a loop body; a compound statement makes the loop unrecognisable."""
    out: list = []
    for stmt in getattr(block, "body", []):
        if isinstance(stmt, cst.SimpleStatementLine):
            out.extend(stmt.body)
        else:
            out.append(stmt)
    return out


@dataclasses.dataclass
class _Line:
    """One statement of a loop body with the comments and blank lines above its line (for the line's
    first statement) and the line's end comment (for its last)."""

    stmt: cst.BaseSmallStatement | cst.BaseCompoundStatement
    comments: list[cst.EmptyLine]
    trailing: cst.TrailingWhitespace | None = None


def _lines(block: cst.BaseSuite) -> list[_Line]:
    out: list[_Line] = []
    for stmt in getattr(block, "body", []):
        if isinstance(stmt, cst.SimpleStatementLine):
            small = list(stmt.body)
            out += [
                _Line(
                    s,
                    list(stmt.leading_lines) if i == 0 else [],
                    stmt.trailing_whitespace
                    if i == len(small) - 1 and stmt.trailing_whitespace.comment
                    else None,
                )
                for i, s in enumerate(small)
            ]
        else:
            out.append(_Line(stmt, list(stmt.leading_lines)))
    return out


def _footer(block: cst.BaseSuite) -> list[cst.EmptyLine]:
    """Comment lines at the end of an indented block, after its last statement."""
    return list(getattr(block, "footer", []))


def _comment_lines(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    return [line.with_changes(indent=True) for line in lines if line.comment is not None]


def _reads(stmt: cst.CSTNode, names: set[str], columns: set[str], batch: str | None) -> set[str]:
    """Which of `names` and of the batch's `columns` (as `batch["c"]`) a statement reads; the
    plain names an assignment binds are not reads."""
    parts: list[cst.CSTNode] = [stmt]
    if isinstance(stmt, cst.Assign):
        parts = [
            stmt.value,
            *(t.target for t in stmt.targets if not isinstance(t.target, cst.Name)),
        ]
    found: set[str] = set()
    for part in parts:
        found |= _names(part) & names
        for sub in walk.find_all(part, cst.Subscript):
            if not m.matches(sub.value, m.Name(batch or "")):
                continue
            column = _column(sub, batch)  # type: ignore[arg-type]
            if (
                column is not None
                and column in columns
                and sub not in (getattr(t, "target", None) for t in getattr(stmt, "targets", []))
            ):
                found.add(f'{batch}["{column}"]')
    return found


def _listed(names: set[str]) -> str:
    return ", ".join(f"`{n}`" for n in sorted(names))


def _names_outside(module: cst.Module, node: cst.CSTNode) -> set[str]:
    """Names used anywhere in `module` except inside `node`."""
    found: set[str] = set()

    class _V(walk.Visitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is node:
                return False
            if isinstance(n, cst.Name):
                found.add(n.value)
            return True

    module.visit(_V())
    return found


def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    return [e.value for e in expr.elements] if isinstance(expr, (cst.Tuple, cst.List)) else []


def _range_count(it: cst.BaseExpression) -> cst.BaseExpression | None:
    """N of `range(N)` when N is an int literal or a name."""
    if m.matches(
        it,
        m.Call(
            func=m.Name("range"), args=[m.Arg(keyword=None, star="", value=m.Integer() | m.Name())]
        ),
    ):
        return it.args[0].value  # type: ignore[attr-defined]
    return None


def _first_row(expr: cst.BaseExpression) -> str | None:
    """`q` for `[q[0]]` or `q` (a one-row tensor), else None."""
    if m.matches(
        expr,
        m.List(
            [
                m.Element(
                    m.Subscript(value=m.Name(), slice=[m.SubscriptElement(m.Index(m.Integer("0")))])
                )
            ]
        ),
    ):
        return expr.elements[0].value.value.value  # type: ignore[attr-defined]
    return expr.value if isinstance(expr, cst.Name) else None


def _prompt_arg(call: cst.Call) -> cst.BaseExpression | None:
    """`text` of `tok.encode(text, return_tensors="pt")` / `tok(text, return_tensors="pt")`: a string or a name."""
    if len(call.args) != 2 or call.args[0].keyword is not None or call.args[0].star:
        return None
    last = call.args[1]
    if (
        last.keyword is None
        or last.keyword.value != "return_tensors"
        or ppo.literal(last.value) != "pt"
    ):
        return None
    text = call.args[0].value
    return text if isinstance(text, (cst.SimpleString, cst.ConcatenatedString, cst.Name)) else None


def _bound_names(node: cst.CSTNode) -> set[str]:
    """Names a statement assigns anywhere inside it (=, +=, annotated, for, with, walrus)."""
    found: set[str] = set()

    class _V(walk.Visitor):
        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            found.update(_names(n.target))

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            found.update(_names(n.target))

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            found.update(_names(n.target))

        def visit_For(self, n: cst.For) -> None:
            found.update(_names(n.target))

        def visit_AsName(self, n: cst.AsName) -> None:
            found.update(_names(n.name))

        def visit_NamedExpr(self, n: cst.NamedExpr) -> None:
            found.update(_names(n.target))

    node.visit(_V())
    return found


def _loop_batch(target: cst.BaseAssignTargetExpression) -> str | None:
    if isinstance(target, cst.Name):
        return target.value
    if (
        isinstance(target, cst.Tuple)
        and len(target.elements) == 2
        and isinstance(target.elements[1].value, cst.Name)
    ):
        return target.elements[1].value.value
    return None


def _column(target: cst.BaseExpression, batch: str | None) -> str | None:
    if m.matches(
        target,
        m.Subscript(
            value=m.Name(batch or ""), slice=[m.SubscriptElement(m.Index(m.SimpleString()))]
        ),
    ):
        return ppo.literal(target.slice[0].slice.value)  # type: ignore[attr-defined]
    return None


def _assign(stmt: cst.BaseStatement) -> cst.Assign | None:
    if (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Assign)
    ):
        return stmt.body[0] if len(stmt.body[0].targets) == 1 else None
    return None


def _names(node: cst.CSTNode, *, skip_imports: bool = False) -> set[str]:
    found: set[str] = set()

    class _V(walk.Visitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Import(self, n: cst.Import) -> bool:
            return not skip_imports

        def visit_ImportFrom(self, n: cst.ImportFrom) -> bool:
            return not skip_imports

    node.visit(_V())
    return found


def _bound(stmt: cst.CSTNode) -> set[str]:
    if isinstance(stmt, cst.Assign):
        return {get_full_name_for_node(t.target) or "" for t in stmt.targets}
    return set()


def _reward_function(body: list[cst.BaseStatement], returned: str) -> cst.FunctionDef:
    ret = cst.parse_statement(f"return {returned}\n")
    return cst.FunctionDef(
        name=cst.Name(REWARD_FN),
        params=cst.parse_expression("lambda prompts, completions, **kwargs: 0").params,  # type: ignore[attr-defined]
        body=cst.IndentedBlock(body=[*body, ret]),
        returns=cst.Annotation(cst.parse_expression("list[float]")),
        leading_lines=[],
    )


def _with_kwarg(
    stmt: cst.BaseStatement, name: str, value: str, *, before: str = ""
) -> cst.BaseStatement:
    """`x = f(...)` with `name=value` added (ahead of the `before` keyword when there is one)."""
    assign = _assign(stmt)
    assert assign is not None and isinstance(assign.value, cst.Call)
    call = assign.value
    if ppo.kwarg(call, name) is not None:
        return stmt
    arg = ppo.new_kwarg(name, value)
    at = next(
        (
            i
            for i, a in enumerate(call.args)
            if before and a.keyword is not None and a.keyword.value == before
        ),
        len(call.args),
    )
    args = [*call.args[:at], arg, *call.args[at:]]
    new_call = call.with_changes(
        args=ppo.relayout(call, args, {id(arg), id(call.args[-1])} if call.args else {id(arg)})
    )
    return stmt.with_deep_changes(assign, value=new_call)  # type: ignore[arg-type]


RESPOND = "trl.core.respond_to_batch"


def _drop_orphaned_imports(module: cst.Module, names: set[str], state: FileState) -> cst.Module:
    """Remove `from trl.core import respond_to_batch [as n]` for the `names` nothing uses any more,
    with TRL101's TODO above it; TRL101's finding for it becomes an applied one."""
    if not names:
        return module
    todo = f"`{RESPOND}`"

    def imports_it(alias: cst.ImportAlias, source: str) -> bool:
        return (
            f"{source}.{alias_name(alias)}" == RESPOND
            and (alias_asname(alias) or alias_name(alias)) in names
        )

    def fix(body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for stmt in body:
            node = (
                stmt.body[0]
                if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                else None
            )
            if (
                not isinstance(node, cst.ImportFrom)
                or node.relative
                or node.module is None
                or isinstance(node.names, cst.ImportStar)
                or not any(
                    imports_it(a, get_full_name_for_node(node.module) or "") for a in node.names
                )
            ):
                out.append(
                    stmt.with_changes(leading_lines=[*carried, *stmt.leading_lines])
                    if carried
                    else stmt
                )
                carried = []
                continue
            source = get_full_name_for_node(node.module) or ""
            kept = [a for a in node.names if not imports_it(a, source)]
            lines = [
                ln
                for ln in stmt.leading_lines
                if not (ln.comment and todo in ln.comment.value and "TRL101" in ln.comment.value)
            ]
            if kept:
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                out.append(
                    stmt.with_changes(
                        body=[node.with_changes(names=kept)], leading_lines=[*carried, *lines]
                    )
                )
                carried = []
            else:
                carried = [*carried, *lines]
        return out

    class _Fix(cst.CSTTransformer):
        def leave_IndentedBlock(
            self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
        ) -> cst.IndentedBlock:
            return updated_node.with_changes(
                body=fix(updated_node.body) or [cst.SimpleStatementLine([cst.Pass()])]
            )

    new = module.visit(_Fix())
    new = new.with_changes(body=fix(new.body))  # type: ignore[union-attr]
    if new.code != module.code:  # type: ignore[union-attr]
        for i, f in enumerate(state.findings):
            if f.code == "TRL101" and f.fix is Fix.MANUAL and f.message.startswith(todo):
                state.findings[i] = dataclasses.replace(
                    f,
                    severity=Severity.INFO,
                    fix=Fix.APPLIED,
                    message=(
                        f"{todo} is gone in TRL 1.13; TRL106 rewrote its uses, so the import is unused and was removed"
                    ),
                )
    return new  # type: ignore[return-value]


def _with_body(node: _Block, body: list[cst.BaseStatement]) -> _Block:
    """`node` itself when `body` is its own statements (so the pass counts as no change)."""
    if len(body) == len(node.body) and all(a is b for a, b in zip(body, node.body)):
        return node
    return node.with_changes(body=body)


def _target_trainer_vars(owner: RuleTransformer, module: cst.Module) -> set[str]:
    """Names bound to an RLOO/GRPO trainer: one with a `.step(` loop was a PPO trainer (TRL104 ran)."""
    found: set[str] = set()
    names = tuple(ppo.TARGETS[t][1] for t in ppo.TARGETS)

    class _V(walk.Visitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if isinstance(node.value, cst.Call) and ppo.ppo_class(
                owner.qualified_names(node.value.func), names
            ):
                found.update(get_full_name_for_node(t.target) or "" for t in node.targets)

    module.visit(_V())
    return found


def _dict_literals(module: cst.Module) -> dict[str, dict[str, cst.BaseExpression]]:
    """Module-level `name = {"k": v, ...}` with string keys: generation kwargs the loop expands."""
    out: dict[str, dict[str, cst.BaseExpression]] = {}
    for stmt in module.body:
        assign = _assign(stmt)
        if assign is not None and isinstance(assign.value, cst.Dict):
            keys = [
                ppo.literal(e.key) if isinstance(e, cst.DictElement) else None
                for e in assign.value.elements
            ]
            if all(isinstance(k, str) for k in keys):
                out[get_full_name_for_node(assign.targets[0].target) or ""] = {
                    k: e.value for k, e in zip(keys, assign.value.elements)
                }  # type: ignore[misc]
    return out


def _length_samplers(module: cst.Module) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for stmt in module.body:
        assign = _assign(stmt)
        if assign is not None and m.matches(assign.value, m.Call(func=m.Name("LengthSampler"))):
            bounds = [ppo.literal(a.value) for a in assign.value.args]  # type: ignore[attr-defined]
            if len(bounds) == 2 and all(isinstance(b, int) for b in bounds):
                out[get_full_name_for_node(assign.targets[0].target) or ""] = (bounds[0], bounds[1])
    return out


class PPOLoopRule(Rule):
    code = "TRL106"
    name = "ppo-loop"
    summary = (
        "Turn the legacy generate/reward/step loop into a reward function and trainer.train()."
    )
    before = (
        "from trl import RLOOConfig, RLOOTrainer\n"
        "config = RLOOConfig(beta=0.2)\n"
        "trainer = RLOOTrainer(args=config, model=model, processing_class=tok, train_dataset=ds)\n"
        "for batch in trainer.dataloader:\n"
        '    query_tensors = batch["input_ids"]\n'
        "    response_tensors = trainer.generate(query_tensors, return_prompt=False, max_new_tokens=16)\n"
        '    batch["response"] = tok.batch_decode(response_tensors)\n'
        '    rewards = [score(q + r) for q, r in zip(batch["query"], batch["response"])]\n'
        "    trainer.step(query_tensors, response_tensors, rewards)\n"
    )
    after = (
        "from trl import RLOOConfig, RLOOTrainer\n"
        "config = RLOOConfig(beta=0.2, max_completion_length=16, num_train_epochs=1)\n"
        "\n"
        "\n"
        "def reward_fn(prompts, completions, **kwargs) -> list[float]:\n"
        "    rewards = [score(q + r) for q, r in zip(prompts, completions)]\n"
        "    return [float(r) for r in rewards]\n"
        "\n"
        "\n"
        "trainer = RLOOTrainer(args=config, model=model, processing_class=tok, train_dataset=ds, reward_funcs=reward_fn)\n"
        "trainer.train()\n"
    )
    transformers = (RewritePPOLoop,)
    triggers = (".step(",)

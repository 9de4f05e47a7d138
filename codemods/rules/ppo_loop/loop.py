"""TRL106: one `for batch in trainer.dataloader:` loop becomes a reward function and `train()`:
the loop's statements are recognised one by one, reference generations dropped, the result
installed."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, walk
from codemods.rules.ppo_loop.loop_pass import LoopPass
from codemods.rules.ppo_loop.shape import (
    Line,
    batch_column,
    batch_limit,
    block_footer,
    block_lines,
    comment_lines,
    early_exit,
    free_name,
    listed,
    loaded,
    logging_call,
    loop_batch,
    loop_state,
    names_outside,
    names_read,
    once_literal,
    range_count,
    reward_function,
    second_loop,
    taken,
    unguarded,
)
from codemods.rules.ppo_loop.state import BATCHES, Refused
from migrate.kernel.findings import Severity


class LoopRewrite(LoopPass):
    def _rewrite(
        self, body: list[cst.BaseStatement], index: int, loop: cst.For, trainer: str, *, top: bool
    ) -> list[cst.BaseStatement]:
        functions = self.functions | {self.reward_name}
        if taken(body[:index], trainer, functions):  # another loop of the block became its reward
            raise Refused(second_loop(body[:index], trainer, functions))
        outer: cst.For | None = None
        if self._epochs_of(loop) is not None:  # `for epoch in range(E):` around the loop
            outer, loop = loop, self._inner_of(loop)
        if loop.orelse is not None:
            raise Refused("it has an else block")
        # a `try:` around the step whose `except` only logs: its statements are the loop's
        flat, guards = unguarded(loop.body, self._steps)
        flat_loop = loop.with_changes(body=flat)
        limit = batch_limit(flat_loop)
        exit_kind = early_exit(
            flat
            if limit is None
            else flat.with_changes(body=[s for s in flat.body if s is not limit[0]])  # type: ignore[attr-defined]
        )
        if exit_kind is not None:
            raise Refused(
                f"it stops early (`{exit_kind}`), so how long it trains is the loop's own "
                "logic: give RLOO/GRPO's config `max_steps` (or a callback) that stops there"
            )
        count = range_count(loop.iter)
        if count is not None:
            if guards:
                raise Refused("its `step(...)` sits in a `try:` of a loop over fixed prompts")
            return self._rewrite_fixed(body, index, loop, trainer, count, top=top)
        if trainer + ".dataloader" not in edits.code(loop.iter):
            counted = range_count(loop.iter, attributes=True)
            if counted is not None:  # `range(config.ppo_steps)`: said as it is
                raise Refused(
                    f"it iterates over `range({edits.code(counted)})`, whose count is neither a "
                    "number nor a name"
                )
            raise Refused(f"it iterates over neither `{trainer}.dataloader` nor `range(<n>)`")
        batch = loop_batch(loop.target)
        lines = [
            inner if self._trainer_call((inner := _without_no_grad(ln)).stmt, "generate") else ln
            for ln in block_lines(flat)
        ]
        step = next(c for ln in lines if (c := self._trainer_call(ln.stmt, "step")) is not None)
        queries, responses, rewards, scores = _step_args(step)
        if scores is not None:  # `step(q, r, [torch.tensor(x) for x in rewards])`
            rewards = free_name("scores", self.module_names)
            at = next(k for k, ln in enumerate(lines) if self._trainer_call(ln.stmt, "step"))
            lines.insert(at, Line(cst.Assign([cst.AssignTarget(cst.Name(rewards))], scores), []))
        gen_kwargs: dict[str, cst.BaseExpression] | None = None
        # per-query generations (inner loops over the queries), read once; the list the first
        # appends each decoded response to
        per_query = {
            id(ln.stmt): per
            for ln in lines
            if isinstance(ln.stmt, cst.For)
            and (per := self._per_query(ln.stmt, queries, responses))
        }
        texts = next((per.texts for per in per_query.values()), None)
        ref: str | None = None
        kept: list[Line] = []
        to_train: list[
            cst.EmptyLine
        ] = []  # comments above dropped statements go above train(), which does their work
        completions = None
        decode: cst.BaseExpression | None = None  # how the loop decoded the responses
        query_decode: cst.Call | None = None  # how it decoded the queries into batch["query"]
        decoded: str | None = None  # the local name the decoded texts were bound to, if any
        saves: list[Line] = []  # saves after every batch: once, after train()
        logged: list[cst.CSTNode] = []  # prints of the loop's counters: dropped
        toggles: list[cst.CSTNode] = []  # gradient checkpointing / KV cache switched: dropped
        counters = edits.names(loop.target) - {batch or ""}
        if outer is not None:
            counters |= edits.names(outer.target)
        in_loop = edits.bound_names(flat)
        stats = edits.bound(_statement_of(lines, step))  # what `stats = trainer.step(...)` binds
        for ln in lines:
            s = ln.stmt
            if _prints_of(s, counters | stats | {n for n in (batch, queries, responses) if n}):
                logged.append(s)
                to_train += ln.comments
                continue
            if self._saves_each_batch(s, in_loop | counters):
                saves.append(ln)
                continue
            if limit is not None and s is limit[0]:  # stops after N batches: max_steps
                to_train += ln.comments + _guard_comments(limit[0])
                continue
            if self._saves_every(s, trainer, flat_loop):
                to_train += ln.comments
                continue
            if _logs_only(s, stats=edits.bound(_statement_of(lines, step)), loop=flat_loop):
                shown = " ".join(edits.code(s.test).split())  # type: ignore[union-attr]
                self.report(
                    s,
                    f"the loop logged when `{shown}`; that block was dropped: TRL 1.13 logs "
                    "the reward, KL and loss itself every `logging_steps` optimizer steps (set "
                    "`report_to` for wandb or tensorboard)",
                    severity=Severity.WARNING,
                )
                to_train += ln.comments
                continue
            if (
                self._trainer_call(s, "step") is not None
                or self._trainer_call(s, "log_stats") is not None
            ):
                to_train += ln.comments
                continue
            if self._trainer_call(s, "generate") is not None:
                if gen_kwargs is not None:
                    raise Refused("it calls `.generate(...)` more than once")
                gen_kwargs, ref = self._loop_generate(s, queries, responses)
                to_train += ln.comments
                continue
            if (per := per_query.get(id(s))) is not None:
                if gen_kwargs is not None:
                    raise Refused("it calls `.generate(...)` more than once")
                gen_kwargs = self._generation(per.call, queries, at=per.origin)
                self.prompt_returned = False  # the loop cut each response from its prompt
                if per.prompt_tail and per.origin is not None:
                    self.report(
                        per.origin,
                        "the loop kept the last `max_new_tokens` tokens of what `generate` "
                        "returned (the prompt, then the response): a response the policy ended "
                        "early, at its end-of-sequence token, came with the prompt's last tokens, "
                        "which the loop scored and trained on as response; TRL 1.13 scores and "
                        "trains on the completion alone",
                        severity=Severity.INFO,
                    )
                if per.decode is not None:  # and decoded each one into a list of texts
                    if decode is not None:
                        raise Refused("it decodes the responses more than once")
                    decode, decoded = per.decode, per.texts
                to_train += ln.comments
                continue
            if _empty_list(s, responses) or _empty_list(s, texts):
                # `response_tensors = []` (and `texts = []`), filled by the loop below
                to_train += ln.comments
                continue
            if isinstance(s, cst.Assign) and len(s.targets) == 1:
                target = get_full_name_for_node(s.targets[0].target)
                if target == queries and (
                    m.matches(s.value, m.Subscript(value=m.Name(batch or "")))
                    or _same_tokens(s.value, queries)
                ):
                    to_train += ln.comments
                    continue
                if (
                    queries is not None
                    and batch_column(s.targets[0].target, batch) == "query"
                    and _batch_decode_of(s.value, queries)
                    and query_decode is None
                ):  # `batch["query"] = tokenizer.batch_decode(query_tensors, ...)`
                    query_decode = s.value  # type: ignore[assignment]
                    to_train += ln.comments
                    continue
                if _batch_decode_of(s.value, responses) or _decoded_one_by_one(s.value, responses):
                    if decode is not None:
                        raise Refused("it decodes the responses more than once")
                    completions = batch_column(s.targets[0].target, batch)
                    decode = s.value
                    if completions is None:
                        if not isinstance(s.targets[0].target, cst.Name):
                            raise Refused("the decoded responses are not stored in the batch")
                        decoded = s.targets[0].target.value
                    to_train += ln.comments
                    continue
                column = batch_column(s.targets[0].target, batch)
                if (
                    decoded is not None
                    and completions is None
                    and column is not None
                    and m.matches(s.value, m.Name(decoded))
                ):  # `batch["response"] = texts`: the column is the decoded texts
                    completions = column
                    to_train += ln.comments
                    continue
            if _mode_switch(s):
                toggles.append(s)
                to_train += ln.comments
                continue
            kept.append(ln)
        if decode is None:
            raise Refused("the responses are not decoded with `tokenizer.batch_decode`")
        if decoded is not None and decoded in (
            names_outside(self.tree, loop) | in_loop_rebound(kept, decoded)
        ):
            raise Refused(f"the decoded responses `{decoded}` are used outside the loop or rebound")
        if ref is not None:
            kept = self._drop_reference_chain(
                kept, ref, batch=batch, rewards=rewards, step=step, loop=loop, comments=to_train
            )
        _responses_kept_as_generated(kept, responses)
        loop_state([ln.stmt for ln in kept], loop.target, batch, outer=outer)
        new_body = self._reward_body(
            kept,
            batch,
            completions or "",
            {queries, responses, trainer},
            rewards,
            column_as=decoded or "completions",
            trainer=trainer,
        )
        with_prompt = self.prompt_returned and not self._encoder_decoder()
        again = _decoded_as_the_loop_did(decode, decoded or "completions", with_prompt=with_prompt)
        reads = {n for st in new_body for n in edits.names(st)}
        if reads & stats:  # `print(stats["ppo/..."])` is dropped above; anything else refuses
            shown = next(
                " ".join(edits.code(st).split()) for st in new_body if edits.names(st) & stats
            )
            raise Refused(
                f"`{shown}` reads what `.step(...)` returned (`{'`, `'.join(sorted(stats))}`), "
                "which no reward function has"
            )
        if with_prompt and (decoded or "completions") in reads:
            self.report(
                step,
                "`.generate(...)` returned each prompt with its response (`return_prompt` "
                "defaults to True), so the texts the loop decoded began with the prompt, and "
                "`step` trained on the prompt's tokens as if the policy had generated them; "
                "`reward_fn` decodes the prompt and completion tokens together as the loop did, "
                "and TRL 1.13 trains on the completion alone (pass `return_prompt=False` in the "
                "old script to have had that)",
                severity=Severity.WARNING,
            )
        elif again is not None and (decoded or "completions") in reads and decoded is None:
            self.report(
                decode,
                "the loop decoded the responses keeping special tokens "
                f"(`{edits.code(decode).strip()}`), and its reward read that text; TRL 1.13 "
                "hands reward functions completions decoded without them, so `reward_fn` "
                "decodes the completion tokens as the loop did",
                severity=Severity.INFO,
            )
        if decoded is not None:
            new_body = [again or cst.parse_statement(f"{decoded} = completions\n"), *new_body]
        elif again is not None and "completions" in reads:
            new_body = [again, *new_body]
        if query_decode is not None and "prompts" in reads:
            new_body = [_prompts_decoded_as(query_decode), *new_body]
            self.report(
                query_decode,
                'the loop decoded its query tokens into `batch["query"]` '
                f"(`{' '.join(edits.code(query_decode).split())}`) and its reward read that "
                "text; `reward_fn` decodes the prompt tokens TRL 1.13 generated from (the "
                '"prompt" text as RLOO/GRPO tokenize it) the same way',
                severity=Severity.INFO,
            )
        if toggles:
            self.report(
                loop,
                "the loop switched the model's gradient checkpointing or KV cache around "
                "generation and the step ("
                + ", ".join(f"`{' '.join(edits.code(x).split())}`" for x in toggles)
                + "); dropped: TRL 1.13 switches the model between generation and training "
                "itself, and trains with checkpointing when the config's `gradient_checkpointing` "
                "is True (set it so to have the memory use of the loop's step; the results are "
                "the same either way)",
                severity=Severity.WARNING,
            )
        each_epoch: set[int] = set()  # saves of the epoch loop, not of every batch
        callback: tuple[cst.ClassDef | None, str] = (None, "")
        extras = EpochExtras()
        if outer is not None:
            extras = self._epoch_extras(outer, loop, counters, in_loop, trainer)
            saves += extras.saves
            each_epoch = {id(ln.stmt) for ln in extras.saves}
            to_train += extras.comments
            logged += extras.logged
            callback = self._epoch_callback(extras, trainer)
        if logged:
            self.report(
                loop,
                "the loop printed its counters, tensors or step stats each "
                + ("batch or epoch (" if outer is not None else "batch (")
                + ", ".join(f"`{' '.join(edits.code(x).split())}`" for x in logged)
                + "); dropped: TRL 1.13 logs its own progress (`logging_steps`)",
                severity=Severity.WARNING,
            )
        for ln in saves:
            self.report(
                ln.stmt,
                f"`{' '.join(edits.code(ln.stmt).split())}` ran after every "
                f"{'epoch' if id(ln.stmt) in each_epoch else 'batch'}; it now runs "
                f"once, after `{trainer}.train()`, which leaves the same files at the end (TRL "
                "1.13 also writes checkpoints to `output_dir` every `save_steps`)",
                severity=Severity.WARNING,
            )
        pooled = _batch_statistic(new_body)
        if pooled is not None:
            self.report(
                loop,
                f"the reward pools the batch (`{pooled}`): the loop pooled its batch of prompts, "
                "one completion each; TRL 1.13 calls `reward_fn` on a generation batch that holds "
                "`num_generations` completions of each prompt, so the statistic is taken over "
                "other samples",
                severity=Severity.WARNING,
            )
        fn = reward_function(new_body, f"[float(r) for r in {rewards}]", self.reward_name)
        gen = dict(gen_kwargs or {})
        if limit is not None:
            gen[BATCHES] = limit[1]
            shown = edits.code(limit[1]).strip()
            self.report(
                limit[0],
                f"the loop stopped after {shown} batches: `max_steps` stops TRL 1.13 after as many "
                "generations (optimizer steps per generation times the batches); where the "
                "dataset has fewer batches, the loop ended with it and TRL 1.13 starts a second "
                "pass over it instead",
                severity=Severity.WARNING,
            )
        if outer is not None:
            gen["num_train_epochs"] = self._epochs_of(outer)  # type: ignore[assignment]
            if limit is not None:
                raise Refused("it stops after a number of batches inside an epoch loop")
        for guard in guards:
            caught = ", ".join(
                f"`{' '.join(edits.code(h.type).split())}`" if h.type is not None else "everything"
                for h in guard.handlers
            )
            self.report(
                guard,
                f"a `try:` around `{trainer}.step(...)` caught {caught} and only logged it, "
                "skipping that batch; the guard was dropped with the step: TRL 1.13's `train()` "
                f"has no such guard, so an error in `{self.reward_name}` or in training now "
                "stops the run",
                severity=Severity.WARNING,
            )
        installed = self._install(
            body,
            index,
            loop,
            trainer,
            gen=gen,
            fn=fn,
            top=top,
            comments=[*to_train, *block_footer(flat)],
            after=[_line(ln) for ln in saves],
            callback=callback,
        )
        if callback[0] is not None:  # only once the rewrite stands: no import for a refusal
            self._announce_callback(extras, callback[1], trainer)
        return installed

    def draft(self, loop: cst.For, trainer: str) -> list[str]:
        """For a loop left for a human: its own reward statements as the body of a
        `reward_fn`, the batch's query and response columns as `prompts` and `completions`, as
        far as that goes without the part that blocked the rewrite (empty when the loop has no
        recognisable decode or step). Lines of code, for comment lines under the TODO."""
        if self._epochs_of(loop) is not None:
            loop = self._inner_of(loop)
        batch = loop_batch(loop.target)
        lines = block_lines(unguarded(loop.body, self._steps)[0])
        calls = [c for ln in lines if (c := self._trainer_call(ln.stmt, "step")) is not None]
        if not calls or batch is None:
            return []
        try:
            queries, responses, rewards, scores = _step_args(calls[0])
        except Refused:
            return []
        column = None
        body: list[str] = []
        for ln in lines:
            st = ln.stmt
            if any(self._trainer_call(st, k) for k in ("step", "log_stats", "generate")):
                continue
            if isinstance(st, cst.Assign) and len(st.targets) == 1:
                value, target = st.value, st.targets[0].target
                if get_full_name_for_node(target) == queries or _empty_list(st, responses):
                    continue
                if (
                    m.matches(value, m.Call(func=m.Attribute(attr=m.Name("batch_decode"))))
                    and get_full_name_for_node(value.args[0].value) == responses  # type: ignore[attr-defined]
                ) or _decoded_one_by_one(value, responses):
                    column = batch_column(target, batch)
                    if column is None:
                        body.append(f"{edits.code(target).strip()} = completions")
                    continue
            if isinstance(st, cst.For) and queries in edits.names(st.iter):
                continue  # the per-query generation
            code = edits.code(
                st.with_changes(leading_lines=[])
                if isinstance(st, cst.BaseCompoundStatement)
                else st
            ).strip()
            for quote in ('"', "'"):
                code = code.replace(f"{batch}[{quote}query{quote}]", "prompts")
                if column:
                    code = code.replace(f"{batch}[{quote}{column}{quote}]", "completions")
            body += code.splitlines()
        if scores is not None:
            body.append(f"scores = {' '.join(edits.code(scores).split())}")
            rewards = "scores"
        if not body or rewards is None:
            return []
        return [
            f"def {self.reward_name}(prompts, completions, **kwargs) -> list[float]:",
            *(f"    {line}" for line in body),
            f"    return [float(r) for r in {rewards}]",
        ]

    def _config_read(
        self, value: cst.BaseExpression, config: cst.BaseStatement, config_name: str, trainer: str
    ) -> cst.BaseExpression:
        """`range(config.ppo_epochs)` or `range(trainer.config.ppo_epochs)` (which TRL104 made
        `trainer.args.ppo_epochs`) around the loop reads a PPO setting that TRL103 renamed
        (`num_iterations`): the expression the rewritten config call gives it (a config built in
        this block cannot read itself), or the renamed attribute of the copy made of an imported
        config. Anything else is returned as it is (and refused where it is read
        after the config is built)."""
        name = get_full_name_for_node(value) or ""
        head, _, field = name.rpartition(".")
        if not field or head not in (config_name, f"{trainer}.config", f"{trainer}.args"):
            return value
        table = ppo.mapping()
        entry = table["legacy_config"].get(field) or table["v2_config"].get(field) or {}
        new = entry.get("to", field) if entry.get("kind", "rename") == "rename" else ""
        if not new:
            return value
        if self.config_kind == "imported":
            return cst.parse_expression(f"{config_name}.{new}")
        assign = edits.assignment(config)
        call = assign.value if assign is not None else None
        given = edits.kwarg(call, new) if isinstance(call, cst.Call) else None
        if given is None or loaded(given.value) & {config_name.split(".")[0], trainer}:
            return value
        return given.value  # evaluated in the same call, where it already gives `new`

    def _epochs_of(self, loop: cst.For) -> cst.BaseExpression | None:
        """E of `for epoch in range(E):` (or `tqdm(range(E), ...)`) whose body is one PPO loop
        over the dataloader and simple statements around it (which `_rewrite` takes or refuses):
        `num_train_epochs=E`."""
        count = range_count(loop.iter, attributes=True)
        body = getattr(loop.body, "body", [])
        inner = [s for s in body if isinstance(s, cst.For)]
        if (
            count is None
            or loop.orelse is not None
            or len(inner) != 1
            or any(not isinstance(s, (cst.For, cst.SimpleStatementLine)) for s in body)
            or not self._is_ppo_loop(inner[0])
            or ".dataloader" not in edits.code(inner[0].iter)
        ):
            return None
        return count

    def _epoch_extras(
        self, outer: cst.For, loop: cst.For, counters: set[str], in_loop: set[str], trainer: str
    ) -> EpochExtras:
        """The statements of the epoch loop around the PPO loop: saves to a path the loop does not
        compute (once, after train()), prints of the counters (dropped), the comments above
        them, and other statements, which run where `train()` ends (or begins) each epoch: in a
        `TrainerCallback`. A statement the callback cannot run as the loop did (it binds a name,
        reads the counter or what the dataloader loop computes, calls the PPO trainer, leaves
        the loop) refuses the rewrite, naming it."""
        out = EpochExtras()
        before = True
        for ln in block_lines(outer.body):
            s = ln.stmt
            if s is loop:
                before = False
                continue
            if _prints_of(s, counters):
                out.logged.append(s)
                out.comments += ln.comments
                continue
            if self._saves_each_batch(s, in_loop | counters):
                out.saves.append(ln)
                continue
            shown = " ".join(edits.code(s).split())
            where = "before" if before else "after"
            why = ""
            if edits.bound_names(s):
                why = f"it binds {listed(edits.bound_names(s))}"
            elif loaded(s) & (counters | in_loop):
                why = f"it reads {listed(loaded(s) & (counters | in_loop))} of the loop"
            elif trainer.split(".")[0] in loaded(s):
                why = f"it uses `{trainer}`, whose PPO methods the new trainer does not have"
            elif not isinstance(s, (cst.Expr, cst.Assert)):
                why = "a callback cannot run it as the loop did"
            if why:
                raise Refused(
                    f"the epoch loop around it also runs `{shown}` {where} each pass over the "
                    f"data, and {why}; `train()` runs the epochs itself: put that in a "
                    "`transformers.TrainerCallback` whose `on_epoch_end` (or `on_epoch_begin`) "
                    "runs it, passed to the trainer as `callbacks=[...]`"
                )
            (out.begin if before else out.end).append(ln)
        return out

    def _epoch_callback(self, extras: EpochExtras, trainer: str) -> tuple[cst.ClassDef | None, str]:
        """A `TrainerCallback` class that runs the epoch loop's own statements where `train()`
        begins and ends each epoch, and the name it was given ('' for none); its import and
        finding wait for the rewrite to stand (`_announce_callback`)."""
        if not (extras.begin or extras.end):
            return None, ""
        name = free_name("EachEpoch", self.module_names)
        lines = [
            f"class {name}(TrainerCallback):",
            "    # what the PPO loop's epoch loop ran around each pass over the data",
        ]
        for method, stmts in (("on_epoch_begin", extras.begin), ("on_epoch_end", extras.end)):
            if not stmts:
                continue
            if lines[-1].startswith("        "):  # a blank line between the two methods
                lines.append("")
            lines.append(f"    def {method}(self, args, state, control, **kwargs):")
            for ln in stmts:
                for comment in ln.comments:
                    if comment.comment is not None:
                        lines.append(f"        {comment.comment.value}")
                lines += [f"        {x}" for x in edits.code(ln.stmt).strip().splitlines()]
        return cst.parse_statement("\n".join(lines) + "\n"), name  # type: ignore[return-value]

    def _announce_callback(self, extras: EpochExtras, name: str, trainer: str) -> None:
        """The import and the finding of the callback `_epoch_callback` wrote."""
        AddImportsVisitor.add_needed_import(self.context, "transformers", "TrainerCallback")
        shown = ", ".join(
            f"`{' '.join(edits.code(ln.stmt).split())}`" for ln in (*extras.begin, *extras.end)
        )
        self.report(
            extras.begin[0].stmt if extras.begin else extras.end[0].stmt,
            f"the epoch loop ran {shown} around each pass over the data; `{name}`, a "
            f"`TrainerCallback` passed to `{trainer}` as `callbacks=[{name}()]`, runs it where "
            "`train()` begins or ends each epoch (one epoch: one pass over the prompts)",
            severity=Severity.INFO,
        )

    def _inner_of(self, outer: cst.For) -> cst.For:
        """The PPO loop of an epoch loop (`_epochs_of`): the one `for` of its body."""
        return next(s for s in outer.body.body if isinstance(s, cst.For))  # type: ignore[attr-defined]

    def _saves_each_batch(self, stmt: cst.CSTNode, loop_names: set[str]) -> bool:
        """`trainer.save_pretrained(path)` (or `trainer.model.`, `save_model`, the tokenizer's or
        the model's `save_pretrained`) run after every batch to a path the loop does not
        compute: the last one left the files the run ends with."""
        saves = m.Expr(
            m.Call(func=m.Attribute(attr=m.Name("save_pretrained") | m.Name("save_model")))
            | m.Call(  # torch.save(trainer.model.state_dict(), path)
                func=m.Attribute(value=m.Name("torch"), attr=m.Name("save")),
                args=[m.Arg(m.Call(func=m.Attribute(attr=m.Name("state_dict")))), m.Arg()],
            )
        )
        return m.matches(stmt, saves) and not (loaded(stmt) & loop_names)

    def _saves_every(self, stmt: cst.CSTNode, trainer: str, loop: cst.For) -> bool:
        """`if <every N batches>:` whose statements only save a checkpoint: a save call
        (`trainer.save_pretrained(path)`, `save_model(path)`, `torch.save(...)`: a function whose
        name says it saves) and the paths it computes for it (names nothing else in the loop
        reads). Reported and dropped; TRL 1.13 saves checkpoints itself."""
        saves = _side_block(stmt, loop, _save_call, set())
        if saves is None:
            return False
        shown = " ".join(edits.code(stmt.test).split())  # type: ignore[attr-defined]
        call = " ".join(edits.code(saves[0]).split())
        self.report(
            stmt,
            f"the loop saved the model with `{call}` when `{shown}`; "
            "that was dropped: TRL 1.13 saves checkpoints to `output_dir` every `save_steps` "
            "optimizer steps (`save_strategy`), set them for the saves you want",
            severity=Severity.WARNING,
        )
        return True

    def _per_query(
        self, loop: cst.For, queries: str | None, responses: str | None
    ) -> PerQuery | None:
        """The older notebooks' generation, one query at a time:

            for query in query_tensors:
                gen_len = output_length_sampler()
                generation_kwargs["max_new_tokens"] = gen_len
                response = ppo_trainer.generate(query, **generation_kwargs)
                response_tensors.append(response.squeeze()[-gen_len:])

        or, in the later notebooks, with the response cut from the prompt+response by length
        (`response_len = len(query_response) - len(query)`, then
        `response_tensors.append(query_response[-response_len:])`), as the one batch call it
        amounts to, `trainer.generate(query_tensors, length_sampler=output_length_sampler,
        **generation_kwargs)` (None when the loop is not that). Its statements may be only these,
        and, where the generation returned the response alone (`return_prompt=False`), its
        decoding into a list of texts (`r = tokenizer.batch_decode(response, ...)[0]`,
        `texts.append(r)`), as the one `tokenizer.batch_decode(response_tensors, ...)` it
        amounts to."""
        if loop.orelse is not None or not isinstance(loop.target, cst.Name):
            return None
        if get_full_name_for_node(loop.iter) != queries or responses is None:
            return None
        query = loop.target.value
        sampler = length = None
        generate: cst.Call | None = None
        got = cut = None
        appended = used_cut = False
        text = texts = None  # the name of one decoded response, and the list it goes into
        decode: cst.Call | None = None
        for ln in block_lines(loop.body):
            st = ln.stmt
            call = self._trainer_call(st, "generate")
            if (
                call is None
                and isinstance(st, cst.Assign)
                and m.matches(st.value, m.Call(func=m.Attribute(attr=m.Name("squeeze")), args=[]))
            ):  # `trainer.generate(query, ...).squeeze()`: the one row of a one-query batch
                call = self._trainer_call(cst.Expr(st.value.func.value), "generate")  # type: ignore[attr-defined]
            if call is not None and isinstance(st, cst.Assign) and len(st.targets) == 1:
                if (
                    generate is not None
                    or not call.args
                    or get_full_name_for_node(call.args[0].value) != query
                ):
                    return None
                generate, got = call, get_full_name_for_node(st.targets[0].target)
            elif (
                isinstance(st, cst.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0].target, cst.Name)
                and m.matches(st.value, m.Call(func=m.Name(), args=[]))
                and sampler is None
            ):
                length = st.targets[0].target.value
                sampler = st.value.func  # type: ignore[attr-defined]
            elif (
                isinstance(st, cst.Assign)
                and len(st.targets) == 1
                and m.matches(
                    st.targets[0].target,
                    m.Subscript(
                        slice=[m.SubscriptElement(m.Index(m.SimpleString()))], value=m.Name()
                    ),
                )
                and edits.literal(st.targets[0].target.slice[0].slice.value) == "max_new_tokens"  # type: ignore[attr-defined]
                and length is not None
                and get_full_name_for_node(st.value) == length
            ):
                continue
            elif (
                got is not None
                and cut is None
                and _assigned_name(st) is not None
                and _prompt_cut(st.value, got, query)  # type: ignore[union-attr]
            ):
                # `response_len = len(query_response) - len(query)`: the generation returned the
                # prompt too; the append below keeps the tail, the response alone
                cut = _assigned_name(st)
            elif (
                isinstance(st, cst.Expr)
                and m.matches(
                    st.value,
                    m.Call(func=m.Attribute(value=m.Name(responses), attr=m.Name("append"))),
                )
                and got is not None
                and got in names_read(st, {got}, set(), None)
            ):
                appended = True
                used_cut = cut is not None and _tail_of(st, got, cut)
            elif (
                got is not None
                and text is None
                and _assigned_name(st) is not None
                and (one := _one_row_decode(st.value, got)) is not None  # type: ignore[union-attr]
            ):
                text, decode = _assigned_name(st), one
            elif (
                text is not None
                and texts is None
                and isinstance(st, cst.Expr)
                and m.matches(
                    st.value,
                    m.Call(
                        func=m.Attribute(value=m.Name(), attr=m.Name("append")),
                        args=[m.Arg(m.Name(text))],
                    ),
                )
            ):
                texts = st.value.func.value.value  # type: ignore[attr-defined]
            else:
                return None
        if generate is None or not appended or (cut is not None and not used_cut):
            return None
        if (text is None) != (texts is None) or texts in (queries, responses, query, got):
            return None  # a decoded response that goes nowhere, or into a list the loop reads
        if decode is not None and (
            cut is not None
            or sampler is not None
            or not any(
                m.matches(a, m.Arg(keyword=m.Name("return_prompt"), value=m.Name("False")))
                for a in generate.args
            )
        ):
            return None  # the decoded text held the prompt, or more than the response kept
        args = [
            cst.Arg(cst.Name(queries or "")),
            *(
                [edits.new_kwarg("length_sampler", sampler)]  # the original node: its position
                if sampler is not None
                else []
            ),
            *generate.args[1:],
        ]
        if decode is not None:
            decode = decode.with_changes(args=[cst.Arg(cst.Name(responses)), *decode.args[1:]])
        returned = not any(
            m.matches(a, m.Arg(keyword=m.Name("return_prompt"), value=m.Name("False")))
            for a in generate.args
        )
        return PerQuery(
            generate.with_changes(args=args),
            texts,
            decode,
            origin=generate,
            prompt_tail=returned and cut is None and sampler is not None,
        )

    def _loop_generate(
        self, s: cst.CSTNode, queries: str | None, responses: str | None
    ) -> tuple[dict[str, cst.BaseExpression], str | None]:
        """Generation settings of `r = trainer.generate(q, ...)`, and the name of the reference
        responses of `r, ref = trainer.generate(q, generate_ref_response=True, ...)` (or None)."""
        call = self._trainer_call(s, "generate")
        assert call is not None
        shown = " ".join(edits.code(s).split())
        if not isinstance(s, cst.Assign) or len(s.targets) != 1:
            raise Refused(
                f"`{shown}` does not assign the responses of `.generate(...)` to one name"
            )
        target = s.targets[0].target
        ref = None
        if isinstance(target, (cst.Tuple, cst.List)):
            names = [
                e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements
            ]
            if len(names) != 2 or None in names:
                raise Refused(
                    f"`{shown}` unpacks `.generate(...)` into {len(names)} targets; it returns the "
                    "responses, or "
                    "(responses, reference responses) with generate_ref_response=True"
                )
            got, ref = names
        else:
            got = get_full_name_for_node(target)
        if got != responses:
            raise Refused(
                f"`.generate(...)` gives `{got}`, not the responses `{responses}` that "
                "`.step(...)` takes"
            )
        return self._generation(call, queries, ref=ref is not None), ref

    def _drop_reference_chain(
        self,
        lines: list[Line],
        ref: str,
        *,
        batch: str | None,
        rewards: str | None,
        step: cst.Call,
        loop: cst.For,
        comments: list[cst.EmptyLine],
    ) -> list[Line]:
        """`lines` without the statements fed by the reference responses `ref`: assignments to names
        or
        batch columns that only logged them. Raises when one reaches the rewards or anything
        else."""
        tainted: set[str] = {ref}
        columns: set[str] = set()
        dropped = [ref]
        why = (
            "from the reference responses (`generate_ref_response=True`), which TRL 1.13 does "
            "not generate"
        )
        kept: list[Line] = []
        for ln in lines:
            s = ln.stmt
            hit = names_read(s, tainted, columns, batch)
            if not hit:
                kept.append(ln)
                continue
            shown = " ".join(edits.code(s).split())
            targets = [t.target for t in s.targets] if isinstance(s, cst.Assign) else []
            if not targets or not all(
                isinstance(t, cst.Name) or batch_column(t, batch) is not None for t in targets
            ):
                raise Refused(
                    f"`{shown}` uses {listed(hit)}, computed {why}, for more than logging it in "
                    "the batch"
                )
            bound = {t.value for t in targets if isinstance(t, cst.Name)}
            if rewards in bound:
                raise Refused(
                    f"the step's rewards `{rewards}` are computed {why}; the reference model "
                    "enters "
                    "only through the KL term (`beta`)"
                )
            tainted |= bound
            columns |= {c for t in targets if (c := batch_column(t, batch)) is not None}
            dropped += [edits.code(t).strip() for t in targets]
            comments += ln.comments
        for node in [
            *(ln.stmt for ln in kept),
            step,
        ]:  # read before the chain computes it: the last batch's value
            late = edits.names(node) & tainted
            if late:
                raise Refused(
                    f"`{' '.join(edits.code(node).split())}` reads {listed(late)}, computed {why}, "
                    "in the loop "
                    "before it is computed"
                )
        outside = tainted & names_outside(self.tree, loop)
        if outside:
            raise Refused(f"`{min(outside)}`, computed {why}, is used outside the loop")
        self.report(
            loop,
            "`generate_ref_response=True`: TRL 1.13 does not generate reference-model responses "
            "(the "
            "reference model enters only through the KL term, `beta`); dropped what only logged "
            "them: " + ", ".join(f"`{d}`" for d in dropped),
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
        after: Sequence[cst.BaseStatement] = (),
        callback: tuple[cst.ClassDef | None, str] = (None, ""),
    ) -> list[cst.BaseStatement]:
        """The block with `fn` (and a `callback` class) above the trainer (and `dataset` as its
        train_dataset, the callback in its `callbacks`), generation settings in the config, and
        `trainer.train()` (with the loop's other `comments`, then the `after` statements) in
        place of the loop at `index`."""
        trainer_at, config_at, config_name = self._trainer_and_config(body[:index], trainer)
        gen = {
            k: self._config_read(v, body[config_at], config_name, trainer) for k, v in gen.items()
        }
        gen = {k: once_literal(self.tree, v) for k, v in gen.items()}
        gen = {k: _bound_between(v, body[config_at:index]) for k, v in gen.items()}
        for name in sorted(set().union(*(loaded(v) for v in gen.values()))):
            if any(name in edits.bound_names(s) for s in body[config_at:index]):
                raise Refused(
                    f"`{name}` in the generation settings is set after `{config_name}` is built"
                )
        body = list(body)
        blank = [cst.EmptyLine(indent=False)] * (2 if top else 1)
        trainer_stmt = edits.with_kwarg(body[trainer_at], "reward_funcs", self.reward_name)
        if callback[0] is not None:
            call = edits.assignment(trainer_stmt).value  # type: ignore[union-attr]
            if edits.kwarg(call, "callbacks") is not None:  # type: ignore[arg-type]
                raise Refused(
                    "its epoch loop runs statements around each pass and the trainer already "
                    "takes `callbacks=`: add a callback for them to that list"
                )
            trainer_stmt = edits.with_kwarg(trainer_stmt, "callbacks", f"[{callback[1]}()]")
        if self.config_kind == "inline":  # the settings go into the trainer's own config call
            trainer_stmt = self._inline_generation(trainer_stmt, gen)
        above = [line for line in edits.leading(trainer_stmt) if line.comment is not None]
        new: list[cst.BaseStatement] = [fn.with_changes(leading_lines=blank)]
        if callback[0] is not None:
            new.append(callback[0].with_changes(leading_lines=blank))
        if self.config_kind == "imported":  # a copy with the loop's settings, made here
            copied = self._config_copy(gen, config_name)
            new += [copied[0].with_changes(leading_lines=blank), *copied[1:]]
            blank = []
        if dataset is not None:
            trainer_stmt = edits.with_kwarg(
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
            leading_lines=[*edits.leading(body[at]), *comment_lines(comments)],
        )
        body[at : at + 1] = [train, *after]
        self.installed_at = at
        if self.config_kind == "inline":
            moved = f"generation settings moved to the trainer's `{config_name}(...)`"
        elif self.config_kind == "imported":
            moved = (
                f"`{config_name}` comes from another file of this run, so the loop's generation "
                f"and length settings are set on a copy of it made above the trainer "
                f"(`copy.copy`), which leaves that file's `{config_name}` as it is"
            )
        else:
            body[config_at : config_at + 1] = self._with_generation(
                body[config_at], gen, config_name
            )
            moved = f"generation settings moved to `{config_name}`"
        self.report(
            loop,
            f"the PPO loop became `{self.reward_name}` (your reward code), "
            f"`reward_funcs={self.reward_name}` on "
            f"the trainer and `{trainer}.train()`; {moved}",
        )
        return body


# Functions of their arguments alone: an expression of these can be computed anywhere.
PURE_CALLS = frozenset(
    {"math.ceil", "math.floor", "int", "float", "round", "min", "max", "abs", "len"}
)


def _pure(expr: cst.BaseExpression) -> bool:
    """Names, attributes, numbers, strings, arithmetic and PURE_CALLS: an expression whose
    value depends only on the values of the names it reads."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.Attribute):
        return _pure(expr.value)
    if isinstance(expr, cst.BinaryOperation):
        return _pure(expr.left) and _pure(expr.right)
    if isinstance(expr, cst.UnaryOperation):
        return _pure(expr.expression)
    if isinstance(expr, cst.Call):
        return get_full_name_for_node(expr.func) in PURE_CALLS and all(
            a.keyword is None and not a.star and _pure(a.value) for a in expr.args
        )
    return False


def _bound_between(
    value: cst.BaseExpression, between: Sequence[cst.BaseStatement]
) -> cst.BaseExpression:
    """`value`, or, when it is a name that one statement of `between` (the block from the config
    to the loop) binds, and binds once, to a pure expression of names that none of them binds
    (`total_steps = math.ceil(args.max_steps / args.batch_size)`), that expression: the config
    can compute it itself."""
    if not isinstance(value, cst.Name):
        return value
    binding = [s for s in between if value.value in edits.bound_names(s)]
    if len(binding) != 1:
        return value
    assign = edits.assignment(binding[0])
    if (
        assign is None
        or len(assign.targets) != 1
        or not m.matches(assign.targets[0].target, m.Name(value.value))
        or not _pure(assign.value)
        or any(n in edits.bound_names(s) for s in between for n in loaded(assign.value))
    ):
        return value
    return assign.value


# legacy `PPOTrainer.step(queries, responses, scores, response_masks=None)`, every release
STEP_PARAMS = ("queries", "responses", "scores")


def _step_args(
    step: cst.Call,
) -> tuple[str | None, str | None, str | None, cst.BaseExpression | None]:
    """The names `step` takes as queries, responses and scores, by position or keyword; for
    scores given as an expression (`[torch.tensor(r) for r in rewards]`), None and the
    expression."""
    given: dict[str, cst.BaseExpression] = {}
    for i, arg in enumerate(step.args):
        if arg.star or (arg.keyword is None and i >= len(STEP_PARAMS)):
            raise Refused("`.step(...)` does not take (queries, responses, rewards)")
        key = arg.keyword.value if arg.keyword is not None else STEP_PARAMS[i]
        given[key] = arg.value
    if set(given) != set(STEP_PARAMS):
        raise Refused("`.step(...)` does not take (queries, responses, rewards)")
    names = [get_full_name_for_node(given[k]) for k in STEP_PARAMS]
    if not all(isinstance(given[k], (cst.Name, cst.Attribute)) for k in STEP_PARAMS[:2]):
        raise Refused("`.step(...)` does not take its queries and responses as names")
    if isinstance(given["scores"], (cst.Name, cst.Attribute)):
        return names[0], names[1], names[2], None
    return names[0], names[1], None, given["scores"]


# `with torch.no_grad():` (or inference_mode) around the loop's one `generate` statement: the
# statement alone, as TRL 1.13 generates without gradients itself
NO_GRAD = m.Call(
    func=m.Attribute(value=m.Name("torch"), attr=m.Name("no_grad") | m.Name("inference_mode"))
)


def _without_no_grad(ln: Line) -> Line:
    stmt = ln.stmt
    if (
        isinstance(stmt, cst.With)
        and len(stmt.items) == 1
        and stmt.items[0].asname is None
        and m.matches(stmt.items[0].item, NO_GRAD)
    ):
        inner = block_lines(stmt.body)
        if len(inner) == 1 and not isinstance(inner[0].stmt, cst.BaseCompoundStatement):
            return Line(inner[0].stmt, [*ln.comments, *inner[0].comments], inner[0].trailing)
    return ln


def _line(ln: Line) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(
        body=[ln.stmt],  # type: ignore[list-item]
        leading_lines=comment_lines(ln.comments),
        trailing_whitespace=ln.trailing or cst.TrailingWhitespace(),
    )


# calls that only report progress: `print`, a logger's methods, wandb/tensorboard, log_stats
def _statement_of(lines: Sequence[Line], call: cst.Call) -> cst.CSTNode:
    return next(ln.stmt for ln in lines if call in (getattr(ln.stmt, "value", None),))


def _side_block(
    stmt: cst.CSTNode, loop: cst.For, does: Callable[[cst.CSTNode], bool], stats: set[str]
) -> list[cst.BaseSmallStatement] | None:
    """The statements of `stmt` that `does` (log, save) when `stmt` is an `if` (no `else`) made
    of at least one of them plus assignments the rest of the loop never reads: names nothing else
    in `loop` reads (`mem = gpu_memory()`, `save_dir = os.path.join(...)`) and entries of the
    step's `stats` dict; None when it is anything else."""
    if not isinstance(stmt, cst.If) or stmt.orelse is not None:
        return None
    inner = list(edits.statements(stmt.body))
    doing = [s for s in inner if does(s)]
    if not doing:
        return None
    outside = {n for s in edits.statements(loop.body) if s is not stmt for n in loaded(s)}
    for s in inner:
        if s in doing:
            continue
        if not isinstance(s, cst.Assign):
            return None
        for t in s.targets:
            if isinstance(t.target, cst.Subscript):
                if get_full_name_for_node(t.target.value) not in stats:
                    return None
            elif not isinstance(t.target, cst.Name) or t.target.value in outside:
                return None
    return doing


def _logs_only(stmt: cst.CSTNode, *, stats: set[str], loop: cst.For) -> bool:
    """`if <every N batches>:` whose statements only log: logging calls, entries of the step's
    `stats` dict, and names nothing else in the loop reads (`mem = gpu_memory()` for a log
    line)."""
    return _side_block(stmt, loop, logging_call, stats) is not None


def _mode_switch(stmt: cst.CSTNode) -> bool:
    """`model.gradient_checkpointing_enable()` / `_disable()`, `model.config.use_cache = ...`:
    how the model runs (memory, speed), which the legacy loop switched around generation and the
    step; not part of any reward."""
    if m.matches(
        stmt,
        m.Expr(
            m.Call(
                func=m.Attribute(
                    attr=m.Name("gradient_checkpointing_enable")
                    | m.Name("gradient_checkpointing_disable")
                )
            )
        ),
    ):
        return True
    return m.matches(
        stmt,
        m.Assign(
            targets=[
                m.AssignTarget(
                    m.Attribute(value=m.Attribute(attr=m.Name("config")), attr=m.Name("use_cache"))
                )
            ],
            value=m.Name("True") | m.Name("False"),
        ),
    )


def _save_call(stmt: cst.CSTNode) -> bool:
    """`x.save_pretrained(...)`, `save_model(...)`, `torch.save(...)`, `save_checkpoint(...)`."""
    if not m.matches(stmt, m.Expr(m.Call())):
        return False
    name = get_full_name_for_node(stmt.value.func) or ""  # type: ignore[attr-defined]
    return "save" in name.rsplit(".", 1)[-1].lower()


def _prints_of(stmt: cst.CSTNode, counters: set[str]) -> bool:
    """`print(...)` (or `logger.info(...)`, `wandb.log(...)`, ...) of the loop's counters
    (`print(f"epoch {epoch}")`), its batch or its tensors: a reward function has none of them."""
    if m.matches(stmt, m.Expr(m.Call(func=m.Attribute(attr=m.Name("log_stats"))))):
        return False  # the trainer's own logging: dropped with the step
    return logging_call(stmt) and bool(loaded(stmt) & counters)


def in_loop_rebound(lines: Sequence[Line], name: str) -> set[str]:
    """`{name}` when a statement kept for the reward binds `name` again."""
    return {name} if any(name in edits.bound_names(ln.stmt) for ln in lines) else set()


def _empty_list(stmt: cst.CSTNode, name: str | None) -> bool:
    return (
        isinstance(stmt, cst.Assign)
        and len(stmt.targets) == 1
        and name is not None
        and get_full_name_for_node(stmt.targets[0].target) == name
        and isinstance(stmt.value, cst.List)
        and not stmt.value.elements
    )


# Calls that pool a whole batch when given one value and no axis: `sum(scores)`, `max(scores)`,
# `np.mean(scores)`, `statistics.stdev(scores)`, `torch.tensor(scores).std()`.
POOLING = frozenset({"sum", "min", "max", "mean", "std", "stdev", "var", "variance", "median"})


def _batch_statistic(body: Sequence[cst.BaseStatement]) -> str | None:
    """The first expression that pools values across the batch (`sum(scores) / len(scores)`,
    `torch.tensor(scores).mean()`, `np.std(rewards)`) outside a per-sample comprehension, as
    code; None when every statistic is per sample."""

    class _Find(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: str | None = None
            self.depth = 0  # inside a comprehension's element: per sample

        def visit_ListComp(self, node: cst.ListComp) -> bool:
            node.for_in.visit(self)  # the iterated value may itself be pooled
            self.depth += 1
            node.elt.visit(self)
            self.depth -= 1
            return False

        def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
            return self.visit_ListComp(node)  # type: ignore[arg-type]

        def visit_For(self, node: cst.For) -> bool:
            node.iter.visit(self)
            self.depth += 1  # a loop over the samples: its body is per sample
            node.body.visit(self)
            self.depth -= 1
            return False

        def visit_Call(self, node: cst.Call) -> None:
            if self.found is not None or self.depth:
                return
            name = (get_full_name_for_node(node.func) or "").rsplit(".", 1)[-1]
            if name not in POOLING or any(a.star for a in node.args):
                return
            method = isinstance(node.func, cst.Attribute) and not node.args  # `x.mean()`
            function = len(node.args) == 1 and node.args[0].keyword is None  # `sum(x)`
            if method or function:
                self.found = " ".join(edits.code(node).split())

    finder = _Find()
    for stmt in body:
        walk.visit(stmt, finder)
        if finder.found is not None:
            return finder.found
    return None


def _guard_comments(guard: cst.If) -> list[cst.EmptyLine]:
    """Comments on the guard's lines (`if i >= 3: break  # three batches`, or on the `break`
    below it), which go above train() with the guard's own."""
    comments: list[cst.Comment | None] = []
    body = guard.body
    if isinstance(body, cst.SimpleStatementSuite):
        comments.append(body.trailing_whitespace.comment)
    else:
        head = body.header.comment if isinstance(body, cst.IndentedBlock) else None
        comments.append(head)
        for stmt in body.body:
            comments += [e.comment for e in getattr(stmt, "leading_lines", ())]
            trailing = getattr(stmt, "trailing_whitespace", None)
            comments.append(trailing.comment if trailing is not None else None)
    return [cst.EmptyLine(comment=c) for c in comments if isinstance(c, cst.Comment)]


def _decoded_as_the_loop_did(
    decode: cst.BaseExpression, name: str, *, with_prompt: bool
) -> cst.SimpleStatementLine | None:
    """`<name> = tokenizer.batch_decode(kwargs["completion_ids"], <the loop's options>)`, unless
    the loop decoded as TRL 1.13 does (`skip_special_tokens=True` and nothing else). TRL 1.13's
    completion ids are the loop's response tokens: the prompt and padding cut, the first EOS
    kept. `with_prompt`: the loop's responses began with the prompt, so the prompt's tokens (as
    TRL 1.13 tokenizes the prompt, `processing_class(text=prompts)`) go in front."""
    call = decode.elt if isinstance(decode, cst.ListComp) else decode
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
        return None
    options = call.args[1:]
    if (
        not with_prompt
        and len(options) == 1
        and m.matches(
            options[0], m.Arg(keyword=m.Name("skip_special_tokens"), value=m.Name("True"))
        )
    ):
        return None
    tokenizer = edits.code(call.func.value).strip()
    ids = 'kwargs["completion_ids"]'
    if with_prompt:
        ids = f'[p + c for p, c in zip({tokenizer}(text=prompts)["input_ids"], {ids})]'
    return _redecoded(call, name, ids, "as the loop decoded them")


def _redecoded(call: cst.Call, name: str, ids: str, note: str) -> cst.SimpleStatementLine:
    """`<name> = <tokenizer>.batch_decode(<ids>, <call's options>)  # <note>`: token ids that
    TRL 1.13 has, decoded as the loop's decode `call` (`tokenizer.batch_decode(x, ...)`) did."""
    tokenizer = edits.code(call.func.value).strip()  # type: ignore[attr-defined]
    shown = "".join(edits.code(a) for a in call.args[1:]).strip().rstrip(",")
    return cst.parse_statement(  # type: ignore[return-value]
        f"{name} = {tokenizer}.batch_decode({ids}"
        + (f", {shown}" if shown else "")
        + f")  # {note}\n"
    )


# Calls that give back the same token ids: a type, a device, a squeezed batch dimension.
SAME_TOKENS = frozenset(
    {"LongTensor", "tensor", "as_tensor", "to", "cuda", "cpu", "long", "squeeze"}
)


def _same_tokens(value: cst.BaseExpression, queries: str | None) -> bool:
    """`[torch.LongTensor(q).to(device).squeeze(0) for q in <queries>]`: the query tensors moved
    or retyped one by one, the same token ids (TRL 1.13 tokenizes the prompts itself)."""
    if queries is None or not isinstance(value, cst.ListComp) or value.for_in.inner_for_in:
        return False
    comp = value.for_in
    if (
        comp.ifs
        or not m.matches(comp.iter, m.Name(queries))
        or not isinstance(comp.target, cst.Name)
    ):
        return False
    expr: cst.BaseExpression = value.elt
    while isinstance(expr, cst.Call):
        func = expr.func
        name = func.attr.value if isinstance(func, cst.Attribute) else None
        if name not in SAME_TOKENS:
            return False
        if isinstance(func, cst.Attribute) and name in ("LongTensor", "tensor", "as_tensor"):
            if len(expr.args) != 1 or expr.args[0].keyword is not None:
                return False
            expr = expr.args[0].value  # `torch.LongTensor(q)`
        elif isinstance(func, cst.Attribute):
            expr = func.value  # `q.to(device)`, `q.squeeze(0)`
    return m.matches(expr, m.Name(comp.target.value))


def _assigned_name(stmt: cst.CSTNode) -> str | None:
    """`x` of `x = <value>`, the statement's one target a plain name (else None)."""
    if (
        isinstance(stmt, cst.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0].target, cst.Name)
    ):
        return stmt.targets[0].target.value
    return None


@dataclasses.dataclass(frozen=True)
class PerQuery:
    """A generation one query at a time, as the batch call it amounts to; with the list its
    decoded responses went into and the batch decode that amounts to, where it decoded them."""

    call: cst.Call
    texts: str | None = None
    decode: cst.Call | None = None
    origin: cst.Call | None = None  # the per-query generate call in the file
    # each response cut to the sampler's length from the prompt + response generate returned:
    # where the policy stopped early, at its end-of-sequence token, the prompt's last tokens too
    prompt_tail: bool = False


def _one_row_decode(value: cst.BaseExpression, got: str) -> cst.Call | None:
    """`tokenizer.batch_decode(<got>, ...)[0]`, `tokenizer.decode(<got>[0], ...)` or
    `tokenizer.decode(<got>.squeeze(), ...)`: the text of a one-row generation, as the
    `tokenizer.batch_decode(<got>, ...)` call whose first row it is (None when not that)."""
    row0 = [m.SubscriptElement(m.Index(m.Integer("0")))]
    if m.matches(
        value,
        m.Subscript(
            value=m.Call(
                func=m.Attribute(attr=m.Name("batch_decode")),
                args=[m.Arg(m.Name(got)), m.ZeroOrMore(m.Arg(keyword=m.Name()))],
            ),
            slice=row0,
        ),
    ):
        return value.value  # type: ignore[attr-defined, no-any-return]
    squeeze = m.Attribute(value=m.Name(got), attr=m.Name("squeeze"))
    one_row = (
        m.Subscript(value=m.Name(got), slice=row0)
        | m.Call(func=squeeze, args=[])
        | m.Call(func=squeeze, args=[m.Arg(m.Integer("0"))])
    )
    if isinstance(value, cst.Call) and m.matches(
        value,
        m.Call(
            func=m.Attribute(attr=m.Name("decode")),
            args=[m.Arg(one_row, keyword=None), m.ZeroOrMore(m.Arg(keyword=m.Name()))],
        ),
    ):
        func = value.func.with_changes(attr=cst.Name("batch_decode"))  # type: ignore[attr-defined]
        return value.with_changes(func=func, args=[cst.Arg(cst.Name(got)), *value.args[1:]])
    return None


def _batch_decode_of(value: cst.BaseExpression, name: str | None) -> bool:
    """`tokenizer.batch_decode(<name>, ...)`."""
    return (
        name is not None
        and isinstance(value, cst.Call)
        and m.matches(value, m.Call(func=m.Attribute(attr=m.Name("batch_decode"))))
        and bool(value.args)
        and get_full_name_for_node(value.args[0].value) == name
    )


def _prompts_decoded_as(decode: cst.Call) -> cst.BaseStatement:
    """`prompts = tokenizer.batch_decode(tokenizer(text=prompts)["input_ids"], <the loop's
    options>)`: the prompt tokens, as TRL 1.13 tokenizes the prompts to generate from them,
    decoded as the loop decoded its query tokens."""
    tokenizer = edits.code(decode.func.value).strip()  # type: ignore[attr-defined]
    ids = f'{tokenizer}(text=prompts)["input_ids"]'
    return _redecoded(decode, "prompts", ids, "as the loop decoded its queries")


def _responses_kept_as_generated(kept: Sequence[Line], responses: str | None) -> None:
    """Refuse a loop that binds the responses `step()` takes again after generating them
    (YangRui2015/RiC: `response_tensors = [response_tensors[j][:n] ...]`, each cut to its cleaned
    text's length): PPO trained on what the loop made of them, RLOO/GRPO train on the completions
    they generate, whole."""
    if responses is None:
        return
    for ln in kept:
        stmt = ln.stmt
        if responses not in edits.bound_names(stmt):
            continue
        bare = stmt.with_changes(leading_lines=()) if hasattr(stmt, "leading_lines") else stmt
        first = edits.code(bare).strip().splitlines()[0]
        shown = first if len(first) <= 80 else first[:77] + "..."
        generates = any(
            isinstance(c.func, cst.Attribute) and c.func.attr.value == "generate"
            for c in walk.find_all(stmt, cst.Call)
        )
        if generates:  # Bit-numeval/NumEval: `while len(response_tensors) == 0: ... generate`
            raise Refused(
                f"it generates the responses inside `{shown}`, which the rewrite cannot follow"
            )
        raise Refused(
            f"it changes the responses after generating them (`{shown}`) and trains on "
            "those; RLOO/GRPO train on the completions they generate"
        )


def _decoded_one_by_one(value: cst.BaseExpression, responses: str | None) -> bool:
    """`[tokenizer.decode(r.squeeze()) for r in response_tensors]`: batch_decode by hand."""
    if not isinstance(value, cst.ListComp) or value.for_in.inner_for_in is not None:
        return False
    comp = value.for_in
    if comp.ifs or get_full_name_for_node(comp.iter) != responses:
        return False
    if not isinstance(comp.target, cst.Name):
        return False
    elt = value.elt
    return (
        isinstance(elt, cst.Call)
        and m.matches(elt.func, m.Attribute(attr=m.Name("decode")))
        and len(elt.args) >= 1
        and comp.target.value in edits.names(elt.args[0].value)
    )


def _prompt_cut(value: cst.BaseExpression, got: str, query: str) -> bool:
    """`len(<got>) - len(<query>)`: the length of the response part of a prompt+response."""
    return m.matches(
        value,
        m.BinaryOperation(
            left=m.Call(func=m.Name("len"), args=[m.Arg(m.Name(got))]),
            operator=m.Subtract(),
            right=m.Call(func=m.Name("len"), args=[m.Arg(m.Name(query))]),
        ),
    )


def _tail_of(append: cst.CSTNode, got: str, cut: str) -> bool:
    """`responses.append(<got>[-<cut>:])`: the response part only."""
    return m.matches(
        append,
        m.Expr(
            m.Call(
                args=[
                    m.Arg(
                        m.Subscript(
                            value=m.Name(got),
                            slice=[
                                m.SubscriptElement(
                                    m.Slice(
                                        lower=m.UnaryOperation(
                                            operator=m.Minus(), expression=m.Name(cut)
                                        ),
                                        upper=None,
                                        step=None,
                                    )
                                )
                            ],
                        )
                    )
                ]
            )
        ),
    )


@dataclasses.dataclass
class EpochExtras:
    """The statements of an epoch loop besides its dataloader loop, by what becomes of them."""

    saves: list[Line] = dataclasses.field(default_factory=list)  # once, after train()
    comments: list[cst.EmptyLine] = dataclasses.field(default_factory=list)  # above train()
    logged: list[cst.CSTNode] = dataclasses.field(default_factory=list)  # dropped
    begin: list[Line] = dataclasses.field(default_factory=list)  # the callback's on_epoch_begin
    end: list[Line] = dataclasses.field(default_factory=list)  # the callback's on_epoch_end

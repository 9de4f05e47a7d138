"""TRL106's pass: find the legacy loops of a block and rewrite each one whole, or leave one TODO
with
a skeleton of its reward function. The loop's concepts are mixins: the loop itself (loop.py), the
fixed-prompt loops (fixed.py), generation settings (generation.py), rewards (rewards.py)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, walk
from codemods.base import with_todos
from codemods.rules.ppo_loop.cleanup import drop_orphaned_imports
from codemods.rules.ppo_loop.fixed import FixedPrompts
from codemods.rules.ppo_loop.generation import Generation
from codemods.rules.ppo_loop.loop import LoopRewrite
from codemods.rules.ppo_loop.loop_pass import LoopPass
from codemods.rules.ppo_loop.rewards import Rewards
from codemods.rules.ppo_loop.shape import (
    comment_lines,
    dict_literals,
    first_row,
    free_name,
    length_samplers,
    second_loop,
    single_bindings,
    target_trainer_vars,
    unguarded,
    with_body,
)
from codemods.rules.ppo_loop.state import REWARD_FN, Refused
from migrate.kernel.findings import Fix

DRAFT = "# trl-migrate draft | "  # marks the comment lines of a draft, so reruns find them


def with_draft(stmt: cst.BaseStatement, draft: list[str]) -> cst.BaseStatement:
    """`stmt` with the draft's lines as comments under its TODO, unless they are there."""
    leading = list(edits.leading(stmt))
    have = {line.comment.value for line in leading if line.comment is not None}
    if not draft or any(c.startswith(DRAFT) for c in have):
        return stmt
    lines = [cst.EmptyLine(comment=cst.Comment((DRAFT + text).rstrip())) for text in draft]
    return stmt.with_changes(leading_lines=[*leading, *lines])


class RewritePPOLoop(LoopRewrite, FixedPrompts, Generation, Rewards, LoopPass):
    NAMES = ("step",)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        facts = ppo.FileFacts(self)
        walk.visit(node, facts)
        self.trainers = set(facts.trainer_vars) | target_trainer_vars(
            self, node
        )  # TRL104 may have run first
        self.dicts, self.scoped_dicts = dict_literals(node, self.function_of)
        self.rebound = None  # read on first ask (`Generation._rebound_dicts`)
        self.single = single_bindings(node)
        self.samplers = length_samplers(node, self.single)
        self.trainer_cls = ppo.target_trainer(self.state.target)
        self.config_cls = ppo.target_config(self.state.target)
        self.module_names = edits.names(node)
        self.reward_name = free_name(REWARD_FN, self.module_names)
        self.functions = {f.name.value for f in walk.find_all(node, cst.FunctionDef)}
        self.tree = node  # the file as it was, for uses outside a loop
        self._loops: list[cst.For] = []  # the for loops being walked, innermost last
        # a step() run once, outside any loop, in the module or a function body (the README
        # quick start of TRL 0.5-0.11): rewritten as a loop over `range(1)` would be
        self.once = {id(block[i]) for block, i in ppo.once_steps(node, self._stepped)}
        self.orphans = self._orphan_steps(node)  # trainers with a step() no loop rewrite sees
        # trainers of a loop left with its TODO, built in an enclosing block (which is left later)
        self.left_outside: set[str] = set()
        # PPO loops inside `for epoch in range(E):`, rewritten with the epoch loop around them
        self.wrapped = {
            id(self._inner_of(f))
            for f in walk.find_all(node, cst.For)
            if self._epochs_of(f) is not None
        }
        self.orphaned: set[str] = (
            set()
        )  # local names of `respond_to_batch` whose uses this rule rewrote
        self.lifted = self._lifted_loops(node)
        self.bars = self._barred_loops(node)
        self.installed_at: int | None = None
        self.config_kind = "block"

    def _lifted_loops(self, module: cst.Module) -> dict[int, int]:
        """`if` statements (by id) whose body holds a PPO loop (its id) whose trainer the block
        around the `if` builds above it, and the `if`'s own body does not: `if args.do_train:`
        around the loop of a `main()` that builds the trainer."""
        found: dict[int, int] = {}
        blocks = [module.body, *(b.body for b in walk.find_all(module, cst.IndentedBlock))]
        for stmts in blocks:
            for i, stmt in enumerate(stmts):
                if not isinstance(stmt, cst.If) or not isinstance(stmt.body, cst.IndentedBlock):
                    continue
                inner = stmt.body.body
                for j, loop in enumerate(inner):
                    if not isinstance(loop, cst.For) or id(loop) in self.wrapped:
                        continue
                    if not self._is_ppo_loop(loop) and self._epochs_of(loop) is None:
                        continue
                    trainer = self._trainer_of(loop)
                    if not _builds(inner[:j], trainer) and _builds(stmts[:i], trainer):
                        found[id(stmt)] = id(loop)
                    break
        return found

    def _barred_loops(self, module: cst.Module) -> dict[int, int]:
        """`with` statements (by id) that only show a progress bar around a PPO loop (its id,
        `ppo.bar_loop`): the loop is rewritten in the block around the `with`, as if it
        iterated `tqdm(...)` itself."""
        return {
            id(stmt): id(loop)
            for stmt in walk.find_all(module, cst.With)
            if (loop := ppo.bar_loop(stmt)) is not None and self._is_ppo_loop(loop)
        }

    def _barred_loop(
        self,
        original: Sequence[cst.BaseStatement],
        out: list[cst.BaseStatement],
        i: int,
        *,
        top: bool,
    ) -> list[cst.BaseStatement]:
        """The loop of the progress-bar `with` at `i` (`_barred_loops`) rewritten in this block,
        or, refused, left with its TODO inside the `with`."""
        bar, updated = original[i], out[i]
        assert isinstance(bar, cst.With) and isinstance(updated, cst.With)
        loop, new_loop = ppo.bar_loop(bar), ppo.bar_loop(updated)
        assert loop is not None and new_loop is not None
        call = bar.items[0].item
        leading = [*bar.leading_lines, *comment_lines(loop.leading_lines)]
        flat = loop.with_changes(iter=call, leading_lines=leading)
        new_flat = new_loop.with_changes(iter=updated.items[0].item, leading_lines=leading)
        trainer = self._trainer_of(loop)
        reported = len(self.state.findings)
        try:
            result = self._rewrite([*out[:i], new_flat, *out[i + 1 :]], i, flat, trainer, top=top)
        except Refused as e:
            self.forget_findings(reported)
            out = [*out[:i], self._left_inside(bar, updated, loop, trainer, str(e)), *out[i + 1 :]]
            return self._needs_rewards(original, out, i, trainer)
        # the loop as rewritten is not in the file: what was said of it is said of the `with`
        self._unplaced = [(k, bar if n is flat else n) for k, n in self._unplaced]
        return result

    # -- a step() the loop rewrite does not see: in an `if`, a `while`, a function, no loop
    def visit_For(self, node: cst.For) -> None:
        self._loops.append(node)

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        self._loops.pop()
        return updated_node

    def _orphan_step(self, node: cst.SimpleStatementLine, loops: list[cst.For]) -> str | None:
        """The trainer whose step() this line calls outside a loop the rewrite handles."""
        calls = [c for s in node.body if (c := self._trainer_call(s, "step")) is not None]
        if not calls or id(node) in self.once:
            return None  # a step run once is `_body`'s (rewritten, or given this TODO there)
        loop = loops[-1] if loops else None
        if loop is not None and self._is_ppo_loop(loop):
            own = list(getattr(loop.body, "body", ()))
            own += [s for g in unguarded(loop.body, self._steps)[1] for s in g.body.body]  # type: ignore[attr-defined]
            if node in own:
                return None  # the loop rewrite's (rewritten, or left with its own TODO)
        return get_full_name_for_node(calls[0].func.value) or "trainer"  # type: ignore[attr-defined]

    def _orphan_steps(self, module: cst.Module) -> set[str]:
        found: set[str] = set()
        owner = self

        class _V(walk.Visitor):
            def __init__(self) -> None:
                self.loops: list[cst.For] = []

            def visit_For(self, node: cst.For) -> None:
                self.loops.append(node)

            def leave_For(self, original_node: cst.For) -> None:
                self.loops.pop()

            def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
                trainer = owner._orphan_step(node, self.loops)
                if trainer is not None:
                    found.add(trainer)

        walk.visit(module, _V())
        return found

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        trainer = self._orphan_step(node, self._loops)
        if trainer is None:
            return
        self.todo(node, self._orphan_message(trainer))

    def _orphan_message(self, trainer: str, why: str = "") -> str:
        where = (
            f"`{trainer}.step(...)` runs once, outside a loop, and the rewrite cannot follow it "
            f"({why})"
            if why
            else f"`{trainer}.step(...)` sits where the loop rewrite cannot follow it (inside an "
            "`if`, a `while`, a function, or no loop)"
        )
        return (
            f"{where}; {self.trainer_cls} has no step(): write a "
            f"`{REWARD_FN}(prompts, completions, **kwargs)` from the reward computed here, pass "
            f"`reward_funcs={REWARD_FN}` to the trainer and call `{trainer}.train()` instead"
        )

    def _once(
        self,
        original: Sequence[cst.BaseStatement],
        out: list[cst.BaseStatement],
        s: int,
        *,
        top: bool,
    ) -> list[cst.BaseStatement]:
        """The block with the step run once at `s` rewritten as the loop over `range(1)` its
        statements from the generation on would make, or given the TODO a step outside a loop
        gets (and its trainer the one a trainer with no rewards gets)."""
        step_stmt = original[s]
        call = next(
            c
            for x in step_stmt.body  # type: ignore[attr-defined]
            if (c := self._trainer_call(x, "step")) is not None
        )
        trainer = get_full_name_for_node(call.func.value) or "trainer"  # type: ignore[attr-defined]
        reported = len(self.state.findings)
        try:
            g = _generated_at(original, s, call)
            loop = _range_one(list(original[g : s + 1]))
            stmts = [*out[:g], _range_one(list(out[g : s + 1])), *out[s + 1 :]]
            result = self._rewrite(stmts, g, loop, trainer, top=top)
            # the loop is not in the file: what was said of it is said of the step
            self._unplaced = [(k, step_stmt if n is loop else n) for k, n in self._unplaced]
            return result
        except Refused as e:
            self.forget_findings(reported)
            message = self._orphan_message(trainer, str(e))
            self.report(step_stmt, message, fix=Fix.MANUAL)
            out[s] = with_todos(out[s], self.CODE, [message], set())
            return self._needs_rewards(original, out, s, trainer, self._unfollowed(trainer))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        module = with_body(
            updated_node, self._body(original_node.body, updated_node.body, top=True)
        )
        if self.orphaned:
            module = drop_orphaned_imports(
                module, self.orphaned - edits.names(module, skip_imports=True), self.state
            )
        if self.left_outside:  # built in another function, whose block was left first
            marker = _MarkBuilt(self, self.left_outside)
            module = module.visit(marker)  # type: ignore[assignment]
            # Each finding goes on the same statement of the tree this pass read (in order).
            built = [
                s for s in walk.find_all(original_node, cst.SimpleStatementLine) if marker.builds(s)
            ]
            for k, message in marker.messages:
                if k < len(built):
                    self.report(built[k], message, fix=Fix.MANUAL)
        return module

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        return with_body(updated_node, self._body(original_node.body, updated_node.body, top=False))

    # -- one block: find the loops, rewrite each whole or leave it with a TODO
    # -------------------------
    def _body(
        self, original: Sequence[cst.BaseStatement], body: Sequence[cst.BaseStatement], *, top: bool
    ) -> list[cst.BaseStatement]:
        out = list(body)
        for k, stmt in enumerate(original):  # a trainer whose step() the rewrite cannot follow
            assign = edits.assignment(stmt)
            name = get_full_name_for_node(assign.targets[0].target) if assign else None
            if (
                assign is None
                or name not in self.orphans | self.left_outside
                or not isinstance(assign.value, cst.Call)
                or edits.kwarg(assign.value, "reward_funcs") is not None
            ):
                continue
            message = self._unfollowed(name) if name in self.orphans else self._left_message()
            self.report(stmt, message, fix=Fix.MANUAL)
            out[k] = with_todos(out[k], self.CODE, [message], set())
        for i, stmt in enumerate(original):
            kind = self._loop_kind(stmt)
            if kind is None:
                continue
            before = list(out)
            handle = {
                "once": self._once,
                "lifted": self._lifted_loop,
                "bar": self._barred_loop,
                "loop": self._one_loop,
            }[kind]
            return self._later_loops(original, before, handle(original, out, i, top=top), i)
        return out

    def _loop_kind(self, stmt: cst.BaseStatement) -> str | None:
        """What of the PPO loops this block rewrites `stmt` is: a step run "once", an `if`
        whose body holds a loop ("lifted"), a progress-bar `with` around one ("bar"), a
        "loop"; None for any other statement (a loop the block around it rewrites too)."""
        if id(stmt) in self.once:
            return "once"
        if isinstance(stmt, cst.If) and id(stmt) in self.lifted:
            return "lifted"
        if isinstance(stmt, cst.With) and id(stmt) in self.bars:
            return "bar"
        if not isinstance(stmt, cst.For) or id(stmt) in self.wrapped:
            return None
        if id(stmt) in self.lifted.values() or id(stmt) in self.bars.values():
            return None  # the block around its `if` (its `with`) rewrites it
        if not self._is_ppo_loop(stmt) and self._epochs_of(stmt) is None:
            return None
        return "loop"

    def _later_loops(
        self,
        original: Sequence[cst.BaseStatement],
        before: Sequence[cst.BaseStatement],
        result: list[cst.BaseStatement],
        i: int,
    ) -> list[cst.BaseStatement]:
        """`result` (the block with its first PPO loop, at `i`, rewritten or left) with a TODO
        on every PPO loop below that one: the rewrite gives a trainer one reward function and
        one `train()` for one loop, so a second loop of the block is left, saying so."""
        for k in range(i + 1, len(original)):
            stmt = original[k]
            kind = self._loop_kind(stmt)
            at = next((j for j, s in enumerate(result) if s is before[k]), None)
            if kind is None or at is None:
                continue
            loop: cst.BaseStatement | None = stmt
            if kind == "bar":
                loop = ppo.bar_loop(stmt)  # type: ignore[arg-type]
            elif kind == "lifted":
                loop = next(s for s in stmt.body.body if id(s) == self.lifted[id(stmt)])  # type: ignore[attr-defined]
            trainer = self._trainer_of(loop) if isinstance(loop, cst.For) else ""
            if kind == "once":
                call = next(
                    c
                    for x in stmt.body  # type: ignore[attr-defined]
                    if (c := self._trainer_call(x, "step")) is not None
                )
                trainer = get_full_name_for_node(call.func.value) or "trainer"  # type: ignore[attr-defined]
                message = self._orphan_message(
                    trainer, second_loop(result[:at], trainer, self.functions | {self.reward_name})
                )
                self.report(stmt, message, fix=Fix.MANUAL)
                result[at] = with_todos(result[at], self.CODE, [message], set())
            else:
                why = second_loop(result[:at], trainer, self.functions | {self.reward_name})
                result[at] = self._left_inside(stmt, result[at], loop, trainer, why)  # type: ignore[arg-type]
            result = self._needs_rewards(original, result, k, trainer, before=before)
        return result

    def _lifted_loop(
        self,
        original: Sequence[cst.BaseStatement],
        out: list[cst.BaseStatement],
        i: int,
        *,
        top: bool,
    ) -> list[cst.BaseStatement]:
        """The loop in the body of the `if` at `i` (`if args.do_train:`), whose trainer this
        block builds above that `if`: rewritten as if it stood in this block, its `train()` kept
        in the `if`."""
        guard, updated = original[i], out[i]
        inner = list(guard.body.body)  # type: ignore[attr-defined]
        j = next(k for k, s in enumerate(inner) if id(s) == self.lifted[id(guard)])
        self.installed_at = None
        result = self._one_loop(
            [*original[:i], *inner],
            [*out[:i], *updated.body.body],  # type: ignore[attr-defined]
            i + j,
            top=top,
        )
        head = i if self.installed_at is None else self.installed_at - j
        body = updated.body.with_changes(body=result[head:])  # type: ignore[attr-defined]
        return [*result[:head], updated.with_changes(body=body), *out[i + 1 :]]

    def _one_loop(
        self,
        original: Sequence[cst.BaseStatement],
        out: list[cst.BaseStatement],
        i: int,
        *,
        top: bool,
    ) -> list[cst.BaseStatement]:
        """The block with its loop at `i` rewritten, or left with its TODO and a draft."""
        stmt = original[i]
        assert isinstance(stmt, cst.For)
        trainer = self._trainer_of(stmt)
        reported = len(self.state.findings)
        try:
            out = self._rewrite(out, i, stmt, trainer, top=top)
        except Refused as e:
            self.forget_findings(reported)  # all or nothing: no finding of a half-made rewrite
            out = self._left_loop(original, out, i, trainer, str(e))
            out = self._needs_rewards(original, out, i, trainer)
        return out  # one loop per block: the statement indexes below it have moved

    def _left_inside(
        self,
        stmt: cst.BaseStatement,
        updated: cst.BaseStatement,
        loop: cst.For,
        trainer: str,
        why: str,
    ) -> cst.BaseStatement:
        """`updated` (the block's statement `stmt`, as updated) with its PPO `loop` left for
        `why`: the loop itself, or the loop inside the `if` or progress-bar `with` that holds
        it, where the TODO goes on the loop as a run that meets that loop first puts it."""
        if stmt is loop:
            return self._left(loop, loop, updated, trainer, why)
        inner = list(stmt.body.body)  # type: ignore[attr-defined]
        new_inner = list(updated.body.body)  # type: ignore[attr-defined]
        j = next(k for k, s in enumerate(inner) if s is loop)
        new_inner = self._left_loop(inner, new_inner, j, trainer, why)
        return updated.with_changes(body=updated.body.with_changes(body=new_inner))  # type: ignore[attr-defined]

    def _left_loop(
        self,
        original: Sequence[cst.BaseStatement],
        out: list[cst.BaseStatement],
        i: int,
        trainer: str,
        why: str,
    ) -> list[cst.BaseStatement]:
        """The block with its loop at `i` left as it is, with the TODO naming `why` and a draft."""
        stmt = original[i]
        assert isinstance(stmt, cst.For)
        out = list(out)
        out[i] = self._left(stmt, stmt, out[i], trainer, why)
        return out

    def _left(
        self,
        loop: cst.For,
        at: cst.BaseStatement,
        node: cst.BaseStatement,
        trainer: str,
        why: str,
    ) -> cst.BaseStatement:
        """`node` (the statement `at` holding `loop`, as updated) with the TODO of a loop left
        as it is for `why`, and a draft of its reward function from `loop`'s code."""
        skeleton = (
            f"`def {REWARD_FN}(prompts, completions, **kwargs): return [<your score for p "
            "+ c> for p, c in "
            f"zip(prompts, completions)]`, then `{trainer} = {self.trainer_cls}(model=..., "
            f"reward_funcs={REWARD_FN}, args=config, train_dataset=dataset, "
            "processing_class=tokenizer)` "
            f"and `{trainer}.train()` in place of this loop"
        )
        message = (
            f"TRL 1.13 has no PPO step loop and this one was left as it is ({why}); write "
            f"{skeleton}; "
            "generation settings go in the config (max_completion_length, temperature, "
            "top_k, top_p, "
            "generation_kwargs), and so does how long the loop trained (`max_steps` or "
            "`num_train_epochs`: `train()` makes 3 passes over the dataset unless told)"
        )
        draft = self.draft(loop, trainer)
        if draft:
            message += (
                "; a draft from this loop's own reward code is below (check what "
                "the reason above names)"
            )
        self.report(at, message, fix=Fix.MANUAL)
        return with_draft(with_todos(node, self.CODE, [message], set()), draft)

    def _needs_rewards(
        self,
        original: Sequence[cst.BaseStatement],
        out: list[cst.BaseStatement],
        loop_at: int,
        trainer: str,
        message: str = "",
        before: Sequence[cst.BaseStatement] | None = None,
    ) -> list[cst.BaseStatement]:
        """The trainer built above a loop left as it is (or a step run once) has no reward yet,
        and TRL 1.13 refuses to build it without one: that line gets a TODO too (`message`, by
        default the loop's), so a run that stops there says why. `before`: `out` as it was
        before another loop of the block was rewritten (the statements of `original` by
        position); a trainer statement no longer in `out` was rewritten or marked already."""
        for k in range(loop_at - 1, -1, -1):
            assign = edits.assignment(original[k])
            if assign is None or get_full_name_for_node(assign.targets[0].target) != trainer:
                continue
            if (
                not isinstance(assign.value, cst.Call)
                or edits.kwarg(assign.value, "reward_funcs") is not None
            ):
                return out
            at = (
                k
                if before is None
                else next((j for j, s in enumerate(out) if s is before[k]), None)
            )
            if at is None:
                return out
            message = message or self._left_message()
            self.report(original[k], message, fix=Fix.MANUAL)
            out[at] = with_todos(out[at], self.CODE, [message], set())
            return out
        self.left_outside.add(trainer)  # built in an enclosing block: `_body` marks it there
        return out

    def _unfollowed(self, trainer: str) -> str:
        return (
            f"{self.trainer_cls} needs `reward_funcs`: the rewards came from "
            f"`{trainer}.step(...)`, which this rule could not follow (see its TODO); pass "
            f"`reward_funcs={REWARD_FN}` here once it is written"
        )

    def _left_message(self) -> str:
        return (
            f"{self.trainer_cls} needs `reward_funcs`: the rewards came from the PPO loop "
            "below, which is "
            f"left for you (see its TODO); pass `reward_funcs={REWARD_FN}` here once it is "
            "written"
        )

    def _is_ppo_loop(self, loop: cst.For) -> bool:
        return any(self._steps(s) for s in edits.statements(unguarded(loop.body, self._steps)[0]))

    def _stepped(self, stmt: cst.CSTNode) -> str | None:
        """The trainer whose `step(...)` a statement calls, or None."""
        call = self._trainer_call(stmt, "step")
        return None if call is None else get_full_name_for_node(call.func.value)  # type: ignore[attr-defined]

    def _steps(self, stmt: cst.CSTNode) -> bool:
        """Whether a statement of a loop body calls a PPO trainer's `step(...)`."""
        return self._trainer_call(stmt, "step") is not None

    def _encoder_decoder(self) -> bool:
        """Whether the file builds an encoder-decoder policy (T5, BART, a Seq2Seq value head):
        their legacy `generate` never returned the prompt."""
        return any(
            "Seq2Seq" in n or n.startswith(("T5", "MT5", "Bart", "MBart", "Pegasus"))
            for n in self.module_names
        )

    def _trainer_of(self, loop: cst.For) -> str:
        if self._epochs_of(loop) is not None:
            loop = self._inner_of(loop)
        for s in edits.statements(unguarded(loop.body, self._steps)[0]):
            call = self._trainer_call(s, "step")
            if call is not None:
                return get_full_name_for_node(call.func.value) or "trainer"  # type: ignore[attr-defined]
        return "trainer"

    def _trainer_call(self, stmt: cst.CSTNode, method: str) -> cst.Call | None:
        value = stmt.value if isinstance(stmt, (cst.Expr, cst.Assign)) else None
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == method
        ) and (get_full_name_for_node(value.func.value) or "") in self.trainers:
            return value
        return None


def _generated_at(original: Sequence[cst.BaseStatement], s: int, step: cst.Call) -> int:
    """Where the block binds the responses the step at `s` takes (`response_tensor =
    trainer.generate(...)` or `respond_to_batch(...)`): the first statement of its one turn."""
    responses = first_row(step.args[1].value) if len(step.args) == 3 else None
    if responses is None:
        raise Refused("`.step(...)` does not take `[query[0]]`, `[response[0]]` and a rewards list")
    for k in range(s - 1, -1, -1):
        if responses in edits.bound_names(original[k]):
            return k
    raise Refused(f"`{responses}` is not made in the same block")


def _range_one(body: list[cst.BaseStatement]) -> cst.For:
    """`for _ in range(1):` around `body`: the one turn of a step run once."""
    return cst.For(
        target=cst.Name("_"),
        iter=cst.parse_expression("range(1)"),
        body=cst.IndentedBlock(body=body),
    )


def _builds(stmts: Sequence[cst.BaseStatement], name: str) -> bool:
    """Whether one of `stmts` assigns a call's result to `name` (`trainer = PPOTrainer(...)`)."""
    for stmt in stmts:
        assign = edits.assignment(stmt)
        if (
            assign is not None
            and get_full_name_for_node(assign.targets[0].target) == name
            and isinstance(assign.value, cst.Call)
        ):
            return True
    return False


class _MarkBuilt(cst.CSTTransformer):
    """The statements that build a trainer of `names` (a loop of which was left for a human, in
    another function) without `reward_funcs`: each gets the TODO that says why it will not build."""

    def __init__(self, owner: RewritePPOLoop, names: set[str]) -> None:
        super().__init__()
        self.owner, self.names = owner, names
        self.seen = 0  # statements that build such a trainer, so far
        self.messages: list[tuple[int, str]] = []  # (which of them, its TODO) for each marked

    def builds(self, stmt: cst.SimpleStatementLine) -> str | None:
        """The trainer variable `stmt` builds without `reward_funcs`, or None."""
        assign = edits.assignment(stmt)
        name = get_full_name_for_node(assign.targets[0].target) if assign else None
        if (
            assign is None
            or name not in self.names
            or not isinstance(assign.value, cst.Call)
            or get_full_name_for_node(assign.value.func) != self.owner.trainer_cls
            or edits.kwarg(assign.value, "reward_funcs") is not None
        ):
            return None
        return name

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        name = self.builds(updated_node)
        if name is None:
            return updated_node
        message = (
            f"{self.owner.trainer_cls} needs `reward_funcs`: the rewards came from a PPO loop "
            f"elsewhere in this file that steps `{name}`, which is left for you (see its TODO); "
            f"pass `reward_funcs={REWARD_FN}` here once it is written"
        )
        self.seen += 1
        marked = with_todos(updated_node, self.owner.CODE, [message], set())
        if marked is not updated_node and not any(
            line.comment is not None and "needs `reward_funcs`" in line.comment.value
            for line in updated_node.leading_lines
        ):  # not one its own block already marked (`_body`)
            self.messages.append((self.seen - 1, message))
            return marked  # type: ignore[no-any-return]
        return updated_node

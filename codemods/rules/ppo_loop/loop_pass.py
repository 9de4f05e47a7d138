"""The base class of TRL106's pass and of its concept mixins: the attributes `visit_Module` sets,
and the methods one mixin calls on another (each defined in the module named beside it)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from codemods.base import RuleTransformer
from codemods.reaching import Rebound
from codemods.rules.ppo_loop.shape import Bound, Line, Pairs


class LoopPass(RuleTransformer):
    trainers: set[str]  # names bound to PPO trainers (and target trainers TRL104 wrote)
    dicts: dict[str, dict[str, cst.BaseExpression]]  # dict literals by variable
    scoped_dicts: dict[
        tuple[int, str], dict[str, cst.BaseExpression]
    ]  # by (function body, variable)
    # by (function body, variable): dicts bound more than once, the last above a loop counts;
    # None until a loop's `**kwargs` asks
    rebound: dict[tuple[int, str], Rebound[Pairs]] | None
    samplers: dict[str, tuple[Bound, Bound]]  # LengthSampler(lo, hi) by variable
    single: dict[str, cst.BaseExpression]  # names the module binds once, to what
    reward_name: str  # the reward function's name: `reward_fn`, unless the file uses it
    functions: set[str]  # the names of the functions the file defines
    trainer_cls: str
    config_cls: str
    module_names: set[str]
    tree: cst.Module  # the file as it was, for uses outside a loop
    orphaned: set[str]  # local names of `respond_to_batch` whose uses this rule rewrote
    # whether the last `.generate(...)` read returned prompt + response (return_prompt, default
    # True in every legacy release; encoder-decoder models never returned the prompt)
    prompt_returned: bool
    # `if` statements (by id) whose body holds a PPO loop (by id) whose trainer the block around
    # the `if` builds: rewritten from that block
    lifted: dict[int, int]
    installed_at: int | None  # where the last `_install` put `train()` in its block
    # where the trainer's config is built: "block" (a statement of the loop's block), "imported"
    # (another file of the run: the loop's settings go to a copy), "inline" (the trainer call's
    # own `args=RLOOConfig(...)`)
    config_kind: str

    def _rewrite(
        self, body: list[cst.BaseStatement], index: int, loop: cst.For, trainer: str, *, top: bool
    ) -> list[cst.BaseStatement]:
        raise NotImplementedError  # loop.py

    def _loop_generate(
        self, s: cst.CSTNode, queries: str | None, responses: str | None
    ) -> tuple[dict[str, cst.BaseExpression], str | None]:
        raise NotImplementedError  # loop.py

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
        raise NotImplementedError  # loop.py

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
    ) -> list[cst.BaseStatement]:
        raise NotImplementedError  # loop.py

    def _epochs_of(self, loop: cst.For) -> cst.BaseExpression | None:
        raise NotImplementedError  # loop.py

    def _inner_of(self, outer: cst.For) -> cst.For:
        raise NotImplementedError  # loop.py

    def draft(self, loop: cst.For, trainer: str) -> list[str]:
        raise NotImplementedError  # loop.py

    def _is_ppo_loop(self, loop: cst.For) -> bool:
        raise NotImplementedError  # rewrite.py

    def _steps(self, stmt: cst.CSTNode) -> bool:
        raise NotImplementedError  # rewrite.py

    def _encoder_decoder(self) -> bool:
        raise NotImplementedError  # rewrite.py

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
        raise NotImplementedError  # fixed.py

    def _prompt_text(
        self, before: list[cst.BaseStatement], queries: str, trainer_at: int
    ) -> cst.BaseExpression:
        raise NotImplementedError  # fixed.py

    def _fixed_generation(
        self, value: cst.BaseExpression, queries: str, trainer_stmt: cst.BaseStatement
    ) -> dict[str, cst.BaseExpression]:
        raise NotImplementedError  # fixed.py

    def _respond_to_batch(
        self, call: cst.Call, queries: str, trainer_stmt: cst.BaseStatement
    ) -> dict[str, cst.BaseExpression]:
        raise NotImplementedError  # fixed.py

    def _generation(
        self,
        call: cst.Call,
        queries: str | None,
        *,
        ref: bool = False,
        at: cst.CSTNode | None = None,
    ) -> dict[str, cst.BaseExpression]:
        raise NotImplementedError  # generation.py

    def _with_generation(
        self,
        stmt: cst.BaseStatement,
        gen: dict[str, cst.BaseExpression],
        config_name: str = "",
    ) -> list[cst.BaseStatement]:
        raise NotImplementedError  # generation.py

    def _inline_generation(
        self, trainer_stmt: cst.BaseStatement, gen: dict[str, cst.BaseExpression]
    ) -> cst.BaseStatement:
        raise NotImplementedError  # generation.py

    def _config_copy(
        self, gen: dict[str, cst.BaseExpression], config_name: str
    ) -> list[cst.BaseStatement]:
        raise NotImplementedError  # generation.py

    def _reward_body(
        self,
        lines: list[Line],
        batch: str | None,
        completions: str,
        forbidden: set[str | None],
        rewards: str | None,
        *,
        column_as: str = "completions",
        trainer: str | None = None,
    ) -> list[cst.BaseStatement]:
        raise NotImplementedError  # rewards.py

    def _trainer_and_config(
        self, before: list[cst.BaseStatement], trainer: str
    ) -> tuple[int, int, str]:
        raise NotImplementedError  # rewards.py

    def _trainer_call(self, stmt: cst.CSTNode, method: str) -> cst.Call | None:
        raise NotImplementedError  # rewrite.py

"""TRL104 ppo-trainer: `PPOTrainer(...)` / `PPOv2Trainer(...)` of every era become `RLOOTrainer(...)`
(or `GRPOTrainer(...)`), keyword or positional, and their method and attribute uses follow.

TRL 1.13 removed PPO (huggingface/trl#7020). Policy -> `model`, reward model -> `reward_funcs`
(+ `reward_processing_classes`: a v2 reward model read the policy's token ids, so it shares the
policy tokenizer), tokenizer -> `processing_class`, optimizer -> `optimizers=(opt, sched)`;
reference and value models are dropped with findings. The legacy `generate`/`step` loop is
TRL106's; a legacy trainer without one gets a TODO for its reward function.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import ppo, walk
from codemods.base import FileState, Rule, RuleTransformer
from migrate.kernel.findings import Severity

LOOP_METHODS = ("step", "generate", "log_stats", "dataloader")  # the legacy loop: TRL106
REMOVED_CALL_TODO = (
    "`{owner}.generate_completions()` was removed: {cls} has no such method. To see sample completions, set "
    "`log_completions=True` in the config (logged every logging_steps), or call `{owner}.evaluate()` for eval metrics"
)
REWARD_TODO = (
    "{cls} needs `reward_funcs`: legacy PPO got rewards from your loop. Write `def reward_fn(prompts, "
    "completions, **kwargs) -> list[float]` with your reward computation and pass `reward_funcs=reward_fn`"
)


class RewritePPOTrainer(RuleTransformer):
    NAMES = (*ppo.TRAINER_NAMES, *ppo.TRAINER_HELPERS)
    CODE = "TRL104"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        facts = ppo.FileFacts(self)
        node.visit(facts)
        self.file_era = facts.era()
        self.target = self.state.options.target
        self.new_name = ppo.target_trainer(self.target)
        self.trainer_vars = facts.trainer_vars
        self.loop_vars = _looped(node, facts.trainer_vars)
        self.loaded = _loaded_from_path(node)
        self.assignments: dict[str, cst.Call] = {}  # variable -> the call assigned to it
        self._handled: set[int] = set()
        self._dropped: set[int] = (
            set()
        )  # `trainer.generate_completions()` statements, and their callees
        table = ppo.mapping()["trainer"]
        self.kwargs, self.positional, self.methods = (
            table["kwargs"],
            table["positional"],
            table["methods"],
        )

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target  # a monkeypatch of a PPO class is TRL107's
        while isinstance(target, cst.Attribute):
            target = target.value
            self._handled.add(id(target))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:  # subclasses are TRL107's
            self._handled.add(id(base.value))

    def era_of(self, call: cst.Call, hint: str | None) -> str | None:
        if hint is not None:
            return hint
        keys = {a.keyword.value for a in call.args if a.keyword is not None}
        positional = sum(1 for a in call.args if a.keyword is None and not a.star)
        legacy = (
            positional >= 2
            or bool(keys & {"dataset", "num_shared_layers", "training_data_collator", "optimizer"})
            or (bool(keys & {"config", "tokenizer"}) and not keys & {"reward_model", "policy"})
        )
        v2 = bool(
            keys
            & {
                "args",
                "processing_class",
                "reward_model",
                "value_model",
                "train_dataset",
                "policy",
                "ref_policy",
            }
        )
        if legacy != v2:
            return ppo.LEGACY if legacy else ppo.V2
        return None if legacy else self.file_era

    # -- the call --------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        if ppo.ppo_class(self.qualified_names(node.func), ppo.TRAINER_NAMES):
            self._handled.add(id(node.func))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        found = ppo.ppo_class(self.qualified_names(original_node.func), ppo.TRAINER_NAMES)
        if found is None:
            return updated_node
        name, hint = found
        era = self.era_of(original_node, hint)
        func = self._renamed(original_node.func)
        named, fail = self._named_args(original_node, updated_node, era)
        if era is None:
            fail = "cannot tell which PPO era this call is from"
        if fail or func is None:
            self.todo(
                original_node,
                f"`{name}` is gone in TRL 1.13 and this call was left as it is: "
                f"{fail or 'import the new trainer from trl'}; rewrite it as `{self.new_name}(...)` following "
                "docs/rules.md (TRL104)",
            )
            return updated_node
        assert era is not None
        out: dict[
            str, tuple[str | None, cst.BaseExpression]
        ] = {}  # new keyword -> (old keyword, value)
        optimizer: list[cst.BaseExpression | None] = [None, None]
        for key, (orig, value) in named.items():
            row = self.kwargs[key]
            kind = row["kind"]
            if kind in ("same", "rename"):
                out[row.get("to", key)] = (key, value)
            elif kind == "drop":
                self.report(orig, f"`{key}` dropped: {row['why']}", severity=Severity.INFO)
            elif kind == "gone":
                self.report(
                    orig,
                    f"`{key}` dropped: {row['why']}; the learned value baseline is gone "
                    "(RLOO/GRPO use the other samples of the prompt as the baseline)",
                    severity=Severity.WARNING,
                )
            elif key in ("ref_model", "ref_policy"):
                self._reference_note(orig, named)
            elif key == "reward_model":
                out["reward_funcs"] = (key, value)
                tokenizer = named.get("processing_class", named.get("tokenizer"))
                if tokenizer is not None:
                    out["reward_processing_classes"] = (None, tokenizer[1])
                self.report(
                    orig,
                    "`reward_model` is `reward_funcs` now and scores the decoded text, re-tokenized with "
                    "`reward_processing_classes` (the policy tokenizer, as PPO used)",
                    severity=Severity.WARNING,
                )
            elif key in ("optimizer", "lr_scheduler"):
                optimizer[0 if key == "optimizer" else 1] = value
        for key in ("train_dataset", "eval_dataset"):  # TRL105 gives them a "prompt" column
            if key in out and get_full_name_for_node(out[key][1]):
                self.state.shared.ppo_datasets.add(
                    get_full_name_for_node(out[key][1]) or ""
                )
        if any(o is not None for o in optimizer):
            parts = ", ".join(ppo.code(o).strip() if o is not None else "None" for o in optimizer)
            out["optimizers"] = (None, cst.parse_expression(f"({parts})"))
        if "reward_funcs" not in out:
            var = self._assigned_var(original_node)
            if (
                var not in self.loop_vars
            ):  # a loop that calls .step() is TRL106's: it writes reward_funcs
                self.todo(original_node, REWARD_TODO.format(cls=self.new_name))
        if "model" not in out:
            self.todo(original_node, f"{self.new_name} needs `model=` (the policy, or its path)")
        # Keyword arguments that survive keep their own comma (and comments); the rest are new.
        by_key = {a.keyword.value: a for a in updated_node.args if a.keyword is not None}
        last = (
            updated_node.args[-1].keyword.value
            if updated_node.args and updated_node.args[-1].keyword
            else None
        )
        args: list[cst.Arg] = []
        fresh: set[int] = set()
        for key, (source, value) in out.items():
            arg = (
                by_key[source].with_changes(keyword=cst.Name(key))
                if source in by_key
                else ppo.new_kwarg(key, value)
            )
            if source not in by_key or source == last:
                fresh.add(id(arg))
            args.append(arg)
        self.report(
            original_node,
            f"`{name}` ({ppo.ERA_TEXT[era]}) was removed; rewritten as `{self.new_name}`",
        )
        return updated_node.with_changes(func=func, args=ppo.relayout(updated_node, args, fresh))

    def _named_args(self, original: cst.Call, updated: cst.Call, era: str | None):  # type: ignore[no-untyped-def]
        """{old keyword: (original arg, updated value)}, or a reason the call cannot be rewritten."""
        order = self.positional.get(era or "", [])
        named: dict[str, tuple[cst.Arg, cst.BaseExpression]] = {}
        for i, (orig, arg) in enumerate(zip(original.args, updated.args)):
            if arg.star:
                return (
                    named,
                    f"it passes `{arg.star}{ppo.code(arg.value).strip()}`; write the keywords out",
                )
            key = (
                arg.keyword.value
                if arg.keyword is not None
                else (order[i] if i < len(order) else None)
            )
            if key is None or key not in self.kwargs:
                return named, f"argument {ppo.code(arg).strip().rstrip(',')!s} has no known meaning"
            named[key] = (orig, arg.value)
        return named, ""

    def _reference_note(self, orig: cst.Arg, named: dict) -> None:
        if isinstance(orig.value, cst.Name) and orig.value.value == "None":
            self.report(
                orig,
                "`ref_model=None` dropped: RLOO/GRPO make their own reference",
                severity=Severity.INFO,
            )
            return
        model = named.get("model", named.get("policy"))
        model_name = get_full_name_for_node(model[1]) if model else None
        if model is not None and (
            isinstance(model[1], cst.SimpleString) or model_name in self.loaded
        ):
            self.report(
                orig,
                "reference model dropped: TRL 1.13 reloads the reference from the model's path "
                "(model.config._name_or_path) when beta != 0, or disables the PEFT adapters",
                severity=Severity.INFO,
            )
        else:
            built = (
                "this model was built in memory, so"
                if model_name in self.assignments
                else "if this model was built in memory (not loaded from a path),"
            )
            self.report(
                orig,
                "reference model dropped: TRL 1.13 reloads the reference from model.config._name_or_path "
                f"when beta != 0; {built} save it and pass its path as `model=` (or use peft_config, or beta=0.0)",
                severity=Severity.WARNING,
            )

    def _assigned_var(self, call: cst.Call) -> str | None:
        return next((v for v, c in self.assignments.items() if c is call), None)

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call):
            for t in node.targets:
                name = get_full_name_for_node(t.target)
                if name:
                    self.assignments[name] = node.value

    def _renamed(self, ref: cst.BaseExpression) -> cst.BaseExpression | None:
        if isinstance(ref, cst.Name):
            self.state.shared.trainer_imports.add(self.new_name)
            return cst.Name(self.new_name)
        if (get_full_name_for_node(ref) or "").split(".")[0] == "trl":
            return cst.parse_expression(f"trl.{self.new_name}")
        return None

    # -- uses of the trainer: methods and attributes ------------------------------------------------
    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        owner = get_full_name_for_node(original_node.value) or ""
        if owner not in self.trainer_vars or self.in_import:
            return self._reference(original_node, updated_node)
        attr = original_node.attr.value
        if attr in LOOP_METHODS:
            if owner not in self.loop_vars:
                self.todo(
                    original_node,
                    f"`{owner}.{attr}` belongs to the legacy PPO loop, which TRL 1.13 does not "
                    f"have: generation and updates happen inside `{owner}.train()`",
                )
            return updated_node
        row = self.methods.get(attr)
        if id(original_node) in self._dropped:
            self.todo(
                original_node,
                REMOVED_CALL_TODO.format(owner=owner, cls=self.new_name),
                severity=Severity.WARNING,
            )
        elif row is None:
            self.todo(original_node, f"`{owner}.{attr}` has no counterpart on {self.new_name}")
        elif row["kind"] == "rename":
            self.report(
                original_node, f"`{owner}.{attr}` is `{owner}.{row['to']}` on {self.new_name}"
            )
            return updated_node.with_changes(attr=cst.Name(row["to"]))
        elif row["kind"] == "todo":
            self.todo(original_node, row["todo"])
        elif attr == "current_device":
            self.report(original_node, f"`{owner}.current_device` is `{owner}.accelerator.device`")
            return cst.parse_expression(
                f"{ppo.code(updated_node.value).strip()}.accelerator.device"
            )
        return updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    # -- `trainer.generate_completions()` on its own line: removed, its TODO stays in its place ---------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        expr = node.body[0] if len(node.body) == 1 else None
        call = expr.value if isinstance(expr, cst.Expr) else None
        if (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "generate_completions"
            and (get_full_name_for_node(call.func.value) or "") in self.trainer_vars
        ):
            self._dropped.update((id(node), id(call.func)))

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        if not any(id(s) in self._dropped for s in original_node.body):
            return updated_node
        body, rest = _drop_statements(original_node.body, updated_node.body, self._dropped)
        if not body:  # a block needs a statement
            body, rest = [cst.SimpleStatementLine([cst.Pass()], leading_lines=rest)], []
        return updated_node.with_changes(body=body, footer=_merged(rest, updated_node.footer))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not any(id(s) in self._dropped for s in original_node.body):
            return updated_node
        body, rest = _drop_statements(original_node.body, updated_node.body, self._dropped)
        return updated_node.with_changes(body=body, footer=_merged(rest, updated_node.footer))

    def _reference(self, original, updated):  # type: ignore[no-untyped-def]
        if self.in_import or id(original) in self._handled:
            return updated
        found = ppo.ppo_class(
            self.qualified_names(original), (*ppo.TRAINER_NAMES, *ppo.TRAINER_HELPERS)
        )
        if found is None:
            return updated
        self._handled.add(id(original))
        if self.in_mutation:
            self.todo(
                original,
                f"this changes `{found[0]}`, which TRL 1.13 removed; `{self.new_name}` is no drop-in "
                "(no value model, no step(), generation inside train()): port the change to it by hand",
            )
            return updated
        if found[0] in ppo.TRAINER_HELPERS:
            self.todo(original, f"`{found[0]}` was part of PPOTrainer and is gone in TRL 1.13")
            return updated
        new = self._renamed(original)
        if new is None:
            self.todo(original, f"`{found[0]}` is gone in TRL 1.13: use `trl.{self.new_name}`")
            return updated
        self.report(original, f"`{found[0]}` was removed; `{self.new_name}` takes its place")
        return new


def _drop_statements(
    original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement], dropped: set[int]
) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
    """The block without the `dropped` statements, whose comments (and TODOs) go on the next
    statement; those of a dropped last statement are returned, for the block's footer."""
    assert len(original) == len(updated)  # this pass adds or removes no other statement
    body: list[cst.BaseStatement] = []
    carry: list[cst.EmptyLine] = []
    for orig, stmt in zip(original, updated):
        if id(orig) in dropped and isinstance(stmt, cst.SimpleStatementLine):
            carry += list(stmt.leading_lines)
            comment = stmt.trailing_whitespace.comment
            if comment is not None:
                carry.append(cst.EmptyLine(comment=comment))
            continue
        if carry:
            stmt = stmt.with_changes(leading_lines=_merged(carry, stmt.leading_lines))
            carry = []
        body.append(stmt)
    return body, carry


def _merged(first: Sequence[cst.EmptyLine], then: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """`first` + `then`, a repeated trl-migrate TODO written once."""
    out: list[cst.EmptyLine] = []
    seen: set[str] = set()
    for line in [*first, *then]:
        text = line.comment.value if line.comment is not None else ""
        if text.startswith("# TODO(trl-migrate ") and text in seen:
            continue
        seen.add(text)
        out.append(line)
    return out


def _looped(module: cst.Module, trainer_vars: set[str]) -> set[str]:
    """Trainer variables whose `.step(...)` is called: the legacy loop, rewritten by TRL106."""
    found: set[str] = set()

    class _Find(walk.Visitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "step":
                owner = get_full_name_for_node(func.value) or ""
                if owner in trainer_vars:
                    found.add(owner)

    module.visit(_Find())
    return found


def _loaded_from_path(module: cst.Module) -> set[str]:
    """Names assigned from `X.from_pretrained(...)`: models whose path the trainer can reload."""
    found: set[str] = set()

    class _Find(walk.Visitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "from_pretrained"
            ):
                for t in node.targets:
                    name = get_full_name_for_node(t.target)
                    if name:
                        found.add(name)

    module.visit(_Find())
    return found


class PPOTrainerImports(ppo.FinishPPOImports):
    CODE = "TRL104"
    OWNED = (*ppo.TRAINER_NAMES, *ppo.TRAINER_HELPERS)

    @staticmethod
    def needed(state: FileState) -> set[str]:
        return state.shared.trainer_imports
    STILL_USED = "finish the TODOs on its remaining uses, then import RLOOTrainer (or GRPOTrainer) from trl instead"


class PPOTrainerRule(Rule):
    code = "TRL104"
    name = "ppo-trainer"
    summary = "Rewrite PPOTrainer/PPOv2Trainer of every era as RLOOTrainer (or GRPOTrainer), with its method uses."
    before = (
        "from trl import PPOTrainer\n"
        "trainer = PPOTrainer(args=config, processing_class=tok, model=policy, ref_model=ref, reward_model=rm, "
        "value_model=vm, train_dataset=ds)\n"
        "trainer.train()\n"
        'trainer.save_pretrained("out")\n'
    )
    after = (
        "from trl import RLOOTrainer\n"
        "trainer = RLOOTrainer(args=config, processing_class=tok, model=policy, reward_funcs=rm, "
        "reward_processing_classes=tok, train_dataset=ds)\n"
        "trainer.train()\n"
        'trainer.save_model("out")\n'
    )
    transformers = (RewritePPOTrainer, PPOTrainerImports)
    triggers = ("PPOTrainer", "PPOv2Trainer", "PolicyAndValueWrapper", "OnlineTrainerState")

"""TRL104: `PPOTrainer(...)` calls, keyword or positional, become the target trainer's: policy ->
`model`, reward model -> `reward_funcs`, tokenizer -> `processing_class`; reference and value
models dropped with findings."""

from __future__ import annotations

from typing import cast

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, walk
from codemods.rules.ppo_trainer.state import (
    REWARD_TODO,
    TrainerPass,
)
from migrate.kernel.findings import Severity


class TrainerCall(TrainerPass):
    """PPOTrainer(...) calls: arguments by keyword or position become the target trainer's."""

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
        if positional >= 2 and self.facts.signals & {ppo.V2, ppo.PPOV2, ppo.EXPERIMENTAL}:
            # the v2 trainers took their first six arguments by position too, in another order
            # (config, tokenizer, policy, ...): in a file with v2 code, positions are no sign
            v2 = True
        if legacy != v2:
            return ppo.LEGACY if legacy else ppo.V2
        return None if legacy else self.file_era

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        own = {c.name.value for c in walk.find_all(node, cst.ClassDef)} | _project_classes(node)
        # variable -> a class of this file (or one it imports from the project) it is bound to
        # (a wrapper around a model)
        self.wrapped: dict[str, str] = {}
        for assign in walk.find_all(node, cst.Assign):
            value = assign.value
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Name)
                and value.func.value in own
            ):
                for t in assign.targets:
                    if isinstance(t.target, cst.Name):
                        self.wrapped.setdefault(t.target.value, value.func.value)
        self._module = node  # its names are counted when a reference model is dropped

    # -- the call --------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        if ppo.ppo_class(self.names_from(node.func, "trl"), ppo.TRAINER_NAMES):
            self._handled.add(id(node.func))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        found = ppo.ppo_class(self.names_from(original_node.func, "trl"), ppo.TRAINER_NAMES)
        if found is None:
            return updated_node
        name, hint = found
        era = self.era_of(original_node, hint)
        func = self._renamed(original_node.func)
        named, fail = self._named_args(original_node, updated_node, era)
        if era is None:
            positional = sum(1 for a in original_node.args if a.keyword is None and not a.star)
            fail = (
                "its arguments are given by position, which the legacy trainer (config, model, "
                "ref_model, tokenizer, dataset, ...) and the v2 one (config, tokenizer, policy, "
                "ref_policy, reward_model, train_dataset, ...) read in different orders, and this "
                "file has code of both eras: name them (`args=`, `model=`, ...)"
                if positional >= 2
                else "cannot tell which PPO era this call is from"
            )
        if fail or func is None:
            self.todo(
                original_node,
                f"`{name}` is gone in TRL 1.13 and this call was left as it is: "
                f"{fail or 'import the new trainer from trl'}; rewrite it as "
                f"`{self.new_name}(...)` following "
                "docs/rules.md (TRL104)",
            )
            return updated_node
        assert era is not None
        self._eras_agree(original_node, named, era)
        self._peft_twice(original_node, named)
        out: dict[
            str, tuple[str | None, cst.BaseExpression]
        ] = {}  # new keyword -> (old keyword, value)
        optimizer: list[cst.BaseExpression | None] = [None, None]
        for key, (orig, value) in named.items():
            row = self.kwargs[key]
            kind = row["kind"]
            scheduler = _scheduler(key, value)
            if scheduler is not None:
                self.todo(
                    orig,
                    f"`{scheduler}` is stepped more often now: the PPO trainers stepped a "
                    "scheduler they were given once per rollout batch (legacy: each `step()`; "
                    f"v2: each batch of `train()`), {self.new_name} (a transformers Trainer) after "
                    "every optimizer step, num_iterations x steps_per_generation of them per "
                    "generation, so its schedule runs that many times faster: build it counting "
                    "optimizer steps (its `T_max`, `total_iters`, `step_size` times that), or drop "
                    "it and set `lr_scheduler_type` in the config",
                )
            if kind in ("same", "rename"):
                out[row.get("to", key)] = (key, value)
                if key == "callbacks" and not (
                    isinstance(value, (cst.List, cst.Tuple)) and not value.elements
                ):
                    self.report(
                        orig,
                        "`callbacks` kept: PPO's `state.global_step` (what a callback's "
                        "`on_step_end` reads, and `save_steps`/`eval_steps` count) went up once "
                        f"per rollout batch; {self.new_name}'s goes up once per optimizer step, "
                        "num_iterations x steps_per_generation / gradient_accumulation_steps of "
                        "them per generation, so a callback that acts at a step count (a "
                        "curriculum, a schedule, a stop) acts that many times sooner: scale its "
                        "counts by that number",
                        severity=Severity.WARNING,
                    )
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
                    "`reward_model` is `reward_funcs` now and scores the decoded text, "
                    "re-tokenized with "
                    "`reward_processing_classes` (the policy tokenizer, as PPO used); the text "
                    "is decoded without special tokens and re-tokenized without adding any, so "
                    "the score is read at the last token of the text, not at an EOS or after a "
                    "BOS the token ids PPO scored held (for chat prompts, at the end of the "
                    "chat template's rendering of prompt and completion)",
                    severity=Severity.WARNING,
                )
                wrapper = self.wrapped.get(get_full_name_for_node(value) or "")
                if wrapper is not None:
                    self.todo(
                        orig,
                        f"`{edits.code(value).strip()}` may be a `{wrapper}` of this project: PPO "
                        "scored with the reward model's backbone (`base_model_prefix`) and its "
                        f"`score` head, while {self.new_name} calls a reward model as "
                        "`model(input_ids=..., attention_mask=...)` and reads `.logits`: make "
                        f"`{wrapper}` answer that call (a `forward` that returns the reward in "
                        "`.logits`), or pass the model it wraps",
                    )
            elif key in ("optimizer", "lr_scheduler"):
                optimizer[0 if key == "optimizer" else 1] = value
        for key in ("train_dataset", "eval_dataset"):  # TRL105 gives them a "prompt" column
            if key in out and get_full_name_for_node(out[key][1]):
                self.state.shared.ppo_datasets.add(get_full_name_for_node(out[key][1]) or "")
        if any(o is not None for o in optimizer):
            parts = ", ".join(edits.code(o).strip() if o is not None else "None" for o in optimizer)
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
                else edits.new_kwarg(key, value)
            )
            if source not in by_key or source == last:
                fresh.add(id(arg))
            args.append(arg)
        self.report(
            original_node,
            f"`{name}` ({ppo.ERA_TEXT[era]}) was removed; rewritten as `{self.new_name}`",
        )
        return updated_node.with_changes(func=func, args=edits.relayout(updated_node, args, fresh))

    def _eras_agree(
        self, call: cst.Call, named: dict[str, tuple[cst.Arg, cst.BaseExpression]], era: str
    ) -> None:
        """A TODO when the config handed to this call was built by the other era's PPOConfig
        (a script caught halfway through an upgrade): no release took both, and each call was
        rewritten by its own keywords, so the config's values may not mean what the trainer's
        loop expects (legacy's `batch_size` is its rollout batch; v2 dropped it)."""
        given = named.get("config") or named.get("args")
        var = get_full_name_for_node(given[0].value) if given is not None else None
        built = self.state.shared.config_eras.get(var or "")
        if not built or (built == ppo.LEGACY) == (era == ppo.LEGACY):
            return
        self.todo(
            call,
            f"`{var}` was built as a {ppo.ERA_TEXT[built]} config, but this call is "
            f"{ppo.ERA_TEXT[era]}'s: no TRL release took both, so the script did not run as "
            "written; each was rewritten by its own keywords: check the config's values against "
            "what the trainer's loop expects (legacy's `batch_size` is the rollout batch, which "
            "v2 ignored)",
        )

    def _peft_twice(
        self, call: cst.Call, named: dict[str, tuple[cst.Arg, cst.BaseExpression]]
    ) -> None:
        """A TODO where `model` was made a PeftModel in this file and `peft_config=` is given
        too: PPOTrainer of TRL 0.13-1.12 merged that adapter into the weights and put a fresh
        one from peft_config on top; TRL 1.13's trainers raise on the pair."""
        given = named.get("peft_config")
        model = named.get("model", named.get("policy"))
        if given is None or model is None:
            return
        if isinstance(given[1], cst.Name) and given[1].value == "None":
            return
        model_name = get_full_name_for_node(model[1]) or ""
        maker = self.peft_models.get(model_name)
        if maker is None:
            return
        self.todo(
            call,
            f"`{model_name}` may be a PeftModel here (`{maker}(...)` in this file) and "
            f"`peft_config=` is given too: PPOTrainer of TRL 0.13-1.12 then merged that "
            "adapter into the weights and trained a fresh one from peft_config on top, while "
            f"{self.new_name} raises on the pair; pass `{model_name}.merge_and_unload()` with "
            "peft_config to keep the old behaviour, or the PeftModel alone to train its own "
            "adapter",
        )

    def _named_args(self, original: cst.Call, updated: cst.Call, era: str | None):  # type: ignore[no-untyped-def]
        """{old keyword: (original arg, updated value)}, or a reason the call cannot be
        rewritten."""
        order = self.positional.get(era or "", [])
        named: dict[str, tuple[cst.Arg, cst.BaseExpression]] = {}
        for i, (orig, arg) in enumerate(zip(original.args, updated.args)):
            if arg.star:
                return (
                    named,
                    f"it passes `{arg.star}{edits.code(arg.value).strip()}`; "
                    f"write the keywords out",
                )
            key = (
                arg.keyword.value
                if arg.keyword is not None
                else (order[i] if i < len(order) else None)
            )
            if key is None or key not in self.kwargs:
                return (
                    named,
                    f"argument {edits.arg_text(arg)!s} has no known meaning",
                )
            named[key] = (orig, arg.value)
        return named, ""

    def _reference_note(self, orig: cst.Arg, named: dict) -> None:
        if isinstance(orig.value, cst.Name) and orig.value.value == "None":
            model = named.get("model", named.get("policy"))
            model_name = get_full_name_for_node(model[1]) if model else None
            dtype = "" if model_name in self.peft_models else self._reload_dtype(model_name, None)
            self.report(
                orig,
                "`ref_model=None` dropped: RLOO/GRPO make their own reference" + dtype,
                severity=Severity.WARNING if dtype else Severity.INFO,
            )
            return
        self._reference_still_used(orig)
        self._reference_dropped(orig, named)

    def _reference_still_used(self, orig: cst.Arg) -> None:
        """A dropped reference model that other code of the file still reads (a comparison of
        generations after training): the legacy trainer moved it to the accelerator's device,
        and nothing does now."""
        if not isinstance(orig.value, cst.Name):
            return
        name = orig.value.value
        assigned = [
            a.value
            for a in walk.find_all(self._module, cst.Assign)
            for t in a.targets
            if isinstance(t.target, cst.Name) and t.target.value == name
        ]
        # a model the file builds (`AutoModelForCausalLM.from_pretrained`,
        # `create_reference_model`), not another object in the reference's place
        if not any(
            isinstance(v, cst.Call)
            and "model" in (func := (get_full_name_for_node(v.func) or "").lower())
            and "token" not in func
            for v in assigned
        ):
            return
        if self._reads_after(orig.value):
            self.report(
                orig,
                f"`{name}` is read below the trainer; the PPO trainer moved it to the "
                "accelerator's device (the GPU), and nothing moves it now: code that runs it on "
                "inputs of that device (a comparison after training) must move it there itself "
                f"(`{name}.to(device)`)",
                severity=Severity.INFO,
            )

    def _reads_after(self, passed: cst.Name) -> int:
        """How many times code after the trainer call reads the name `passed` holds: its Name
        nodes below it that are not a keyword (`ref_model=`), an attribute (`self.ref_model`),
        a parameter or a name stored to."""
        module = self._module
        skip = {id(a.keyword) for a in walk.find_all(module, cst.Arg) if a.keyword is not None}
        skip |= {id(a.attr) for a in walk.find_all(module, cst.Attribute)}
        skip |= {id(p.name) for p in walk.find_all(module, cst.Param)}
        skip |= {id(t.target) for t in walk.find_all(module, cst.AssignTarget)}
        names = [n for n in walk.find_all(module, cst.Name) if id(n) not in skip]
        at = next((i for i, n in enumerate(names) if n is passed), None)
        if at is None:
            return 0
        return sum(n.value == passed.value for n in names[at + 1 :])

    def _reference_dropped(self, orig: cst.Arg, named: dict) -> None:
        model = named.get("model", named.get("policy"))
        model_name = get_full_name_for_node(model[1]) if model else None
        ref_name = get_full_name_for_node(orig.value)
        policy_paths = self.loaded.get(model_name or "", set())
        ref_paths = self.loaded.get(ref_name or "", set())
        given = named["peft_config"][1] if "peft_config" in named else None
        peft = model_name in self.peft_models or (
            given is not None and not (isinstance(given, cst.Name) and given.value == "None")
        )
        # `peft_config=peft_config`, a value that may be None (TRL's own ppo.py: the config of
        # `--use_peft`, the reference loaded only where it is None; `self.peft_cfg`, a helper's
        # `build_lora_config(cfg)`): both cases are said; only a config class called right
        # there (`LoraConfig(...)`) is one for sure
        maybe = peft and model_name not in self.peft_models and not _config_built(given)
        if peft:
            loaded = f" (loaded from {', '.join(sorted(ref_paths))})" if ref_paths else ""
            where = (
                f"where `{edits.code(given).strip()}` is not None, the policy is a PEFT model"
                if maybe and given is not None
                else "the policy is a PEFT model"
            )
            self.report(
                orig,
                f"`{ref_name or edits.code(orig.value).strip()}`{loaded} dropped: {where}, and "
                f"for one {self.new_name} makes no reference model: the "
                "reference is a frozen copy of the adapter the policy starts with, on the same "
                "base (with peft < 0.20 and `target_parameters`, the base with the adapters "
                "disabled), which for a fresh LoRA is the base model itself; if the old "
                "reference was another model, the KL now pulls toward this one",
                severity=Severity.WARNING,
            )
            if not maybe:
                return
        dtype = self._reload_dtype(model_name, ref_name)
        if len(policy_paths) == 1 and len(ref_paths) == 1 and policy_paths != ref_paths:
            (policy_path,), (ref_path,) = policy_paths, ref_paths
            self.todo(
                orig,
                f"`{ref_name}` was loaded from {ref_path} and `{model_name}` from {policy_path}: "
                f"{self.new_name} reloads its reference from the policy's path when beta != 0, "
                f"so the KL would pull toward {policy_path} instead of {ref_path}; to keep the "
                f"old reference, set `{model_name}.config._name_or_path = {ref_path}` before "
                "building the trainer (it loads the reference from there)" + dtype,
            )
            return
        if model is not None and (
            isinstance(model[1], cst.SimpleString) or model_name in self.loaded
        ):
            self.report(
                orig,
                "reference model dropped: TRL 1.13 reloads the reference from the model's path "
                "(model.config._name_or_path) when beta != 0 (a PEFT model's reference is a frozen "
                "copy of its starting adapter instead)" + dtype,
                severity=Severity.WARNING if dtype else Severity.INFO,
            )
        else:
            built = (
                "this model was built in memory, so"
                if _built_in_memory(self.assignments.get(model_name or ""))
                else "if this model was built in memory (not loaded from a path),"
            )
            self.report(
                orig,
                "reference model dropped: TRL 1.13 reloads the reference from "
                "model.config._name_or_path "
                f"when beta != 0; {built} save it and pass its path as `model=` (or use "
                "peft_config, or beta=0.0)" + dtype,
                severity=Severity.WARNING,
            )

    def _reload_dtype(self, model_name: str | None, ref_name: str | None) -> str:
        """What a reference reloaded in float32 changes where this file loaded the old one (or
        the policy it copied) in another dtype; "" where it did not say."""
        given = self.dtypes.get(ref_name or "") or self.dtypes.get(model_name or "")
        if not given:
            return ""
        which = f"`{ref_name}`" if ref_name in self.dtypes else f"the policy `{model_name}`"
        value = given.partition("=")[2].strip()
        return (
            f"; {which} was loaded with `{given}`, and {self.new_name} loads its reference in "
            f'float32 unless the config sets `model_init_kwargs={{"dtype": {value}}}`: set it '
            "to keep the reference in that dtype (in float32 it takes twice the memory of a "
            "16-bit copy, and its log-probs lose the policy's rounding, so the KL starts off "
            "zero)"
        )


# Libraries whose classes a reward model may be built from that RLOO calls as TRL's own: a class
# imported from anywhere else is the project's (McClain-Thiel/PlasmidLLM's PlasmidRewardWrapper).
_LIBRARIES = frozenset(
    ("transformers", "trl", "torch", "peft", "accelerate", "datasets", "sentence_transformers")
)


def _project_classes(module: cst.Module) -> set[str]:
    """Class-like names (CapWords) the module imports from a relative module or from one that
    is not a model library: the project's own, which may wrap a model for PPO's scoring."""
    found: set[str] = set()
    for node in walk.find_all(module, cst.ImportFrom):
        imp = cast("cst.ImportFrom", node)
        if isinstance(imp.names, cst.ImportStar):
            continue
        top = (get_full_name_for_node(imp.module) or "").partition(".")[0] if imp.module else ""
        if imp.relative or (top and top not in _LIBRARIES):
            for alias in imp.names:
                bound = alias.asname.name if alias.asname else alias.name
                if isinstance(bound, cst.Name) and bound.value[:1].isupper():
                    found.add(bound.value)
    return found


def _built_in_memory(call: cst.Call | None) -> bool:
    """Whether `call` surely builds a model rather than loading one: `X.from_config(...)` or a
    model class called (`GPT2LMHeadModel(config)`). A function of the repo (`load_policy(path)`)
    may load from a path, which the reference reload then reads."""
    if call is None:
        return False
    name = get_full_name_for_node(call.func) or ""
    last = name.rpartition(".")[2]
    return last == "from_config" or (last[:1].isupper() and "Model" in last)


def _scheduler(key: str, value: cst.BaseExpression) -> str | None:
    """The learning-rate scheduler a PPO trainer keyword hands over (`lr_scheduler=sched`, the
    second of `optimizers=(opt, sched)`, or an `optimizers` value whose parts are not written
    out), as code; None where it hands none."""
    if key == "lr_scheduler":
        part: cst.BaseExpression | None = value
    elif key == "optimizers":
        if isinstance(value, (cst.Tuple, cst.List)):
            items = [e.value for e in value.elements]
            part = (
                items[1]
                if len(items) == 2 and not isinstance(items[1], cst.StarredElement)
                else value
            )
        else:
            part = value
    else:
        return None
    if part is None or (isinstance(part, cst.Name) and part.value == "None"):
        return None
    return edits.code(part).strip()


def _config_built(value: cst.BaseExpression | None) -> bool:
    """`value` builds a config object right there (`LoraConfig(r=16)`), so it is not None."""
    if not isinstance(value, cst.Call):
        return False
    name = get_full_name_for_node(value.func) or ""
    return name.rpartition(".")[2].endswith("Config")

"""TRL104 ppo-trainer: constructor of every era, method uses, imports; no-op cases; run twice."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix, Severity
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run

SELECT = ("TRL104",)
TODO = "# TODO(trl-migrate TRL104): "


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("import os\n", id="unrelated"),
        pytest.param(
            "from trl import RLOOTrainer\nt = RLOOTrainer(model='m', reward_funcs=f)\nt.train()\n",
            id="already-rloo",
        ),
        pytest.param(
            "from mylib import PPOTrainer\nt = PPOTrainer(config, model)\nt.step(q, r, s)\n",
            id="other-library",
        ),
        pytest.param("trainer.save_pretrained('x')\n", id="unknown-object"),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=SELECT) == []


@pytest.mark.parametrize(
    ("before", "after", "target"),
    [
        pytest.param(
            """
            from trl.experimental.ppo import PPOConfig, PPOTrainer
            trainer = PPOTrainer(
                args=config,
                processing_class=tokenizer,
                model=policy,
                ref_model=ref_policy,
                reward_model=reward_model,
                value_model=value_model,
                train_dataset=train_dataset,
                eval_dataset=eval_dataset,  # held out
                peft_config=peft_config,
            )
            trainer.train()
            trainer.save_model("out")
            """,
            """
            from trl.experimental.ppo import PPOConfig
            from trl import GRPOTrainer
            trainer = GRPOTrainer(
                args=config,
                processing_class=tokenizer,
                model=policy,
                reward_funcs=reward_model,
                reward_processing_classes=tokenizer,
                train_dataset=train_dataset,
                eval_dataset=eval_dataset,  # held out
                peft_config=peft_config,
            )
            trainer.train()
            trainer.save_model("out")
            """,
            "grpo",
            id="experimental-keywords-grpo",
        ),
        pytest.param(
            """
            from trl import PPOv2Trainer
            trainer = PPOv2Trainer(config=config, tokenizer=tok, policy=policy, ref_policy=ref, reward_model=rm, value_model=vm, train_dataset=ds)
            """,
            """
            from trl import RLOOTrainer
            trainer = RLOOTrainer(args=config, processing_class=tok, model=policy, reward_funcs=rm, reward_processing_classes=tok, train_dataset=ds)
            """,
            "rloo",
            id="ppov2-old-keyword-names",
        ),
        pytest.param(
            """
            from trl import PPOTrainer
            ppo_trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=dataset, data_collator=collator, optimizer=opt)
            for batch in ppo_trainer.dataloader:
                stats = ppo_trainer.step(q, r, s)
            ppo_trainer.save_pretrained("out")
            device = ppo_trainer.current_device
            """,
            """
            from trl import RLOOTrainer
            ppo_trainer = RLOOTrainer(args=config, model=model, processing_class=tokenizer, train_dataset=dataset, optimizers=(opt, None))
            for batch in ppo_trainer.dataloader:
                stats = ppo_trainer.step(q, r, s)
            ppo_trainer.save_model("out")
            device = ppo_trainer.accelerator.device
            """,
            "rloo",
            id="legacy-positional-loop-left-for-trl106",
        ),
    ],
)
def test_fixes(before, after, target):
    assert_fixes(dedent(before), dedent(after), select=SELECT, target=target)


def test_legacy_without_a_loop_needs_a_reward_function():
    before = dedent(
        """
        from trl import PPOTrainer
        trainer = PPOTrainer(config, model, None, tokenizer)
        """
    )
    out, findings = run(before, select=SELECT)
    assert out == dedent(
        f"""
        from trl import RLOOTrainer
        {TODO}RLOOTrainer needs `reward_funcs`: legacy PPO got rewards from your loop. Write `def reward_fn(prompts, completions, **kwargs) -> list[float]` with your reward computation and pass `reward_funcs=reward_fn`
        trainer = RLOOTrainer(args=config, model=model, processing_class=tokenizer)
        """
    )
    assert ("error", "manual") in {(f.severity.value, f.fix.value) for f in findings}


@pytest.mark.parametrize(
    ("built", "said"),
    [
        ("GPT2LMHeadModel(config)", "this model was built in memory, so save it"),
        ("AutoModelForCausalLM.from_config(config)", "this model was built in memory, so save it"),
        # a function of the repo may load from a path (seen in ajamesl/mini-chat-llm)
        ("load_causal_lm(path)", "if this model was built in memory (not loaded from a path),"),
    ],
)
def test_reference_built_in_memory_is_a_warning(built, said):
    before = dedent(
        f"""
        from trl import PPOTrainer
        policy = {built}
        trainer = PPOTrainer(args=a, processing_class=t, model=policy, ref_model=ref, reward_model=rm, value_model=vm, train_dataset=d)
        """
    )
    _, findings = run(before, select=SELECT)
    ref = [f for f in findings if f.message.startswith("reference model dropped")]
    assert len(ref) == 1 and ref[0].severity is Severity.WARNING and said in ref[0].message


@pytest.mark.parametrize(
    ("given", "maybe"),
    [
        ("peft_config", True),
        # seen in Raumberg/myllm and nbebop/rlhf: an attribute, a helper's result
        ("self.peft_cfg", True),
        ("build_lora_config(cfg)", True),
        ("LoraConfig(r=16)", False),
        ("peft.LoraConfig(r=16)", False),
    ],
)
def test_a_peft_config_that_may_be_none_says_both_cases(given, maybe):
    # TRL's own ppo.py (and its copies, as ajamesl/mini-chat-llm): `peft_config` is None unless
    # --use_peft, and the reference is loaded only then; "the policy is a PEFT model" was said
    # of every run
    before = dedent(
        f"""
        from trl import PPOTrainer
        policy = AutoModelForCausalLM.from_pretrained(path)
        trainer = PPOTrainer(args=a, processing_class=t, model=policy, ref_model=ref_policy, reward_model=rm, value_model=vm, train_dataset=d, peft_config={given})
        """
    )
    _, findings = run(before, select=SELECT)
    said = [
        f.message for f in findings if "ref_policy" in f.message or "reference" in f.message[:30]
    ]
    if maybe:
        assert said[0].startswith(
            f"`ref_policy` dropped: where `{given}` is not None, the policy is a PEFT model"
        )
        assert said[1].startswith("reference model dropped: TRL 1.13 reloads the reference")
    else:
        assert said[0].startswith("`ref_policy` dropped: the policy is a PEFT model")
        assert len(said) == 1


def test_methods_without_a_counterpart_get_todos():
    before = dedent(
        """
        from trl import PPOTrainer
        trainer = PPOTrainer(args=a, processing_class=t, model="m", reward_model=rm, value_model=vm, train_dataset=d)
        samples = trainer.generate_completions()
        print(trainer.kl_ctl.value)
        """
    )
    out, findings = run(before, select=SELECT)
    assert f"{TODO}`generate_completions()` is gone: set `log_completions=True`" in out
    assert (
        "samples = trainer.generate_completions()" in out
    )  # used as a value: stays, with its TODO
    assert f"{TODO}`trainer.kl_ctl` has no counterpart on RLOOTrainer" in out
    assert sum(f.fix is Fix.MANUAL for f in findings) == 2
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("from trl import PPOTrainer\nt = PPOTrainer(*args)\n", id="star-args"),
        pytest.param(
            "from trl import PPOTrainer\nt = PPOTrainer(config, model, ref, tok, ds, opt, coll, 2, sched, coll2, extra)\n",
            id="too-many-positional",
        ),
    ],
)
def test_all_or_nothing(src):
    out, findings = run(src, select=SELECT)
    assert "PPOTrainer(" in out and "this call was left as it is" in out
    assert f"{TODO}`trl.PPOTrainer` does not exist in TRL 1.13; finish the TODOs" in out
    assert run(out, select=SELECT)[0] == out


GENERATE_TODO = (
    f"{TODO}`trainer.generate_completions()` was removed: RLOOTrainer has no such method. To see sample "
    "completions, set `log_completions=True` in the config (logged every logging_steps), or call "
    "`trainer.evaluate()` for eval metrics"
)
TRAINER = (
    "from trl import PPOTrainer\n"
    'trainer = PPOTrainer(args=a, processing_class=t, model="m", reward_model=rm, train_dataset=d)\n'
)
RLOO = (
    "from trl import RLOOTrainer\n"
    'trainer = RLOOTrainer(args=a, processing_class=t, model="m", reward_funcs=rm, reward_processing_classes=t, '
    "train_dataset=d)\n"
)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            'trainer.train()\n# samples\ntrainer.generate_completions()\ntrainer.save_model("out")\n',
            f'trainer.train()\n# samples\n{GENERATE_TODO}\ntrainer.save_model("out")\n',
            id="middle-of-module",
        ),
        pytest.param(
            "trainer.train()\ntrainer.generate_completions()\n",
            f"trainer.train()\n{GENERATE_TODO}\n",
            id="last-of-module",
        ),
        pytest.param(
            "def main():\n    trainer.train()\n    trainer.generate_completions(sampling=True)  # look\n\n\nmain()\n",
            f"def main():\n    trainer.train()\n    {GENERATE_TODO}\n    # look\n\n\nmain()\n",
            id="last-of-block-with-args-and-comment",
        ),
        pytest.param(
            "if log:\n    trainer.generate_completions()\nprint(1)\n",
            f"if log:\n    {GENERATE_TODO}\n    pass\nprint(1)\n",
            id="only-statement-of-block",
        ),
        pytest.param(
            "for _ in range(2):\n    trainer.generate_completions()\n    trainer.generate_completions()\n    print(1)\n",
            f"for _ in range(2):\n    {GENERATE_TODO}\n    print(1)\n",
            id="twice-one-todo",
        ),
    ],
)
def test_generate_completions_statement_is_removed(before, after):
    findings = assert_fixes(TRAINER + before, RLOO + after, select=SELECT)
    removed = [f for f in findings if "was removed: RLOOTrainer has no such method" in f.message]
    assert removed and all(f.severity is Severity.WARNING for f in removed)


@pytest.mark.parametrize(
    "use",
    [
        pytest.param("samples = trainer.generate_completions()\n", id="assigned"),
        pytest.param("print(trainer.generate_completions())\n", id="argument"),
        pytest.param("trainer.train(); trainer.generate_completions()\n", id="semicolon-line"),
        pytest.param("if log: trainer.generate_completions()\n", id="one-line-suite"),
    ],
)
def test_generate_completions_as_a_value_keeps_the_todo(use):
    out, _ = run(TRAINER + use, select=SELECT)
    assert "trainer.generate_completions()" in out.replace(f"{TODO}`trainer.generate", "")
    assert f"{TODO}`generate_completions()` is gone: set `log_completions=True`" in out
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("change", "line"),
    [
        pytest.param("del PPOTrainer.__init__\n", 2, id="del-attribute"),
        pytest.param("PPOTrainer.calls += 1\n", 2, id="augmented"),
    ],
)
def test_a_change_to_the_removed_class_is_not_moved_onto_its_successor(change, line):
    # Renaming would patch RLOOTrainer, whose internals differ: the statement stays, with a TODO.
    before = "from trl import PPOTrainer\n" + change
    out, findings = run(before, select=SELECT)
    todo = (
        "# TODO(trl-migrate TRL104): this changes `PPOTrainer`, which TRL 1.13 removed; `RLOOTrainer` is no "
        "drop-in (no value model, no step(), generation inside train()): port the change to it by hand\n"
    )
    assert todo + change in out and "RLOOTrainer." not in out
    assert [(f.line, f.fix) for f in findings if "this changes" in f.message] == [
        (line, Fix.MANUAL)
    ]
    assert run(out, select=SELECT)[0] == out


def test_a_monkeypatch_of_the_removed_class_is_trl107s_and_not_renamed():
    out, findings = run(
        "from trl import PPOTrainer\nPPOTrainer.step = my_step\n", select=("TRL104", "TRL107")
    )
    assert "RLOOTrainer.step" not in out and "PPOTrainer.step = my_step\n" in out
    assert [f.code for f in findings if f.line == 2] == ["TRL107"]


LOOP_AND_COUNT = """
import torch
from trl import PPOConfig, PPOTrainer

config = PPOConfig(batch_size=2, mini_batch_size=1)
ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
total_batches = len(ppo_trainer.dataloader)
for batch in ppo_trainer.dataloader:
    q = batch["input_ids"]
    r = ppo_trainer.generate(q, return_prompt=False, max_new_tokens=8)
    batch["response"] = tokenizer.batch_decode(r, skip_special_tokens=True)
    rewards = [torch.tensor(float(len(c))) for c in batch["response"]]
    ppo_trainer.step(q, r, rewards)
"""


def test_the_legacy_dataloader_read_outside_the_loop_gets_a_todo():
    """The loop is TRL106's and is rewritten; `len(trainer.dataloader)` outside it read the
    legacy trainer's own DataLoader, which RLOOTrainer lacks: a TODO, not an AttributeError."""
    out, findings = run(dedent(LOOP_AND_COUNT), select=("TRL103", "TRL104", "TRL105", "TRL106"))
    assert ".step(" not in out and "ppo_trainer.train()" in out
    todo = [f for f in findings if f.code == "TRL104" and f.fix.value == "manual"]
    assert (
        len(todo) == 1
        and "`ppo_trainer.dataloader` was the legacy trainer's own" in todo[0].message
    )
    assert out.count("# TODO(trl-migrate TRL104): `ppo_trainer.dataloader`") == 1
    assert out.split("\n").index("total_batches = len(ppo_trainer.dataloader)") > 0
    assert run(out, select=("TRL103", "TRL104", "TRL105", "TRL106"))[0] == out
    without = dedent(LOOP_AND_COUNT).replace("total_batches = len(ppo_trainer.dataloader)\n", "")
    _, findings = run(without, select=("TRL103", "TRL104", "TRL105", "TRL106"))
    assert not [f for f in findings if f.fix.value == "manual"], findings


WRAPPED = dedent(
    """
    from trl import PPOTrainer
    rm = load()
    class Head(torch.nn.Module):
        def score(self, hidden):
            return self.model.score(hidden)[..., :1]
    rm = Head(rm)
    t = PPOTrainer(args=a, processing_class=tok, model=m, reward_model=rm, value_model=v, train_dataset=ds)
    """
)


def test_a_reward_model_wrapped_in_a_class_of_the_file_gets_a_todo():
    # 0422gky/2025PRML_RL: a wrapper with PPO's `score` head, no forward; RLOO calls forward
    out, findings = run(WRAPPED, select=SELECT)
    assert out.splitlines()[6] == (
        TODO + "`rm` may be a `Head` of this project: PPO scored with the reward model's backbone "
        "(`base_model_prefix`) and its `score` head, while RLOOTrainer calls a reward model as "
        "`model(input_ids=..., attention_mask=...)` and reads `.logits`: make `Head` answer that "
        "call (a `forward` that returns the reward in `.logits`), or pass the model it wraps"
    )
    assert "reward_funcs=rm" in out
    assert [f.fix for f in findings if f.message.startswith("`rm` may be")] == [Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("imported", "todo"),
    [
        # McClain-Thiel/PlasmidLLM: `from post_training.ppo_models import PlasmidRewardWrapper`
        pytest.param("from post_training.ppo_models import Head", True, id="project-module"),
        pytest.param("from .models import Head", True, id="relative"),
        pytest.param(
            "from transformers import AutoModelForSequenceClassification as Head",
            False,
            id="library",
        ),
    ],
)
def test_a_reward_model_of_a_class_the_project_imports_gets_the_todo_too(imported, todo):
    src = dedent(
        f"""
        from trl import PPOTrainer
        {imported}
        rm = Head(load())
        t = PPOTrainer(args=a, processing_class=tok, model=m, reward_model=rm, value_model=v, train_dataset=ds)
        """
    )
    out, _ = run(src, select=SELECT)
    assert (TODO + "`rm` may be a `Head` of this project") in out if todo else "may be a" not in out


def test_a_reward_model_the_file_loads_gets_no_wrapper_todo():
    src = WRAPPED.replace("rm = Head(rm)\n", "h = Head(rm)\n")
    out, _ = run(src, select=SELECT)
    assert "may be a `Head`" not in out


SHOWN = """
from trl import PPOConfig, PPOTrainer
ppo_trainer = PPOTrainer(PPOConfig(), model, None, tokenizer, dataset=ds)
SHOW
ppo_trainer.save_model("out")
"""


@pytest.mark.parametrize(
    ("show", "said"),
    [
        pytest.param(
            "print(ppo_trainer.dataloader)", ["print(ppo_trainer.dataloader)"], id="print"
        ),
        pytest.param(
            'n = len(ppo_trainer.dataloader)\nprint("batches:", n)',
            ["n = len(ppo_trainer.dataloader)", 'print("batches:", n)'],
            id="count-printed",
        ),
        pytest.param(
            "for batch in ppo_trainer.dataloader:\n    print(batch)\n    break",
            ["for batch in ppo_trainer.dataloader: print(batch) break"],
            id="peek",
        ),
    ],
)
def test_statements_that_only_show_the_legacy_dataloader_are_dropped(show, said):
    # SsmallSong/TRL_FT's ppo_train.py prints the loader and its length; maxfil333's notebook
    # prints its first batch
    before = dedent(SHOWN).replace("SHOW", show)
    out, findings = run(before, select=("TRL104",))
    assert out.endswith(
        "ppo_trainer = RLOOTrainer(args=PPOConfig(), model=model, processing_class=tokenizer, "
        'train_dataset=ds)\nppo_trainer.save_model("out")\n'
    )
    dropped = [f for f in findings if "only showed the legacy trainer's DataLoader" in f.message]
    assert [f.message.split("`")[1] for f in dropped] == said
    assert all(f.severity.value == "warning" for f in dropped)
    assert run(out, select=("TRL104",))[0] == out


def test_a_dataloader_count_the_script_computes_with_keeps_its_todo():
    src = dedent(SHOWN).replace(
        "SHOW", 'n = len(ppo_trainer.dataloader)\nprint("batches:", n)\nsteps = n * 2'
    )
    out, findings = run(src, select=("TRL104",))
    assert "n = len(ppo_trainer.dataloader)\n" in out
    assert [f.fix.value for f in findings if "dataloader" in f.message] == ["manual"]


REFERENCE = """\
from peft import get_peft_model
from transformers import AutoModelForCausalLM
from trl import PPOTrainer
policy = {policy}
ref = AutoModelForCausalLM.from_pretrained("sft-ref")
trainer = PPOTrainer(config, policy, ref, tokenizer, dataset=ds)
"""


def test_a_reference_from_another_path_keeps_a_todo_to_point_the_reload_there():
    out, findings = run(
        REFERENCE.format(policy='AutoModelForCausalLM.from_pretrained("sft-policy")'),
        select=SELECT,
    )
    assert (
        f'{TODO}`ref` was loaded from "sft-ref" and `policy` from "sft-policy": RLOOTrainer '
        "reloads its reference from the policy's path when beta != 0" in out
    )


def test_a_peft_policy_is_its_own_reference_and_no_reload_is_suggested():
    """RLOO makes no reference model for a PEFT policy: a frozen copy of its starting adapter
    is the reference, so pointing `_name_or_path` anywhere would change nothing."""
    out, findings = run(
        REFERENCE.format(
            policy='get_peft_model(AutoModelForCausalLM.from_pretrained("sft-policy"), lora)'
        ),
        select=SELECT,
    )
    assert "_name_or_path" not in out and TODO not in out.split("trainer =")[0][-200:]
    [said] = [f for f in findings if f.message.startswith("`ref` (loaded from")]
    assert said.severity is Severity.WARNING
    assert said.message.startswith(
        '`ref` (loaded from "sft-ref") dropped: the policy is a PEFT model, and for one '
        "RLOOTrainer makes no reference model: the reference is a frozen copy of the adapter "
        "the policy starts with"
    )
    # a trainer given `peft_config=` wraps the policy itself: the same
    src = REFERENCE.format(policy='AutoModelForCausalLM.from_pretrained("sft-policy")').replace(
        "trainer = PPOTrainer(config, policy, ref, tokenizer, dataset=ds)",
        "trainer = PPOTrainer(args=config, model=policy, ref_model=ref, processing_class=tok, "
        "reward_model=rm, value_model=vm, train_dataset=ds, peft_config=lora)",
    )
    _, findings = run(src, select=SELECT)
    assert any("the policy is a PEFT model" in f.message for f in findings)


def test_a_reward_model_is_said_to_score_text_without_special_tokens():
    src = (
        "from trl import PPOTrainer\n"
        "trainer = PPOTrainer(args=a, processing_class=t, model='m', ref_model=None, "
        "reward_model=rm, value_model=vm, train_dataset=ds)\n"
    )
    _, findings = run(src, select=SELECT)
    [said] = [f for f in findings if f.message.startswith("`reward_model` is `reward_funcs` now")]
    assert said.severity is Severity.WARNING
    assert "decoded without special tokens" in said.message and "not at an EOS" in said.message


def test_a_reference_beside_a_policy_loaded_from_its_path_is_dropped_with_what_replaces_it():
    out, findings = run(
        REFERENCE.format(policy='AutoModelForCausalLM.from_pretrained("sft-ref")'), select=SELECT
    )
    [said] = [f for f in findings if f.message.startswith("reference model dropped")]
    assert said.severity is Severity.INFO
    assert said.message == (
        "reference model dropped: TRL 1.13 reloads the reference from the model's path "
        "(model.config._name_or_path) when beta != 0 (a PEFT model's reference is a frozen copy "
        "of its starting adapter instead)"
    )


SCHEDULER_TODO = (
    "is stepped more often now: the PPO trainers stepped a scheduler they were given once per "
    "rollout batch"
)


@pytest.mark.parametrize(
    ("call", "scheduler"),
    [
        pytest.param(
            "PPOTrainer(config, model, tokenizer=tok, dataset=ds, optimizer=opt, lr_scheduler=sched)",
            "sched",
            id="legacy-lr-scheduler",
        ),
        pytest.param(
            "PPOTrainer(args=config, model=model, processing_class=tok, train_dataset=ds, "
            "reward_model=rm, value_model=vm, optimizers=(opt, sched))",
            "sched",
            id="v2-optimizers-pair",
        ),
        pytest.param(
            "PPOTrainer(args=config, model=model, processing_class=tok, train_dataset=ds, "
            "reward_model=rm, value_model=vm, optimizers=pair)",
            "pair",
            id="v2-optimizers-not-written-out",
        ),
    ],
)
def test_a_scheduler_handed_to_the_trainer_is_a_todo(call, scheduler):
    """Legacy PPOTrainer stepped a given scheduler once per `step()` and the v2 trainers once per
    rollout batch; RLOOTrainer steps it after every optimizer step, so the schedule would run
    faster without a word (bcmin1018's CosineAnnealingLR)."""
    out, findings = run(f"from trl import PPOTrainer\nppo_trainer = {call}\n", select=SELECT)
    todos = [f for f in findings if f.fix is Fix.MANUAL and SCHEDULER_TODO in f.message]
    assert len(todos) == 1 and todos[0].message.startswith(f"`{scheduler}` is stepped")
    assert f"{TODO}`{scheduler}` {SCHEDULER_TODO}" in out
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(
            "PPOTrainer(config, model, tokenizer=tok, dataset=ds, optimizer=opt)",
            id="legacy-optimizer-only",
        ),
        pytest.param(
            "PPOTrainer(config, model, tokenizer=tok, dataset=ds, optimizer=opt, lr_scheduler=None)",
            id="legacy-none",
        ),
        pytest.param(
            "PPOTrainer(args=config, model=model, processing_class=tok, train_dataset=ds, "
            "reward_model=rm, value_model=vm, optimizers=(opt, None))",
            id="v2-no-scheduler",
        ),
    ],
)
def test_an_optimizer_alone_is_no_scheduler_todo(call):
    out, findings = run(f"from trl import PPOTrainer\nppo_trainer = {call}\n", select=SELECT)
    assert not [f for f in findings if SCHEDULER_TODO in f.message]
    assert "optimizers=(opt, None)" in out


def test_positional_arguments_in_a_file_with_v2_code_are_a_todo_not_read_in_legacy_order():
    """The v2 trainers took (config, tokenizer, policy, ref_policy, reward_model, train_dataset,
    ...) by position too: read in the legacy order (config, model, ref_model, tokenizer, ...),
    tyronen/bb-finetune's call became `model=tokenizer`. A file whose config has v2 keywords
    leaves such a call under a TODO."""
    src = dedent(
        """
        from trl import PPOConfig, PPOTrainer
        config = PPOConfig(output_dir="o", batch_size=2, mini_batch_size=1, num_ppo_epochs=1)
        trainer = PPOTrainer(config, tokenizer, policy, ref_policy, reward_model, prompts)
        """
    )
    out, findings = run(src, select=SELECT)
    assert (
        "trainer = PPOTrainer(config, tokenizer, policy, ref_policy, reward_model, prompts)" in out
    )
    assert (
        f"{TODO}`PPOTrainer` is gone in TRL 1.13 and this call was left as it is: its arguments are given by position"
        in out
    )
    assert "model=tokenizer" not in out
    assert run(out, select=SELECT)[0] == out


def test_positional_arguments_of_a_legacy_file_are_still_read_in_legacy_order():
    src = dedent(
        """
        from trl import PPOConfig, PPOTrainer
        config = PPOConfig(batch_size=2, mini_batch_size=1)
        trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=ds)
        """
    )
    out, _ = run(src, select=SELECT)
    assert (
        "RLOOTrainer(args=config, model=model, processing_class=tokenizer, train_dataset=ds)" in out
    )


@pytest.mark.parametrize(
    ("after", "said"),
    [
        # adithya's/varun-v-rao's notebooks compare generations with the reference after training
        pytest.param("ref_model.generate(batch.to(device))\n", True, id="read-after"),
        pytest.param("", False, id="passed-only"),
        pytest.param("ref_model = None\n", False, id="stored-only"),
        # ParthaSarathiDutta: a tokenizer in the reference's place (legacy order) is no model
        pytest.param("tok_ids = ref_model('hi')\n", False, id="not-a-model"),
        # TPNxl: the keyword `ref_policy=ref_policy` and an attribute of that name are no reads
        pytest.param("other(ref_model=1)\nself.ref_model.eval()\n", False, id="keyword-attr"),
    ],
)
def test_a_dropped_reference_model_read_elsewhere_is_no_longer_moved_to_the_device(after, said):
    load = "AutoTokenizer" if after.startswith("tok_ids") else "AutoModelForCausalLM"
    src = (
        "from trl import PPOConfig, PPOTrainer\n"
        f'ref_model = {load}.from_pretrained("gpt2")\n'
        "ref_model.load_state_dict(sd)  # a read above the trainer: its device is as loaded\n"
        "config = PPOConfig(batch_size=2, mini_batch_size=1)\n"
        "trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=ds)\n"
    ) + after
    out, findings = run(src, select=SELECT)
    moved = [f for f in findings if "nothing moves it now" in f.message]
    assert [(f.line, f.severity.name) for f in moved] == ([(5, "INFO")] if said else [])
    assert run(out, select=SELECT)[0] == out


def test_the_shared_online_trainer_state_of_trl_trainer_utils_is_no_part_of_ppo():
    # kyleliang919/C-Optim: a vendored trainer imports `trl.trainer.utils.OnlineTrainerState`
    # (the state class of every online trainer, removed in 0.27: TRL101's); TRL104 called it
    # the PPO trainer's and told to import RLOOTrainer in its place
    src = dedent(
        """
        from trl.trainer.utils import OnlineTrainerState
        state = OnlineTrainerState(is_local_process_zero=True)
        """
    )
    assert assert_noop(src, select=SELECT) == []
    out, findings = run(src)
    assert [(f.code, f.line, f.fix) for f in findings] == [("TRL101", 1, Fix.MANUAL)]
    assert "TRL104" not in out


def test_the_experimental_ppo_trainers_online_trainer_state_is_ppos():
    src = dedent(
        """
        from trl.experimental.ppo.ppo_trainer import OnlineTrainerState
        state = OnlineTrainerState(is_local_process_zero=True)
        """
    )
    out, findings = run(src, select=SELECT)
    assert out == dedent(
        f"""
        {TODO}`trl.experimental.ppo.ppo_trainer.OnlineTrainerState` does not exist in TRL 1.13; finish the TODOs on its remaining uses, then import RLOOTrainer (or GRPOTrainer) from trl instead
        from trl.experimental.ppo.ppo_trainer import OnlineTrainerState
        {TODO}`OnlineTrainerState` was part of PPOTrainer and is gone in TRL 1.13
        state = OnlineTrainerState(is_local_process_zero=True)
        """
    )
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("config", "trainer"),
    [
        pytest.param(
            "PPOConfig(kl_coef=0.1, batch_size=8)",
            "PPOTrainer(config, model, ref_model=None, tokenizer=tok, dataset=ds)",
            id="v2-config-legacy-trainer",
        ),
        pytest.param(
            "PPOConfig(init_kl_coef=0.1, batch_size=8)",
            "PPOTrainer(args=config, processing_class=tok, model=m, ref_model=None, reward_model=rm, value_model=vm, train_dataset=ds)",
            id="legacy-config-v2-trainer",
        ),
    ],
)
def test_a_config_of_the_other_era_than_its_trainer_is_a_todo(config, trainer):
    # seen in minsik-hong/rewardedsoups: a script caught halfway through an upgrade, its config
    # v2's (`kl_coef`) and its trainer call legacy's (`dataset=`, `tokenizer=`)
    src = f"from trl import PPOConfig, PPOTrainer\nconfig = {config}\ntrainer = {trainer}\n"
    out, findings = run(src, select=("TRL103", "TRL104"))
    said = [f.message for f in findings if "no TRL release took both" in f.message]
    assert len(said) == 1 and said[0].startswith("`config` was built as a ")
    assert out.count("no TRL release took both") == 1
    assert run(out, select=("TRL103", "TRL104"))[0] == out


@pytest.mark.parametrize(
    ("config", "trainer"),
    [
        pytest.param(
            "PPOConfig(init_kl_coef=0.1, batch_size=8)",
            "PPOTrainer(config, model, ref_model=None, tokenizer=tok, dataset=ds)",
            id="both-legacy",
        ),
        pytest.param(
            "PPOConfig(kl_coef=0.1, num_ppo_epochs=2)",
            "PPOTrainer(args=config, processing_class=tok, model=m, ref_model=None, reward_model=rm, value_model=vm, train_dataset=ds)",
            id="both-v2",
        ),
    ],
)
def test_a_config_and_trainer_of_one_era_get_no_era_todo(config, trainer):
    src = f"from trl import PPOConfig, PPOTrainer\nconfig = {config}\ntrainer = {trainer}\n"
    out, findings = run(src, select=("TRL103", "TRL104"))
    assert not any("no TRL release took both" in f.message for f in findings)


def test_an_import_of_the_new_trainer_only_inside_a_function_does_not_bind_it_above():
    src = dedent(
        """
        from trl import PPOTrainer
        trainer = PPOTrainer(config, model, None, tokenizer)
        def other():
            from trl import RLOOTrainer
            return RLOOTrainer
        """
    )
    out, _ = run(src, select=SELECT)
    assert out.startswith("from trl import RLOOTrainer\n"), out
    assert run(out, select=SELECT)[0] == out


def test_a_config_field_read_through_the_trainer_follows_the_new_config():
    # seen in soniyachavan05/RLHF: `ppo_trainer.config.steps` became `ppo_trainer.args.steps`,
    # which RLOOConfig lacks (AttributeError)
    src = dedent(
        """
        from trl import PPOConfig, PPOTrainer
        config = PPOConfig(batch_size=8, ppo_epochs=2)
        trainer = PPOTrainer(config, model, None, tokenizer)
        print(trainer.config.steps, trainer.config.ppo_epochs, trainer.config.learning_rate)
        """
    )
    out, findings = run(src, select=("TRL103", "TRL104"))
    assert (
        "print(trainer.args.steps, trainer.args.num_iterations, trainer.args.learning_rate)" in out
    )
    todos = [f.message for f in findings if f.fix is Fix.MANUAL and "trainer.config." in f.message]
    assert todos == [
        "`trainer.config.steps`: RLOOConfig (`trainer.args`) has no `steps` (it counts `max_steps` "
        "instead; the conversion is in docs/rules.md, TRL103): keep the value in a variable of your own"
    ]
    assert any(
        f.message.startswith("`trainer.config.ppo_epochs` is `trainer.args.num_iterations`")
        for f in findings
    )
    assert run(out, select=("TRL103", "TRL104"))[0] == out


def test_a_trainer_handed_to_the_file_s_own_functions_is_the_trainer_there():
    # Lee-CBG/BAP_Attack_n_Defend: `rlhf_init(cfg, ppo_trainer, tok)` hands the trainer on to
    # `lm_generation(trainer, ...)`, which iterates `trainer.dataloader` and calls
    # `trainer.generate`: RLOOTrainer has neither, and nothing said so
    src = dedent(
        """
        from trl import PPOTrainer

        def lm_generation(trainer, tok, n):
            for batch in trainer.dataloader:
                out = trainer.generate(batch["input_ids"])
            return trainer.model

        def rlhf_init(cfg, ppo_trainer_, tok):
            lm_generation(ppo_trainer_, tok, n=2)

        def unrelated(trainer):
            return trainer.dataloader

        def main():
            ppo_trainer = PPOTrainer(config, model, ref, tok, dataset=ds)
            rlhf_init(cfg, ppo_trainer, tok)
            unrelated(other)
        """
    )
    out, findings = run(src, select=("TRL104",))
    todos = [(f.line, f.message.split(":")[0][:40]) for f in findings if f.fix is Fix.MANUAL]
    assert (4, "`trainer.dataloader` was the legacy trai") in todos
    assert (5, "`trainer.generate` belongs to the legacy") in todos
    assert not [t for t in todos if t[0] in (6, 11, 12)]  # `.model` exists; `unrelated` is not
    assert run(out, select=("TRL104",))[0] == out


PEFT_TWICE = """
from peft import get_peft_model
from trl import PPOTrainer
model = AutoModelForCausalLM.from_pretrained("p")
if use_lora:
    model = get_peft_model(model, lora)
trainer = PPOTrainer(args=a, processing_class=t, model=model, reward_model=rm, value_model=vm, train_dataset=d, peft_config={given})
"""


def test_a_peft_model_given_peft_config_too_is_a_todo():
    # seen in AimeeAyat/ATML-PA5 (`--use-lora`): PPOTrainer of 0.13-1.12 merged the adapter and
    # put peft_config's on top; RLOOTrainer raises on a PeftModel with a peft_config
    out, findings = run(PEFT_TWICE.format(given="peft_config if use_lora else None"), select=SELECT)
    assert out.split("trainer =")[0].endswith(
        f"{TODO}`model` may be a PeftModel here (`get_peft_model(...)` in this file) and "
        "`peft_config=` is given too: PPOTrainer of TRL 0.13-1.12 then merged that adapter into "
        "the weights and trained a fresh one from peft_config on top, while RLOOTrainer raises "
        "on the pair; pass `model.merge_and_unload()` with peft_config to keep the old "
        "behaviour, or the PeftModel alone to train its own adapter\n"
    )
    assert "peft_config=peft_config if use_lora else None" in out  # left for the human
    assert run(out, select=SELECT)[0] == out  # a second run changes nothing


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(PEFT_TWICE.format(given="None"), id="peft-config-none"),
        pytest.param(PEFT_TWICE.replace(", peft_config={given}", ""), id="no-peft-config"),
        pytest.param(
            PEFT_TWICE.replace("model = get_peft_model(model, lora)", "pass").format(given="lora"),
            id="model-no-peft-model",
        ),
    ],
)
def test_a_peft_model_or_peft_config_alone_is_no_todo(src):
    out, _ = run(src, select=SELECT)
    assert "PeftModel here" not in out


DTYPED = """\
import torch
from transformers import AutoModelForCausalLM
from trl import PPOTrainer
policy = AutoModelForCausalLM.from_pretrained("sft", {dtype}).to(device)
ref = AutoModelForCausalLM.from_pretrained("sft", {dtype}).to(device)
trainer = PPOTrainer(config, policy, {ref}, tokenizer, dataset=ds)
"""
RELOAD_SAID = (
    "; {which} was loaded with `{given}`, and RLOOTrainer loads its reference in float32 unless "
    'the config sets `model_init_kwargs={{"dtype": {value}}}`: set it to keep the reference in '
    "that dtype (in float32 it takes twice the memory of a 16-bit copy, and its log-probs lose "
    "the policy's rounding, so the KL starts off zero)"
)


@pytest.mark.parametrize(
    ("dtype", "ref", "head", "which"),
    [
        # doelleb/guard-fair-rlhf: a bf16 policy and reference, `.to(device)` after each load
        pytest.param(
            "torch_dtype=torch.bfloat16",
            "ref",
            "reference model dropped: TRL 1.13 reloads the reference from the model's path",
            "`ref`",
            id="reference",
        ),
        pytest.param(
            'dtype="auto"',
            "None",
            "`ref_model=None` dropped: RLOO/GRPO make their own reference",
            "the policy `policy`",
            id="none-copied-the-policy",
        ),
    ],
)
def test_a_reference_loaded_in_16_bits_is_said_to_reload_in_float32(dtype, ref, head, which):
    _, findings = run(DTYPED.format(dtype=dtype, ref=ref), select=SELECT)
    [said] = [f for f in findings if f.message.startswith(head)]
    assert said.severity is Severity.WARNING
    given, value = dtype, dtype.partition("=")[2]
    assert said.message.endswith(RELOAD_SAID.format(which=which, given=given, value=value))


@pytest.mark.parametrize(
    ("dtype", "ref"),
    [
        pytest.param("torch_dtype=torch.float32", "ref", id="float32"),
        pytest.param("torch_dtype=None", "None", id="none-dtype"),
        pytest.param("device_map='auto'", "ref", id="no-dtype"),
    ],
)
def test_a_reference_in_float32_gets_no_dtype_note(dtype, ref):
    _, findings = run(DTYPED.format(dtype=dtype, ref=ref), select=SELECT)
    assert not [f for f in findings if "loads its reference in float32" in f.message]
    if ref == "ref":  # `.to(device)` after the load: still a load from its path
        assert any(
            f.message.startswith(
                "reference model dropped: TRL 1.13 reloads the reference from the model's path"
            )
            for f in findings
        )


@pytest.mark.parametrize(
    ("given", "said"),
    [
        # McClain-Thiel/PlasmidLLM: a CurriculumAlphaCallback ramped a reward weight over
        # `state.global_step / 1000`, counted in rollout batches by PPO
        pytest.param("[CurriculumAlphaCallback(rm)]", True, id="callback"),
        pytest.param("[]", False, id="empty"),
    ],
)
def test_callbacks_kept_are_said_to_count_optimizer_steps(given, said):
    src = (
        "from trl.experimental.ppo import PPOTrainer\n"
        "t = PPOTrainer(args=a, processing_class=tok, model=m, reward_model=rm, value_model=v, "
        f"train_dataset=ds, callbacks={given})\n"
    )
    out, findings = run(src, select=SELECT)
    assert f"callbacks={given}" in out
    found = [f for f in findings if f.message.startswith("`callbacks` kept")]
    assert bool(found) is said
    if said:
        assert found[0].severity is Severity.WARNING
        assert "acts that many times sooner" in found[0].message


def test_a_trainer_class_bound_to_a_name_keeps_a_todo_where_a_type_or_check_is_renamed():
    """JulesGM/Marg-Li-CoT picks its trainer class into `trainer_class`, then builds it with
    PPO's arguments: renamed, RLOOTrainer would get them, unseen."""
    before = dedent(
        """
        import trl

        trainer_class = trl.PPOTrainer
        ok = isinstance(t, trl.PPOTrainer)
        base = super(trl.PPOTrainer, t)


        def run(t: trl.PPOTrainer) -> None:
            pass
        """
    )
    out, findings = run(before, select=("TRL104",))
    assert "trainer_class = trl.PPOTrainer\n" in out
    assert "ok = isinstance(t, trl.RLOOTrainer)\n" in out
    assert "base = super(trl.RLOOTrainer, t)\n" in out  # a subclass's base: TRL107's
    assert "def run(t: trl.RLOOTrainer) -> None:\n" in out
    [todo] = [f for f in findings if f.fix is Fix.MANUAL]
    assert todo.line == 3 and todo.message.startswith(
        "`PPOTrainer` is used here other than as a type, in a check or as a base class"
    )
    assert run(out, select=("TRL104",))[0] == out


@pytest.mark.parametrize(
    "policy",
    [
        pytest.param("ppo_model = peft_model", id="alias-as-TRL102-writes-it"),
        pytest.param(
            "ppo_model = AutoModelForCausalLMWithValueHead.from_pretrained(peft_model)",
            id="wrapped-around-the-peft-model",
        ),
    ],
)
def test_a_policy_made_from_a_peft_model_object_keeps_its_adapter_reference(policy):
    """The FLAN-T5 detoxification lab wraps a PeftModel in a value-head model: RLOO's
    reference is the adapter's starting state, not a reload from a path."""
    src = dedent(
        f"""
        from peft import PeftModel
        from trl import PPOConfig, PPOTrainer
        peft_model = PeftModel.from_pretrained(base, "adapter", is_trainable=True)
        {policy}
        trainer = PPOTrainer(config=PPOConfig(batch_size=4), model=ppo_model, ref_model=ref_model, tokenizer=tok, dataset=ds)
        """
    )
    _, findings = run(src, select=SELECT)
    [said] = [f for f in findings if f.message.startswith("`ref_model` dropped")]
    assert said.message.startswith("`ref_model` dropped: the policy is a PEFT model")

"""TRL102 value-heads: before/after tables, no-op cases, second run changes nothing."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix, Severity
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run

SELECT = ("TRL102",)
VH_TODO = "# TODO(trl-migrate TRL102): "


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("import os\n", id="unrelated"),
        pytest.param(
            "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('x')\n",
            id="plain-model",
        ),
        pytest.param(
            "class AutoModelForCausalLMWithValueHead:\n    pass\nAutoModelForCausalLMWithValueHead.from_pretrained('x')\n",
            id="own-class-same-name",
        ),
        pytest.param(
            "from mylib import AutoModelForCausalLMWithValueHead\nAutoModelForCausalLMWithValueHead.from_pretrained('x')\n",
            id="other-library",
        ),
        pytest.param("s = 'AutoModelForCausalLMWithValueHead.from_pretrained'\n", id="string"),
        pytest.param("model.pretrained_model.device\n", id="unknown-object-attribute"),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=SELECT) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name, trust_remote_code=True, device_map={"": 0})
            """,
            """
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained(config.model_name, trust_remote_code=True, device_map={"": 0})
            """,
            id="keeps-hf-kwargs",
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead as VH, SFTTrainer
            model = VH.from_pretrained("gpt2", summary_dropout_prob=0.1, v_head_initializer_range=0.2, v_head_init_strategy="normal")
            """,
            """
            from trl import SFTTrainer
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            """,
            id="alias-and-value-head-kwargs-dropped",
        ),
        pytest.param(
            """
            from trl.models.modeling_value_head import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", load_in_8bit=True, peft_config=lora_config)
            """,
            """
            from transformers import AutoModelForCausalLM, BitsAndBytesConfig
            from peft import get_peft_model, prepare_model_for_kbit_training

            model = get_peft_model(prepare_model_for_kbit_training(AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=BitsAndBytesConfig(load_in_8bit=True))), lora_config)
            """,
            id="peft-and-8bit",
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", load_in_4bit=True, peft_config=lora, layer_norm_names=[], use_gradient_checkpointing=False)
            """,
            """
            from transformers import AutoModelForCausalLM, BitsAndBytesConfig
            from peft import get_peft_model, prepare_model_for_kbit_training

            model = get_peft_model(prepare_model_for_kbit_training(AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=BitsAndBytesConfig(load_in_4bit=True)), use_gradient_checkpointing=False), lora)
            """,
            id="the-kbit-preparation-keeps-its-arguments",
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", load_in_8bit=args.load_in_8bit)
            """,
            """
            from transformers import AutoModelForCausalLM, BitsAndBytesConfig
            model = AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=BitsAndBytesConfig(load_in_8bit=args.load_in_8bit) if args.load_in_8bit else None)
            """,
            id="a-flag-read-at-run-time-quantizes-only-when-true",
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", load_in_8bit=False, load_in_4bit=False, use_gradient_checkpointing=True)
            """,
            """
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            """,
            id="false-flags-and-an-unused-preparation-argument-go",
        ),
        pytest.param(
            """
            from transformers import AutoModelForCausalLM
            from trl.experimental.ppo import AutoModelForCausalLMWithValueHead
            base = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)
            model = AutoModelForCausalLMWithValueHead.from_pretrained(base)
            print(model.pretrained_model.device, model.current_device)
            """,
            """
            from transformers import AutoModelForCausalLM
            base = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)
            model = base
            print(model.device, model.device)
            """,
            id="wraps-loaded-model",
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLMWithValueHead.from_pretrained(AutoModelForCausalLM.from_pretrained("gpt2"))
            """,
            """
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            """,
            id="wraps-inline-call",
        ),
        pytest.param(
            """
            import trl
            model = trl.AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
            """,
            """
            import trl
            import transformers

            model = transformers.AutoModelForCausalLM.from_pretrained("gpt2")
            """,
            id="module-attribute",
        ),
        pytest.param(
            """
            def load(name):
                from trl import AutoModelForCausalLMWithValueHead
                return AutoModelForCausalLMWithValueHead.from_pretrained(name)
            """,
            """
            def load(name):
                from transformers import AutoModelForCausalLM
                return AutoModelForCausalLM.from_pretrained(name)
            """,
            id="lazy-import-stays-local",
        ),
        pytest.param(
            """
            from transformers import AutoModelForCausalLM
            from trl import AutoModelForCausalLMWithValueHead
            policy = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
            ref = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
            """,
            """
            from transformers import AutoModelForCausalLM
            policy = AutoModelForCausalLM.from_pretrained("gpt2")
            ref = AutoModelForCausalLM.from_pretrained("gpt2")
            """,
            id="already-imported-replacement",
        ),
    ],
)
def test_fixes(before, after):
    assert_fixes(dedent(before), dedent(after), select=SELECT)


def test_seq2seq_becomes_seq2seq_lm_with_a_todo():
    before = dedent(
        """
        from trl import AutoModelForSeq2SeqLMWithValueHead
        model = AutoModelForSeq2SeqLMWithValueHead.from_pretrained("t5-small")
        """
    )
    after = dedent(
        f"""
        from transformers import AutoModelForSeq2SeqLM
        {VH_TODO}no TRL 1.13 online-RL trainer (GRPO, RLOO) takes encoder-decoder models: stay on TRL <= 1.12 for this policy or move to a decoder-only model
        model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
        """
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert [(f.line, f.severity, f.fix) for f in findings] == [
        (2, Severity.WARNING, Fix.MANUAL),
        (2, Severity.ERROR, Fix.APPLIED),
    ]


def test_uses_that_need_a_human_keep_the_import_with_todos():
    before = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead, PreTrainedModelWrapper
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", reward_adapter="org/rm-adapter")
        values = model.v_head(hidden)
        if isinstance(model, PreTrainedModelWrapper):
            pass
        """
    )
    after = dedent(
        f"""
        {VH_TODO}`PreTrainedModelWrapper` does not exist in TRL 1.13; finish the TODOs on its remaining uses, then delete this import
        from trl import PreTrainedModelWrapper
        from transformers import AutoModelForCausalLM
        {VH_TODO}`reward_adapter="org/rm-adapter"` was dropped: TRL 1.13 has no multi-adapter reward; pass a reward model or a reward function to the trainer's reward_funcs
        model = AutoModelForCausalLM.from_pretrained("gpt2")
        {VH_TODO}the value head is gone in TRL 1.13 (GRPO/RLOO need no critic); if a value model is really needed, load AutoModelForSequenceClassification(..., num_labels=1)
        values = model.v_head(hidden)
        {VH_TODO}`PreTrainedModelWrapper` does not exist in TRL 1.13: use `transformers.PreTrainedModel` for type and isinstance checks
        if isinstance(model, PreTrainedModelWrapper):
            pass
        """
    )
    findings = assert_fixes(before, after, select=SELECT)
    manual = sorted((f.line, f.col) for f in findings if f.fix is Fix.MANUAL)
    assert manual == [(1, 52), (2, 9), (3, 10), (4, 22)]


# -- value-head class variables: `cls = VH if c else Seq2SeqVH`, then `cls.from_pretrained(...)` -----------
CAUSAL_ONLY_TODO = (
    "`{var}` is `AutoModelForSeq2SeqLM` when the condition picks that branch, and that run cannot train: TRL 1.13's "
    "online-RL trainers (GRPO, RLOO) take causal LMs only; the `AutoModelForCausalLM` branch trains. Stay on "
    "TRL <= 1.12 for seq2seq policies or drop that branch"
)
IMPORT_TODO = "`{cls}` does not exist in TRL 1.13; finish the TODOs on its remaining uses, then delete this import"
USE_TODO = "`{cls}` does not exist in TRL 1.13: use `transformers.PreTrainedModel` for type and isinstance checks"
CAUSAL_VH = "AutoModelForCausalLMWithValueHead"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead, AutoModelForSeq2SeqLMWithValueHead
            model_class = AutoModelForCausalLMWithValueHead if not args.seq2seq else AutoModelForSeq2SeqLMWithValueHead
            if not args.use_peft:
                ref_model = model_class.from_pretrained(args.name, trust_remote_code=True)
                peft_config = None
            else:
                peft_config = LoraConfig(r=16)
                ref_model = None
            model = model_class.from_pretrained(
                args.name,
                device_map=device_map,
                peft_config=peft_config,
            )
            """,
            f"""
            from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM
            from peft import get_peft_model

            {VH_TODO}{CAUSAL_ONLY_TODO.format(var="model_class")}
            model_class = AutoModelForCausalLM if not args.seq2seq else AutoModelForSeq2SeqLM
            if not args.use_peft:
                ref_model = model_class.from_pretrained(args.name, trust_remote_code=True)
                peft_config = None
            else:
                peft_config = LoraConfig(r=16)
                ref_model = None
            model = model_class.from_pretrained(
                args.name,
                device_map=device_map,
            )
            if peft_config is not None:
                model = get_peft_model(model, peft_config)
            """,
            id="conditional-variable-and-peft-config-that-may-be-none",
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            peft_config = None
            model = AutoModelForCausalLMWithValueHead.from_pretrained(
                "gpt2",
                peft_config=peft_config,
            )
            """,
            """
            from transformers import AutoModelForCausalLM
            peft_config = None
            model = AutoModelForCausalLM.from_pretrained(
                "gpt2",
            )
            """,
            id="peft-config-only-ever-none",  # sayands/noisy-lms
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            model_class = AutoModelForCausalLMWithValueHead
            model = model_class.from_pretrained("gpt2", v_head_init_strategy="normal", peft_config=lora)
            print(model.pretrained_model.config)
            """,
            """
            from transformers import AutoModelForCausalLM
            from peft import get_peft_model

            model_class = AutoModelForCausalLM
            model = get_peft_model(model_class.from_pretrained("gpt2"), lora)
            print(model.config)
            """,
            id="plain-variable-reuses-the-call-rewrite",
        ),
        pytest.param(
            """
            import trl
            def load(name, seq2seq):
                cls = trl.AutoModelForSeq2SeqLMWithValueHead if seq2seq else trl.AutoModelForCausalLMWithValueHead
                return cls.from_pretrained(name)
            """,
            f"""
            import trl
            import transformers

            def load(name, seq2seq):
                {VH_TODO}{CAUSAL_ONLY_TODO.format(var="cls")}
                cls = transformers.AutoModelForSeq2SeqLM if seq2seq else transformers.AutoModelForCausalLM
                return cls.from_pretrained(name)
            """,
            id="function-scope-module-attributes",
        ),
        pytest.param(
            """
            from trl import AutoModelForSeq2SeqLMWithValueHead
            cls = AutoModelForSeq2SeqLMWithValueHead
            model = cls.from_pretrained("t5-small")
            """,
            f"""
            from transformers import AutoModelForSeq2SeqLM
            {VH_TODO}no TRL 1.13 online-RL trainer (GRPO, RLOO) takes encoder-decoder models: stay on TRL <= 1.12 for this policy or move to a decoder-only model
            cls = AutoModelForSeq2SeqLM
            model = cls.from_pretrained("t5-small")
            """,
            id="seq2seq-only-variable-keeps-the-seq2seq-todo",
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", peft_config=None)
            """,
            """
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            """,
            id="peft-config-none-dropped",
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            peft_config = LoraConfig(r=8) if use_peft else None
            models = [AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", peft_config=peft_config)]
            """,
            f"""
            from transformers import AutoModelForCausalLM
            from peft import get_peft_model

            peft_config = LoraConfig(r=8) if use_peft else None
            {VH_TODO}`get_peft_model` fails when `peft_config` is None (the value head loaded without adapters then): apply it only to a real PEFT config
            models = [get_peft_model(AutoModelForCausalLM.from_pretrained("gpt2"), peft_config)]
            """,
            id="peft-config-that-may-be-none-outside-an-assignment-gets-a-todo",
        ),
    ],
)
def test_class_variables(before, after):
    assert_fixes(dedent(before), dedent(after), select=SELECT)


def test_conditional_variable_findings_say_which_branch_cannot_train():
    before = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead, AutoModelForSeq2SeqLMWithValueHead
        cls = AutoModelForCausalLMWithValueHead if causal else AutoModelForSeq2SeqLMWithValueHead
        model = cls.from_pretrained("gpt2")
        """
    )
    _, findings = run(before, select=SELECT)
    assert [(f.line, f.col, f.severity, f.fix) for f in findings] == [
        (2, 7, Severity.ERROR, Fix.APPLIED),
        (2, 56, Severity.WARNING, Fix.MANUAL),
        (2, 56, Severity.ERROR, Fix.APPLIED),
        (3, 9, Severity.ERROR, Fix.APPLIED),
    ]
    assert findings[1].message == CAUSAL_ONLY_TODO.format(var="cls")


@pytest.mark.parametrize(
    ("before", "kept"),
    [
        pytest.param(
            "cls = AutoModelForCausalLMWithValueHead\ncls = MyModel\nmodel = cls.from_pretrained('gpt2')\n",
            "cls = AutoModelForCausalLMWithValueHead\n",
            id="rebound",
        ),
        pytest.param(
            "cls = AutoModelForCausalLMWithValueHead\nmodel = load(cls, 'gpt2')\n",
            "cls = AutoModelForCausalLMWithValueHead\n",
            id="passed-elsewhere",
        ),
        pytest.param(
            "cls = AutoModelForCausalLMWithValueHead\nmodel = cls(base)\n",
            "cls = AutoModelForCausalLMWithValueHead\n",
            id="called-directly",
        ),
        pytest.param(
            "cls = AutoModelForCausalLMWithValueHead\npeft_config = None\n"
            "models = [cls.from_pretrained('gpt2', peft_config=peft_config)]\n",
            "cls = AutoModelForCausalLMWithValueHead\n",
            id="peft-config-cannot-move",
        ),
        pytest.param(
            "cls, other = AutoModelForCausalLMWithValueHead, None\nmodel = cls.from_pretrained('gpt2')\n",
            "cls, other = AutoModelForCausalLMWithValueHead, None\n",
            id="tuple-target",
        ),
    ],
)
def test_class_variable_fallbacks_keep_todays_todos(before, kept):
    src = f"from trl import {CAUSAL_VH}\n" + before
    rest = before.split(kept, 1)[1]
    after = (
        f"{VH_TODO}{IMPORT_TODO.format(cls=CAUSAL_VH)}\nfrom trl import {CAUSAL_VH}\n"
        f"{VH_TODO}{USE_TODO.format(cls=CAUSAL_VH)}\n{kept}{rest}"
    )
    assert_fixes(src, after, select=SELECT)


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM\n"
            "cls = AutoModelForCausalLM if causal else AutoModelForSeq2SeqLM\n"
            "model = cls.from_pretrained('gpt2', peft_config=None)\n",
            id="plain-classes",
        ),
        pytest.param(
            "from mylib import AutoModelForCausalLMWithValueHead\ncls = AutoModelForCausalLMWithValueHead\n"
            "model = cls.from_pretrained('gpt2')\n",
            id="other-library",
        ),
    ],
)
def test_class_variable_noop(src):
    assert assert_noop(src, select=SELECT) == []


# -- wrappers of a loaded model assigned to the same name, and the backbone as a value -----------
@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            from transformers import AutoModelForCausalLM
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            model = AutoModelForCausalLMWithValueHead.from_pretrained(model)
            model.train()
            """,
            """
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            model.train()
            """,
            id="self-wrap-removed",
        ),
        pytest.param(
            """
            from transformers import AutoModelForCausalLM
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            # add the value head
            model = AutoModelForCausalLMWithValueHead.from_pretrained(model)
            """,
            """
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            # add the value head
            """,
            id="self-wrap-with-a-comment-kept",
        ),
        pytest.param(
            """
            from transformers import AutoModelForCausalLM
            from trl import AutoModelForCausalLMWithValueHead
            def load(path):
                model = AutoModelForCausalLM.from_pretrained(path)
                # add the value head
                model = AutoModelForCausalLMWithValueHead.from_pretrained(model)  # for PPO
                return model
            """,
            """
            from transformers import AutoModelForCausalLM
            def load(path):
                model = AutoModelForCausalLM.from_pretrained(path)
                # add the value head
                # for PPO
                return model
            """,
            id="self-wrap-comments-move-to-the-next-statement",
        ),
        pytest.param(
            """
            from transformers import AutoModelForCausalLM
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            if use_ppo:
                # add the value head
                model = AutoModelForCausalLMWithValueHead.from_pretrained(model)
            """,
            """
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            if use_ppo:
                # add the value head
                pass
            """,
            id="self-wrap-alone-in-its-block-leaves-a-pass",
        ),
        pytest.param(
            """
            from transformers import AutoModelForCausalLM
            from trl import AutoModelForCausalLMWithValueHead
            base = AutoModelForCausalLM.from_pretrained("gpt2")
            policy = AutoModelForCausalLMWithValueHead.from_pretrained(base)
            """,
            """
            from transformers import AutoModelForCausalLM
            base = AutoModelForCausalLM.from_pretrained("gpt2")
            policy = base
            """,
            id="wrap-into-another-name",
        ),
        pytest.param(
            # namsan96/rlhf_demo: peft's preparation hands back the model it was given
            """
            from peft import prepare_model_for_int8_training
            from transformers import AutoModelForCausalLM
            from trl import AutoModelForCausalLMWithValueHead
            base = AutoModelForCausalLM.from_pretrained("gpt2")
            base = prepare_model_for_int8_training(base)
            policy = AutoModelForCausalLMWithValueHead.from_pretrained(base)
            """,
            """
            from peft import prepare_model_for_int8_training
            from transformers import AutoModelForCausalLM
            base = AutoModelForCausalLM.from_pretrained("gpt2")
            base = prepare_model_for_int8_training(base)
            policy = base
            """,
            id="wrap-a-model-peft-prepared",
        ),
        pytest.param(
            # oladri-renuka/llm-post-training-pipeline: the wrapper's own constructor, handed
            # a merged PEFT model (which only ever took a model object)
            """
            from trl import AutoModelForCausalLMWithValueHead
            merged = peft_model.merge_and_unload()
            policy = AutoModelForCausalLMWithValueHead(merged)
            ref = AutoModelForCausalLMWithValueHead(pretrained_model=copy.deepcopy(merged))
            """,
            """
            merged = peft_model.merge_and_unload()
            policy = merged
            ref = copy.deepcopy(merged)
            """,
            id="the-constructor-takes-a-model",
        ),
    ],
)
def test_wrapping_a_loaded_model(before, after):
    assert_fixes(dedent(before), dedent(after), select=SELECT)


def test_a_name_that_holds_a_model_and_a_path_is_left_with_a_todo():
    src = dedent(
        """
        from transformers import AutoModelForCausalLM
        from trl import AutoModelForCausalLMWithValueHead
        model = args.model_path
        if args.base:
            model = AutoModelForCausalLM.from_pretrained(model)
        model = AutoModelForCausalLMWithValueHead.from_pretrained(model)
        """
    )
    out, findings = run(src, select=SELECT)
    assert "model = AutoModelForCausalLMWithValueHead.from_pretrained(model)\n" in out
    todos = [f for f in findings if f.fix is Fix.MANUAL and "holds a loaded model" in f.message]
    assert len(todos) == 1 and todos[0].line == 6
    assert run(out, select=SELECT)[0] == out


def test_a_name_unpacked_from_a_call_may_be_a_model_or_a_path_and_gets_a_todo():
    """`tok, model = utils.load_model(...)` then `VH.from_pretrained(model, ...)` (seen in
    asherps/DPO-RLHF_generalization): the wrapper took a model or a path, the plain class only a
    path, so the call is left with a TODO instead of a load that fails on a model."""
    src = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead
        tok, model = utils.load_model("x")
        model = AutoModelForCausalLMWithValueHead.from_pretrained(model, peft_config=cfg)
        """
    )
    out, findings = run(src, select=SELECT)
    assert (
        "model = AutoModelForCausalLMWithValueHead.from_pretrained(model, peft_config=cfg)\n" in out
    )
    (todo,) = [f for f in findings if f.fix is Fix.MANUAL and "comes out of a call" in f.message]
    assert todo.line == 3
    assert run(out, select=SELECT)[0] == out
    # a name bound to a path is loaded with the plain class, as before
    assert (
        "AutoModelForCausalLM.from_pretrained(name)"
        in run(
            src.replace('tok, model = utils.load_model("x")', 'name = "gpt2"').replace(
                "from_pretrained(model", "from_pretrained(name"
            ),
            select=SELECT,
        )[0]
    )


def test_the_same_name_unpacked_in_another_function_or_from_a_split_is_still_a_path():
    """HassanJbara/llm-detector-counter: `task, model_name = spec.split(":")` in one function,
    `model_name` a parameter of the one that loads."""
    src = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead
        def reward(spec):
            task, model_name = spec.split(":")
            return task, model_name
        def build(model_name):
            a, b = helpers(model_name)
            return AutoModelForCausalLMWithValueHead.from_pretrained(model_name)
        def load(spec):
            task, model_name = spec.split(":")
            return AutoModelForCausalLMWithValueHead.from_pretrained(model_name)
        def chat(model, tokenizer):
            model, tokenizer = setup_chat_format(model, tokenizer)
            return AutoModelForCausalLMWithValueHead.from_pretrained(model)
        """
    )
    out, findings = run(src, select=SELECT)
    assert out.count("AutoModelForCausalLM.from_pretrained(model_name)") == 2
    assert "    return model\n" in out  # setup_chat_format hands back the model it was given
    assert not [f for f in findings if "comes out of a call" in f.message]


@pytest.mark.parametrize(
    "line",
    [
        "model.backbone = model.pretrained_model",
        "setattr(model, name, getattr(model.pretrained_model, name))",
    ],
)
def test_the_backbone_copied_onto_the_model_is_removed_not_a_self_reference(line):
    # deb3011/rlhf_finetuning: `model.model = model.pretrained_model`; in TRL 1.13 `model` is
    # that model, so the line would set the model onto itself.
    src = dedent(
        f"""
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        {line}
        model.pretrained_model.generate(x)
        """
    )
    out, findings = run(src, select=SELECT)
    assert out == dedent(
        """
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("gpt2")
        model.generate(x)
        """
    )
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    assert any(
        f.line == 3 and f"`{line}` made the value-head wrapper look like" in f.message
        for f in findings
    )
    assert run(out, select=SELECT)[0] == out


def test_an_attribute_the_wrapper_passed_on_from_its_model_is_removed():
    # namsan96/rlhf_demo (TRL's gpt-neox example): the wrapper got the model's gradient
    # checkpointing switches; deb3011/rlhf_finetuning its generation_config. In TRL 1.13 the
    # model is that model: `model.x = model.x` would be all that was left.
    src = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        # forward the switches
        model.gradient_checkpointing_enable = model.pretrained_model.gradient_checkpointing_enable
        if ready:
            model.generation_config = model.pretrained_model.generation_config  # TRL expects it
        model.config2 = model.pretrained_model.config
        other.generation_config = model.pretrained_model.generation_config
        """
    )
    out, findings = run(src, select=SELECT)
    assert out == dedent(
        """
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("gpt2")
        # forward the switches
        if ready:
            # TRL expects it
            pass
        model.config2 = model.config
        other.generation_config = model.generation_config
        """
    )
    removed = [f for f in findings if f.message.endswith("set the attribute to itself: removed")]
    assert [(f.line, f.severity, f.fix) for f in removed] == [
        (4, Severity.INFO, Fix.APPLIED),
        (6, Severity.INFO, Fix.APPLIED),
    ]
    assert removed[0].message.startswith(
        "`model.gradient_checkpointing_enable = model.pretrained_model."
        "gradient_checkpointing_enable` made the value-head wrapper pass on what the model "
        "inside it has; in TRL 1.13 `model` is that model"
    )
    # the lines that keep a statement report the `.pretrained_model` they lose
    assert [
        f.line for f in findings if "is `model` itself without the value head" in f.message
    ] == [
        7,
        8,
    ]
    assert run(out, select=SELECT)[0] == out


def test_a_backbone_copy_sharing_its_line_stays_under_a_todo():
    src = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        model.backbone = model.pretrained_model; ready = True
        """
    )
    out, findings = run(src, select=SELECT)
    assert "\nmodel.backbone = model.pretrained_model; ready = True\n" in out
    assert any(f.fix is Fix.MANUAL and "copy `model` onto itself" in f.message for f in findings)
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "copy",
    [
        "setattr(model, base.base_model_prefix, base)",
        "model.transformer = base",
    ],
)
def test_the_backbone_copied_back_through_a_name_is_removed(copy):
    # ukhan1219/pychess: `base_model = policy_model.pretrained_model`, then
    # `setattr(policy_model, base_model.base_model_prefix, base_model)` under an `if`; as
    # `base = model` the setattr made the model its own submodule and `.to()` recursed.
    src = dedent(
        f"""
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        base = model.pretrained_model
        model.generation_config = base.generation_config
        if hasattr(base, "base_model_prefix"):
            # the wrapper shows the backbone under its prefix
            {copy}
        model = model.to("cpu")
        """
    )
    out, findings = run(src, select=SELECT)
    assert out == dedent(
        """
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("gpt2")
        base = model
        model.generation_config = base.generation_config
        if hasattr(base, "base_model_prefix"):
            # the wrapper shows the backbone under its prefix
            pass
        model = model.to("cpu")
        """
    )
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    assert any(
        f.line == 7 and "would only set the model onto itself" in f.message for f in findings
    )
    assert run(out, select=SELECT)[0] == out


def test_a_copy_back_onto_an_object_that_is_not_a_value_head_model_stays():
    # only a value-head model of this file is its inner model in TRL 1.13; another object's
    # `pretrained_model` (a wrapper of the repo's own) is its own business
    src = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        wrapper = MyWrapper(model)
        base = wrapper.pretrained_model
        setattr(wrapper, base.base_model_prefix, base)
        """
    )
    out, _ = run(src, select=SELECT)
    assert (
        "base = wrapper.pretrained_model\nsetattr(wrapper, base.base_model_prefix, base)\n" in out
    )


def test_the_backbone_copied_back_on_a_shared_line_is_a_todo():
    src = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        base = model.pretrained_model
        model.transformer = base; ready = True
        """
    )
    out, findings = run(src, select=SELECT)
    assert "\nbase = model.pretrained_model\n" in out  # kept, under its TODO
    assert [f.line for f in findings if f.fix is Fix.MANUAL] == [3]
    assert any("its own submodule" in f.message for f in findings)
    assert run(out, select=SELECT)[0] == out


def test_a_backbone_name_never_copied_back_is_still_rewritten():
    src = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        base = model.pretrained_model
        other.transformer = base
        """
    )
    out, findings = run(src, select=SELECT)
    assert "\nbase = model\n" in out and not [f for f in findings if f.fix is Fix.MANUAL]


def test_a_quantized_adapter_model_names_what_changes():
    """The wrapper prepared an 8/4-bit model for its adapter; a flag read at run time leaves that
    to a TODO; RLOO/GRPO then train the adapter in bf16, which the findings say."""
    src = (
        "from trl import AutoModelForCausalLMWithValueHead\n"
        "model = AutoModelForCausalLMWithValueHead.from_pretrained('m', load_in_8bit=args.q, "
        "peft_config=lora)\n"
    )
    out, findings = run(src, select=SELECT)
    assert "quantization_config=BitsAndBytesConfig(load_in_8bit=args.q) if args.q else None" in out
    assert (
        "# TODO(trl-migrate TRL102): where the 8/4-bit flag is true, the value-head model ran "
        "`peft.prepare_model_for_kbit_training(model)` before adding the adapter" in out
    )
    assert any(
        f.message.startswith("RLOOTrainer and GRPOTrainer cast the trainable parameters")
        and f.severity is Severity.WARNING
        for f in findings
    )
    plain, findings = run(src.replace("args.q", "False"), select=SELECT)
    assert "quantization_config" not in plain and "prepare_model_for_kbit_training" not in plain
    assert not any("cast the trainable" in f.message for f in findings)


@pytest.mark.parametrize(
    ("config", "said"),
    [
        # Pranavbp525/StoryGen, abhaykrishna2010: a 4-bit config bound to a name
        pytest.param("bnb", "RLOOTrainer and GRPOTrainer cast", id="bound-4-bit"),
        pytest.param(
            "BitsAndBytesConfig(load_in_8bit=True)", "RLOOTrainer and GRPOTrainer cast", id="inline"
        ),
        pytest.param(
            "make_config()",
            "if `make_config()` quantizes the model in 8/4 bits: RLOO",
            id="unknown",
        ),
        pytest.param("BitsAndBytesConfig(load_in_4bit=False)", None, id="not-quantized"),
        pytest.param("None", None, id="none"),
    ],
)
def test_a_quantization_config_of_an_adapter_model_names_the_bf16_cast(config, said):
    """Legacy PPO prepared no 8/4-bit training for a `quantization_config=` (only for the flags),
    and peft made the adapter fp32; RLOO/GRPO cast the adapter of any 8/4-bit model to bf16."""
    src = (
        "from transformers import BitsAndBytesConfig\n"
        "from trl import AutoModelForCausalLMWithValueHead\n"
        "bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)\n"
        "model = AutoModelForCausalLMWithValueHead.from_pretrained(\n"
        f"    'm', quantization_config={config}, peft_config=lora\n"
        ")\n"
    )
    out, findings = run(src, select=SELECT)
    assert "prepare_model_for_kbit_training" not in out  # as legacy PPO did for a config
    cast = [f for f in findings if "cast the trainable parameters" in f.message]
    if said is None:
        assert cast == []
    else:
        assert [(f.line, f.severity, f.message.startswith(said)) for f in cast] == [
            (4, Severity.WARNING, True)
        ]
    assert run(out, select=SELECT)[0] == out
    # no adapter: nothing to cast
    _, findings = run(src.replace(", peft_config=lora", ""), select=SELECT)
    assert not [f for f in findings if "cast the trainable parameters" in f.message]


WRAPPED_QUANTIZED = """\
from peft import PeftModel, get_peft_model
from transformers import AutoModelForCausalLM
from trl import AutoModelForCausalLMWithValueHead

{load}
base = get_peft_model(base, lora)
model = AutoModelForCausalLMWithValueHead.from_pretrained(base)
"""


@pytest.mark.parametrize(
    ("load", "said"),
    [
        # namsan96/rlhf_demo (TRL 0.4's gpt-neox-20b peft example): an 8-bit base, its adapter
        # added, then wrapped
        pytest.param(
            "base = AutoModelForCausalLM.from_pretrained('m', load_in_8bit=True)",
            "`base` is loaded in 8/4 bits above: RLOOTrainer and GRPOTrainer cast",
            id="8-bit",
        ),
        pytest.param(
            "base = AutoModelForCausalLM.from_pretrained('m', quantization_config=q)",
            "`base` may be loaded in 8/4 bits above (a flag read at run time, or one load of "
            "several): where it is, RLOOTrainer and GRPOTrainer cast",
            id="config-of-another-file",
        ),
        # an `if` and its `else` each load it, the wrapper reads either
        pytest.param(
            "if args.q:\n    base = AutoModelForCausalLM.from_pretrained('m', load_in_4bit=True)\n"
            "else:\n    base = AutoModelForCausalLM.from_pretrained('m')",
            "`base` may be loaded in 8/4 bits above",
            id="one-branch-of-two",
        ),
        pytest.param("base = AutoModelForCausalLM.from_pretrained('m')", None, id="full-precision"),
        # DanielSc4/RewardLM: the 8-bit load sits in the `if`, the wrapper of the `else` reads
        # the full-precision load of its own block
        pytest.param(
            "base = AutoModelForCausalLM.from_pretrained('m', load_in_8bit=True)\n"
            "if args.cpu:\n    base = AutoModelForCausalLM.from_pretrained('m')\n"
            "    base = PeftModel.from_pretrained(base, 'adapter')\n"
            "    cpu_model = AutoModelForCausalLMWithValueHead.from_pretrained(base)",
            "`base` may be loaded in 8/4 bits above",  # the last line's wrapper only
            id="full-precision-in-its-own-block",
        ),
        pytest.param(
            "base = AutoModelForCausalLM.from_pretrained('m')\n"
            "base = AutoModelForCausalLM.from_pretrained('m', load_in_4bit=True)",
            "`base` is loaded in 8/4 bits above",  # the last binding of the block is read
            id="loaded-again-in-the-same-block",
        ),
    ],
)
def test_a_wrapped_model_loaded_in_8_or_4_bits_names_the_bf16_cast(load, said):
    """RLOO/GRPO read the quantization off the model handed to them and cast its trainable
    parameters (the adapter added before the wrapper) to bf16; the value-head PPO kept them in
    fp32."""
    src = WRAPPED_QUANTIZED.format(load=load)
    out, findings = run(src, select=SELECT)
    cast = [f for f in findings if "cast the trainable parameters" in f.message]
    wrapper_line = src.splitlines().index(
        "model = AutoModelForCausalLMWithValueHead.from_pretrained(base)"
    )
    if said is None:
        assert cast == []
    else:
        assert [(f.line, f.severity) for f in cast] == [(wrapper_line + 1, Severity.WARNING)]
        assert cast[0].message.startswith(said), cast[0].message
    assert "AutoModelForCausalLMWithValueHead" not in out
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "late",
    [
        pytest.param("from transformers import AutoModelForCausalLM\n", id="a-later-statement"),
        pytest.param(
            "def load():\n    from transformers import AutoModelForCausalLM\n", id="in-a-function"
        ),
    ],
)
def test_an_import_of_the_replacement_below_its_first_use_does_not_bind_it(late):
    # seen in AmenallahBouhachem/RLHF-PPO-DPO-GRPO-KTO-Implementation: the notebook's last cell
    # imported AutoModelForCausalLM, so none was added where the value-head model is loaded
    # (cells above it): a NameError
    before = (
        "from trl import AutoModelForCausalLMWithValueHead\n"
        'model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")\n' + late
    )
    after = (
        "from transformers import AutoModelForCausalLM\n"
        'model = AutoModelForCausalLM.from_pretrained("gpt2")\n' + late
    )
    assert_fixes(before, after, select=("TRL102",))


def test_an_import_of_the_replacement_above_its_use_is_enough():
    src = dedent(
        """
        from transformers import AutoModelForCausalLM
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        """
    )
    assert_fixes(
        src,
        dedent(
            """
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            """
        ),
        select=("TRL102",),
    )


def test_loading_arguments_given_with_a_loaded_model_went_unread_and_are_dropped():
    # seen in liushiliushi/SaySelf: `from_pretrained(sft_model, trust_remote_code=...,
    # is_trainable=True, attn_implementation=...)` on a PeftModel already loaded; every TRL
    # release used the model as it was, so telling to move the arguments to its load (or to
    # load an adapter as trainable) would change what trained
    before = dedent(
        """
        from peft import AutoPeftModelForCausalLM
        from trl import AutoModelForCausalLMWithValueHead
        sft = AutoPeftModelForCausalLM.from_pretrained("adapter", is_trainable=True)
        model = AutoModelForCausalLMWithValueHead.from_pretrained(
            sft,
            trust_remote_code=True,
            is_trainable=True,
            load_in_8bit=False,
            attn_implementation="sdpa",
        )
        """
    )
    after = dedent(
        """
        from peft import AutoPeftModelForCausalLM
        sft = AutoPeftModelForCausalLM.from_pretrained("adapter", is_trainable=True)
        model = sft
        """
    )
    findings = assert_fixes(before, after, select=("TRL102",))
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    said = [f for f in findings if "read none of these" in f.message]
    assert len(said) == 1 and said[0].message.startswith(
        '`trust_remote_code=True, attn_implementation="sdpa", load_in_8bit=False, '
        "is_trainable=True` dropped: handed a loaded model"
    )


@pytest.mark.parametrize(
    ("peft", "todo"),
    [
        pytest.param("", [], id="no-adapter-added"),
        pytest.param(
            ", peft_config=lora",
            [
                "this wraps an already-loaded model; move these arguments to where it is "
                "loaded: use_gradient_checkpointing=True"
            ],
            id="adapter-added",
        ),
    ],
)
def test_the_8bit_preparations_arguments_with_a_loaded_model(peft, todo):
    # the wrapper ran peft's 8/4-bit preparation, with these arguments, only before adding a
    # peft_config adapter
    before = dedent(
        f"""
        from transformers import AutoModelForCausalLM
        from trl import AutoModelForCausalLMWithValueHead
        base = AutoModelForCausalLM.from_pretrained("gpt2")
        model = AutoModelForCausalLMWithValueHead.from_pretrained(base, use_gradient_checkpointing=True{peft})
        """
    )
    _, findings = run(before, select=("TRL102",))
    assert [f.message for f in findings if f.fix is Fix.MANUAL] == todo


@pytest.mark.parametrize(
    ("src", "added"),
    [
        pytest.param(
            'device = "cpu"\nimport transformers\nimport trl\n'
            'm = trl.AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")\n',
            False,
            id="imported-above-the-use",
        ),
        pytest.param(
            'device = "cpu"\nimport trl\n'
            'm = trl.AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")\n'
            "import transformers\n",
            True,
            id="imported-below-the-use",
        ),
    ],
)
def test_the_transformers_module_is_imported_only_where_nothing_above_imports_it(src, added):
    # seen in kir77ki/NLP: the notebook imported transformers in its third cell, and the
    # rewrite added `import transformers` above its first cell, the `%pip install
    # transformers==...` one, which then ran after transformers was imported
    out, _ = run(src, select=("TRL102",))
    assert out.startswith("import transformers\n") is added
    assert 'm = transformers.AutoModelForCausalLM.from_pretrained("gpt2")\n' in out
    assert run(out, select=("TRL102",))[0] == out


def test_an_unpacked_dict_that_may_hold_peft_config_keeps_its_own_todo_with_a_loaded_model():
    # the wrapper added a `peft_config` adapter to a model it was handed, so `**extra` is not
    # among the arguments it never read
    before = dedent(
        """
        from transformers import AutoModelForCausalLM
        from trl import AutoModelForCausalLMWithValueHead
        base = AutoModelForCausalLM.from_pretrained("gpt2")
        model = AutoModelForCausalLMWithValueHead.from_pretrained(base, device_map="auto", **extra)
        """
    )
    _, findings = run(before, select=("TRL102",))
    unread = [f.message for f in findings if "read none of these" in f.message]
    assert len(unread) == 1 and unread[0].startswith('`device_map="auto"` dropped')
    assert any(f.message.startswith("`**extra` may hold") for f in findings if f.fix is Fix.MANUAL)


def test_a_value_head_class_in_an_annotation_names_pretrained_model():
    # oladri-renuka/llm-post-training-pipeline: `-> Tuple[AutoModelForCausalLMWithValueHead,
    # ...]` kept the import, which fails on TRL 1.13, behind a TODO
    before = dedent(
        """
        from typing import Tuple
        from trl import AutoModelForCausalLMWithValueHead

        def load(model) -> Tuple[AutoModelForCausalLMWithValueHead, int]:
            policy: AutoModelForCausalLMWithValueHead = AutoModelForCausalLMWithValueHead(model)
            return policy, 1
        """
    )
    after = dedent(
        """
        from typing import Tuple
        from transformers import PreTrainedModel

        def load(model) -> Tuple[PreTrainedModel, int]:
            policy: PreTrainedModel = model
            return policy, 1
        """
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert not [f for f in findings if f.fix is Fix.MANUAL]


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            def check(m):
                return isinstance(m, AutoModelForCausalLMWithValueHead)
            """,
            id="isinstance",
        ),
        pytest.param(
            """
            from peft import PreTrainedModel
            from trl import AutoModelForCausalLMWithValueHead
            def load(m) -> AutoModelForCausalLMWithValueHead:
                return m
            """,
            id="the-name-bound-to-another-class",
        ),
        pytest.param(
            # seen in hiyouga/ChatGLM-Efficient-Tuning: the annotation says which functions
            # handle value-head models, in a file that reads `.v_head`
            """
            from trl import AutoModelForCausalLMWithValueHead
            def swap(model: AutoModelForCausalLMWithValueHead) -> None:
                model.default_head = model.v_head.state_dict()
            """,
            id="a-file-that-reads-the-value-head",
        ),
    ],
)
def test_other_uses_of_a_value_head_class_keep_the_todo(src):
    out, findings = run(dedent(src), select=SELECT)
    assert "from trl import AutoModelForCausalLMWithValueHead" in out
    assert any(
        "use `transformers.PreTrainedModel` for type and isinstance checks" in f.message
        for f in findings
    )


@pytest.mark.parametrize(
    ("probe", "said"),
    [
        ('hasattr(policy, "pretrained_model")', "gave True for the value-head model"),
        ("hasattr(policy, 'v_head')", "gave True for the value-head model"),
        ('getattr(policy, "pretrained_model", None)', "gave `policy.pretrained_model` for"),
    ],
)
def test_a_probe_of_the_wrappers_attributes_on_a_value_head_model_is_a_warning(probe, said):
    # seen in rohitchawla28/rl-finetune: `if hasattr(model, 'pretrained_model') and ...:` set
    # the decoder start token; on the plain model the check is False and the branch is skipped
    before = dedent(
        f"""
        from trl import AutoModelForCausalLMWithValueHead
        policy = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        if {probe}:
            print("wrapped")
        """
    )
    out, findings = run(before, select=SELECT)
    todo = [f for f in findings if f.fix is Fix.MANUAL]
    assert len(todo) == 1 and todo[0].severity is Severity.WARNING and todo[0].line == 3
    assert said in todo[0].message and "so it gives" in todo[0].message
    assert f"if {probe}:\n" in out  # the check itself stays as written
    assert run(out, select=SELECT)[0] == out


def test_a_probe_of_another_object_or_attribute_says_nothing():
    before = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead
        policy = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        print(hasattr(tokenizer, "pretrained_model"), hasattr(policy, "config"))
        """
    )
    _, findings = run(before, select=SELECT)
    assert not [f for f in findings if f.fix is Fix.MANUAL]


def test_pretrained_model_wrapper_in_an_annotation_names_pretrained_model():
    # seen in puria-radmard/mars-steg: `-> PreTrainedModelWrapper` kept its TODO (and the import
    # that stops the five entry points importing the module), as the file seemed to name
    # `PreTrainedModel` already: it does, but only as a part of `PreTrainedModelWrapper`
    before = dedent(
        """
        from trl.models.modeling_base import PreTrainedModelWrapper, LAYER_PATTERNS
        from transformers import AutoModelForCausalLM

        def reference(name) -> PreTrainedModelWrapper:
            return AutoModelForCausalLM.from_pretrained(name), LAYER_PATTERNS
        """
    )
    after = dedent(
        """
        from trl.experimental.utils import LAYER_PATTERNS
        from transformers import PreTrainedModel, AutoModelForCausalLM

        def reference(name) -> PreTrainedModel:
            return AutoModelForCausalLM.from_pretrained(name), LAYER_PATTERNS
        """
    )
    findings = assert_fixes(before, after, select=["TRL101", "TRL102"])
    assert not [f for f in findings if f.fix is Fix.MANUAL]


def test_an_annotation_uses_pretrained_model_already_imported_from_transformers():
    before = dedent(
        """
        from transformers.modeling_utils import PreTrainedModel
        from trl import AutoModelForCausalLMWithValueHead

        def forward(model: AutoModelForCausalLMWithValueHead, x: PreTrainedModel):
            return model(x)
        """
    )
    after = dedent(
        """
        from transformers.modeling_utils import PreTrainedModel

        def forward(model: PreTrainedModel, x: PreTrainedModel):
            return model(x)
        """
    )
    assert_fixes(before, after, select=SELECT)


def test_a_line_to_drop_is_known_by_the_node_not_by_its_id_alone():
    """The `X.attr = X.pretrained_model.attr` lines dropped are held as nodes. Held by id alone,
    a dropped line's node could be freed and its id taken by a line rewritten later in the walk
    (`model.pretrained_model.config.use_cache = True` -> `model.config.use_cache = True`), which
    was then dropped too: in one process over several files, one run in four or five lost it
    (the ppo_files benchmark's determinism check, shangluyang/rlhf's ppo_training.py)."""
    import types

    import libcst as cst

    from codemods.rules.value_heads.rewrite import RewriteValueHeads

    dropped, other = cst.parse_statement("a = 1\n"), cst.parse_statement("b = 2\n")
    # as if `dropped` had been freed and `other` had been given its id
    owner = types.SimpleNamespace(_commented_wraps={id(other): dropped})
    body, _ = RewriteValueHeads._drop_commented_wraps(owner, [other])  # type: ignore[arg-type]
    assert body == [other]
    owner = types.SimpleNamespace(_commented_wraps={id(dropped): dropped})
    body, _ = RewriteValueHeads._drop_commented_wraps(owner, [dropped, other])  # type: ignore[arg-type]
    assert body == [other]


def test_a_line_that_only_prints_moves_or_copies_a_value_head_is_removed():
    # the DeepLearning.AI lab notebooks print the head; BaleChen/LaGE, CambioML/pykoi and
    # izaanz move it to the model's device; rmorain/sentiment-tuning copies the policy's head
    # into the reference model's. Once both are plain models, nothing is left for such a line.
    src = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        ref_model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        print(model.v_head)
        model.v_head = model.v_head.to(current_device)  # a remedy for a bug in trl
        ref_model.v_head.load_state_dict(model.v_head.state_dict())
        if on_gpu:
            model.v_head.cuda()
        model.v_head = model.v_head.to(torch.device("cuda"))
        print(model.v_head.summary.weight)
        print("head:", model.v_head)
        other.v_head.to(device)
        model.v_head.to(device); ready = True
        """
    )
    out, findings = run(src, select=SELECT)
    todo = (
        VH_TODO + "the value head is gone in TRL 1.13 (GRPO/RLOO need no critic); if a value "
        "model is really needed, load AutoModelForSequenceClassification(..., num_labels=1)\n"
    )
    assert out == dedent(
        """
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("gpt2")
        ref_model = AutoModelForCausalLM.from_pretrained("gpt2")
        # a remedy for a bug in trl
        if on_gpu:
            pass
        """
    ) + (
        todo
        + 'model.v_head = model.v_head.to(torch.device("cuda"))\n'
        + todo
        + "print(model.v_head.summary.weight)\n"
        + todo
        + 'print("head:", model.v_head)\n'
        + "other.v_head.to(device)\n"
        + todo
        + "model.v_head.to(device); ready = True\n"
    )
    removed = [f for f in findings if f.message.endswith("need no critic): removed")]
    assert [(f.line, f.severity, f.fix, f.message.split("` only ")[1][:20]) for f in removed] == [
        (4, Severity.INFO, Fix.APPLIED, "printed the value he"),
        (5, Severity.INFO, Fix.APPLIED, "moved or cast the va"),
        (6, Severity.INFO, Fix.APPLIED, "copied one value hea"),
        (8, Severity.INFO, Fix.APPLIED, "moved or cast the va"),
    ]
    assert run(out, select=SELECT)[0] == out


def test_a_value_head_line_of_a_model_left_a_value_head_model_stays():
    # the model is kept as it was (an encoder-decoder class it cannot tell, say): not a model
    # of this file that becomes plain, so the line is not removed
    src = dedent(
        """
        model = load_it("gpt2")
        print(model.v_head)
        """
    )
    assert run(src, select=SELECT)[0] == src


def test_a_value_head_model_call_unpacked_into_logits_loss_and_values_is_a_todo():
    # the demo's value_head.ipynb: `logits, _, values = model(**inputs)`; its `print(model.v_head)`
    # TODO, now removed, was the only one, and the unpacking fails on the plain model
    src = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        logits, _, values = model(**inputs)
        out = model(**inputs)
        """
    )
    out, findings = run(src, select=SELECT)
    assert (
        VH_TODO + "`model(...)` of the value-head model gave (logits, loss, values); the plain "
        "model gives a ModelOutput (`.logits`) and no values: take `model(...).logits` here, and "
        "drop what read the values\nlogits, _, values = model(**inputs)\nout = model(**inputs)\n"
    ) in out
    assert [f.line for f in findings if f.fix is Fix.MANUAL] == [3]
    assert run(out, select=SELECT)[0] == out

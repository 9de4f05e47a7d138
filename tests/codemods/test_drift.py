"""TRL108 drift: no-op, fix and TODO cases, exact text, run twice."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from migrate.kernel.findings import Fix, Severity
from tests import old_wheels
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run

SELECT = ("TRL108",)


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "import trl\nfrom transformers import TrainingArguments\n"
            "args = TrainingArguments('out', eval_strategy='steps')\n",
            id="new-name",
        ),
        pytest.param("import trl\nfrom peft import prepare_model_for_kbit_training\n", id="kbit"),
        pytest.param("import trl\nrun(evaluation_strategy='steps')\n", id="not-a-training-args"),
        pytest.param(
            "import trl\nfrom accelerate.utils.deepspeed import DummyOptim\n", id="moved-already"
        ),
        pytest.param(
            "import trl\nfrom mylib import prepare_model_for_int8_training\n", id="own-function"
        ),
        pytest.param("import trl\nx = cfg.use_auth_token\n", id="attribute-read"),
        pytest.param(
            "import trl\nfrom transformers import PretrainedConfig, AutoTokenizer\n",
            id="pretrained-config-from-transformers",
        ),
        pytest.param(
            "import trl\n"
            "a = tok.apply_chat_template(m)['input_ids']\n"
            "b = tok.apply_chat_template(m).input_ids\n"
            "c = tok.apply_chat_template(m, return_dict=True)\n"
            "d = tok.apply_chat_template(m, tokenize=False)\n"
            "e = tok.apply_chat_template(m)\n"
            "f = model.generate(**tok.apply_chat_template(m, return_tensors='pt'))\n"
            "print(e['attention_mask'])\n"
            "g = tok.apply_chat_template(m, **kw)\n",
            id="chat-template-already-read-as-a-mapping",
        ),
        pytest.param("import trl\nx = tok(text)\ny = enc.encode(text)\n", id="tokenizer-call"),
        pytest.param(
            "import trl\nfrom transformers import TrainingArguments\n"
            "a = TrainingArguments('o', max_seq_length=3)\n",
            id="max-seq-length-not-sft",
        ),
        pytest.param(
            "import trl\nfrom transformers import TrainingArguments\n"
            "a = TrainingArguments('o', train_sampling_strategy='group_by_length')\n",
            id="new-keyword",
        ),
        pytest.param(
            "import trl\nmake(group_by_length=True)\nx = data.group_by_length\n",
            id="not-a-training-config",
        ),
        pytest.param(
            "import trl\nfrom dataclasses import dataclass\n@dataclass\nclass A:\n"
            "    group_by_length: bool = False\nif args.group_by_length:\n    pass\n",
            id="the-scripts-own-field",
        ),
        pytest.param(
            "import argparse\nimport trl\nargs = argparse.ArgumentParser().parse_args()\n"
            "print(args.logging_dir, args.group_by_length)\n"
            "script_args = HfArgumentParser(Mine).parse_args_into_dataclasses()[0]\n"
            "x = script_args.group_by_length\n",
            id="names-the-file-binds-to-something-else",
        ),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=SELECT) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            import trl
            from transformers import TrainingArguments
            args = TrainingArguments(
                output_dir="out",
                evaluation_strategy="steps",  # every eval_steps
            )
            """,
            """
            import trl
            from transformers import TrainingArguments
            args = TrainingArguments(
                output_dir="out",
                eval_strategy="steps",  # every eval_steps
            )
            """,
            id="training-args",
        ),
        pytest.param(
            """
            from trl import SFTConfig
            cfg = SFTConfig("out", warmup_ratio=0.03, lr_scheduler_type="cosine")
            """,
            """
            from trl import SFTConfig
            cfg = SFTConfig("out", warmup_steps=0.03, lr_scheduler_type="cosine")
            """,
            id="warmup-ratio",
        ),
        pytest.param(
            """
            from trl import SFTConfig
            cfg = SFTConfig("out", evaluation_strategy="epoch")
            """,
            """
            from trl import SFTConfig
            cfg = SFTConfig("out", eval_strategy="epoch")
            """,
            id="trl-config",
        ),
        pytest.param(
            """
            import trl
            from datasets import load_dataset
            from transformers import AutoTokenizer
            tok = AutoTokenizer.from_pretrained(name, use_auth_token=True)
            ds = load_dataset("x", use_auth_token=hf_token)
            """,
            """
            import trl
            from datasets import load_dataset
            from transformers import AutoTokenizer
            tok = AutoTokenizer.from_pretrained(name, token=True)
            ds = load_dataset("x", token=hf_token)
            """,
            id="use-auth-token",
        ),
        pytest.param(
            """
            import trl
            from peft import LoraConfig, prepare_model_for_int8_training
            model = prepare_model_for_int8_training(model)
            """,
            """
            import trl
            from peft import LoraConfig, prepare_model_for_kbit_training as prepare_model_for_int8_training
            model = prepare_model_for_int8_training(model)
            """,
            id="int8-alias",
        ),
        pytest.param(
            """
            import trl
            import peft
            model = peft.prepare_model_for_int8_training(model)
            """,
            """
            import trl
            import peft
            model = peft.prepare_model_for_kbit_training(model)
            """,
            id="int8-attribute",
        ),
        pytest.param(
            """
            import trl
            from accelerate.utils import DummyOptim, DummyScheduler, set_seed
            """,
            """
            import trl
            from accelerate.utils import set_seed
            from accelerate.utils.deepspeed import DummyOptim, DummyScheduler
            """,
            id="dummy-optim",
        ),
        pytest.param(
            """
            import trl
            from transformers.modeling_utils import PretrainedConfig, PreTrainedModel
            """,
            """
            import trl
            from transformers.modeling_utils import PreTrainedModel
            from transformers import PretrainedConfig
            """,
            id="pretrained-config-from-modeling-utils",
        ),
        pytest.param(
            """
            import trl
            from transformers.tokenization_utils import PreTrainedTokenizer, PreTrainedTokenizerBase
            from transformers.deepspeed import is_deepspeed_zero3_enabled as zero3
            """,
            """
            import trl
            from transformers.tokenization_utils import PreTrainedTokenizer
            from transformers import PreTrainedTokenizerBase
            from transformers.integrations.deepspeed import is_deepspeed_zero3_enabled as zero3
            """,
            id="tokenizer-base-and-deepspeed-module",
        ),
        pytest.param(
            """
            import trl
            from transformers import AutoConfig, BloomForCausalLM, BloomTokenizerFast
            MODEL_CLASSES = {"bloom": (AutoConfig, BloomForCausalLM, BloomTokenizerFast)}
            """,
            """
            import trl
            from transformers import AutoConfig, BloomForCausalLM, AutoTokenizer as BloomTokenizerFast
            MODEL_CLASSES = {"bloom": (AutoConfig, BloomForCausalLM, BloomTokenizerFast)}
            """,
            id="bloom-fast-tokenizer",
        ),
        pytest.param(
            """
            from trl import SFTConfig
            cfg = SFTConfig(output_dir="out", max_seq_length=512, packing=True)
            """,
            """
            from trl import SFTConfig
            cfg = SFTConfig(output_dir="out", max_length=512, packing=True)
            """,
            id="sft-max-seq-length",
        ),
        pytest.param(
            """
            import trl
            ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
            t = tok.apply_chat_template(
                messages,
                return_tensors="pt",
            )
            assert ids[-1] != tokenizer.eos_token_id
            """,
            """
            import trl
            ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_dict=False)
            t = tok.apply_chat_template(
                messages,
                return_tensors="pt",
                return_dict=False,
            )
            assert ids[-1] != tokenizer.eos_token_id
            """,
            id="chat-template-ids",
        ),
        pytest.param(
            """
            from transformers import AutoTokenizer
            enc = tokenizer.encode_plus(prompt, answer, max_length=8, truncation=True)
            batch = self.tokenizer.batch_encode_plus(texts, padding=True, return_tensors="pt")
            """,
            """
            from transformers import AutoTokenizer
            enc = tokenizer(prompt, answer, max_length=8, truncation=True)
            batch = self.tokenizer(texts, padding=True, return_tensors="pt")
            """,
            id="encode-plus",
        ),
    ],
)
def test_fixes(before, after):
    findings = assert_fixes(dedent(before), dedent(after), select=SELECT)
    assert findings and all(f.fix is Fix.APPLIED for f in findings)


def test_removed_transformers_helpers_are_written_in():
    src = dedent(
        """
        import trl
        import torch
        from transformers import AutoTokenizer, top_k_top_p_filtering as filt
        from transformers.utils import send_example_telemetry

        send_example_telemetry("run_ppo", args)
        logits = filt(logits, top_k=0, top_p=0.9)
        """
    )
    out, findings = run(src, select=SELECT)
    assert out == dedent(
        """
        import trl
        import torch
        from transformers import AutoTokenizer


        def filt(logits, top_k=0, top_p=1.0, filter_value=-float("Inf"), min_tokens_to_keep=1):
            \"\"\"top_k_top_p_filtering of transformers (to 4.38) and trl.core (to 0.13), gone since (written
            in by trl-migrate).\"\"\"
            from transformers import TopKLogitsWarper, TopPLogitsWarper

            keep = {"filter_value": filter_value, "min_tokens_to_keep": min_tokens_to_keep}
            if top_k > 0:
                logits = TopKLogitsWarper(top_k=top_k, **keep)(None, logits)
            if 0 <= top_p <= 1.0:
                logits = TopPLogitsWarper(top_p=top_p, **keep)(None, logits)
            return logits


        def send_example_telemetry(*args, **kwargs):
            \"\"\"transformers.utils.send_example_telemetry, gone in transformers 5: it only reported usage
            to the Hub, so nothing is lost by doing nothing (written in by trl-migrate).\"\"\"
            return None


        send_example_telemetry("run_ppo", args)
        logits = filt(logits, top_k=0, top_p=0.9)
        """
    )
    assert [f.fix for f in findings] == [Fix.APPLIED, Fix.APPLIED]
    assert run(out, select=SELECT)[0] == out


def test_the_written_in_top_k_top_p_filtering_filters_as_the_old_one_did():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from codemods import inline

    space: dict = {}
    source = inline.lookup("transformers.top_k_top_p_filtering") or ""
    exec(source.replace("__NAME__", "top_k_top_p_filtering"), space)  # noqa: S102
    f = space["top_k_top_p_filtering"]
    inf = float("-inf")
    logits = torch.tensor([[1.0, 4.0, 2.0, 3.0], [0.0, 0.0, 5.0, 0.0]])
    # top-k keeps the k largest logits of each row
    assert f(logits.clone(), top_k=2).tolist() == [[inf, 4.0, inf, 3.0], [0.0, 0.0, 5.0, 0.0]]
    # top-p keeps the smallest set whose probability reaches p (row 2: 5.0 alone is ~0.98)
    out = f(logits.clone(), top_p=0.9)
    assert out[1].tolist() == [inf, inf, 5.0, inf] and out[0].tolist() == [inf, 4.0, 2.0, 3.0]
    # the defaults filter nothing; min_tokens_to_keep wins over top_k
    assert f(logits.clone()).tolist() == logits.tolist()
    assert f(logits.clone(), top_k=1, min_tokens_to_keep=2).tolist()[0] == [inf, 4.0, inf, 3.0]


def test_both_keywords_given_is_a_todo_not_a_guess():
    src = (
        "import trl\nfrom transformers import TrainingArguments\n"
        "args = TrainingArguments('o', evaluation_strategy='no', eval_strategy='steps')\n"
    )
    out, findings = run(src, select=SELECT)
    assert (
        "evaluation_strategy='no'" in out
        and "\n# TODO(trl-migrate TRL108): `evaluation_strategy=` and `eval_strategy=` are both"
        in out
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]


def test_tokenizer_keyword_of_trainers_becomes_processing_class():
    before = dedent(
        """
        from transformers import Trainer, AutoTokenizer
        from trl import SFTTrainer
        tok = AutoTokenizer.from_pretrained(name)
        t = Trainer(model=m, args=a, tokenizer=tok)
        s = SFTTrainer(model=m, tokenizer=tok, train_dataset=ds)
        other(tokenizer=tok)
        """
    )
    after = before.replace(
        "Trainer(model=m, args=a, tokenizer=tok)", "Trainer(model=m, args=a, processing_class=tok)"
    ).replace("SFTTrainer(model=m, tokenizer=tok,", "SFTTrainer(model=m, processing_class=tok,")
    findings = assert_fixes(before, after, select=SELECT)
    assert len(findings) == 2


def test_a_file_that_does_not_use_trl_is_fixed_too_and_only_by_this_rule():
    from codemods import RULES
    from codemods.base import Options
    from codemods.engine import needs_parse, process
    from migrate.kernel.findings import Status

    sft = (
        b"from transformers import TrainingArguments\n"
        b"args = TrainingArguments('o', evaluation_strategy='no')\n"
    )
    assert needs_parse(sft)
    codes = [r.code for r in RULES]
    result = process("sft.py", sft, codes=codes, options=Options())
    assert result.status is Status.CHANGED and [f.code for f in result.findings] == ["TRL108"]
    assert result.new == sft.replace(b"evaluation_strategy=", b"eval_strategy=")
    # `tokenizer=` alone does not make a file that does not use TRL worth parsing,
    assert not needs_parse(b"t = Trainer(model=m, tokenizer=tok)\n")
    # and the PPO rules never act on a file that does not import trl.
    other = b"PPOTrainer(config)\nevaluation_strategy = 'no'\n"
    assert process("x.py", other, codes=codes, options=Options()).status is Status.UNCHANGED


# -- return_all_scores (transformers 5: top_k=None, sorted by score) ----------------------------
SCORES_BEFORE = dedent(
    """
    import trl
    from transformers import pipeline
    pipe = pipeline("sentiment-analysis", model="m")
    sent_kwargs = {"return_all_scores": True, "function_to_apply": "none", "batch_size": 16}
    outputs = pipe(texts, **sent_kwargs)
    rewards = [output[1]["score"] for output in outputs]
    """
)
SCORES_AFTER = dedent(
    '''
    import trl
    from transformers import pipeline


    def scores_in_label_order(pipe, outputs):
        """What `return_all_scores=True` returned before transformers 5: every label's score in the
        model's label order (`top_k=None` sorts them by score), one list per text."""
        order = {label: i for i, label in pipe.model.config.id2label.items()}
        if outputs and isinstance(outputs[0], dict):
            outputs = [outputs]  # a lone string: the old flag still gave a list of lists
        return [sorted(scores, key=lambda s: order[s["label"]]) for scores in outputs]


    pipe = pipeline("sentiment-analysis", model="m")
    sent_kwargs = {"top_k": None, "function_to_apply": "none", "batch_size": 16}
    outputs = scores_in_label_order(pipe, pipe(texts, **sent_kwargs))
    rewards = [output[1]["score"] for output in outputs]
    '''
)


def test_return_all_scores_in_an_unpacked_dict():
    findings = assert_fixes(SCORES_BEFORE, SCORES_AFTER, select=SELECT)
    assert [f.line for f in findings] == [4]


def test_a_flag_dict_no_call_unpacks_says_so():
    """beyondguo/LLM-Tuning keeps its pipeline call in a string: the dict still changes, but the
    finding must not say the helper was written."""
    before = "import trl\nsent_kwargs = {'return_all_scores': True, 'batch_size': 16}\n"
    after = "import trl\nsent_kwargs = {'top_k': None, 'batch_size': 16}\n"
    findings = assert_fixes(before, after, select=SELECT)
    assert [f.message for f in findings] == [
        '`"return_all_scores": True`: transformers 5 removed `return_all_scores`; `top_k=None` '
        "gives every label's score, sorted by score; no call of this file unpacks this dict (if "
        "code elsewhere hands it to a pipeline, read the scores with `scores_in_label_order`)"
    ]


def test_a_flag_dict_unpacked_where_it_is_written_is_wrapped():
    before = SCORES_BEFORE.replace(
        "outputs = pipe(texts, **sent_kwargs)",
        'outputs = pipe(texts, **{"return_all_scores": True})',
    )
    after = SCORES_AFTER.replace(
        "outputs = scores_in_label_order(pipe, pipe(texts, **sent_kwargs))",
        'outputs = scores_in_label_order(pipe, pipe(texts, **{"top_k": None}))',
    )
    assert_fixes(before, after, select=SELECT)


def test_generate_given_the_pipeline_dict_is_not_wrapped():
    """eddieguo-1128/Incorporate_Human_Feedback_into_LMs hands its pipeline's dict to
    `ppo_trainer.generate` too: a generate call is never a pipeline's, so it is not wrapped
    (wrapped, its tensors went through the label sorting, and the second run read the loop
    differently)."""
    before = SCORES_BEFORE + "responses = ppo_trainer.generate(queries, **sent_kwargs)\n"
    after = SCORES_AFTER + "responses = ppo_trainer.generate(queries, **sent_kwargs)\n"
    assert_fixes(before, after, select=SELECT)


@pytest.mark.parametrize(
    ("before", "after_lines"),
    [
        pytest.param(
            "pipe_outputs = reward_model(texts, return_all_scores=True)\n",
            ["pipe_outputs = scores_in_label_order(reward_model, reward_model(texts, top_k=None))"],
            id="keyword-on-the-call",
        ),
        pytest.param(
            'pipe = pipeline("text-classification", model="m", return_all_scores=True)\n'
            "out = pipe(texts)\n",
            [
                'pipe = pipeline("text-classification", model="m", top_k=None)',
                "out = scores_in_label_order(pipe, pipe(texts))",
            ],
            id="keyword-on-the-pipeline",
        ),
        pytest.param(  # jahidhasanlinix/Sentiment-RLHF-GPT2: the factory under another name
            'self.rm = hf_pipeline("sentiment-analysis", model="m", return_all_scores=True)\n'
            "out = self.rm(text)\n",
            [
                'self.rm = hf_pipeline("sentiment-analysis", model="m", top_k=None)',
                "out = scores_in_label_order(self.rm, self.rm(text))",
            ],
            id="keyword-on-an-aliased-pipeline",
        ),
    ],
)
def test_return_all_scores_as_a_keyword(before, after_lines):
    src = (
        "import trl\nfrom transformers import pipeline\n"
        "from transformers import pipeline as hf_pipeline\n" + before
    )
    out, findings = run(src, select=SELECT)
    for line in after_lines:
        assert f"\n{line}\n" in out
    assert "def scores_in_label_order(pipe, outputs):" in out
    assert run(out, select=SELECT)[0] == out


def test_return_all_scores_false_is_dropped_and_nothing_is_wrapped():
    src = "import trl\nk = {'batch_size': 4, 'return_all_scores': False}\nout = pipe(t, **k)\n"
    out, findings = run(src, select=SELECT)
    assert out == "import trl\nk = {'batch_size': 4}\nout = pipe(t, **k)\n"
    assert len(findings) == 1


def test_return_all_scores_from_a_variable_is_a_todo():
    src = "import trl\nout = pipe(t, return_all_scores=flag)\n"
    out, findings = run(src, select=SELECT)
    assert out.endswith("out = pipe(t, return_all_scores=flag)\n")
    assert [f.fix for f in findings] == [Fix.MANUAL]


def test_the_helper_gives_what_return_all_scores_gave():
    # The old flag: every label in label order, one list per text (a lone string too). The new
    # pipeline with top_k=None: sorted by score, and flat for a lone string.
    id2label = {0: "NEGATIVE", 1: "POSITIVE"}
    raw = {"good": [0.1, 0.9], "bad": [0.8, 0.2]}

    def old(texts):
        one = isinstance(texts, str)
        rows = [
            [{"label": id2label[i], "score": s} for i, s in enumerate(raw[t])]
            for t in ([texts] if one else texts)
        ]
        return rows

    class Pipe:
        class model:  # noqa: N801
            class config:  # noqa: N801
                pass

        model.config.id2label = id2label

        def __call__(self, texts, top_k=""):
            assert top_k is None
            one = isinstance(texts, str)
            rows = [sorted(r, key=lambda d: -d["score"]) for r in old(texts)]
            return rows[0] if one else rows

    namespace: dict = {}
    code = SCORES_AFTER.split("\n\n\n")[1]  # the helper's definition
    exec(code, namespace)
    helper = namespace["scores_in_label_order"]
    pipe = Pipe()
    for texts in (["good", "bad"], "good", ["bad"]):
        assert helper(pipe, pipe(texts, top_k=None)) == old(texts)
    assert [o[1]["score"] for o in helper(pipe, pipe(["good", "bad"], top_k=None))] == [0.9, 0.2]


def test_return_all_scores_in_a_file_that_does_not_use_trl_is_fixed_too():
    src = "from transformers import pipeline\nk = {'return_all_scores': True}\nout = pipe(t, **k)\n"
    out, _ = run(src, select=SELECT)
    assert "k = {'top_k': None}" in out  # the rule runs beyond TRL (the engine lets it)


def test_the_tokenizer_rewrites_give_what_the_old_calls_gave():
    """transformers 5's own tokenizer, as the rewritten code calls it: the ids list the old
    `apply_chat_template` default returned, and the BatchEncoding `encode_plus` returned."""
    pytest.importorskip("transformers")
    from migrate.reference import tiny

    tok = tiny.tiny_tokenizer()
    messages = [{"role": "user", "content": "hello there"}]
    ids = tok.apply_chat_template(messages, add_generation_prompt=True, return_dict=False)
    text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert isinstance(ids, list) and ids == tok(text, add_special_tokens=False)["input_ids"]
    pair = tok([("hi there", "you are")])["input_ids"]
    assert pair == tok(["hi there"], ["you are"])["input_ids"]  # pairs, as batch_encode_plus


# -- the dtype a model loads in: float32 on transformers 4, the checkpoint's on transformers 5
PPO_LEGACY = """\
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import PPOConfig, PPOTrainer
config = PPOConfig(batch_size=4, mini_batch_size=2)
tok = AutoTokenizer.from_pretrained("gpt2")
{load}
trainer = PPOTrainer(config, model, None, tok)
"""
PPO_V2 = PPO_LEGACY.replace(
    "PPOConfig(batch_size=4, mini_batch_size=2)", "PPOConfig(output_dir='o', num_ppo_epochs=2)"
).replace("PPOTrainer(config, model, None, tok)", "PPOTrainer(args=config, policy=model)")
DTYPE_SAID = "transformers 4, which this script's TRL ran on, loaded this model in float32"


def _load_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("model ="))


@pytest.mark.parametrize(
    ("load", "after"),
    [
        pytest.param(
            'model = AutoModelForCausalLM.from_pretrained("gpt2")',
            'model = AutoModelForCausalLM.from_pretrained("gpt2", dtype="float32")',
            id="plain",
        ),
        pytest.param(
            'model = AutoModelForCausalLM.from_pretrained("gpt2", device_map={"": 0})',
            'model = AutoModelForCausalLM.from_pretrained("gpt2", device_map={"": 0}, '
            'dtype="float32")',
            id="other-keywords-kept",
        ),
    ],
)
def test_a_legacy_scripts_model_keeps_loading_in_float32(load, after):
    out, findings = run(PPO_LEGACY.format(load=load))
    assert _load_line(out) == after
    assert [f.line for f in findings if f.message.startswith(DTYPE_SAID)] == [5]
    assert run(out)[0] == out


@pytest.mark.parametrize(
    "load",
    [
        pytest.param(
            'AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)',
            id="torch-dtype",
        ),
        pytest.param('AutoModelForCausalLM.from_pretrained("gpt2", dtype="auto")', id="dtype"),
        pytest.param(
            'AutoModelForCausalLM.from_pretrained("gpt2", load_in_8bit=True, torch_dtype=x)',
            id="8-bit-with-its-dtype",
        ),
        pytest.param(
            'AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=q)',
            id="quantized-by-a-config-of-elsewhere",
        ),
        pytest.param('AutoModelForCausalLM.from_pretrained("gpt2", **kwargs)', id="unpacked"),
        pytest.param('MyModel.from_pretrained("gpt2")', id="not-transformers"),
    ],
)
def test_a_load_that_sets_its_dtype_or_is_not_transformers_is_left(load):
    out, findings = run(PPO_LEGACY.format(load=f"model = {load}"))
    # an 8-bit load keeps its precision; its flag moves into the quantization config
    moved = load.replace(
        "load_in_8bit=True", "quantization_config=BitsAndBytesConfig(load_in_8bit=True)"
    )
    assert _load_line(out) == f"model = {moved}"
    # (TRL104 says the reference it reloads is float32 beside a 16-bit policy: not this rule)
    assert not [f for f in findings if f.code == "TRL108" and "float32" in f.message]


BNB_SAID = (
    "transformers 4 loaded the modules bitsandbytes leaves unquantized (embeddings, norms, the "
    "LM head) in float16 when the load set no dtype"
)


@pytest.mark.parametrize(
    ("load", "after"),
    [
        pytest.param(
            'model = AutoModelForCausalLM.from_pretrained("gpt2", load_in_8bit=True)',
            'model = AutoModelForCausalLM.from_pretrained("gpt2", '
            'quantization_config=BitsAndBytesConfig(load_in_8bit=True), dtype="float16")',
            id="8-bit-flag",
        ),
        pytest.param(
            "bnb = BitsAndBytesConfig(load_in_4bit=True)\n"
            'model = AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=bnb)',
            'model = AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=bnb, '
            'dtype="float16")',
            id="4-bit-config-of-the-file",
        ),
    ],
)
def test_a_legacy_scripts_bitsandbytes_load_keeps_its_float16_modules(load, after):
    """Deskrado/streambe-medical: transformers 4's bitsandbytes quantizer forced float16 on the
    modules it leaves unquantized when the load set no dtype; transformers 5 keeps "auto"."""
    out, findings = run(PPO_LEGACY.format(load=load))
    assert _load_line(out) == after
    assert [f.severity.name for f in findings if f.message.startswith(BNB_SAID)] == ["INFO"]
    assert run(out)[0] == out


def test_a_v2_scripts_bitsandbytes_load_is_said_not_changed():
    load = 'model = AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=BitsAndBytesConfig(load_in_4bit=True))'
    out, findings = run(PPO_V2.format(load=load))
    assert _load_line(out) == load
    [said] = [f for f in findings if f.message.startswith(BNB_SAID)]
    assert said.message.endswith('pass `dtype="float16"` to load them as it did')


SOMETIMES_SAID = (
    "may leave this model unquantized on some runs (a flag or a config read at run time): "
    "where it does, "
)


@pytest.mark.parametrize(
    ("load", "said"),
    [
        pytest.param(
            'model = AutoModelForCausalLM.from_pretrained("rm", quantization_config=bnb if args.q '
            "else None)",
            "`quantization_config=bnb if args.q else None` " + SOMETIMES_SAID,
            id="config-or-none",
        ),
        pytest.param(
            'model = AutoModelForCausalLM.from_pretrained("rm", load_in_8bit=args.q)',
            "`load_in_8bit=args.q` " + SOMETIMES_SAID,
            id="flag-read-at-run-time",
        ),
        pytest.param(
            "q = None\nif args.q:\n    q = BitsAndBytesConfig(load_in_4bit=True)\n"
            'model = AutoModelForCausalLM.from_pretrained("rm", quantization_config=q)',
            "`quantization_config=q` " + SOMETIMES_SAID,
            id="name-bound-to-none-and-a-config",
        ),
        pytest.param(
            "q = BitsAndBytesConfig(load_in_4bit=True)\n"
            'model = AutoModelForCausalLM.from_pretrained("rm", quantization_config=q)',
            None,
            id="always-quantized",
        ),
        pytest.param(
            'model = AutoModelForCausalLM.from_pretrained("rm", quantization_config=config_of_elsewhere)',
            None,
            id="a-config-this-file-does-not-build",
        ),
    ],
)
def test_a_load_quantized_on_some_runs_only_says_the_others_change_dtype(load, said):
    """Where the load is not quantized it loads as any other: float32 on transformers 4, the
    checkpoint's dtype on 5. Said, not changed: a dtype written in would reach the quantized
    runs too."""
    src = PPO_LEGACY.format(load=load).replace(
        "from transformers import ", "from transformers import BitsAndBytesConfig, "
    )
    out, findings = run(src)
    found = [f for f in findings if "unquantized on some runs" in f.message]
    if said is None:
        assert found == []
    else:
        assert [(f.severity, f.fix) for f in found] == [(Severity.WARNING, Fix.NONE)]
        assert found[0].message.startswith(said), found[0].message
        assert "this script's TRL ran on transformers 4, which loaded it in float32" in (
            found[0].message
        )
    assert 'dtype="float32"' not in _load_line(out)
    assert run(out)[0] == out


@pytest.mark.parametrize(
    ("binding", "dtype", "said"),
    [
        # MedicalGPT's rl_training.py and its copies: None unless --torch_dtype is given
        pytest.param(
            'torch_dtype = args.torch_dtype if args.torch_dtype in ["auto", None] else getattr(torch, args.torch_dtype)\n',
            "torch_dtype",
            True,
            id="in-auto-none",
        ),
        pytest.param("d = None if fp32 else torch.bfloat16\n", "d", True, id="a-none-branch"),
        pytest.param(
            "d = torch.bfloat16 if args.bf16 else torch.float32\n", "d", False, id="never-none"
        ),
        pytest.param(
            "@dataclass\nclass A:\n    torch_dtype: Optional[str] = field(default=None)\n",
            "args.torch_dtype",
            True,
            id="field-default-none",
        ),
        pytest.param(
            '@dataclass\nclass A:\n    torch_dtype: str = "bfloat16"\n',
            "args.torch_dtype",
            False,
            id="field-default-set",
        ),
    ],
)
def test_a_dtype_that_may_be_none_at_run_time_is_said(binding, dtype, said):
    load = binding + f'model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype={dtype})'
    out, findings = run(PPO_LEGACY.format(load=load))
    assert f'from_pretrained("gpt2", torch_dtype={dtype})' in out  # nothing is changed
    none = [f for f in findings if "may be None at run time" in f.message]
    if said:
        assert [(f.severity.name, f.fix) for f in none] == [("WARNING", Fix.NONE)]
        assert f'pass `{dtype} or "float32"`' in none[0].message
    else:
        assert none == []
    assert run(out)[0] == out


PIPE_LEGACY = PPO_LEGACY.replace(
    "from transformers import AutoModelForCausalLM, AutoTokenizer",
    "from transformers import AutoModelForCausalLM, AutoTokenizer, pipeline\nimport transformers",
)


def _pipe_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("pipe ="))


@pytest.mark.parametrize(
    ("build", "after"),
    [
        pytest.param(
            'pipeline("sentiment-analysis", model="lvwerra/distilbert-imdb", device=0)',
            'pipeline("sentiment-analysis", model="lvwerra/distilbert-imdb", device=0, '
            'dtype="float32")',
            id="named",
        ),
        pytest.param(
            'transformers.pipeline("text-classification", reward_model)',
            'transformers.pipeline("text-classification", reward_model, dtype="float32")',
            id="model-object-or-name",  # an object ignores dtype in both versions
        ),
        pytest.param(
            'pipeline("sentiment-analysis", model=m, model_kwargs={"device_map": "auto"})',
            'pipeline("sentiment-analysis", model=m, model_kwargs={"device_map": "auto"}, '
            'dtype="float32")',
            id="model-kwargs-without-dtype",
        ),
    ],
)
def test_a_legacy_scripts_pipeline_keeps_loading_in_float32(build, after):
    """transformers 5's pipeline() also loads the checkpoint's dtype ("auto"); transformers 4
    loaded float32, and a model object keeps its own dtype in both."""
    src = PIPE_LEGACY.format(load='model = AutoModelForCausalLM.from_pretrained("gpt2")')
    src += f"pipe = {build}\n"
    out, findings = run(src)
    assert _pipe_line(out) == f"pipe = {after}"
    assert [f.line for f in findings if f.message.startswith(DTYPE_SAID)] == [6, 8]
    assert run(out)[0] == out


@pytest.mark.parametrize(
    "build",
    [
        pytest.param('pipeline("sentiment-analysis", model=m, dtype="auto")', id="dtype"),
        pytest.param(
            'pipeline("sentiment-analysis", model=m, torch_dtype=torch.float16)', id="torch-dtype"
        ),
        pytest.param(
            'pipeline("sentiment-analysis", model=m, model_kwargs={"torch_dtype": d})',
            id="model-kwargs-dtype",  # transformers 5 refuses dtype= beside it
        ),
        pytest.param('pipeline("sentiment-analysis", model=m, model_kwargs=mk)', id="model-kwargs"),
        pytest.param('pipeline("sentiment-analysis", **kw)', id="unpacked"),
        pytest.param('mylib.pipeline("sentiment-analysis")', id="not-transformers"),
    ],
)
def test_a_pipeline_that_may_set_its_dtype_is_left(build):
    src = PIPE_LEGACY.format(load='model = AutoModelForCausalLM.from_pretrained("gpt2")')
    out, _ = run(src + f"pipe = {build}\n")
    assert _pipe_line(out) == f"pipe = {build}"


def test_a_tokenizer_load_is_not_a_model_load():
    out, _ = run(PPO_LEGACY.format(load='model = AutoModelForCausalLM.from_pretrained("gpt2")'))
    assert 'tok = AutoTokenizer.from_pretrained("gpt2")\n' in out


def test_a_v2_script_is_told_not_changed():
    """The v2 API's last releases also ran on transformers 5: the old dtype is not known."""
    load = 'model = AutoModelForCausalLM.from_pretrained("gpt2")'
    out, findings = run(PPO_V2.format(load=load))
    assert _load_line(out) == load
    (said,) = [f for f in findings if f.code == "TRL108"]
    assert (said.line, said.severity.name, said.fix) == (5, "WARNING", Fix.NONE)
    assert said.message.startswith("transformers 5, which TRL 1.13 installs in practice, loads")


def test_a_file_without_ppo_code_keeps_its_loads():
    src = (
        "from transformers import AutoModelForCausalLM\nfrom trl import SFTTrainer\n"
        'model = AutoModelForCausalLM.from_pretrained("gpt2")\n'
    )
    assert_noop(src)


def test_a_script_whose_ppo_era_is_unclear_is_told_not_changed():
    """Legacy config keywords beside a v2 trainer call: the era, and so the old transformers,
    is not known."""
    src = PPO_LEGACY.format(load='model = AutoModelForCausalLM.from_pretrained("gpt2")').replace(
        "PPOTrainer(config, model, None, tok)", "PPOTrainer(config, model=model, value_model=model)"
    )
    out, findings = run(src)
    assert _load_line(out) == 'model = AutoModelForCausalLM.from_pretrained("gpt2")'
    assert [f.severity.name for f in findings if f.code == "TRL108"] == ["WARNING"]


def test_an_unclear_era_stays_unclear_on_the_rewrites_second_run():
    """The rewrite of a mixed-era file leaves writes of legacy-only fields under TODOs
    (`config.adap_kl_ctrl = True`); with no PPO class left, the second run must not read them as
    a legacy file and add `dtype="float32"` the first run only reported (Vedang1308/RLAIF's
    train.py was refused as not idempotent)."""
    src = dedent(
        """
        from transformers import AutoModelForCausalLM
        from trl import PPOConfig, PPOTrainer

        config = PPOConfig(mini_batch_size=4, batch_size=16)
        config.adap_kl_ctrl = True
        model = AutoModelForCausalLM.from_pretrained("m")
        trainer = PPOTrainer(args=config, model=model, processing_class=tok, train_dataset=ds)
        print("PPOTrainer:", trainer)
        """
    )
    out, findings = run(src)
    assert 'model = AutoModelForCausalLM.from_pretrained("m")\n' in out
    assert [f.severity.name for f in findings if f.code == "TRL108"] == ["WARNING"]
    assert run(out)[0] == out


def test_legacy_field_reads_without_a_ppo_class_of_trl_are_told_not_changed():
    """A repo's own PPO config read with legacy field names (entfane/RLHF) tells no TRL era:
    the model load gets the warning, not a pinned dtype."""
    src = dedent(
        """
        from transformers import AutoModelForCausalLM
        from trl import AutoModelForCausalLMWithValueHead
        from my_ppo import PPOConfig

        ppo_config = PPOConfig()
        print(ppo_config.adap_kl_ctrl, ppo_config.forward_batch_size)
        model = AutoModelForCausalLM.from_pretrained("m")
        """
    )
    out, findings = run(src)
    assert 'model = AutoModelForCausalLM.from_pretrained("m")\n' in out
    assert [f.severity.name for f in findings if f.code == "TRL108"] == ["WARNING"]


@pytest.mark.parametrize(
    "value", [pytest.param("1.0", id="one-counts-steps"), pytest.param("-0.1", id="negative")]
)
def test_a_warmup_ratio_literal_that_is_not_below_1_gets_a_todo(value):
    src = f"import trl\nfrom transformers import TrainingArguments\nt = TrainingArguments('o', warmup_ratio={value})\n"
    out, findings = run(src, select=SELECT)
    assert out.splitlines()[2].startswith(
        "# TODO(trl-migrate TRL108): `warmup_ratio=` is gone (transformers 5.0 removed "
        "warmup_ratio and reads a warmup_steps float in [0, 1) as that ratio"
    )
    assert out.endswith(f"t = TrainingArguments('o', warmup_ratio={value})\n")
    assert run(out, select=SELECT)[0] == out


_READ_AS_RATIO = (
    "; `script_args.warmup_ratio` is read as a ratio, which trains as before for every value "
    "transformers 4.x accepted (0 to 1) but 1.0, warmup over the whole run, which transformers "
    "5 reads as 1 step: check that it stays below 1"
)


@pytest.mark.parametrize(
    ("given", "now", "said"),
    [
        pytest.param(
            "warmup_ratio=script_args.warmup_ratio",
            "warmup_steps=script_args.warmup_ratio",
            "`warmup_ratio=` is gone: renamed `warmup_steps=`, the same setting (transformers 5.0 "
            "removed warmup_ratio",
            id="alone",
        ),
        pytest.param(
            "warmup_ratio=script_args.warmup_ratio, warmup_steps=n",
            "warmup_steps=n if n > 0 else script_args.warmup_ratio",
            "`warmup_ratio=` and `warmup_steps=` are both given",
            id="beside-steps",
        ),
    ],
)
def test_a_warmup_ratio_expression_is_read_as_the_ratio_it_was(given, now, said):
    """transformers 4.x took a warmup_ratio in [0, 1] only (it raised on any other), and 5
    reads a warmup_steps below 1 as that ratio: an expression becomes warmup_steps, with a
    warning for 1.0 (seen in 27 calls of 10 repositories: NhatHoang2002's, CHiSwsz's,
    JiayiWang-LMU's, Lexsi-Labs', jasonvanf's, ...: `warmup_ratio=script_args.warmup_ratio`, each a
    TODO before)."""
    head = "import trl\nfrom transformers import TrainingArguments\n"
    findings = assert_fixes(
        f"{head}t = TrainingArguments('o', {given})\n",
        f"{head}t = TrainingArguments('o', {now})\n",
        select=SELECT,
    )
    [f] = findings
    assert (f.severity, f.fix) == (Severity.WARNING, Fix.APPLIED)
    assert f.message.startswith(said) and f.message.endswith(_READ_AS_RATIO)


def test_a_warmup_ratio_expression_beside_steps_that_win_is_dropped_without_a_warning():
    head = "import trl\nfrom transformers import TrainingArguments\n"
    [f] = assert_fixes(
        f"{head}t = TrainingArguments('o', warmup_ratio=script_args.warmup_ratio, "
        "warmup_steps=100)\n",
        f"{head}t = TrainingArguments('o', warmup_steps=100)\n",
        select=SELECT,
    )
    assert f.severity is Severity.INFO
    assert f.message.endswith("`script_args.warmup_ratio` did nothing beside `100` and is dropped")


def test_ratio_literals():
    from codemods.rules.drift import _ratio

    assert [_ratio(cst.parse_expression(v)) for v in ("0", "0.1", "0.999", "1", "1.0", "-0.1")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_keywords_transformers_5_dropped_leave_the_call():
    before = dedent(
        """
        from transformers import TrainingArguments
        from trl import SFTConfig
        args = TrainingArguments(
            output_dir="out",
            overwrite_output_dir=True,
            no_cuda=True,
            learning_rate=1e-4,
        )
        sft = SFTConfig("o", overwrite_output_dir=False)
        """
    )
    after = dedent(
        """
        from transformers import TrainingArguments
        from trl import SFTConfig
        args = TrainingArguments(
            output_dir="out",
            use_cpu=True,
            learning_rate=1e-4,
        )
        sft = SFTConfig("o")
        """
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert [(f.line, f.severity, f.fix) for f in findings] == [
        (5, Severity.INFO, Fix.APPLIED),
        (6, Severity.ERROR, Fix.APPLIED),
        (9, Severity.INFO, Fix.APPLIED),
    ]
    assert findings[0].message.startswith(
        "`overwrite_output_dir=True` was removed: transformers 5.0 removed overwrite_output_dir; "
        "the Trainer never read it"
    )
    assert findings[0].message.endswith("so dropping it changes nothing in training")
    assert "renamed `use_cpu=`" in findings[1].message


def test_a_read_of_a_dropped_setting_is_a_todo_unless_the_script_declares_it():
    src = dedent(
        """
        from transformers import HfArgumentParser, TrainingArguments
        (args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
        if not args.overwrite_output_dir:
            resume()
        """
    )
    out, findings = run(src, select=SELECT)
    assert (
        "# TODO(trl-migrate TRL108): `args.overwrite_output_dir`: transformers 5.0 removed" in out
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out
    own = dedent(
        """
        from dataclasses import dataclass
        from transformers import TrainingArguments
        @dataclass
        class Mine:
            overwrite_output_dir: bool = False
        if not mine.overwrite_output_dir:
            resume()
        """
    )
    assert assert_noop(own, select=SELECT) == []


def test_a_call_that_is_not_a_training_config_keeps_the_keyword():
    src = "from transformers import TrainingArguments\nmake(overwrite_output_dir=True)\n"
    assert assert_noop(src, select=SELECT) == []


# transformers removed its own AdamW (optim="adamw_hf") before 4.56.2: the stack-llama reward
# script's own `optim` flag defaulted to it (AndrewHYC, jasonvanf, kcoopermiller, szalouk, ...)
ADAMW_FIELD = """
from dataclasses import dataclass, field
from typing import Optional
from transformers import HfArgumentParser, TrainingArguments
@dataclass
class ScriptArguments:
    optim: Optional[str] = field(
        default='adamw_hf',
        metadata={"help": "The optimizer to use."},
    )
    other: str = "adamw_hf"
args = HfArgumentParser(ScriptArguments).parse_args_into_dataclasses()[0]
training_args = TrainingArguments(output_dir="o", optim=args.optim)
"""


def test_a_scripts_own_optim_field_defaulting_to_the_removed_adamw_gets_adamw_torch():
    before = dedent(ADAMW_FIELD)
    after = before.replace("default='adamw_hf'", "default='adamw_torch'")
    findings = assert_fixes(before, after, select=("TRL108",))
    [f] = findings
    assert (f.line, f.severity, f.fix) == (7, Severity.WARNING, Fix.APPLIED)
    assert f.message.startswith(
        'the default of the script\'s own `optim` field, "adamw_hf", is gone: transformers '
        "removed its own AdamW"
    )
    assert "the same algorithm, Adam with decoupled weight decay and bias correction" in f.message


@pytest.mark.parametrize(
    ("call", "changed"),
    [
        ('TrainingArguments(output_dir="o", optim="adamw_hf")', True),
        ('RewardConfig(output_dir="o", optim="adamw_hf")', True),
        ('my_trainer(optim="adamw_hf")', False),  # not a callee the table lists
        ('TrainingArguments(output_dir="o", optim="adamw_torch")', False),
    ],
)
def test_the_removed_adamw_given_to_training_arguments_becomes_adamw_torch(call, changed):
    before = (
        f"from transformers import TrainingArguments\nfrom trl import RewardConfig\nargs = {call}\n"
    )
    out, findings = run(before, select=("TRL108",))
    assert out == (before.replace('"adamw_hf"', '"adamw_torch"') if changed else before)
    assert len(findings) == int(changed)
    assert run(out, select=("TRL108",))[0] == out


@pytest.mark.parametrize(
    ("call", "changed"),
    [
        ('TrainingArguments(output_dir="o", report_to=None)', True),
        ("SFTConfig(report_to=None, learning_rate=1e-5)", True),
        ("my_trainer(report_to=None)", False),  # not a callee the table lists
        ('TrainingArguments(output_dir="o", report_to="none")', False),
        ('TrainingArguments(output_dir="o", report_to=args.report_to)', False),
    ],
)
def test_report_to_none_becomes_all_as_transformers_4_read_it(call, changed):
    """transformers 4 read `report_to=None` as "all"; 5 takes None for a tracker's name and
    the Trainer stops on it."""
    before = (
        f"from transformers import TrainingArguments\nfrom trl import SFTConfig\nargs = {call}\n"
    )
    out, findings = run(before, select=("TRL108",))
    assert out == (before.replace("report_to=None", 'report_to="all"') if changed else before)
    assert [f.message.split(":")[0] for f in findings] == (
        ["`report_to=None` is gone"] if changed else []
    )
    assert run(out, select=("TRL108",))[0] == out


def test_a_scripts_own_report_to_field_defaulting_to_none_is_left():
    src = dedent(
        """
        from dataclasses import dataclass, field
        from transformers import TrainingArguments

        @dataclass
        class Args:
            report_to: str = field(default=None)
        """
    )
    assert assert_noop(src, select=("TRL108",)) == []


def test_report_to_all_is_what_transformers_4_made_of_none():
    """The premise, on the transformers TRL 1.13 installs: "all" is every integration
    installed, and None is refused when the Trainer builds its callbacks."""
    pytest.importorskip("transformers")
    from transformers import TrainingArguments
    from transformers.integrations import (
        get_available_reporting_integrations,
        get_reporting_integration_callbacks,
    )

    args = TrainingArguments(output_dir="/tmp/o", report_to="all")
    assert args.report_to == get_available_reporting_integrations()
    with pytest.raises(ValueError, match="None is not supported"):
        get_reporting_integration_callbacks(
            TrainingArguments(output_dir="/tmp/o", report_to=None).report_to
        )


def test_a_comparison_with_the_removed_adamw_is_left_alone():
    # hiyouga's parser maps it itself: `"adamw_torch" if args.optim == "adamw_hf" else ...`
    src = 'from transformers import TrainingArguments\nif args.optim == "adamw_hf":\n    args.optim = "adamw_torch"\n'
    assert assert_noop(src, select=("TRL108",)) == []


def test_fields_trl_configs_lost_are_renamed_dropped_or_kept_under_a_todo():
    # ktolnos/Reward-Model-Overoptimization's GRPO script and Lexsi-Labs/aligntune pass
    # max_prompt_length to GRPOConfig; 1.13's GRPOConfig takes none of these four
    before = dedent(
        """
        from trl import DPOConfig, GRPOConfig

        args = GRPOConfig(
            output_dir="out",
            max_prompt_length=512,  # prompts were cut here
            max_completion_length=256,
            wandb_log_unique_prompts=True,
            vllm_enable_prefix_caching=True,
        )
        dpo = DPOConfig("out", beta=0.1, use_logits_to_keep=True, use_liger_loss=True)
        """
    )
    after = dedent(
        """
        from trl import DPOConfig, GRPOConfig

        # TODO(trl-migrate TRL108): `max_prompt_length=` is gone (TRL 0.28.0 removed GRPOConfig's `max_prompt_length`): remove it. Limit prompt length in your data instead: drop or pre-truncate over-long prompts before training (up to 0.25 the trainer kept only the last N prompt tokens, 512 by default; 1.13 never truncates prompts). With vLLM in colocate mode, also set vllm_max_model_length to at least your longest prompt plus max_completion_length, because older releases derived the vLLM context length from this setting.
        args = GRPOConfig(
            output_dir="out",
            max_prompt_length=512,  # prompts were cut here
            max_completion_length=256,
            log_unique_prompts=True,
        )
        dpo = DPOConfig("out", beta=0.1, use_liger_kernel=True)
        """
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert [(f.line, f.fix, f.message.split(" (")[0]) for f in findings] == [
        (3, Fix.MANUAL, "`max_prompt_length=` is gone"),
        (7, Fix.APPLIED, "`wandb_log_unique_prompts=` is gone"),
        (8, Fix.APPLIED, "`vllm_enable_prefix_caching=True` was removed"),
        (10, Fix.APPLIED, "`use_logits_to_keep=True` was removed"),
        (10, Fix.APPLIED, "`use_liger_loss=` is gone"),
    ]
    assert "it changed nothing in training: prefix caching only speeds up" in findings[2].message


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "import trl\nfrom trl import GRPOConfig\n"
            "a = GRPOConfig('o', max_completion_length=8, log_unique_prompts=True)\n",
            id="fields-1.13-has",
        ),
        pytest.param(
            "import trl\nfrom myproject import GRPOConfig\na = GRPOConfig(max_prompt_length=8)\n",
            id="own-class-of-that-name",
        ),
        pytest.param(
            "import trl\nfrom trl import RLOOConfig\na = RLOOConfig('o', max_completion_length=8)\n",
            id="a-field-another-config-lost",
        ),
    ],
)
def test_config_fields_leave_other_calls_alone(src):
    assert_noop(src, select=SELECT)


def test_a_config_field_renamed_and_given_under_both_names_is_a_todo():
    src = dedent(
        """
        from trl import SFTConfig
        args = SFTConfig("o", use_liger=True, use_liger_kernel=False)
        """
    )
    out, findings = run(src, select=SELECT)
    assert "use_liger=True, use_liger_kernel=False" in out
    assert [f.message for f in findings if f.fix is Fix.MANUAL] == [
        "`use_liger=` and `use_liger_kernel=` are both given (TRL 0.18.0 removed SFTConfig's "
        "`use_liger`): keep one"
    ]
    assert run(out, select=SELECT)[0] == out


def test_reads_of_fields_a_parsed_trl_config_lost_are_renamed_or_get_a_todo():
    # ktolnos/Reward-Model-Overoptimization filters its data by
    # `training_args.max_prompt_length` of a parsed GRPOConfig
    before = dedent(
        """
        import argparse
        from transformers import HfArgumentParser
        from trl import GRPOConfig, SFTConfig

        parser = HfArgumentParser((ScriptArguments, GRPOConfig))
        script_args, training_args = parser.parse_args_into_dataclasses()
        data = build(max_length=training_args.max_prompt_length)
        log = training_args.wandb_log_unique_prompts
        sft = SFTConfig("o", max_seq_length=64)
        cut = sft.max_seq_length
        training_args.max_prompt_length = 8
        other = argparse.Namespace()
        x = other.max_prompt_length + script_args.max_prompt_length
        """
    )
    after = dedent(
        """
        import argparse
        from transformers import HfArgumentParser
        from trl import GRPOConfig, SFTConfig

        parser = HfArgumentParser((ScriptArguments, GRPOConfig))
        script_args, training_args = parser.parse_args_into_dataclasses()
        # TODO(trl-migrate TRL108): `training_args.max_prompt_length`: TRL 0.28.0 removed GRPOConfig's `max_prompt_length`, so reading it from the parsed config raises AttributeError on TRL 1.13; give your script its own field for it (in its own dataclass) if it needs the value. Limit prompt length in your data instead: drop or pre-truncate over-long prompts before training (up to 0.25 the trainer kept only the last N prompt tokens, 512 by default; 1.13 never truncates prompts). With vLLM in colocate mode, also set vllm_max_model_length to at least your longest prompt plus max_completion_length, because older releases derived the vLLM context length from this setting.
        data = build(max_length=training_args.max_prompt_length)
        log = training_args.log_unique_prompts
        sft = SFTConfig("o", max_length=64)
        cut = sft.max_length
        training_args.max_prompt_length = 8
        other = argparse.Namespace()
        x = other.max_prompt_length + script_args.max_prompt_length
        """
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert [f.line for f in findings if f.fix is Fix.MANUAL] == [7]


@pytest.mark.parametrize(
    ("load", "after"),
    [
        pytest.param(
            'AutoModelForSequenceClassification.from_pretrained("rm", load_in_8bit=True, device_map="auto")',
            'AutoModelForSequenceClassification.from_pretrained("rm", quantization_config=BitsAndBytesConfig(load_in_8bit=True), device_map="auto")',
            id="literal",
        ),
        pytest.param(
            'AutoModelForSequenceClassification.from_pretrained("rm", load_in_8bit=args.q)',
            'AutoModelForSequenceClassification.from_pretrained("rm", quantization_config=BitsAndBytesConfig(load_in_8bit=args.q) if args.q else None)',
            id="read-at-run-time",
        ),
        pytest.param(
            # SibtainAhmed/grpo_toxicity: a conditional flag, parenthesized as the test (without
            # the parentheses the rewrite did not parse and the file was left as it was)
            'AutoModelForSequenceClassification.from_pretrained("rm", load_in_8bit=True if args.q else False)',
            'AutoModelForSequenceClassification.from_pretrained("rm", quantization_config=BitsAndBytesConfig(load_in_8bit=True if args.q else False) if (True if args.q else False) else None)',
            id="conditional-flag",
        ),
        pytest.param(
            'AutoModelForSequenceClassification.from_pretrained("rm", load_in_4bit=False)',
            'AutoModelForSequenceClassification.from_pretrained("rm")',
            id="false",
        ),
        pytest.param(
            'pipeline("sentiment-analysis", model="m", model_kwargs={"load_in_8bit": True, "device_map": "auto"})',
            'pipeline("sentiment-analysis", model="m", model_kwargs={"quantization_config": BitsAndBytesConfig(load_in_8bit=True), "device_map": "auto"})',
            id="pipeline-model-kwargs",
        ),
    ],
)
def test_an_8bit_flag_moves_into_a_quantization_config(load, after):
    """transformers 5 rejects `load_in_8bit=`; a flag read at run time gets the config only when
    true (a BitsAndBytesConfig with load_in_8bit=False quantizes in 4 bits)."""
    head = "from transformers import AutoModelForSequenceClassification, pipeline\n"
    out, findings = run(head + f"x = {load}\n", select=("TRL108",))
    assert out.splitlines()[-1] == f"x = {after}"
    assert ("BitsAndBytesConfig" in out.splitlines()[0]) == ("BitsAndBytesConfig" in after)
    assert findings and all(f.code == "TRL108" for f in findings)
    assert run(out, select=("TRL108",))[0] == out


def test_an_8bit_flag_of_a_load_that_is_not_transformers_is_left():
    src = "from mylib import Loader\nx = Loader.from_pretrained('r', load_in_8bit=True)\n"
    out, findings = run(src, select=("TRL108",))
    assert out == src and not findings


LOAD_METRIC_TODO = (
    "# TODO(trl-migrate TRL108): `datasets.load_metric` is gone: datasets 3.0 removed it "
    "(deprecated since 2.5 for the `evaluate` library; TRL 1.13 installs datasets >= 4.7): load "
    "the metric with `evaluate.load(...)` after `pip install evaluate` (the same metric names; "
    "`.compute(predictions=..., references=...)` is unchanged)\n"
)


def test_load_metric_of_datasets_gets_a_todo_naming_evaluate():
    """A removed import with no drop-in in the same package: a TODO on the import and on a use
    through the module, the code itself left as it is (shangluyang/rlhf train_reward.py)."""
    before = (
        "from datasets import load_dataset, load_metric\nimport datasets\n"
        "m = load_metric('accuracy')\nr = datasets.load_metric('rouge')\n"
    )
    out, findings = run(before, select=SELECT)
    assert out == (
        LOAD_METRIC_TODO
        + "from datasets import load_dataset, load_metric\nimport datasets\n"
        + "m = load_metric('accuracy')\n"
        + LOAD_METRIC_TODO
        + "r = datasets.load_metric('rouge')\n"
    )
    assert [(f.line, f.fix) for f in findings] == [(1, Fix.MANUAL), (4, Fix.MANUAL)]
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "src",
    [
        "import evaluate\nm = evaluate.load('accuracy')\n",
        "from mylib import load_metric\nm = load_metric('accuracy')\n",
        "def load_metric(name):\n    return name\nm = load_metric('accuracy')\n",
    ],
)
def test_a_load_metric_that_is_not_datasets_is_left(src):
    assert_noop(src, select=SELECT)


# -- Trainer overrides the Trainer now calls with `num_items_in_batch` ---------------------------
HOOK_NOTE = (
    "`compute_loss` takes `num_items_in_batch=None` now: transformers 4.46 and later (TRL 1.13 "
    "needs 4.56.2) pass it by name, which this override did not take; it still ignores it, and "
    "the Trainer still divides the loss it returns by the gradient-accumulation steps, as "
    "before, unless the batches carry `labels` and the model's forward takes `**kwargs`: then "
    "it takes the loss as normalized by the label tokens (`num_items_in_batch`) and does not "
    "divide it"
)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            from transformers import Trainer
            class RewardTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False):
                    return model(**inputs)[0].mean()
            """,
            """
            from transformers import Trainer
            class RewardTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    return model(**inputs)[0].mean()
            """,
            id="stack-llama-reward-trainer",
        ),
        pytest.param(
            """
            import transformers
            class Base(transformers.Trainer):
                pass
            class Mine(Base):
                def compute_loss(
                    self,
                    model,
                    inputs,
                    return_outputs=False,
                ):
                    return 0.0
            """,
            """
            import transformers
            class Base(transformers.Trainer):
                pass
            class Mine(Base):
                def compute_loss(
                    self,
                    model,
                    inputs,
                    return_outputs=False,
                    num_items_in_batch=None,
                ):
                    return 0.0
            """,
            id="a-subclass-of-a-subclass-one-parameter-a-line",
        ),
        pytest.param(
            """
            from trl import DPOTrainer
            class Mine(DPOTrainer):
                def compute_loss(self, model, inputs, *args):
                    return 0.0
                def training_step(self, model, inputs):
                    return 0.0
            """,
            """
            from trl import DPOTrainer
            class Mine(DPOTrainer):
                def compute_loss(self, model, inputs, *args, num_items_in_batch=None):
                    return 0.0
                def training_step(self, model, inputs, num_items_in_batch=None):
                    return 0.0
            """,
            id="a-trl-trainer-star-args-and-training-step",
        ),
    ],
)
def test_trainer_overrides_take_num_items_in_batch(before, after):
    findings = assert_fixes(dedent(before), dedent(after), select=SELECT)
    assert findings and all(f.fix is Fix.APPLIED and f.severity is Severity.INFO for f in findings)
    assert findings[0].message == HOOK_NOTE


def test_an_override_that_reads_labels_is_warned_about_gradient_accumulation():
    """Only a `labels` key of the inputs counts (`chosen_labels` of DPO batches does not)."""
    src = dedent(
        """
        from transformers import Trainer
        class T(Trainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                return loss_fn(model(**inputs).logits, inputs["labels"])
        """
    )
    out, [finding] = run(src, select=SELECT)
    assert "return_outputs=False, num_items_in_batch=None):" in out
    assert finding.severity is Severity.WARNING
    assert finding.message == HOOK_NOTE + (
        " (this override reads `labels`: with gradient_accumulation_steps > 1, divide by "
        "`num_items_in_batch` as the Trainer's own compute_loss does, or by the steps)"
    )


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "class T:\n    def compute_loss(self, model, inputs, return_outputs=False):\n"
            "        return 0\n",
            id="not-a-trainer",
        ),
        pytest.param(
            "from transformers import Trainer\nclass T(Trainer):\n"
            "    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):\n"
            "        return 0\n",
            id="takes-kwargs",
        ),
        pytest.param(
            "from transformers import Trainer\nclass T(Trainer):\n"
            "    def compute_loss(self, model, inputs, num_items_in_batch=None):\n        return 0\n",
            id="takes-it-already",
        ),
        pytest.param(
            "from transformers import Trainer\nclass T(Trainer):\n"
            "    def training_step(self, model, inputs, *args):\n        return 0\n",
            id="training-step-with-star-args",
        ),
        pytest.param(
            "from transformers import Trainer\nclass T(Trainer):\n"
            "    def helper(self):\n        def compute_loss(model, inputs):\n            return 0\n",
            id="a-nested-function",
        ),
        pytest.param(
            "from transformers import Trainer\n"
            "def compute_loss(model, inputs, return_outputs=False):\n    return 0\n",
            id="a-module-function",
        ),
        pytest.param(
            "from mylib import Trainer\nclass T(Trainer):\n"
            "    def compute_loss(self, model, inputs):\n        return 0\n",
            id="another-librarys-trainer",
        ),
    ],
)
def test_overrides_that_take_the_argument_or_are_no_trainers_are_left(src):
    assert_noop(src, select=SELECT)


def test_a_trainer_subclass_without_its_own_init_takes_processing_class():
    """synbol/TCM-Nvwa's reward script: `RewardTrainer(Trainer)` overrides compute_loss only,
    so `RewardTrainer(..., tokenizer=tok)` hands `tokenizer=` to transformers' Trainer, which
    5.0 no longer takes. A subclass with an `__init__` of its own may take it itself."""
    before = dedent(
        """
        from transformers import Trainer
        class RewardTrainer(Trainer):
            pass
        class Child(RewardTrainer):
            pass
        class Own(Trainer):
            def __init__(self, *args, tokenizer=None, **kwargs):
                super().__init__(*args, **kwargs)
        class Below(Own):
            pass
        a = RewardTrainer(model=m, tokenizer=tok)
        b = Child(model=m, tokenizer=tok)
        c = Own(model=m, tokenizer=tok)
        d = Below(model=m, tokenizer=tok)
        """
    )
    after = before.replace(
        "a = RewardTrainer(model=m, tokenizer=tok)",
        "a = RewardTrainer(model=m, processing_class=tok)",
    ).replace("b = Child(model=m, tokenizer=tok)", "b = Child(model=m, processing_class=tok)")
    findings = assert_fixes(before, after, select=SELECT)
    assert [f.line for f in findings] == [11, 12]


def test_another_key_ending_in_labels_is_no_labels_batch():
    src = dedent(
        """
        from trl import DPOTrainer
        class T(DPOTrainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                return model(inputs["chosen_labels"]).loss
        """
    )
    out, [finding] = run(src, select=SELECT)
    assert (finding.severity, finding.message) == (Severity.INFO, HOOK_NOTE)


# transformers 5 moved group_by_length to train_sampling_strategy="group_by_length" (the
# stack-llama SFT scripts of AndrewHYC, PrasannS, NhatHoang2002; Pranavbp525's TrainingArguments)
SWITCHES = """
from dataclasses import dataclass, field
from transformers import HfArgumentParser, TrainingArguments
from trl import SFTConfig
@dataclass
class ScriptArguments:
    group_by_length: bool = field(default=False)
    packing: bool = False
script_args, training_args = HfArgumentParser(
    (ScriptArguments, TrainingArguments)
).parse_args_into_dataclasses()
if training_args.group_by_length and script_args.packing:
    raise ValueError("no packing with group_by_length")
same = training_args.group_by_length == True
mine = script_args.group_by_length
a = TrainingArguments(
    output_dir="o",
    group_by_length=True,
    include_inputs_for_metrics=True,
)
b = TrainingArguments("o", group_by_length=script_args.group_by_length, include_inputs_for_metrics=False)
c = SFTConfig("o", group_by_length=lambda: 1)
"""


def test_a_removed_switch_becomes_the_value_of_its_successor():
    before = dedent(SWITCHES)
    after = (
        before.replace(
            "if training_args.group_by_length and",
            'if training_args.train_sampling_strategy == "group_by_length" and',
        )
        .replace(
            "same = training_args.group_by_length == True",
            'same = (training_args.train_sampling_strategy == "group_by_length") == True',
        )
        .replace("    group_by_length=True,\n", '    train_sampling_strategy="group_by_length",\n')
        .replace("    include_inputs_for_metrics=True,\n", '    include_for_metrics=["inputs"],\n')
        .replace(
            "group_by_length=script_args.group_by_length, include_inputs_for_metrics=False)",
            'train_sampling_strategy="group_by_length" if script_args.group_by_length '
            'else "random")',
        )
        .replace(
            "group_by_length=lambda: 1)",
            'train_sampling_strategy="group_by_length" if (lambda: 1) else "random")',
        )
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert [(f.line, f.severity, f.fix) for f in findings] == [
        (11, Severity.INFO, Fix.APPLIED),
        (13, Severity.INFO, Fix.APPLIED),
        (17, Severity.INFO, Fix.APPLIED),
        (18, Severity.INFO, Fix.APPLIED),
        (20, Severity.INFO, Fix.APPLIED),
        (20, Severity.INFO, Fix.APPLIED),
        (21, Severity.INFO, Fix.APPLIED),
    ]
    assert findings[0].message == (
        "`training_args.group_by_length` is gone (transformers 5.0 removed group_by_length): "
        'read as `training_args.train_sampling_strategy == "group_by_length"`, the same setting'
    )
    assert findings[2].message.startswith(
        "`group_by_length=` is gone (transformers 5.0 removed group_by_length): it is now "
        '`train_sampling_strategy="group_by_length"`, the same setting (the "group_by_length" '
        "strategy builds the same LengthGroupedSampler for training and evaluation"
    )
    assert findings[5].message == (
        "`include_inputs_for_metrics=False` was removed (transformers 5.0 removed "
        "include_inputs_for_metrics, deprecated since 4.46); `include_for_metrics=[]`, the "
        "default, is what it did, so the call goes on without it"
    )


def test_a_switch_read_of_an_unknown_owner_or_set_is_a_todo():
    before = dedent(
        """
        from transformers import TrainingArguments
        args = TrainingArguments("o", train_sampling_strategy="group_by_length", group_by_length=True)
        if self.args.group_by_length:
            pass
        args.group_by_length = False
        """
    )
    out, findings = run(before, select=SELECT)
    assert out == dedent(
        """
        from transformers import TrainingArguments
        # TODO(trl-migrate TRL108): `group_by_length=` and `train_sampling_strategy=` are both given; `group_by_length` is gone (transformers 5.0 removed group_by_length): keep `train_sampling_strategy=`
        args = TrainingArguments("o", train_sampling_strategy="group_by_length", group_by_length=True)
        # TODO(trl-migrate TRL108): `self.args.group_by_length`: transformers 5.0 removed group_by_length, so reading it from TrainingArguments or a TRL config raises AttributeError; read `self.args.train_sampling_strategy == "group_by_length"` there instead
        if self.args.group_by_length:
            pass
        # TODO(trl-migrate TRL108): `args.group_by_length` is set here, but transformers 5.0 removed group_by_length: set `args.train_sampling_strategy` to "group_by_length" (or "random") instead
        args.group_by_length = False
        """
    )
    assert [f.fix for f in findings] == [Fix.MANUAL] * 3
    assert run(out, select=SELECT)[0] == out


def test_logging_dir_leaves_the_call_with_a_warning_and_its_reads_on_configs_get_a_todo():
    # ninoaf, Angelneer926, 1998frankchen: TrainingArguments(logging_dir="./logs"), which
    # transformers 5 rejects; TensorBoard's folder is now TENSORBOARD_LOGGING_DIR's
    before = dedent(
        """
        from transformers import TrainingArguments
        import trl
        training_args = TrainingArguments(output_dir="o", logging_dir="./logs", seed=1)
        print(training_args.logging_dir, accelerator.logging_dir, project.logging_dir)
        """
    )
    after = dedent(
        """
        from transformers import TrainingArguments
        import trl
        training_args = TrainingArguments(output_dir="o", seed=1)
        # TODO(trl-migrate TRL108): `training_args.logging_dir`: transformers 5.0 removed logging_dir, so reading it from TrainingArguments or a TRL config raises AttributeError; give your script its own flag for it (a field of its dataclass), or drop the check
        print(training_args.logging_dir, accelerator.logging_dir, project.logging_dir)
        """
    )
    out, findings = run(before, select=SELECT)
    assert out == after
    assert run(out, select=SELECT)[0] == out
    assert [(f.line, f.severity, f.fix) for f in findings] == [
        (3, Severity.WARNING, Fix.APPLIED),
        (4, Severity.ERROR, Fix.MANUAL),
    ]
    assert "TENSORBOARD_LOGGING_DIR environment variable" in findings[0].message


def test_a_dropped_argument_is_quoted_without_its_comma_and_comment_lines():
    # seen in duke-trust-lab/intro_modern_rl: the finding quoted `logging_dir=...,  # note`
    # and the comment lines below it
    before = dedent(
        """
        from transformers import TrainingArguments
        import trl
        args = TrainingArguments(
            output_dir="o",
            logging_dir="./logs",  # TensorBoard logs

            # Optimization
            seed=1,
        )
        """
    )
    _, findings = run(before, select=SELECT)
    assert findings[0].message.startswith('`logging_dir="./logs"` was removed: ')


def test_a_value_after_a_dropped_keyword_is_still_replaced():
    # `_values` read the keyword's original by position, which a dropped keyword before it
    # shifted: `optim="adamw_hf"` stayed
    before = (
        "import trl\nfrom transformers import TrainingArguments\n"
        'a = TrainingArguments(overwrite_output_dir=True, optim="adamw_hf")\n'
    )
    after = (
        "import trl\nfrom transformers import TrainingArguments\n"
        'a = TrainingArguments(optim="adamw_torch")\n'
    )
    assert len(assert_fixes(before, after, select=SELECT)) == 2


def test_is_torch_tpu_available_is_written_in_and_answers_as_it_did(monkeypatch):
    # synbol/TCM-Nvwa's and Jerry-XDL/AIDoctor's pretraining.py import it from transformers,
    # which dropped it after 4.50
    before = dedent(
        """
        import trl
        from transformers import (
            Trainer,
            is_torch_tpu_available,
        )
        metrics = None if is_torch_tpu_available() else 1
        """
    )
    out, findings = run(before, select=SELECT)
    assert out.startswith("import trl\nfrom transformers import (\n    Trainer,\n)\n")
    assert "def is_torch_tpu_available(check_device=True):" in out
    assert out.endswith("metrics = None if is_torch_tpu_available() else 1\n")
    assert run(out, select=SELECT)[0] == out
    [f] = findings
    assert (f.line, f.fix) == (4, Fix.APPLIED)
    # what it answers: no torch_xla -> False; torch_xla with a device -> True; one whose
    # xla_device() raises RuntimeError -> False unless check_device=False
    import importlib.util
    import sys
    import types

    def answers(spec, device):  # type: ignore[no-untyped-def]
        xm = types.ModuleType("torch_xla.core.xla_model")
        xm.xla_device = device
        monkeypatch.setitem(sys.modules, "torch_xla", types.ModuleType("torch_xla"))
        monkeypatch.setitem(sys.modules, "torch_xla.core", types.ModuleType("torch_xla.core"))
        monkeypatch.setitem(sys.modules, "torch_xla.core.xla_model", xm)
        monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
        space: dict = {}
        written = out[out.index("import functools") : out.index("metrics =")]
        exec(written, space)
        return space["is_torch_tpu_available"](), space["is_torch_tpu_available"](False)

    def broken():  # type: ignore[no-untyped-def]
        raise RuntimeError("no device")

    assert answers(None, lambda: "xla:0") == (False, False)
    assert answers(object(), lambda: "xla:0") == (True, True)
    assert answers(object(), broken) == (False, True)


# A script's own field that a TRL 1.13 config also declares: ktolnos's my_sft.py (`max_length`,
# SFTConfig's since TRL 0.16) and HassanJbara's train_dpo.py (`trust_remote_code`, the trainer
# configs' since TRL 1.7) stop in HfArgumentParser on the duplicate flag.
CLASH = """
from dataclasses import dataclass, field
from transformers import HfArgumentParser
from trl import ModelConfig, SFTConfig
@dataclass
class ScriptArguments:
    max_length: int = field(default=1024)
    dataset_name: str = "d"
    report_to: str = "none"
parser = HfArgumentParser((ScriptArguments, SFTConfig, ModelConfig))
"""


def test_a_scripts_field_that_a_parsed_trl_config_also_declares_is_a_todo():
    before = dedent(CLASH)
    out, findings = run(before, select=SELECT)
    todo = (
        "# TODO(trl-migrate TRL108): `--{0}` is a flag of both the script's `ScriptArguments` "
        "and TRL 1.13's `SFTConfig`, so HfArgumentParser stops on it (argparse: conflicting "
        "option strings): rename the script's field (and the flag on its launch lines), or drop "
        "it and read the parsed config's `{0}`\n"
    )
    assert out == before.replace(
        "parser = ", todo.format("max_length") + todo.format("report_to") + "parser = "
    )
    assert [(f.line, f.fix) for f in findings] == [(9, Fix.MANUAL), (9, Fix.MANUAL)]
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(CLASH.replace("max_length", "max_len").replace("report_to", "log"), id="none"),
        pytest.param(CLASH.replace("SFTConfig, ModelConfig", "Other"), id="not-a-trl-config"),
        pytest.param(
            CLASH.replace(
                "from trl import ModelConfig, SFTConfig", "from mylib import SFTConfig"
            ).replace("SFTConfig, ModelConfig", "SFTConfig"),
            id="the-repos-own-sftconfig",
        ),
        pytest.param(CLASH.replace("HfArgumentParser((", "make(("), id="not-a-parser"),
    ],
)
def test_no_clash(src):
    assert assert_noop(dedent(src), select=SELECT) == []


def test_a_clash_with_transformers_training_arguments_is_a_todo_too():
    src = dedent(
        """
        import trl
        from dataclasses import dataclass
        from transformers import HfArgumentParser, TrainingArguments
        @dataclass
        class Args:
            seed: int = 0
        a, t = HfArgumentParser([Args, TrainingArguments]).parse_args_into_dataclasses()
        """
    )
    out, findings = run(src, select=SELECT)
    assert (
        "`--seed` is a flag of both the script's `Args` and transformers' `TrainingArguments`"
        in out
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]


def test_a_config_field_of_a_dataclass_trlparser_parses_is_a_todo():
    src = dedent(
        """
        from dataclasses import dataclass
        from trl import TrlParser
        @dataclass
        class Args:
            config: str = None
            lr: float = 1.0
        p = TrlParser((Args,))
        q = HfArgumentParser((Args,))
        """
    )
    out, findings = run(src, select=SELECT)
    assert out == src.replace(
        "p = TrlParser",
        "# TODO(trl-migrate TRL108): `Args` has a field named `config`, which TRL 1.13's "
        "TrlParser rejects (it reads `--config`, a YAML file of flag values, itself): rename the "
        "field, or drop it where it held that path\np = TrlParser",
    )
    assert [(f.line, f.fix) for f in findings] == [(7, Fix.MANUAL)]
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("module", "call", "shown"),
    [
        pytest.param(
            "peft",
            'prepare_model_for_int8_training(model, output_embedding_layer_name="embed_out", '
            "layer_norm_names=[])",
            '`output_embedding_layer_name="embed_out"`, `layer_norm_names=[]` of '
            "`peft.prepare_model_for_int8_training`",
            id="both",
        ),
        pytest.param(
            "peft.utils",
            "prepare_model_for_int8_training(model, layer_norm_names=[])",
            "`layer_norm_names=[]` of `peft.utils.prepare_model_for_int8_training`",
            id="peft-utils",
        ),
    ],
)
def test_arguments_only_the_oldest_peft_took_get_a_todo(module, call, shown):
    # namsan96/rlhf_demo (trl 0.4's gpt-neox example): the renamed function rejects them
    src = f"from {module} import prepare_model_for_int8_training\nmodel = {call}\n"
    out, findings = run(src, select=SELECT)
    assert out == (
        f"from peft import prepare_model_for_kbit_training as prepare_model_for_int8_training\n"
        f"# TODO(trl-migrate TRL108): {shown}: only peft <= 0.2.0 took them (0.3.0 dropped "
        "them, so such a call raised TypeError on every later peft); there the function cast "
        "only the layer norms named to fp32 and wrapped the output layer to return fp32 logits, "
        "where prepare_model_for_kbit_training casts every fp16/bf16 weight to fp32 and wraps "
        "nothing: remove them to take that, or cast those layers yourself\n"
        f"model = {call}\n"
    )
    assert [f.fix for f in findings] == [Fix.APPLIED, Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


def test_datasets_set_caching_enabled_is_written_in():
    # mnuhn/oppositext: `from datasets import set_caching_enabled` stopped the script on
    # datasets 3 (TRL 1.13 installs datasets >= 4.7)
    src = "import trl\nfrom datasets import set_caching_enabled\nset_caching_enabled(False)\n"
    out, findings = run(src, select=SELECT)
    assert out == dedent(
        '''
        import trl


        def set_caching_enabled(boolean):
            """datasets.set_caching_enabled, which datasets 3.0 removed (written in by trl-migrate)."""
            import datasets

            if boolean:
                datasets.enable_caching()
            else:
                datasets.disable_caching()


        set_caching_enabled(False)
        '''
    )
    assert [(f.line, f.fix) for f in findings] == [(2, Fix.APPLIED)]
    assert findings[0].message.startswith(
        "`datasets.set_caching_enabled` is gone in the datasets TRL 1.13 needs; an equivalent "
        "definition was written into this file"
    )
    assert run(out, select=SELECT)[0] == out
    namespace: dict = {}
    exec(compile(out.replace("import trl\n", ""), "t.py", "exec"), namespace)
    import datasets

    assert datasets.is_caching_enabled() is False
    namespace["set_caching_enabled"](True)
    assert datasets.is_caching_enabled() is True


def test_push_to_hub_given_to_a_tokenizer_load_is_dropped_and_other_uses_stand():
    # seen in AmenallahBouhachem/RLHF-PPO-DPO-GRPO-KTO-Implementation: after training,
    # `AutoTokenizer.from_pretrained(path, push_to_hub=True)` raised AttributeError on
    # transformers 5 ("push_to_hub conflicts with the method push_to_hub")
    before = dedent(
        """
        import trl
        from transformers import AutoTokenizer, AutoModelForCausalLM, GPT2TokenizerFast
        tok = AutoTokenizer.from_pretrained("out", push_to_hub=True)
        fast = GPT2TokenizerFast.from_pretrained("out", push_to_hub=False)
        m = AutoModelForCausalLM.from_pretrained("out", push_to_hub=True)
        print(args.push_to_hub)
        trainer.push_to_hub()
        """
    )
    after = before.replace(", push_to_hub=True)\nfast", ")\nfast").replace(
        ", push_to_hub=False)", ")"
    )
    findings = assert_fixes(before, after, select=SELECT)
    said = [f for f in findings if f.message.startswith("`push_to_hub=")]
    assert [(f.line, f.severity.value) for f in said] == [(3, "info"), (4, "info")]
    assert not [f for f in findings if f.fix.value == "manual"]


_BOTH = "import trl\nfrom transformers import TrainingArguments\nt = TrainingArguments('o', warmup_ratio=0.05, warmup_steps={steps})\n"


@pytest.mark.parametrize(
    ("steps", "now", "said"),
    [
        pytest.param("200", "warmup_steps=200", "`0.05` did nothing beside `200`", id="steps"),
        pytest.param("0", "warmup_steps=0.05", "the ratio was used", id="zero-steps"),
        pytest.param(
            "n",
            "warmup_steps=n if n > 0 else 0.05",
            "`warmup_steps=n if n > 0 else 0.05` does the same",
            id="a-name",
        ),
        pytest.param(
            "args.warmup_steps",
            "warmup_steps=args.warmup_steps if args.warmup_steps > 0 else 0.05",
            "does the same",
            id="an-attribute",  # jasonvanf/llama-trl
        ),
    ],
)
def test_warmup_ratio_beside_warmup_steps_keeps_what_transformers_4_used(steps, now, said):
    """transformers 4.x warmed up for `warmup_steps` when above 0, else for the ratio (seen in
    tyronen's and 1998frankchen's SFT configs, which gave both)."""
    findings = assert_fixes(
        _BOTH.format(steps=steps),
        f"import trl\nfrom transformers import TrainingArguments\nt = TrainingArguments('o', {now})\n",
        select=SELECT,
    )
    [f] = findings
    assert (f.severity, f.fix) == (Severity.INFO, Fix.APPLIED)
    assert f.message.startswith(
        "`warmup_ratio=` and `warmup_steps=` are both given: transformers 4.x trained with "
        "`warmup_steps` when it was above 0 and with `warmup_ratio` otherwise"
    )
    assert said in f.message


@pytest.mark.parametrize("steps", ["n * 2", "0.5", "f().n", "a[0].n"])
def test_warmup_ratio_beside_steps_it_cannot_read_keeps_the_todo(steps):
    out, findings = run(_BOTH.format(steps=steps), select=SELECT)
    assert [f.fix for f in findings] == [Fix.MANUAL]
    assert "are both given; `warmup_ratio` is gone" in findings[0].message
    assert out.endswith(f"warmup_ratio=0.05, warmup_steps={steps})\n")


def test_a_removed_helper_read_off_its_module_is_written_in_under_its_name():
    # kyleliang919/C-Optim's ppo_tldr.py: `transformers.AdamW(...)`, no import of the name, was
    # passed over (an AttributeError on transformers 5); so was `datasets.set_caching_enabled`
    before = dedent(
        """
        import trl
        import datasets


        def cache(flag):
            datasets.set_caching_enabled(flag)
        """
    )
    after = dedent(
        '''
        import trl
        import datasets


        def set_caching_enabled(boolean):
            """datasets.set_caching_enabled, which datasets 3.0 removed (written in by trl-migrate)."""
            import datasets

            if boolean:
                datasets.enable_caching()
            else:
                datasets.disable_caching()


        def cache(flag):
            set_caching_enabled(flag)
        '''
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert [(f.line, f.fix) for f in findings] == [(6, Fix.APPLIED)]
    assert findings[0].message == (
        "`datasets.set_caching_enabled` is gone in the datasets TRL 1.13 needs; an equivalent "
        "definition was written into this file, and `datasets.set_caching_enabled` reads it as "
        "`set_caching_enabled`"
    )


@pytest.mark.parametrize(
    ("src", "written"),
    [
        pytest.param(
            "import trl\nimport transformers\nopt = transformers.AdamW(ps, lr=1e-5)\n",
            "opt = AdamW(ps, lr=1e-5)",
            id="attribute",
        ),
        pytest.param(
            "import trl\nfrom transformers import AdamW\nopt = AdamW(ps, lr=1e-5)\n",
            "opt = AdamW(ps, lr=1e-5)",
            id="import",
        ),
        pytest.param(
            "import trl\nimport transformers\nfrom transformers import AdamW\n"
            "a = AdamW(ps)\nb = transformers.optimization.AdamW(ps)\n",
            "b = AdamW(ps)",
            id="both-one-definition",
        ),
        pytest.param(
            "import transformers\nopt = transformers.AdamW(ps, lr=1e-5)\n",
            "opt = AdamW(ps, lr=1e-5)",
            id="file-without-trl",  # rcalix1/TransferLearning's fine-tuning scripts
        ),
    ],
)
def test_transformers_own_adamw_is_written_in(src, written):
    out, findings = run(src, select=SELECT)
    assert written in out and out.count("class AdamW(torch.optim.Optimizer):") == 1
    assert "transformers.AdamW" not in out and "from transformers import AdamW" not in out
    assert all(f.fix is Fix.APPLIED for f in findings) and findings
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("import trl\nfrom torch.optim import AdamW\nopt = AdamW(ps)\n", id="torch"),
        pytest.param("import trl\nimport torch\nopt = torch.optim.AdamW(ps)\n", id="torch-attr"),
    ],
)
def test_torch_adamw_is_left_alone(src):
    assert assert_noop(src, select=SELECT) == []


def test_adamw_read_off_its_module_where_the_name_is_taken_is_a_todo():
    src = "import trl\nimport transformers\nfrom torch.optim import AdamW\nopt = transformers.AdamW(ps)\n"
    out, findings = run(src, select=SELECT)
    assert out == src.replace(
        "opt =",
        "# TODO(trl-migrate TRL108): `transformers.AdamW` is gone in the transformers TRL 1.13 "
        "needs, and this file uses the name `AdamW` for something else: write in the definition "
        "of docs/rules.md (TRL108) under another name and call that\nopt =",
    )
    assert run(out, select=SELECT)[0] == out


def _transformers_adamw():  # type: ignore[no-untyped-def]
    """transformers 4.46.3's own AdamW class, read out of its wheel."""
    import math
    from collections.abc import Callable, Iterable

    import torch

    try:
        text = old_wheels.member("4.46.3", "transformers/optimization.py", "transformers")
    except LookupError as why:
        pytest.skip(str(why))
    tree = ast.parse(text)
    [node] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "AdamW"]
    space = {
        "math": math,
        "torch": torch,
        "nn": torch.nn,
        "Optimizer": torch.optim.Optimizer,
        "Callable": Callable,
        "Iterable": Iterable,
        "Tuple": tuple,
        "warnings": __import__("warnings"),
        "require_version": lambda *a, **k: None,
    }
    exec(ast.get_source_segment(text, node) or "", space)
    return space["AdamW"]


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"lr": 1e-2, "weight_decay": 0.1},
        {"lr": 3e-3, "correct_bias": False, "eps": 1e-8, "betas": (0.8, 0.99)},
    ],
)
def test_the_written_adamw_steps_as_transformers_own_did(settings):
    torch = pytest.importorskip("torch")
    theirs_class = _transformers_adamw()
    out, _ = run("import trl\nfrom transformers import AdamW\n", select=SELECT)
    space: dict = {}
    exec(compile(out.replace("import trl\n", ""), "t.py", "exec"), space)
    g = torch.Generator().manual_seed(0)
    start = torch.randn(3, 4, generator=g)
    mine, theirs = torch.nn.Parameter(start.clone()), torch.nn.Parameter(start.clone())
    ours = space["AdamW"]([mine], **settings)
    old = theirs_class([theirs], no_deprecation_warning=True, **settings)
    for _ in range(5):
        grad = torch.randn(3, 4, generator=g)
        for p, opt in ((mine, ours), (theirs, old)):
            p.grad = grad.clone()
            opt.step()
    assert torch.equal(mine.detach(), theirs.detach())
    assert ours.state[mine]["step"] == 5


@pytest.mark.parametrize(
    ("given", "severity", "said"),
    [
        pytest.param(
            'half_precision_backend="auto"',
            Severity.INFO,
            "what `auto` and `cpu_amp` chose, so dropping it changes nothing in training",
            id="auto",
        ),
        pytest.param(
            'half_precision_backend="apex"',
            Severity.WARNING,
            "dropping it changes nothing only where it is `auto` or `cpu_amp`: `apex` ran NVIDIA "
            "apex's amp at `fp16_opt_level`",
            id="apex",
        ),
        pytest.param(
            "half_precision_backend=cfg.backend",
            Severity.WARNING,
            "dropping it changes nothing only where it is `auto` or `cpu_amp`",
            id="read-at-run-time",
        ),
        pytest.param(
            'fp16_opt_level="O1"',
            Severity.INFO,
            "casts as the default O1 did, so dropping it changes nothing in training",
            id="o1",
        ),
        pytest.param(
            'fp16_opt_level="O2"',
            Severity.WARNING,
            "dropping it changes nothing only where it is `O1`: O2 and O3 kept the weights in fp16",
            id="o2",
        ),
    ],
)
def test_apex_settings_transformers_5_removed_leave_the_call(given, severity, said):
    # rcalix1/TransferLearning's GPT-J summarization scripts: TypeError on transformers 5
    before = f'import trl\nfrom transformers import TrainingArguments\nargs = TrainingArguments("o", fp16=True, {given})\n'
    after = 'import trl\nfrom transformers import TrainingArguments\nargs = TrainingArguments("o", fp16=True)\n'
    [f] = assert_fixes(before, after, select=SELECT)
    assert (f.line, f.severity, f.fix) == (3, severity, Fix.APPLIED)
    assert f.message.startswith(f"`{given}` was removed: transformers 5.0 removed ")
    assert said in f.message


# -- Trainer.__init__ by position (transformers 4.46 inserted compute_loss_func) -------------
TRAINER_SUBCLASS = """\
import trl
from transformers import Trainer


class ClassifierTrainer(Trainer):
    def __init__(self, model, args, data_collator, train_dataset, eval_dataset, tokenizer, model_init, compute_metrics, callbacks, optimizers, preprocess_logits_for_metrics):
        super().__init__({args})
"""
FORWARDED = "model, args, data_collator, train_dataset, eval_dataset, tokenizer, model_init, compute_metrics, callbacks, optimizers, preprocess_logits_for_metrics"


def test_a_trainer_subclass_forwarding_its_arguments_by_position_names_the_shifted_ones():
    """avinashreddych/dadpo-'s ClassifierTrainer: from 4.46 `compute_metrics` would land on
    `compute_loss_func` and the optimizers tuple on `callbacks` (TypeError on transformers 5)."""
    before = TRAINER_SUBCLASS.format(args=FORWARDED)
    after = TRAINER_SUBCLASS.format(
        args="model, args, data_collator, train_dataset, eval_dataset, tokenizer, model_init, "
        "compute_metrics=compute_metrics, callbacks=callbacks, optimizers=optimizers, "
        "preprocess_logits_for_metrics=preprocess_logits_for_metrics"
    )
    findings = assert_fixes(before, after, select=SELECT)
    [said] = [f for f in findings if "compute_loss_func" in f.message]
    assert said.line == 7 and said.message.endswith(
        "compute_metrics, callbacks, optimizers, preprocess_logits_for_metrics are passed by "
        "keyword now, as their names say"
    )


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            TRAINER_SUBCLASS.format(args="model, args, None, tr, ev, tok, None, metrics"),
            id="values-not-names",
        ),
        pytest.param(
            "import trl\nfrom transformers import Trainer\n"
            "def compute_metrics(p):\n    return {}\n"
            "t = Trainer(m, a, c, tr, ev, tok, None, compute_metrics, None, (opt, None))\n",
            id="a-trainer-call-with-a-value",
        ),
    ],
)
def test_other_arguments_past_the_seventh_by_position_are_a_todo(src):
    out, findings = run(src, select=SELECT)
    assert out.count("# TODO(trl-migrate TRL108): transformers 4.46 put `compute_loss_func`") == 1
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            TRAINER_SUBCLASS.format(
                args="model, args, data_collator, train_dataset, eval_dataset, tokenizer, model_init"
            ),
            id="seven-by-position",
        ),
        pytest.param(
            TRAINER_SUBCLASS.replace("(Trainer)", "(MyBase)").format(args=FORWARDED),
            id="not-a-transformers-trainer",
        ),
        pytest.param(TRAINER_SUBCLASS.format(args="*pos"), id="unpacked"),
        pytest.param(  # optimum-habana's GaudiTrainer: written for transformers 4.46 on
            TRAINER_SUBCLASS.format(
                args="model, args, data_collator, train_dataset, eval_dataset, processing_class, "
                "model_init, compute_loss_func, compute_metrics, callbacks, optimizers, "
                "optimizer_cls_and_kwargs, preprocess_logits_for_metrics"
            ),
            id="the-order-of-4-46-on",
        ),
    ],
)
def test_trainer_positions_noop(src):
    assert not [f for f in assert_noop(src, select=SELECT) if "compute_loss_func" in f.message]

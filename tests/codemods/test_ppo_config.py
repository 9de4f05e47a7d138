"""TRL103 ppo-config: before/after tables per era and target, no-op cases, TODOs, run twice."""

from __future__ import annotations

import runpy

import pytest

from migrate.kernel.findings import Fix, Severity
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run

SELECT = ("TRL103",)
TODO = "# TODO(trl-migrate TRL103): "


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("import os\n", id="unrelated"),
        pytest.param("from trl import RLOOConfig\nc = RLOOConfig(beta=0.1)\n", id="already-rloo"),
        pytest.param(
            "from mylib import PPOConfig\nc = PPOConfig(batch_size=1)\n", id="other-library"
        ),
        pytest.param("class PPOConfig:\n    pass\nc = PPOConfig()\n", id="own-class"),
        pytest.param("s = 'PPOConfig(batch_size=1)'\n", id="string"),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=SELECT) == []


@pytest.mark.parametrize(
    ("before", "after", "target"),
    [
        pytest.param(
            """
            from trl import PPOConfig
            config = PPOConfig(output_dir="out", total_episodes=10000, num_ppo_epochs=4, kl_coef=0.05, response_length=53)
            """,
            """
            from trl import RLOOConfig
            config = RLOOConfig(output_dir="out", max_steps=5000, num_iterations=4, beta=0.05, max_completion_length=53, max_grad_norm=0.0, learning_rate=5e-05, temperature=0.7, disable_dropout=True)
            """,
            "rloo",
            id="v2-total-episodes",
        ),
        pytest.param(
            """
            from trl.experimental.ppo import PPOConfig
            config = PPOConfig(
                output_dir="out",
                per_device_train_batch_size=4,
                gradient_accumulation_steps=2,
                num_mini_batches=2,
                total_episodes=1000,
                vf_coef=0.2,
                stop_token="eos",
            )
            """,
            """
            from trl import GRPOConfig
            config = GRPOConfig(
                output_dir="out",
                per_device_train_batch_size=4,
                gradient_accumulation_steps=2,
                max_steps=500,
                max_grad_norm=0.0,
                learning_rate=3e-06,
                max_completion_length=53,
                temperature=0.7,
                num_iterations=4,
                beta=0.05,
                disable_dropout=True,
            )
            """,
            "grpo",
            id="experimental-multiline-grpo",
        ),
        pytest.param(
            """
            from trl import PPOv2Config
            config = PPOv2Config(output_dir="o", num_mini_batches=2, total_episodes=64, learning_rate=1e-5, temperature=0.7, response_length=20, kl_coef=0.1, num_ppo_epochs=1)
            """,
            """
            from trl import RLOOConfig
            config = RLOOConfig(output_dir="o", steps_per_generation=2, max_steps=8, learning_rate=1e-5, temperature=0.7, max_completion_length=20, beta=0.1, num_iterations=1, max_grad_norm=0.0, disable_dropout=True, bf16=False, gradient_checkpointing=False)
            """,
            "rloo",
            id="ppov2-num-mini-batches-old-meaning",
        ),
        pytest.param(
            """
            from trl import PPOConfig
            config = PPOConfig(model_name="gpt2", learning_rate=1.41e-5, batch_size=16, mini_batch_size=4, steps=320, log_with="wandb")
            model = load(config.model_name)
            n = config.steps
            """,
            """
            from trl import RLOOConfig
            config = RLOOConfig(learning_rate=1.41e-5, per_device_train_batch_size=4, report_to=['wandb'], steps_per_generation=4, seed=0, beta=0.2, num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, disable_dropout=True)
            model = load("gpt2")
            n = 320
            """,
            "rloo",
            id="legacy-batch-math-and-field-read",
        ),
        pytest.param(
            """
            import trl
            config = trl.PPOConfig(**{"mini_batch_size": 1, "batch_size": 2, "ppo_epochs": 1, "init_kl_coef": 0.1, "adap_kl_ctrl": False})
            """,
            """
            import trl
            config = trl.RLOOConfig(per_device_train_batch_size=1, num_iterations=1, beta=0.1, steps_per_generation=2, seed=0, learning_rate=1.41e-05, max_grad_norm=0.0, gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, disable_dropout=True)
            """,
            "rloo",
            id="legacy-dict-literal-and-module-attribute",
        ),
        pytest.param(
            """
            from transformers import HfArgumentParser
            from trl import PPOConfig, PPOTrainer
            parser = HfArgumentParser((ScriptArguments, PPOConfig))
            args, config = parser.parse_args_into_dataclasses()
            trainer = PPOTrainer(config, model, None, tokenizer)
            print(config.ppo_epochs)
            """,
            """
            from transformers import HfArgumentParser
            from trl import RLOOConfig, PPOTrainer
            parser = HfArgumentParser((ScriptArguments, RLOOConfig))
            parser.set_defaults(per_device_train_batch_size=128, seed=0, learning_rate=1.41e-05, beta=0.2, num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, disable_dropout=True)
            args, config = parser.parse_args_into_dataclasses()
            trainer = PPOTrainer(config, model, None, tokenizer)
            print(config.num_iterations)
            """,
            "rloo",
            id="hf-argument-parser-legacy",
        ),
    ],
)
def test_fixes(before, after, target):
    assert_fixes(dedent(before), dedent(after), select=SELECT, target=target)


def test_value_model_fields_are_dropped_with_a_warning():
    before = "from trl import PPOConfig\nc = PPOConfig(output_dir='o', vf_coef=0.1, gamma=0.99, lam=0.9, cliprange_value=0.3)\n"
    findings = assert_fixes(
        before,
        "from trl import RLOOConfig\nc = RLOOConfig(output_dir='o', max_grad_norm=0.0, learning_rate=5e-05, max_completion_length=53, "
        "temperature=0.7, num_iterations=4, beta=0.05, disable_dropout=True)\n",
        select=SELECT,
    )
    gone = [f for f in findings if "behaviour is gone" in f.message]
    assert [f.message.split("=")[0] for f in gone] == [
        "`vf_coef",
        "`gamma",
        "`lam",
        "`cliprange_value",
    ]
    assert all(f.severity is Severity.WARNING and f.fix is Fix.APPLIED for f in gone)


def test_non_literal_inputs_get_the_formula():
    # num_mini_batches=2 meant another thing before TRL 0.17 and after: no formula to write
    before = "from trl import PPOConfig\nc = PPOConfig(output_dir='o', total_episodes=n, num_mini_batches=2, missing_eos_penalty=1.0)\n"
    out, findings = run(before, select=SELECT)
    assert "max_steps=" not in out.splitlines()[-1]
    assert (
        f"{TODO}`total_episodes=n` was dropped: set `max_steps = ceil(total_episodes / (per_device_train_batch_size"
        in out
    )
    assert f"{TODO}`missing_eos_penalty=1.0` was dropped: add a reward function" in out
    assert (
        "return [0.0 if tokenizer.eos_token_id in ids else -1.0 for ids in completion_ids]" in out
    )
    assert run(out, select=SELECT)[0] == out


LEGACY_TAIL = (
    ", seed=0, learning_rate=1.41e-05, beta=0.2, num_iterations=4, max_grad_norm=0.0, "
    'gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, disable_dropout=True)'
)


@pytest.mark.parametrize(
    ("clip", "written"),
    [
        pytest.param("3.0", "reward_clip_range=(-3.0, 3.0)", id="literal"),
        pytest.param(
            "args.clip",
            "reward_clip_range=None if args.clip is None else (-args.clip, args.clip)",
            id="attribute-may-be-None",
        ),
        pytest.param(
            "clip",
            "reward_clip_range=None if clip is None else (-clip, clip)",
            id="name-may-be-None",
        ),
    ],
)
def test_score_clip_becomes_reward_clip_range(clip, written):
    before = f"from trl import PPOConfig\nc = PPOConfig(batch_size=8, mini_batch_size=8, score_clip={clip})\n"
    after = f"from trl import RLOOConfig\nc = RLOOConfig(per_device_train_batch_size=8, {written}{LEGACY_TAIL}\n"
    assert_fixes(before, after, select=SELECT)


def test_score_clip_of_a_call_is_not_evaluated_three_times():
    out, findings = run(
        "from trl import PPOConfig\nc = PPOConfig(batch_size=8, mini_batch_size=8, score_clip=get())\n",
        select=SELECT,
    )
    assert "reward_clip_range" not in out.splitlines()[-1] and "get()" not in out.splitlines()[-1]
    assert (
        f"{TODO}`score_clip=get()` was dropped: set `reward_clip_range=(-c, c)` with its value c (None: no clipping)"
        in out
    )
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("src", "why"),
    [
        pytest.param(
            "from trl import PPOConfig\nc = PPOConfig(**kwargs)\n",
            "`**kwargs` holds PPO field names",
            id="star-star",
        ),
        pytest.param(
            "from trl import PPOConfig\nc = PPOConfig(ppo_epochs=1, total_episodes=3)\n",
            "cannot tell",
            id="mixed-eras",
        ),
        pytest.param(
            "from trl import PPOConfig\nc = PPOConfig(output_dir='o', bogus=1)\n",
            "`bogus` is neither",
            id="unknown",
        ),
    ],
)
def test_all_or_nothing(src, why):
    out, findings = run(src, select=SELECT)
    assert "PPOConfig(" in out and why in out
    assert (
        f"{TODO}`trl.PPOConfig` does not exist in TRL 1.13; finish the TODOs" in out
    )  # the import keeps a TODO
    assert {f.fix for f in findings} == {Fix.MANUAL}
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("src", "words"),
    [
        pytest.param(
            "c = PPOConfig(batch_size=8, learning_riate=1e-5)",
            "`learning_riate` is neither a known legacy PPO (TRL <= 0.11) field nor a field of "
            "RLOOConfig (misspelt? `learning_riate` for `learning_rate`: no legacy PPO "
            "(TRL <= 0.11) release took it either: the call raised TypeError there)",
            id="legacy",
        ),
        pytest.param(
            "c = PPOConfig(output_dir='o', learning_riate=1e-5)",
            "`learning_riate` is neither a known PPO v2 (TRL 0.12-0.28) field nor a field of "
            "RLOOConfig (misspelt? `learning_riate` for `learning_rate`: check the spelling)",
            id="v2-may-be-a-transformers-field",
        ),
        pytest.param(
            "c = PPOConfig(batch_size=8, learning_riate=1e-5, bogus=2)",
            "`learning_riate`, `bogus` is neither a known legacy PPO (TRL <= 0.11) field nor a "
            "field of RLOOConfig (misspelt? `learning_riate` for `learning_rate`: check the "
            "spelling)",
            id="one-of-two-near-a-field",
        ),
        pytest.param(
            "c = PPOConfig(batch_size=8, bogus=2)",
            "`bogus` is neither a known legacy PPO (TRL <= 0.11) field nor a field of RLOOConfig;",
            id="none-near",
        ),
    ],
)
def test_unknown_keyword_near_a_field_is_named(src, words):
    before = f"from trl import PPOConfig\n{src}\n"
    out, findings = run(before, select=SELECT)
    assert out.splitlines()[-1] == src  # left as it was, under its TODO
    assert words in " ".join(f.message for f in findings)
    assert run(out, select=SELECT)[0] == out


ODD = (
    "seed=0, learning_rate=1.41e-05, beta=0.2, num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, "
    'lr_scheduler_type="constant", bf16=False, disable_dropout=True'
)


@pytest.mark.parametrize("target", ["rloo", "grpo"])
@pytest.mark.parametrize(
    ("given", "read", "written", "generation"),
    [
        pytest.param(
            "batch_size=1, mini_batch_size=1",
            "c.mini_batch_size -> 1",
            "per_device_train_batch_size=2, num_generations=2",
            2,
            id="hello-world-1-1",
        ),
        pytest.param(
            "batch_size=15, mini_batch_size=3",
            "c.mini_batch_size -> 3",
            "per_device_train_batch_size=6, steps_per_generation=5, num_generations=2",
            30,
            id="odd-15-3",
        ),
        pytest.param(
            "batch_size=3, forward_batch_size=1, gradient_accumulation_steps=3",
            "c.forward_batch_size -> 1",
            "per_device_train_batch_size=2, gradient_accumulation_steps=3, num_generations=2",
            6,
            id="forward-and-accumulation",
        ),
    ],
)
def test_odd_batch_size_gets_two_completions_per_prompt(given, read, written, generation, target):
    cls = "RLOOConfig" if target == "rloo" else "GRPOConfig"
    field, value = read.split(" -> ")  # a read of the doubled field keeps the legacy value
    before = f"from trl import PPOConfig\nc = PPOConfig({given})\nprint({field})\n"
    after = f"from trl import {cls}\nc = {cls}({written}, {ODD})\nprint({value})\n"
    findings = assert_fixes(before, after, select=SELECT, target=target)
    odd = [f for f in findings if "is odd" in f.message]
    assert len(odd) == 1 and odd[0].severity is Severity.WARNING and odd[0].fix is Fix.APPLIED
    assert f"a generation holds 2 * batch_size = {generation} samples" in odd[0].message
    assert not [f for f in findings if f.fix is Fix.MANUAL]


@pytest.mark.parametrize(
    "given, spg",
    [
        pytest.param("batch_size=4, mini_batch_size=m", "4 // m", id="mini-not-literal"),
        pytest.param("batch_size=n, mini_batch_size=1", "n", id="batch-not-literal"),
        pytest.param(
            "batch_size=args.bs, mini_batch_size=args.mbs",
            "args.bs // args.mbs",
            id="both-read-at-run-time",
        ),
        pytest.param("mini_batch_size=args.mbs", "128 // args.mbs", id="default-batch"),
    ],
)
def test_batch_sizes_read_at_run_time_divide_there(given, spg):
    """Batch sizes only known at run time (`script_args.batch_size`): the same division, written
    as code, so one generation still covers batch_size samples; an odd or non-dividing value is
    rejected by TRL's own checks when the config is used, not guessed here, and a batch_size read
    at run time gets a warning that an odd one (1: a prompt a step) stops RLOOConfig."""
    out, findings = run(f"from trl import PPOConfig\nc = PPOConfig({given})\n", select=SELECT)
    assert f"steps_per_generation={spg}," in out
    assert "num_generations=" not in out and "TODO" not in out
    note = [f for f in findings if f.message.startswith(f"steps_per_generation={spg} ")]
    assert len(note) == 1 and note[0].severity is Severity.INFO
    # an odd batch_size known only at run time now stops RLOOConfig: said where it is not literal
    odd = [
        f for f in findings if "a batch_size of 1 (one prompt a step) no longer runs" in f.message
    ]
    batch = dict(kv.split("=") for kv in given.split(", ")).get("batch_size", "")
    if batch and not batch.isdigit():
        assert [(f.severity, f.message.split(":")[0]) for f in odd] == [
            (Severity.WARNING, f"`batch_size={batch}` is read at run time")
        ]
    else:
        assert odd == []
    # given mini_batch_size: the script's own choice, nothing more said
    assert not [f for f in findings if "is not given, so legacy" in f.message]
    assert run(out, select=SELECT)[0] == out


def test_a_run_time_batch_size_under_the_default_mini_batch_size_is_warned():
    # learn2Pro/buddygpt: `batch_size=per_device_train_batch_size` (2 by default) and no
    # mini_batch_size, whose legacy default (128) then divides it to 0: legacy PPOConfig raised,
    # RLOOConfig takes it
    before = "from trl import PPOConfig\nc = PPOConfig(batch_size=args.bs)\n"
    out, findings = run(before, select=SELECT)
    assert "steps_per_generation=args.bs // 128," in out
    warned = [f for f in findings if "is not given, so legacy" in f.message]
    assert [(f.severity, f.message) for f in warned] == [
        (
            Severity.WARNING,
            "`mini_batch_size` is not given, so legacy PPOConfig's default of 128 divides the "
            "batch_size read at run time: below 128, steps_per_generation=args.bs // 128 is 0, "
            "which legacy PPOConfig rejected (a multiple of mini_batch_size * "
            "gradient_accumulation_steps was required) and RLOOConfig takes, generating nothing "
            "to train on: give batch_size a multiple of it, or set steps_per_generation",
        )
    ]
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "given",
    [
        pytest.param("batch_size=3, mini_batch_size=2", id="mini-does-not-divide"),
        pytest.param("batch_size=6, mini_batch_size=2, gradient_accumulation_steps=2", id="ga"),
    ],
)
def test_odd_batch_size_not_literal_keeps_the_todo(given):
    out, findings = run(f"from trl import PPOConfig\nc = PPOConfig({given})\n", select=SELECT)
    assert "num_generations=" not in out
    assert f"{TODO}set `steps_per_generation = batch_size // mini_batch_size`" in out
    assert not [f for f in findings if "is odd" in f.message]
    assert run(out, select=SELECT)[0] == out


# -- path fields of a config parsed from the command line move to a written-in dataclass ---------------
PATHS_V2 = """\
import dataclasses


# Written by trl-migrate (TRL103): {cfg} has no `sft_model_path`, `reward_model_path`.
# TRL's PPO trainer did not use them, this script does: they are its own arguments now (same flags).
@dataclasses.dataclass
class PPOScriptArguments:
    sft_model_path: str = dataclasses.field(
        default="EleutherAI/pythia-160m",
        metadata={{"help": "Path or Hub id of the SFT model the policy starts from."}},
    )
    reward_model_path: str = dataclasses.field(
        default="EleutherAI/pythia-160m",
        metadata={{"help": "Path or Hub id of the reward model that scores completions."}},
    )


"""


@pytest.mark.parametrize(
    "use",
    [
        pytest.param('MAP = {"ppo": PPOConfig}', id="a-class-map"),  # Lexsi-Labs/aligntune
        pytest.param("cls = PPOConfig", id="an-alias"),
        pytest.param("cfg = make(PPOConfig, lr=1)", id="handed-to-a-function"),
        pytest.param("parser = HfArgumentParser(PPOConfig)", id="a-parser-given-no-tuple"),
        pytest.param(
            "(c,) = HfArgumentParser((PPOConfig,)).parse_args_into_dataclasses()",
            id="a-parser-no-statement-of-its-own",  # nowhere to put set_defaults
        ),
    ],
)
def test_class_reference_that_may_be_built_is_a_todo(use):
    """Renamed there, the class would be built from TRL 1.13's defaults with PPO's field
    names, and nothing would say so."""
    before = f"from transformers import HfArgumentParser\nfrom trl import PPOConfig\n{use}\n"
    out, findings = run(before, select=SELECT)
    assert out == (
        "from transformers import HfArgumentParser\n"
        f"{TODO}`trl.PPOConfig` does not exist in TRL 1.13; finish the TODOs on its remaining "
        "uses, then import RLOOConfig (or GRPOConfig) from trl instead\n"
        "from trl import PPOConfig\n"
        f"{TODO}`PPOConfig` is used here other than as a type, in a check or in a parser's "
        "classes; TRL 1.13 has no `PPOConfig`, and `RLOOConfig` has other fields and defaults: "
        "where this class is built, write the call out as `RLOOConfig(...)` following "
        f"docs/rules.md (TRL103)\n{use}\n"
    )
    assert {f.fix for f in findings} == {Fix.MANUAL}
    assert run(out, select=SELECT)[0] == out


def test_class_reference_as_a_type_or_check_is_renamed():
    before = dedent(
        """
        from trl import PPOConfig


        def check(c: PPOConfig) -> bool:
            return isinstance(c, PPOConfig) and issubclass(type(c), (PPOConfig, dict))
        """
    )
    after = before.replace("from trl import PPOConfig", "from trl import RLOOConfig").replace(
        "PPOConfig", "RLOOConfig"
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert not [f for f in findings if f.fix is Fix.MANUAL]


@pytest.mark.parametrize("method", ["parse_json_file", "parse_yaml_file", "parse_dict"])
def test_a_parse_from_a_file_is_told_what_set_defaults_misses(method):
    """MaxLuo233/react-rl parses a JSON file when given one: HfArgumentParser then builds the
    config from the file and the class's defaults, and argparse's set_defaults never applies."""
    before = dedent(
        f"""
        from trl import ModelConfig, TrlParser
        from trl.experimental.ppo import PPOConfig

        parser = TrlParser((PPOConfig, ModelConfig))
        if from_file:
            config, model_config = parser.{method}(path)
        else:
            config, model_config = parser.parse_args_and_config()
        """
    )
    out, findings = run(before, select=SELECT)
    todo = (
        f"    {TODO}`{method}` builds RLOOConfig from the file and the class's own defaults, "
        "which `set_defaults` does not reach: where the file leaves them out, "
        "trl.experimental.ppo (TRL 0.26-1.12)'s values differ from TRL 1.13's: put "
        "max_grad_norm=0.0, learning_rate=3e-06, max_completion_length=53, temperature=0.7, "
        "num_iterations=4, beta=0.05, disable_dropout=True in the file, and rename or drop its "
        "PPO fields as the command-line flags change (docs/rules.md, TRL103)\n"
        f"    config, model_config = parser.{method}(path)\n"
    )
    assert todo in out
    assert "parser.set_defaults(max_grad_norm=0.0, learning_rate=3e-06" in out
    assert run(out, select=SELECT)[0] == out


def test_the_parse_of_a_repos_own_parser_moves_script_fields_and_names_the_yaml_defaults():
    """Chelsi-create/RLHF_Poison copies alignment-handbook's H4ArgumentParser, whose `parse()`
    reads a YAML file named first on the command line (else the flags): its PPO config's
    script-only fields move like those of `parse_args_into_dataclasses()`, and the TODO says the
    YAML needs the values `set_defaults` keeps. The parser's module path (`recipe_lib.parser`)
    is no use of the `parser` variable."""
    before = dedent(
        """
        from recipe_lib.parser import H4ArgumentParser
        from trl import ModelConfig, PPOConfig, PPOTrainer, ScriptArguments

        parser = H4ArgumentParser((ScriptArguments, PPOConfig, ModelConfig))
        script_args, training_args, model_args = parser.parse()
        reward_model = load(training_args.reward_model_path)
        trainer = PPOTrainer(args=training_args, processing_class=tok, model=policy, ref_model=ref, reward_model=reward_model, value_model=vm, train_dataset=ds)
        """
    )
    out, findings = run(before, select=SELECT)
    assert (
        "parser = H4ArgumentParser((ScriptArguments, RLOOConfig, ModelConfig, PPOScriptArguments))\n"
        in out
    )
    assert "script_args, training_args, model_args, ppo_args = parser.parse()\n" in out
    assert "reward_model = load(ppo_args.reward_model_path)\n" in out
    assert (
        f"{TODO}`parser.parse()` reads a YAML file named first on the command line "
        "(alignment-handbook's parser does) into RLOOConfig and the class's own defaults, which "
        "`set_defaults` does not reach: where the file leaves them out, PPO v2 (TRL 0.12-0.28)'s "
        "values differ from TRL 1.13's: put max_grad_norm=0.0, learning_rate=5e-05, "
        "max_completion_length=53, temperature=0.7, num_iterations=4, beta=0.05, "
        "disable_dropout=True in the file"
    ) in out
    assert run(out, select=SELECT)[0] == out


def test_an_argparse_parse_call_is_no_parse_of_a_ppo_config():
    before = dedent(
        """
        import argparse
        from trl import PPOConfig

        parser = argparse.ArgumentParser()
        args = parser.parse()
        config = PPOConfig(batch_size=args.bs)
        """
    )
    out, _ = run(before, select=SELECT)
    assert (
        "args = parser.parse()\n" in out and "TODO(trl-migrate TRL103): `parser.parse()`" not in out
    )


def test_a_script_arguments_class_of_the_file_s_own_under_that_name_is_kept():
    """EMZEDI/olmo_continual defines its own `PPOScriptArguments` (wandb settings) and parses it
    beside PPOConfig: the written-in dataclass takes the next free name, and the reads move."""
    before = dedent(
        """
        import dataclasses
        from transformers import HfArgumentParser
        from trl import PPOConfig


        @dataclasses.dataclass
        class PPOScriptArguments:
            wandb_project: str = ""


        parser = HfArgumentParser((PPOScriptArguments, PPOConfig))
        script_args, training_args = parser.parse_args_into_dataclasses()
        policy = load(training_args.sft_model_path)
        """
    )
    out, findings = run(before, select=SELECT)
    assert "class PPOScriptArguments2:\n    sft_model_path: str = dataclasses.field(" in out
    assert (
        "parser = HfArgumentParser((PPOScriptArguments, RLOOConfig, PPOScriptArguments2))\n" in out
    )
    assert "script_args, training_args, ppo_args = parser.parse_args_into_dataclasses()" in out
    assert out.endswith("policy = load(ppo_args.sft_model_path)\n")
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


def test_defaults_go_to_the_ppo_parser_only():
    """muqeeth/Adversarial_goodhart_rlhf binds `parser` to a PPO parser in one branch and to an
    RLOO one in another: PPO's defaults are kept on the first only (the RLOO branch trains as it
    did); reads of the parsed config that RLOOConfig lacks get their TODO."""
    before = dedent(
        """
        from trl import PPOConfig, PPOTrainer, RLOOConfig, TrlParser

        if kind == "ppo":
            parser = TrlParser((ScriptArguments, PPOConfig))
        else:
            parser = TrlParser((ScriptArguments, RLOOConfig))
        args, config = parser.parse_args_and_config()
        policy = load(config.sft_model_path)
        """
    )
    after = dedent(
        f"""
        from trl import PPOTrainer, RLOOConfig, TrlParser

        if kind == "ppo":
            parser = TrlParser((ScriptArguments, RLOOConfig))
            parser.set_defaults(max_grad_norm=0.0, learning_rate=5e-05, max_completion_length=53, temperature=0.7, num_iterations=4, beta=0.05, disable_dropout=True)
        else:
            parser = TrlParser((ScriptArguments, RLOOConfig))
        args, config = parser.parse_args_and_config()
        {TODO}`config.sft_model_path`: RLOOConfig has no `sft_model_path`: add it to your own script-arguments dataclass (and to the command line you run)
        policy = load(config.sft_model_path)
        """
    )
    out, findings = run(before, select=SELECT)
    assert out == after
    assert run(out, select=SELECT)[0] == out
    started = [f for f in findings if "would start from TRL 1.13's defaults" in f.message]
    assert [f.line for f in started] == [4]


@pytest.mark.parametrize(
    ("before", "after", "target"),
    [
        pytest.param(
            """
            from transformers import HfArgumentParser
            from trl import ModelConfig, PPOConfig, PPOTrainer, ScriptArguments

            parser = HfArgumentParser((ScriptArguments, PPOConfig, ModelConfig))
            script_args, training_args, model_args = parser.parse_args_into_dataclasses()
            policy = load(training_args.sft_model_path)
            trainer = PPOTrainer(args=training_args, model=policy, reward_model=load(training_args.reward_model_path))
            """,
            """
            from transformers import HfArgumentParser
            from trl import ModelConfig, RLOOConfig, PPOTrainer, ScriptArguments
            """
            + PATHS_V2.format(cfg="RLOOConfig").replace("\n", "\n            ")
            + """parser = HfArgumentParser((ScriptArguments, RLOOConfig, ModelConfig, PPOScriptArguments))
            parser.set_defaults(max_grad_norm=0.0, learning_rate=5e-05, max_completion_length=53, temperature=0.7, num_iterations=4, beta=0.05, disable_dropout=True)
            script_args, training_args, model_args, ppo_args = parser.parse_args_into_dataclasses()
            policy = load(ppo_args.sft_model_path)
            trainer = PPOTrainer(args=training_args, model=policy, reward_model=load(ppo_args.reward_model_path))
            """,
            "rloo",
            id="v2-hf-argument-parser",
        ),
        pytest.param(
            """
            from transformers import HfArgumentParser
            from trl.experimental.ppo import PPOConfig

            parser = HfArgumentParser((PPOConfig,))
            (config,) = parser.parse_args_into_dataclasses()
            print(config.reward_model_path, config.sft_model_path)
            """,
            """
            from transformers import HfArgumentParser
            from trl import GRPOConfig
            """
            + PATHS_V2.format(cfg="GRPOConfig").replace("\n", "\n            ")
            + """parser = HfArgumentParser((GRPOConfig, PPOScriptArguments))
            parser.set_defaults(max_grad_norm=0.0, learning_rate=3e-06, max_completion_length=53, temperature=0.7, num_iterations=4, beta=0.05, disable_dropout=True)
            (config, ppo_args) = parser.parse_args_into_dataclasses()
            print(ppo_args.reward_model_path, ppo_args.sft_model_path)
            """,
            "grpo",
            id="experimental-one-element-tuple-grpo",
        ),
        pytest.param(
            '''
            """Legacy PPO with its config on the command line."""
            import dataclasses

            from transformers import HfArgumentParser
            from trl import PPOConfig, PPOTrainer

            parser = HfArgumentParser([ScriptArguments, PPOConfig])
            args, config = parser.parse_args_into_dataclasses()
            trainer = PPOTrainer(config, model, None, tokenizer)
            print(config.model_name, config.query_dataset)
            ''',
            '''
            """Legacy PPO with its config on the command line."""
            import dataclasses

            from transformers import HfArgumentParser
            from trl import RLOOConfig, PPOTrainer


            # Written by trl-migrate (TRL103): RLOOConfig has no `model_name`, `query_dataset`.
            # TRL's PPO trainer did not use them, this script does: they are its own arguments now (same flags).
            @dataclasses.dataclass
            class PPOScriptArguments:
                model_name: str = dataclasses.field(
                    default="gpt2",
                    metadata={"help": "Model name the script reads (legacy PPO only logged it)."},
                )
                query_dataset: str = dataclasses.field(
                    default="stanfordnlp/imdb",
                    metadata={"help": "Dataset name the script reads (legacy PPO only logged it)."},
                )


            parser = HfArgumentParser([ScriptArguments, RLOOConfig, PPOScriptArguments])
            parser.set_defaults(per_device_train_batch_size=128, seed=0, learning_rate=1.41e-05, beta=0.2, num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, disable_dropout=True)
            args, config, ppo_args = parser.parse_args_into_dataclasses()
            trainer = PPOTrainer(config, model, None, tokenizer)
            print(ppo_args.model_name, ppo_args.query_dataset)
            ''',
            "rloo",
            id="legacy-list-and-existing-import",
        ),
        pytest.param(
            """
            import trl

            ppo_args = None


            def main():
                parser = trl.TrlParser(
                    (
                        trl.ScriptArguments,
                        trl.PPOConfig,
                    )
                )
                (script_args, training_args) = parser.parse_args_and_config()
                trainer = trl.PPOTrainer(args=training_args, model=training_args.sft_model_path)
            """,
            """
            import trl
            import dataclasses


            # Written by trl-migrate (TRL103): RLOOConfig has no `sft_model_path`.
            # TRL's PPO trainer did not use it, this script does: it is one of its own arguments now (same flags).
            @dataclasses.dataclass
            class PPOScriptArguments:
                sft_model_path: str = dataclasses.field(
                    default="EleutherAI/pythia-160m",
                    metadata={"help": "Path or Hub id of the SFT model the policy starts from."},
                )


            ppo_args = None


            def main():
                parser = trl.TrlParser(
                    (
                        trl.ScriptArguments,
                        trl.RLOOConfig,
                        PPOScriptArguments,
                    )
                )
                parser.set_defaults(max_grad_norm=0.0, learning_rate=5e-05, max_completion_length=53, temperature=0.7, num_iterations=4, beta=0.05, disable_dropout=True)
                (script_args, training_args, ppo_args_2) = parser.parse_args_and_config()
                trainer = trl.PPOTrainer(args=training_args, model=ppo_args_2.sft_model_path)
            """,
            "rloo",
            id="trl-parser-module-attribute-multiline-name-taken",
        ),
        pytest.param(
            """
            from trl import ModelConfig, PPOConfig, PPOTrainer
            from src.utils import TRLParser

            parser = TRLParser((ScriptArguments, PPOConfig, ModelConfig))
            args, config, model_config = parser.parse_args_and_config()
            trainer = PPOTrainer(args=config, model=load(config.sft_model_path), reward_model=load(config.reward_model_path))
            """,
            """
            from trl import ModelConfig, RLOOConfig, PPOTrainer
            from src.utils import TRLParser
            """
            + PATHS_V2.format(cfg="RLOOConfig").replace("\n", "\n            ")
            + """parser = TRLParser((ScriptArguments, RLOOConfig, ModelConfig, PPOScriptArguments))
            parser.set_defaults(max_grad_norm=0.0, learning_rate=5e-05, max_completion_length=53, temperature=0.7, num_iterations=4, beta=0.05, disable_dropout=True)
            args, config, model_config, ppo_args = parser.parse_args_and_config()
            trainer = PPOTrainer(args=config, model=load(ppo_args.sft_model_path), reward_model=load(ppo_args.reward_model_path))
            """,
            "rloo",
            id="the-repo-s-own-parser-class",  # muqeeth/Adversarial_goodhart_rlhf's TRLParser
        ),
    ],
)
def test_parsed_path_fields_move_to_a_dataclass(before, after, target):
    findings = assert_fixes(dedent(before), dedent(after), select=SELECT, target=target)
    moved = [f for f in findings if " now: " in f.message and "the `--" in f.message]
    assert moved and all(
        f.severity is Severity.INFO and f.fix is Fix.APPLIED and "flag is unchanged" in f.message
        for f in moved
    )
    assert not [f for f in findings if f.fix is Fix.MANUAL and "has no `" in f.message]


PARSED_HEAD = "from transformers import HfArgumentParser\nfrom trl import PPOConfig, PPOTrainer\n"
PARSED_TAIL = "trainer = PPOTrainer(args=cfg, model=cfg.sft_model_path)\n"


@pytest.mark.parametrize(
    ("body", "todos"),
    [
        pytest.param(
            "parser = HfArgumentParser((Args, PPOConfig))\nparsed = parser.parse_args_into_dataclasses()\n"
            "cfg = parsed[1]\n",
            0,
            id="unpacked-into-one-name",
        ),
        pytest.param(
            "types = (Args, PPOConfig)\nparser = HfArgumentParser(types)\nargs, cfg = parser.parse_args_into_dataclasses()\n",
            0,
            id="parser-built-elsewhere",
        ),
        pytest.param(
            "parser = HfArgumentParser((Args, PPOConfig))\nargs, cfg = parser.parse_args_into_dataclasses()\n"
            "cfg.sft_model_path = 'x'\n",
            2,
            id="field-assigned",
        ),
        pytest.param(
            "parser = HfArgumentParser((PPOScriptArguments, PPOConfig))\npaths, cfg = parser.parse_args_into_dataclasses()\n",
            1,
            id="class-name-already-in-parser",
        ),
        pytest.param(
            "@dataclass\nclass Args:\n    sft_model_path: str = 'x'\n\nparser = HfArgumentParser((Args, PPOConfig))\n"
            "args, cfg = parser.parse_args_into_dataclasses()\n",
            1,
            id="field-in-another-dataclass-of-the-file",
        ),
        pytest.param(
            "parser = HfArgumentParser((Args, PPOConfig))\n"
            "args, cfg, rest = parser.parse_args_into_dataclasses(return_remaining_strings=True)\n",
            1,
            id="remaining-strings",
        ),
        pytest.param(
            "parser = HfArgumentParser((Args, PPOConfig))\nif yaml:\n    args, cfg = parser.parse_yaml_file(yaml)\n"
            "else:\n    args, cfg = parser.parse_args_into_dataclasses()\n",
            1,
            id="parser-used-otherwise",
        ),
        pytest.param(
            "parser = HfArgumentParser((Args, PPOConfig))\nargs, cfg = parser.parse_args_into_dataclasses()\n"
            "if other:\n    cfg = other\n",
            1,
            id="config-name-rebound",
        ),
        pytest.param(
            "parser = HfArgumentParser((Args, PPOConfig))\nparser = HfArgumentParser((Args, PPOConfig))\n"
            "args, cfg = parser.parse_args_into_dataclasses()\n",
            1,
            id="two-parsers-one-name",
        ),
        pytest.param(
            "parser = HfArgumentParser((Args, PPOConfig))\n*args, cfg = parser.parse_args_into_dataclasses()\n",
            1,
            id="starred-target",
        ),
    ],
)
def test_parsed_path_fields_outside_the_shape_keep_the_todo(body, todos):
    out, _ = run(PARSED_HEAD + body + PARSED_TAIL, select=SELECT)
    assert (
        "import dataclasses" not in out
        and "class PPOScriptArguments" not in out
        and "ppo_args" not in out
    )
    assert out.count(f"{TODO}`cfg.sft_model_path`: RLOOConfig has no `sft_model_path`") == todos
    assert run(out, select=SELECT)[0] == out


def test_parsed_path_fields_second_run_writes_no_second_dataclass():
    src = dedent(
        """
        from transformers import HfArgumentParser
        from trl import PPOConfig, PPOTrainer
        parser = HfArgumentParser((Args, PPOConfig))
        args, cfg = parser.parse_args_into_dataclasses()
        trainer = PPOTrainer(args=cfg, model=cfg.sft_model_path, reward_model=cfg.reward_model_path)
        """
    )
    out, _ = run(src)  # every rule
    assert out.count("class PPOScriptArguments") == 1 and out.count("import dataclasses") == 1
    assert "HfArgumentParser((Args, RLOOConfig, PPOScriptArguments))" in out
    assert "model=ppo_args.sft_model_path, reward_funcs=ppo_args.reward_model_path" in out
    again, findings = run(out)
    assert again == out and not [f for f in findings if f.code == "TRL103"]


# -- dataset_num_proc: legacy 0.10-0.11 PPOConfig and v2 OnPolicyConfig had it, RLOOConfig/GRPOConfig do not ---
NUM_PROC_FIELD = """\
    dataset_num_proc: int | None = dataclasses.field(
        default=None,
        metadata={"help": "Number of processes the script uses to prepare the dataset."},
    )
"""


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            from transformers import HfArgumentParser
            from trl import PPOConfig, PPOTrainer

            parser = HfArgumentParser((ScriptArguments, PPOConfig))
            args, ppo_config = parser.parse_args_into_dataclasses()
            dataset = build_dataset(ppo_config.query_dataset, ppo_config.dataset_num_proc)
            ppo_trainer = PPOTrainer(ppo_config, model, ref_model, tokenizer)
            """,
            """
            from transformers import HfArgumentParser
            from trl import RLOOConfig, PPOTrainer
            import dataclasses


            # Written by trl-migrate (TRL103): RLOOConfig has no `query_dataset`, `dataset_num_proc`.
            # TRL's PPO trainer did not use them, this script does: they are its own arguments now (same flags).
            @dataclasses.dataclass
            class PPOScriptArguments:
                query_dataset: str = dataclasses.field(
                    default="stanfordnlp/imdb",
                    metadata={"help": "Dataset name the script reads (legacy PPO only logged it)."},
                )
            """
            + NUM_PROC_FIELD.replace("\n", "\n            ")
            + """

            parser = HfArgumentParser((ScriptArguments, RLOOConfig, PPOScriptArguments))
            parser.set_defaults(per_device_train_batch_size=128, seed=0, learning_rate=1.41e-05, beta=0.2, num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, disable_dropout=True)
            args, ppo_config, ppo_args = parser.parse_args_into_dataclasses()
            dataset = build_dataset(ppo_args.query_dataset, ppo_args.dataset_num_proc)
            ppo_trainer = PPOTrainer(ppo_config, model, ref_model, tokenizer)
            """,
            id="legacy-0.11-example-script",
        ),
        pytest.param(
            """
            from trl import PPOConfig, PPOTrainer, TrlParser

            parser = TrlParser((ScriptArguments, PPOConfig, ModelConfig))
            script_args, training_args, model_args = parser.parse_args_and_config()
            dataset = dataset.map(tokenize, num_proc=training_args.dataset_num_proc)
            trainer = PPOTrainer(args=training_args, model=policy)
            """,
            """
            from trl import RLOOConfig, PPOTrainer, TrlParser
            import dataclasses


            # Written by trl-migrate (TRL103): RLOOConfig has no `dataset_num_proc`.
            # TRL's PPO trainer did not use it, this script does: it is one of its own arguments now (same flags).
            @dataclasses.dataclass
            class PPOScriptArguments:
            """
            + NUM_PROC_FIELD.replace("\n", "\n            ")
            + """

            parser = TrlParser((ScriptArguments, RLOOConfig, ModelConfig, PPOScriptArguments))
            parser.set_defaults(max_grad_norm=0.0, learning_rate=5e-05, max_completion_length=53, temperature=0.7, num_iterations=4, beta=0.05, disable_dropout=True)
            script_args, training_args, model_args, ppo_args = parser.parse_args_and_config()
            dataset = dataset.map(tokenize, num_proc=ppo_args.dataset_num_proc)
            trainer = PPOTrainer(args=training_args, model=policy)
            """,
            id="v2-example-script",
        ),
    ],
)
def test_parsed_dataset_num_proc_moves_with_type_and_default(before, after):
    findings = assert_fixes(dedent(before), dedent(after), select=SELECT)
    assert not [f for f in findings if f.fix is Fix.MANUAL]


def test_parsed_dataset_num_proc_field_parses_from_the_command_line(tmp_path):
    """`int | None` with default None: HfArgumentParser reads `--dataset_num_proc 4` and its absence."""
    from transformers import HfArgumentParser

    out, _ = run(
        dedent(
            """
        from transformers import HfArgumentParser
        from trl import PPOConfig, PPOTrainer
        parser = HfArgumentParser((PPOConfig,))
        (cfg,) = parser.parse_args_into_dataclasses()
        PPOTrainer(cfg, model, None, tokenizer, dataset=load(cfg.dataset_num_proc))
        """
        ),
        select=SELECT,
    )
    written = tmp_path / "written.py"
    written.write_text(
        "import dataclasses\n" + out.split("\n\n\n")[1], encoding="utf-8"
    )  # the class alone
    parser = HfArgumentParser((runpy.run_path(str(written))["PPOScriptArguments"],))
    assert parser.parse_args_into_dataclasses([])[0].dataset_num_proc is None
    assert parser.parse_args_into_dataclasses(["--dataset_num_proc", "4"])[0].dataset_num_proc == 4


def test_parsed_dataset_num_proc_outside_the_shape_keeps_a_todo_that_says_what_to_do():
    src = PARSED_HEAD + (
        "parser = HfArgumentParser((Args, PPOConfig))\n"
        "args, cfg, rest = parser.parse_args_into_dataclasses(return_remaining_strings=True)\n"
        "ds = ds.map(f, num_proc=cfg.dataset_num_proc)\n"
        "trainer = PPOTrainer(cfg, model, None, tokenizer)\n"
    )
    out = assert_fixes(
        src,
        src.replace("PPOConfig", "RLOOConfig")
        .replace("\nargs, cfg", "\n" + LEGACY_DEFAULTS + "\nargs, cfg")
        .replace(
            "ds = ds.map",
            f"{TODO}`cfg.dataset_num_proc`: RLOOConfig has no `dataset_num_proc`: add it to your own "
            "script-arguments dataclass (and to the command line you run)\nds = ds.map",
        ),
        select=SELECT,
    )
    assert [f.fix for f in out if "dataset_num_proc" in f.message] == [Fix.MANUAL]


# -- flags of the script's own dataclass that the new config also defines (codemods/rules/ppo_config/flags.py) ------
FLAGS_HEAD = """\
from dataclasses import dataclass, field
from transformers import HfArgumentParser
from trl import {cfg}


@dataclass
class ScriptArguments:
"""
FLAGS_TAIL = """

parser = HfArgumentParser((ScriptArguments, {cfg}))
args, ppo_config = parser.parse_args_into_dataclasses()
model = load(args.model, trust_remote_code=args.trust_remote_code)
"""
REMOTE = '    trust_remote_code: bool = field(default=False, metadata={"help": "Enable `trust_remote_code`"})\n'


LEGACY_DEFAULTS = (
    "parser.set_defaults(per_device_train_batch_size=128, seed=0, learning_rate=1.41e-05, beta=0.2, "
    'num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, lr_scheduler_type="constant", '
    "bf16=False, disable_dropout=True)"
)


def era_todo(var: str = "parser", cls: str = "RLOOConfig") -> str:
    """The TODO above a parser of a PPO config whose era nothing in the file tells."""
    return (
        f"# TODO(trl-migrate TRL103): the parsed {cls} starts from TRL 1.13's defaults, which differ from PPO's, "
        "and this file does not say which PPO era it was written for: set the defaults you trained with through "
        f"`{var}.set_defaults(...)`\n"
    )


def flags_after(cls: str) -> str:
    return FLAGS_TAIL.format(cfg=cls).replace(
        "\nparser = ", "\n" + era_todo(cls=cls) + "parser = ", 1
    )


@pytest.mark.parametrize("target", ["rloo", "grpo"])
@pytest.mark.parametrize(
    ("fields", "kept"),
    [
        pytest.param(
            '    model: str = "gpt2"\n' + REMOTE,
            '    model: str = "gpt2"\n',
            id="dropped-reads-follow",
        ),
        pytest.param(REMOTE, "    pass\n", id="last-field-leaves-pass"),
        pytest.param("    trust_remote_code: bool = False\n", "    pass\n", id="plain-default"),
    ],
)
def test_a_script_flag_the_new_config_also_has_moves_to_the_config(fields, kept, target):
    cls = "RLOOConfig" if target == "rloo" else "GRPOConfig"
    before = FLAGS_HEAD.format(cfg="PPOConfig") + fields + FLAGS_TAIL.format(cfg="PPOConfig")
    after = (FLAGS_HEAD.format(cfg=cls) + kept + flags_after(cls)).replace(
        "trust_remote_code=args.trust_remote_code", "trust_remote_code=ppo_config.trust_remote_code"
    )
    findings = assert_fixes(before, after, select=SELECT, target=target)
    removed = [
        f
        for f in findings
        if f.message.startswith("`ScriptArguments.trust_remote_code` was removed")
    ]
    assert (
        len(removed) == 1
        and removed[0].line == before.splitlines().index(fields.splitlines()[-1]) + 1
    )
    assert (
        f"{cls} has the same `--trust_remote_code` flag with the same default (False)"
        in removed[0].message
    )


@pytest.mark.parametrize(
    ("fields", "extra", "shown"),
    [
        pytest.param("    trust_remote_code: bool\n", "", "no literal default", id="required"),
        pytest.param(
            REMOTE, "defaults = ScriptArguments()\n", "default False", id="class-used-elsewhere"
        ),
    ],
)
def test_a_clashing_flag_that_cannot_move_keeps_a_todo(fields, extra, shown):
    before = (
        FLAGS_HEAD.format(cfg="PPOConfig") + fields + FLAGS_TAIL.format(cfg="PPOConfig") + extra
    )
    out, findings = run(before, select=SELECT)
    todo = (
        f"{TODO}RLOOConfig also has `--trust_remote_code` (default False) and HfArgumentParser rejects a flag "
        f"defined twice: delete this field ({shown}) and read `trust_remote_code` from the config object instead"
    )
    assert f"    {todo}\n{fields}" in out
    assert "trust_remote_code=args.trust_remote_code" in out
    assert run(out, select=SELECT)[0] == out


ALIAS = "args.trust_remote_code = ppo_config.trust_remote_code\n"


@pytest.mark.parametrize(
    ("fields", "extra", "defaults"),
    [
        pytest.param(
            "    trust_remote_code: bool = True\n",
            "",
            "parser.set_defaults(trust_remote_code=True)\n",
            id="other-default",
        ),
        pytest.param(REMOTE, "args.trust_remote_code = True\n", "", id="field-assigned"),
        pytest.param(REMOTE, "main(args)\n", "", id="object-handed-on"),
    ],
)
def test_a_clashing_flag_whose_reads_cannot_all_follow_is_aliased_after_the_parse(
    fields, extra, defaults
):
    before = (
        FLAGS_HEAD.format(cfg="PPOConfig") + fields + FLAGS_TAIL.format(cfg="PPOConfig") + extra
    )
    after = (
        FLAGS_HEAD.format(cfg="RLOOConfig")
        + "    pass\n"
        + flags_after("RLOOConfig").replace(
            "args, ppo_config = parser.parse_args_into_dataclasses()\n",
            defaults + "args, ppo_config = parser.parse_args_into_dataclasses()\n" + ALIAS,
        )
        + extra
    )
    if extra == "main(args)\n":  # handed on: the direct read follows the config as well
        after = after.replace(
            "trust_remote_code=args.trust_remote_code",
            "trust_remote_code=ppo_config.trust_remote_code",
        )
    findings = assert_fixes(before, after, select=SELECT)
    [removed] = [
        f for f in findings if "`ScriptArguments.trust_remote_code` was removed" in f.message
    ]
    assert (
        "`args.trust_remote_code = ppo_config.trust_remote_code` after the parse" in removed.message
    )
    if defaults:
        assert removed.severity is Severity.WARNING
        assert (
            "`parser.set_defaults(trust_remote_code=True)` keeps this script's default"
            in removed.message
        )
        assert "RLOOConfig's own default is False" in removed.message


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param('    model: str = "gpt2"\n', id="no-shared-flag"),
        pytest.param("    temperature_of_room: float = 20.0\n", id="similar-name"),
    ],
)
def test_script_flags_the_new_config_lacks_stay(fields):
    before = FLAGS_HEAD.format(cfg="PPOConfig") + fields + FLAGS_TAIL.format(cfg="PPOConfig")
    out, _ = run(before, select=SELECT)
    assert out == FLAGS_HEAD.format(cfg="RLOOConfig") + fields + flags_after("RLOOConfig")


# -- a parsed legacy config handed to a function of the file; its era told by the fields read ------------
THROUGH = """\
from transformers import HfArgumentParser
from trl import PPOConfig


def build_dataset(config, name):
    tok = load(config.model_name)
    return tok, config.seed


parser = HfArgumentParser((PPOConfig,))
(ppo_config,) = parser.parse_args_into_dataclasses()
ds = build_dataset(ppo_config, ppo_config.query_dataset)
"""


def test_reads_through_a_function_parameter_follow_the_move():
    out, findings = run(THROUGH, select=SELECT)
    assert "    tok = load(ppo_args.model_name)\n    return tok, config.seed\n" in out
    assert "(ppo_config, ppo_args) = parser.parse_args_into_dataclasses()\n" in out
    assert "ds = build_dataset(ppo_config, ppo_args.query_dataset)\n" in out
    assert (
        'class PPOScriptArguments:\n    model_name: str = dataclasses.field(\n        default="gpt2",'
        in out
    )
    moved = [
        f.message
        for f in findings
        if f.message.startswith("`config.model_name` is `ppo_args.model_name` now")
    ]
    assert len(moved) == 1 and not [f for f in findings if f.fix is Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        pytest.param(
            ("ds = build", "other = build_dataset(defaults, 'x')\nds = build"),
            "called-with-another-object",
        ),
        pytest.param(
            ("    tok = load", "    config.model_name = 'x'\n    tok = load"),
            "field-written-in-the-function",
        ),
        pytest.param(("ds = build", "f = build_dataset\nds = build"), "function-used-otherwise"),
    ],
)
def test_reads_through_a_function_that_is_not_only_handed_the_config_stay(edit, why):
    out, _ = run(THROUGH.replace(*edit), select=SELECT)
    assert "load(config.model_name)" in out, why


def test_a_config_inside_a_function_does_not_reach_other_functions_through_a_global():
    src = (
        THROUGH.replace("parser = Hf", "def main():\n    parser = Hf")
        .replace("(ppo_config,) =", "    (ppo_config,) =")
        .replace("ds = build", "    ds = build")
    )
    out, _ = run(src, select=SELECT)
    assert (
        f"    {TODO}`config.model_name`: `config` is handed the parsed PPO config, and RLOOConfig has no "
        "`model_name`: add it to your own script-arguments dataclass and read it from there\n"
        "    tok = load(config.model_name)\n" in out
    )
    assert (
        "PPOScriptArguments" not in out
        and f"{TODO}`ppo_config.query_dataset`: RLOOConfig has no" in out
    )
    assert run(out, select=SELECT)[0] == out


# -- ModelConfig fields TRL 1.13 renamed or moved, read from a ModelConfig parsed beside the PPO config ----
MODEL_ARGS = """\
import torch
from transformers import HfArgumentParser
from trl import ModelConfig, {cfg}

parser = HfArgumentParser(({cfg}, ModelConfig))
training_args, model_args = parser.parse_args_into_dataclasses()
dtype = getattr(torch, model_args.{dtype})
m = load(model_args.model_name_or_path, trust_remote_code={owner}.trust_remote_code)
"""


@pytest.mark.parametrize("target", ["rloo", "grpo"])
def test_model_config_torch_dtype_and_trust_remote_code_follow_1_13(target):
    cls = "RLOOConfig" if target == "rloo" else "GRPOConfig"
    before = MODEL_ARGS.format(cfg="PPOConfig", dtype="torch_dtype", owner="model_args")
    after = MODEL_ARGS.format(cfg=cls, dtype="dtype", owner="training_args").replace(
        "\nparser = ", "\n" + era_todo(cls=cls) + "parser = ", 1
    )
    findings = assert_fixes(before, after, select=SELECT, target=target)
    moved = sorted(f.message for f in findings if f.message.startswith("ModelConfig's"))
    assert moved == [
        "ModelConfig's `torch_dtype` is `model_args.dtype` in TRL 1.13 (the `--torch_dtype` flag is `--dtype` now)",
        f"ModelConfig's `trust_remote_code` is `training_args.trust_remote_code` in TRL 1.13 ({cls} took the "
        "`--trust_remote_code` flag)",
    ]


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "from trl import ModelConfig\nm = ModelConfig()\nx = m.torch_dtype\n",
            id="no-ppo-parser",
        ),
        pytest.param(
            MODEL_ARGS.format(cfg="PPOConfig", dtype="torch_dtype", owner="model_args").replace(
                "dtype = getattr", "model_args = other()\ndtype = getattr"
            ),
            id="name-rebound",
        ),
    ],
)
def test_model_config_reads_left_alone(src):
    out, findings = run(src, select=SELECT)
    assert "torch_dtype" in out and not [
        f for f in findings if f.message.startswith("ModelConfig's")
    ]


# -- reads of a dropped field the config was given as a variable: `model_name=script_args.model_name` ----
GIVEN = """\
from trl import PPOConfig

script_args = parse()
config = PPOConfig(model_name=script_args.model_name, batch_size=8, mini_batch_size=8)
tok = load(config.model_name)


def build(config):
    return load(config.model_name)
"""


def test_a_dropped_field_given_as_a_variable_is_read_from_that_variable():
    out, findings = run(GIVEN, select=SELECT)
    assert "tok = load(script_args.model_name)\n" in out
    assert (
        "    return load(script_args.model_name)\n" in out
    )  # the function sees the same module global
    used = [
        f
        for f in findings
        if "`script_args.model_name`, which the config was given, is read instead" in f.message
    ]
    assert len(used) == 2 and not [f for f in findings if f.fix is Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


def test_a_dropped_field_given_as_a_variable_the_reader_cannot_see_gets_a_todo():
    src = GIVEN.replace("def build(config):\n", "def build(config, script_args=None):\n")
    out, _ = run(src, select=SELECT)
    assert "tok = load(script_args.model_name)\n" in out
    assert (
        f"    {TODO}`config.model_name`: `model_name` is not a field of the new config; it was "
        "`script_args.model_name` where the config was built: read that, or keep the value in a variable of "
        "your own\n    return load(config.model_name)\n"
    ) in out
    assert run(out, select=SELECT)[0] == out


RETURNED = """\
from trl import PPOConfig


def get_config(model_name: str) -> PPOConfig:
    return PPOConfig(model_name=model_name, exp_name="run", batch_size=8, mini_batch_size=4)


config = get_config("gpt2")
print(config.model_name, config.exp_name, config.ppo_epochs)


def build():
    cfg = get_config("gpt2")
    return cfg.model_name
"""


def test_reads_of_a_config_a_function_returns_follow_its_call():
    """victor-iyi/rlhf-trl: `config = get_config(...)`; the dropped field was a parameter of
    the function, which the reader cannot see: a TODO, not an AttributeError on TRL 1.13."""
    out, findings = run(RETURNED, select=SELECT)
    assert (
        'config = get_config("gpt2")\n'
        f"{TODO}`config.model_name`: `model_name` is not a field of the new config; it was "
        "`model_name` where the config was built: read that, or keep the value in a variable of "
        "your own\n"
        "print(config.model_name, config.run_name, config.num_iterations)\n"
    ) in out
    assert f"    {TODO}`cfg.model_name`: `model_name` is not a field" in out
    assert len([f for f in findings if f.fix is Fix.MANUAL]) == 2
    assert run(out, select=SELECT)[0] == out


def test_a_function_that_returns_something_else_is_not_followed():
    src = RETURNED.replace(
        "    return PPOConfig(", "    if model_name:\n        return None\n    return PPOConfig("
    )
    out, findings = run(src, select=SELECT)
    assert "print(config.model_name, config.exp_name, config.ppo_epochs)\n" in out
    assert not [f for f in findings if f.fix is Fix.MANUAL]


# -- fields of a config call that the call did not set: reads follow a rename, others get a TODO -------
@pytest.mark.parametrize(
    ("use", "after"),
    [
        pytest.param(
            "print(config.ppo_epochs)\n", "print(config.num_iterations)\n", id="renamed-field-read"
        ),
        pytest.param(
            'config.accelerator_kwargs["mixed_precision"] = "bf16"\n',
            f"{TODO}`config.accelerator_kwargs`: RLOOConfig has no `accelerator_kwargs` (a legacy PPO (TRL <= 0.11) "
            "field): move Accelerator settings to an accelerate config file or the matching TrainingArguments fields\n"
            'config.accelerator_kwargs["mixed_precision"] = "bf16"\n',
            id="dropped-field-written",
        ),
        pytest.param(
            "print(config.output_dir)\n", "print(config.output_dir)\n", id="a-field-both-have"
        ),
    ],
)
def test_fields_the_call_did_not_set(use, after):
    head = "from trl import PPOConfig\nconfig = PPOConfig(batch_size=8, mini_batch_size=4)\n"
    out, _ = run(head + use, select=SELECT)
    assert out.endswith(after)
    assert run(out, select=SELECT)[0] == out


def test_an_unset_field_s_todo_names_its_default_not_a_placeholder():
    # sea-abc/LLM-from-trl-to-GRPO's my_ppo.py read `training_args.sft_model_path`, which its
    # experimental PPOConfig(...) never set: the TODO ended in a literal "({value})"
    src = (
        "from trl.experimental.ppo import PPOConfig\n"
        "training_args = PPOConfig(learning_rate=3e-6, output_dir='o', total_episodes=100)\n"
        "load(training_args.sft_model_path)\n"
    )
    out, _ = run(src, select=SELECT)
    assert (
        f"{TODO}`training_args.sft_model_path`: RLOOConfig has no `sft_model_path` (a "
        "trl.experimental.ppo (TRL 0.26-1.12) field): pass the policy path as the trainer's "
        "`model=` (its default was 'EleutherAI/pythia-160m'); RLOOConfig/GRPOConfig have no "
        "sft_model_path\n"
    ) in out
    assert "{value}" not in out


def test_legacy_runs_keep_fp32_and_no_gradient_clipping():
    out, findings = run(
        "from trl import PPOConfig\nc = PPOConfig(batch_size=8, mini_batch_size=8)\n", select=SELECT
    )
    assert (
        "max_grad_norm=0.0" in out and "bf16=False" in out and 'lr_scheduler_type="constant"' in out
    )
    clipped, _ = run(
        "from trl import PPOConfig\nc = PPOConfig(batch_size=8, mini_batch_size=8, max_grad_norm=0.5)\n",
        select=SELECT,
    )
    assert "max_grad_norm=0.5" in clipped and "max_grad_norm=0.0" not in clipped


@pytest.mark.parametrize("value", ["1.0", "0.3"])
def test_v2_max_grad_norm_had_no_effect_and_stays_off(value):
    src = f"from trl import PPOConfig\nc = PPOConfig(output_dir='o', num_ppo_epochs=1, max_grad_norm={value})\n"
    out, findings = run(src, select=SELECT)
    assert "max_grad_norm=0.0" in out and f"max_grad_norm={value}" not in out
    assert any(
        f.message.startswith(f"`max_grad_norm={value}` had no effect")
        and f.severity is Severity.WARNING
        for f in findings
    )
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "call",
    [
        "PPOConfig(batch_size=8, mini_batch_size=8)",  # legacy
        "PPOv2Config(output_dir='o', num_ppo_epochs=1)",  # PPOv2
        "PPOConfig(output_dir='o', num_ppo_epochs=1)",  # v2
    ],
)
def test_every_era_keeps_dropout_off(call):
    """Legacy PPO ran its forward passes in eval mode and the v2 trainers zeroed every dropout;
    RLOO/GRPO default to dropout on, so the rewrite turns it off."""
    name = call.split("(")[0]
    out, _ = run(f"from trl import {name}\nc = {call}\n", select=SELECT)
    assert out.rstrip().endswith("disable_dropout=True)") or ", disable_dropout=True, " in out
    assert run(out, select=SELECT)[0] == out


def test_an_unset_v2_stop_token_warns_that_completions_now_stop_at_eos():
    src = "from trl import PPOConfig\nc = PPOConfig(output_dir='o', num_ppo_epochs=1)\n"
    out, findings = run(src, select=SELECT)
    [said] = [f for f in findings if "stop_token" in f.message]
    assert said.severity is Severity.WARNING and said.fix is Fix.APPLIED
    assert said.message == (
        "`stop_token` is not set, so PPO ran with its default `stop_token=None`: PPO did not stop "
        'at EOS unless stop_token="eos"; RLOO/GRPO always stop at and mask after the tokenizer\'s '
        "EOS"
    )
    assert TODO not in out
    # told to stop at EOS: the same behaviour, only a note that the keyword went
    _, findings = run(
        src.replace("num_ppo_epochs=1", "num_ppo_epochs=1, stop_token='eos'"), select=SELECT
    )
    assert [f.severity for f in findings if "stop_token" in f.message] == [Severity.INFO]
    # written out as None: a TODO, as before
    out, _ = run(
        src.replace("num_ppo_epochs=1", "num_ppo_epochs=1, stop_token=None"), select=SELECT
    )
    assert f"{TODO}`stop_token=None` was dropped" in out
    # legacy PPO had no stop_token: its loop's generate decided
    _, findings = run(
        "from trl import PPOConfig\nc = PPOConfig(batch_size=8, mini_batch_size=8)\n", select=SELECT
    )
    assert not [f for f in findings if "stop_token" in f.message]


def test_a_parsed_v2_config_warns_about_stop_token_unless_the_command_line_sets_it():
    src = (
        "from transformers import HfArgumentParser\n"
        "from trl import PPOConfig\n"
        "parser = HfArgumentParser((PPOConfig,))\n"
        "(config,) = parser.parse_args_into_dataclasses()\n"
        "config.num_ppo_epochs\n"
    )
    _, findings = run(src, select=SELECT)
    [said] = [f for f in findings if "stop_token" in f.message]
    assert said.severity is Severity.WARNING
    assert said.message.startswith(
        "`stop_token` has no value here; unless the command line sets it, PPO ran with its default "
        "`stop_token=None`"
    )


def test_a_default_that_changed_within_the_era_is_named_with_its_releases():
    _, findings = run(
        "from trl import PPOConfig\nc = PPOConfig(batch_size=8, mini_batch_size=8)\n", select=SELECT
    )
    messages = [f.message for f in findings if "changed between releases" in f.message]
    assert messages == [
        "`learning_rate` is not set and its legacy PPO (TRL <= 0.11) default changed between releases: the rewrite "
        "keeps 1.41e-05 (TRL 0.7.11-0.11.4); if you ran another release (1e-05 in TRL 0.4.0-0.7.10), set "
        "`learning_rate` to that value",
    ]


def test_completions_per_prompt_are_always_reported():
    for target, n in (("rloo", 2), ("grpo", 8)):
        _, findings = run(
            "from trl import PPOConfig\nc = PPOConfig(output_dir='o', num_ppo_epochs=1)\n",
            select=SELECT,
            target=target,
        )
        assert any(f"num_generations={n} per prompt" in f.message for f in findings)


# -- the usage docstring of a script that parses its PPO config ------------------------------------------
USAGE = '''"""Usage:

python ppo.py --num_ppo_epochs 2 --response_length 53 --total_episodes 10000 --output_dir out
"""
from transformers import HfArgumentParser
from trl import PPOConfig

parser = HfArgumentParser((PPOConfig,))
(config,) = parser.parse_args_into_dataclasses()
'''


def test_usage_docstring_flags_that_changed_get_one_todo():
    out, findings = run(USAGE, select=SELECT)
    todo = (
        f"{TODO}the usage in this docstring passes PPO flags: `--num_ppo_epochs` is `--num_iterations`, "
        "`--response_length` is `--max_completion_length`; `--total_episodes` has no RLOOConfig flag (the "
        "config's findings say what replaces each)\n"
    )
    assert out.startswith(todo + '"""Usage:')
    assert [f.severity for f in findings if "docstring" in f.message] == [Severity.WARNING]
    assert run(out, select=SELECT)[0] == out


def test_usage_flags_the_script_keeps_are_not_listed_and_harmless_ones_can_go():
    """`--sft_model_path` stays a flag of the written-in PPOScriptArguments (the script reads
    it); `--stop_token eos` and `--local_rollout_forward_batch_size 8` change nothing in RLOO,
    as the launch-line rewrite (codemods/launch_flags.py) drops them."""
    src = (
        USAGE.replace(
            "--total_episodes 10000",
            "--total_episodes 10000 --sft_model_path m --stop_token eos "
            "--local_rollout_forward_batch_size 8 --whiten_rewards True",
        )
        + "policy = load(config.sft_model_path)\n"
    )
    out, _ = run(src, select=SELECT)
    todo = (
        f"{TODO}the usage in this docstring passes PPO flags: `--num_ppo_epochs` is "
        "`--num_iterations`, `--response_length` is `--max_completion_length`; "
        "`--stop_token eos`, `--local_rollout_forward_batch_size` can go (TRL 1.13 does not use "
        "them, or does the same); `--total_episodes`, `--whiten_rewards` have no RLOOConfig "
        "flag (the config's findings say what replaces each)\n"
    )
    assert out.startswith(todo + '"""Usage:')
    assert "ppo_args.sft_model_path" in out
    assert run(out, select=SELECT)[0] == out


def test_a_usage_string_after_the_imports_gets_the_todo_too():
    """TRL's example scripts keep their usage in a string statement after the imports."""
    doc, code = USAGE.split('"""\nfrom', 1)
    src = "from" + code.replace("\nparser =", "\n" + doc + '"""\n\nparser =', 1)
    out, _ = run(src, select=SELECT)
    assert f"{TODO}the usage in this docstring passes PPO flags: `--num_ppo_epochs` is " in out
    assert out.index("usage in this docstring") < out.index('"""Usage:') < out.index("parser =")
    assert run(out, select=SELECT)[0] == out
    # a string that does not run a script is prose, not usage
    prose, _ = run(src.replace("python ppo.py", "flags such as"), select=SELECT)
    assert "usage in this docstring" not in prose


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            USAGE.replace("--num_ppo_epochs 2 --response_length 53 --total_episodes 10000 ", ""),
            id="only-flags-both-have",
        ),
        pytest.param(
            USAGE.replace(
                "parser = HfArgumentParser((PPOConfig,))\n(config,) = parser.parse_args_into_dataclasses()\n",
                "config = PPOConfig(output_dir='o', num_ppo_epochs=2)\n",
            ),
            id="no-parser",
        ),
    ],
)
def test_usage_docstring_without_changed_flags_or_parser_is_left_alone(src):
    out, _ = run(src, select=SELECT)
    assert "usage in this docstring" not in out


def test_a_flag_field_of_a_parsed_v2_config_moves_with_its_type_and_default():
    """PPOv2's `sanity_check` (TRL 0.9-0.10, a bool only the TL;DR script read) moves to the
    written-in dataclass as a bool defaulting to False: `--sanity_check` still parses."""
    before = dedent(
        """
        from transformers import HfArgumentParser
        from trl import ModelConfig, PPOv2Config

        parser = HfArgumentParser((PPOv2Config, ModelConfig))
        config, model_config = parser.parse_args_into_dataclasses()
        if config.sanity_check:
            print("small")
        """
    )
    findings = assert_fixes(
        before,
        dedent(
            """
            from transformers import HfArgumentParser
            from trl import ModelConfig, RLOOConfig
            import dataclasses


            # Written by trl-migrate (TRL103): RLOOConfig has no `sanity_check`.
            # TRL's PPO trainer did not use it, this script does: it is one of its own arguments now (same flags).
            @dataclasses.dataclass
            class PPOScriptArguments:
                sanity_check: bool = dataclasses.field(
                    default=False,
                    metadata={"help": "Train on a small slice of the data only (the script reads it)."},
                )


            parser = HfArgumentParser((RLOOConfig, ModelConfig, PPOScriptArguments))
            parser.set_defaults(max_grad_norm=0.0, learning_rate=5e-05, max_completion_length=53, temperature=0.7, num_iterations=4, beta=0.05, disable_dropout=True, bf16=False, gradient_checkpointing=False)
            config, model_config, ppo_args = parser.parse_args_into_dataclasses()
            if ppo_args.sanity_check:
                print("small")
            """
        ),
        select=SELECT,
    )
    assert any("`--sanity_check` flag is unchanged" in f.message for f in findings)


# -- behaviour TRL 1.13 cannot express gets a finding, whatever else the call sets ----------------------
ADAPTIVE = (
    "legacy PPO adapted the KL coefficient (adap_kl_ctrl, on by default); TRL 1.13 keeps `beta` "
    "fixed at the initial value"
)
NEAREST = 'nearest: GRPO `scale_rewards="batch"`, RLOO `normalize_advantages=True`'


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        pytest.param("", [(Severity.WARNING, Fix.APPLIED, ADAPTIVE)], id="adaptive-kl-by-default"),
        pytest.param(
            "adap_kl_ctrl=True, target=6, horizon=10000",
            [
                (
                    Severity.INFO,
                    Fix.APPLIED,
                    "`horizon` is not used by TRL 1.13 (adaptive KL horizon, see adap_kl_ctrl); "
                    "dropped",
                ),
                (
                    Severity.INFO,
                    Fix.APPLIED,
                    "`target` is not used by TRL 1.13 (adaptive KL target, see adap_kl_ctrl); "
                    "dropped",
                ),
                (Severity.WARNING, Fix.APPLIED, ADAPTIVE),
            ],
            id="adaptive-kl-target-horizon",
        ),
        pytest.param(
            "whiten_rewards=True",
            [
                (
                    Severity.WARNING,
                    Fix.MANUAL,
                    "`whiten_rewards=True` was dropped: reward whitening is gone "
                    f"(`whiten_rewards=True`); {NEAREST}",
                ),
                (Severity.WARNING, Fix.APPLIED, ADAPTIVE),
            ],
            id="whitening",
        ),
        pytest.param(
            "use_score_scaling=True, use_score_norm=True, adap_kl_ctrl=False",
            [
                (
                    Severity.WARNING,
                    Fix.MANUAL,
                    "`use_score_norm=True` was dropped: running score normalisation is gone "
                    f"(`use_score_norm=True`); {NEAREST}",
                ),
                (
                    Severity.WARNING,
                    Fix.MANUAL,
                    "`use_score_scaling=True` was dropped: running score scaling is gone "
                    f"(`use_score_scaling=True`); {NEAREST}",
                ),
            ],
            id="score-scaling-and-norm",
        ),
    ],
)
def test_legacy_behaviour_1_13_cannot_express_gets_a_finding(kwargs, expected):
    src = f"from trl import PPOConfig\nc = PPOConfig(batch_size=8, mini_batch_size=4, {kwargs})\n"
    out, findings = run(src, select=SELECT)
    named = ("adap", "horizon", "target", "whiten", "score")
    got = sorted(
        (f.severity, f.fix, f.message)
        for f in findings
        if any(w in f.message.split(":")[0].split(";")[0] for w in named)
        and not f.message.startswith(ALGORITHM)  # said of every config: its own test
    )
    assert got == sorted(expected)
    for _, fix, message in expected:
        assert (f"{TODO}{message}\n" in out) is (fix is Fix.MANUAL)
    assert "target=" not in out and "horizon=" not in out and "whiten" not in out.split("\n")[-2]
    assert run(out, select=SELECT)[0] == out


def test_a_fixed_kl_coefficient_gets_no_adaptive_kl_warning():
    src = "from trl import PPOConfig\nc = PPOConfig(batch_size=8, mini_batch_size=4, adap_kl_ctrl=False, init_kl_coef=0.1)\n"
    out, findings = run(src, select=SELECT)
    assert "beta=0.1" in out and not [f for f in findings if "adap_kl_ctrl" in f.message]


def test_batch_sizes_beside_v2_keywords_are_v2_runtime_fields():
    """v2's config declared `batch_size` and `mini_batch_size` too (its trainer computed them),
    so beside v2-only keywords they do not make the call legacy: it is rewritten as v2 and the
    two are dropped as the run-time values they were."""
    out, findings = run(
        dedent(
            """
            from trl import PPOConfig

            c = PPOConfig(output_dir="out", per_device_train_batch_size=2, mini_batch_size=16, kl_coef=0.02)
            """
        ),
        select=SELECT,
    )
    assert "TODO" not in out and "mini_batch_size" not in out
    assert 'c = RLOOConfig(output_dir="out", per_device_train_batch_size=2, beta=0.02,' in out
    assert any("`mini_batch_size` is not used by TRL 1.13" in f.message for f in findings)
    legacy_only, _ = run(
        "from trl import PPOConfig\n\nc = PPOConfig(batch_size=8, mini_batch_size=2)\n",
        select=SELECT,
    )
    assert "steps_per_generation=4" in legacy_only  # alone, they are legacy's


def test_a_call_without_a_trailing_comma_keeps_its_closing_line():
    before = dedent(
        """
        from trl import PPOConfig

        c = PPOConfig(
            output_dir="out",
            kl_coef=0.02,
            report_to="none"  # no tracker
        )
        """
    )
    out, _ = run(before, select=SELECT)
    body = out.split("c = RLOOConfig(\n", 1)[1]
    lines = body.splitlines()
    assert lines[:3] == [
        '    output_dir="out",',
        "    beta=0.02,",
        '    report_to="none",  # no tracker',
    ]
    assert lines[-1] == ")" and all(ln.startswith("    ") and ln.strip() for ln in lines[:-1])
    assert not lines[-2].endswith(",")  # the call still ends without a trailing comma
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("run_name", "severity", "tail"),
    [
        pytest.param("name", Severity.INFO, "", id="same-value"),
        pytest.param('"other"', Severity.WARNING, " (to another value, kept)", id="other-value"),
    ],
)
def test_a_rename_onto_a_keyword_the_call_also_sets_is_dropped(run_name, severity, tail):
    """Lexsi-Labs/aligntune: `PPOConfig(exp_name=run_name, ..., run_name=run_name)` became
    `RLOOConfig(run_name=..., run_name=...)`, which does not compile."""
    src = (
        "from trl import PPOConfig\n"
        f"config = PPOConfig(output_dir='o', exp_name=name, num_ppo_epochs=2, run_name={run_name})\n"
        "print(config.exp_name)\n"
    )
    out, findings = run(src, select=SELECT)
    assert (
        f"config = RLOOConfig(output_dir='o', num_iterations=2, run_name={run_name}, "
        "max_grad_norm=0.0, learning_rate=5e-05, max_completion_length=53, temperature=0.7, beta=0.05, disable_dropout=True)\nprint(name)\n"
    ) in out
    notes = [f for f in findings if "exp_name=name" in f.message]
    assert [(f.severity, f.message) for f in notes] == [
        (
            severity,
            "`exp_name=name` dropped: it becomes `run_name`, which the call also sets" + tail,
        )
    ]
    assert run(out, select=SELECT)[0] == out


def test_step_intervals_change_unit_without_total_episodes_too():
    """PPO v2 counted a step per rollout batch whatever set the run's length; RLOO counts
    optimizer steps, num_ppo_epochs of them per batch."""
    src = "from trl import PPOConfig\nc = PPOConfig(output_dir='o', num_ppo_epochs=2, logging_steps=10, save_steps=x)\n"
    out, findings = run(src, select=SELECT)
    assert "logging_steps=20" in out and "num_iterations=2" in out
    assert f"{TODO}`save_steps=x` counted rollout batches in PPO v2" in out
    [left] = [f for f in findings if "left at their defaults" in f.message]
    assert left.message == (
        "`eval_steps` left at their defaults count optimizer steps in TRL 1.13, 2 per rollout "
        "batch here: PPO v2 never evaluated during training, TRL 1.13 runs evaluate() every "
        '`eval_steps` where `eval_strategy` is "steps" and the trainer has an `eval_dataset`'
    )
    [logging] = [f for f in findings if f.message.startswith("`logging_steps=10`")]
    assert logging.message == (
        "`logging_steps=10` did nothing in PPO v2, which logged every rollout batch; TRL 1.13 "
        "counts optimizer steps (2 per batch here), so logging_steps=20 logs every that many "
        "batches, as the value said"
    )
    assert run(out, select=SELECT)[0] == out
    # nothing given: each default is said for what it did in PPO v2 (the trainer logged every
    # batch and never evaluated; only saving counted batches: twice as often now)
    _, findings = run(
        "from trl import PPOConfig\nc = PPOConfig(output_dir='o', num_ppo_epochs=2)\n",
        select=SELECT,
    )
    assert [f.message for f in findings if "left at their defaults" in f.message] == [
        "`logging_steps`, `save_steps`, `eval_steps` left at their defaults count optimizer "
        "steps in TRL 1.13, 2 per rollout batch here: PPO v2 logged every rollout batch, TRL "
        "1.13 logs every `logging_steps`; saving runs 2x as often as in PPO v2; PPO v2 never "
        "evaluated during training, TRL 1.13 runs evaluate() every `eval_steps` where "
        '`eval_strategy` is "steps" and the trainer has an `eval_dataset`'
    ]


def test_intervals_scale_by_a_num_ppo_epochs_read_at_run_time():
    # McClain-Thiel/PlasmidLLM: `num_ppo_epochs=config.num_ppo_epochs`: the intervals it gave
    # were carried unscaled, and no schedule or defaults warning was said
    before = (
        "from trl.experimental.ppo import PPOConfig\n"
        "c = PPOConfig(output_dir='o', num_ppo_epochs=cfg.epochs, logging_steps=10, "
        "save_steps=cfg.save_steps)\n"
    )
    out, findings = run(before, select=SELECT)
    assert (
        "num_iterations=cfg.epochs, logging_steps=10 * cfg.epochs, save_steps=cfg.save_steps" in out
    )
    assert (
        "# TODO(trl-migrate TRL103): `save_steps=cfg.save_steps` counted rollout batches in PPO "
        "v2; TRL 1.13 counts optimizer steps (`cfg.epochs` per batch here): multiply it by "
        "`cfg.epochs` where it is a number of steps (a ratio below 1 stays as it is)\n"
    ) in out
    said = [f.message for f in findings]
    assert (
        "`logging_steps=10` did nothing in PPO v2, which logged every rollout batch; TRL 1.13 "
        "counts optimizer steps (`cfg.epochs` per batch here), so logging_steps=10 * cfg.epochs "
        "logs every that many batches, as the value said"
    ) in said
    assert any(
        m.startswith("PPO v2 stepped its `linear` learning-rate schedule")
        and "(`cfg.epochs` per batch here)" in m
        for m in said
    )
    assert any(
        m.startswith("`eval_steps` left at their defaults")
        and "`cfg.epochs` per rollout batch" in m
        for m in said
    )
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "era",
    [
        pytest.param("from trl.experimental.ppo import PPOConfig", id="experimental"),
        pytest.param("from trl import PPOConfig", id="v2"),
    ],
)
def test_max_steps_the_v2_trainers_ignored_is_dropped(era):
    before = f"{era}\nc = PPOConfig(output_dir='o', max_steps=5000, num_ppo_epochs=2)\n"
    out, findings = run(before, select=SELECT)
    assert "max_steps" not in out.split("\n", 1)[1]
    [f] = [f for f in findings if f.message.startswith("`max_steps=5000` dropped")]
    assert f.severity is Severity.INFO
    assert "never read it" in f.message and "the run keeps PPO's length" in f.message
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("schedule", "said"),
    [
        ("", "linear"),
        (", lr_scheduler_type='cosine'", "cosine"),
        (", lr_scheduler_type='constant'", ""),
    ],
)
def test_a_v2_schedule_stepped_per_batch_is_said_to_step_per_optimizer_step(schedule, said):
    # the eighth-round audit, sea-abc/LLM-from-trl-to-GRPO: PPO v2 built its schedule over the
    # rollout batches and stepped it once per batch; RLOO's Trainer steps it every optimizer
    # step (12 steps of 4 per batch: 19% less learning rate in all)
    src = f"from trl import PPOConfig\nc = PPOConfig(output_dir='o', num_ppo_epochs=4{schedule})\n"
    out, findings = run(src, select=SELECT)
    notes = [f.message for f in findings if "learning-rate schedule once per" in f.message]
    if not said:
        assert notes == []
        return
    assert notes == [
        f"PPO v2 stepped its `{said}` learning-rate schedule once per rollout batch, so every "
        "optimizer step of a batch ran at that batch's rate; TRL 1.13 steps it at every "
        "optimizer step (4 per batch here): the same curve in finer steps, each batch's updates "
        "a little further along it, which over a few rollout batches adds up to a smaller total "
        "learning rate (3 batches of 4 steps under a linear decay: 19% less)"
    ]
    # one optimizer step per batch: the same steps
    _, findings = run(src.replace("num_ppo_epochs=4", "num_ppo_epochs=1"), select=SELECT)
    assert not [f for f in findings if "learning-rate schedule once per" in f.message]


def test_a_v2_trainer_given_config_or_policy_ran_on_0_12_to_0_14_and_keeps_those_defaults():
    """`PPOTrainer(config=..., policy=...)` is the v2 API of TRL 0.12 (kept as deprecated aliases
    until 0.15): bf16 and gradient checkpointing defaulted to False there, not True as from 0.19
    and 0.22, so the rewrite keeps False and has no release to ask about."""
    src = (
        "from trl import PPOConfig, PPOTrainer\n"
        "c = PPOConfig(output_dir='o', num_ppo_epochs=1)\n"
        "t = PPOTrainer(config=c, processing_class=tok, policy=m, ref_policy=r, reward_model=rm, "
        "train_dataset=ds, value_model=vm)\n"
    )
    out, findings = run(src, select=SELECT)
    line = out.splitlines()[1]
    assert "bf16=False" in line and "gradient_checkpointing=False" in line
    assert not [f for f in findings if "changed between releases" in f.message]
    newer, findings = run(
        src.replace("config=c", "args=c").replace("policy=", "model="), select=SELECT
    )
    assert "bf16" not in newer.splitlines()[1]  # 0.19+'s True is TRL 1.13's default too
    assert [
        f.message.split(" is not set")[0]
        for f in findings
        if "changed between releases" in f.message
    ] == [
        "`bf16`",
        "`gradient_checkpointing`",
    ]


def test_a_batch_size_the_newer_mini_batch_default_rejects_ran_on_an_older_release():
    """PPOConfig(batch_size=32) fails from TRL 0.7.11 (32 is not a multiple of the default
    mini_batch_size 128), so the script ran on 0.4.0-0.7.10, whose mini_batch_size was 1."""
    out, findings = run("from trl import PPOConfig\nc = PPOConfig(batch_size=32)\n", select=SELECT)
    line = out.splitlines()[-1]
    assert "per_device_train_batch_size=1, steps_per_generation=32" in line
    assert TODO not in out
    assert not [f for f in findings if "`mini_batch_size` is not set" in f.message]
    assert any(
        f.message.startswith("`batch_size=32` is not a multiple of mini_batch_size 128")
        and "TRL 0.4.0-0.7.10" in f.message
        for f in findings
    )
    assert run(out, select=SELECT)[0] == out
    assert "learning_rate=1e-05" in line  # 0.4.0-0.7.10's default (1.41e-5 from 0.7.11)
    # batch_size=1 on those releases: one sample per generation, which no group can fill
    out, _ = run("from trl import PPOConfig\nc = PPOConfig(batch_size=1)\n", select=SELECT)
    assert f"{TODO}`num_generations` (>= 2) must divide the generation batch (1 samples)" in out
    # a batch_size the newer default divides keeps the newer default
    out, _ = run("from trl import PPOConfig\nc = PPOConfig(batch_size=256)\n", select=SELECT)
    assert "per_device_train_batch_size=128, steps_per_generation=2" in out


@pytest.mark.parametrize(
    ("src", "said"),
    [
        pytest.param("from trl import PPOConfig\nc = PPOConfig(output_dir='o')\n", True, id="v2"),
        pytest.param(
            "from trl.experimental.ppo import PPOConfig\nc = PPOConfig(output_dir='o')\n",
            True,
            id="experimental",
        ),
        pytest.param(
            "from trl import PPOConfig\nc = PPOConfig(output_dir='o', report_to='wandb')\n",
            False,
            id="given",
        ),
        pytest.param(
            "from trl import PPOConfig\nc = PPOConfig(batch_size=8, mini_batch_size=2)\n",
            False,
            id="legacy-log-with-none",
        ),
        pytest.param(
            "from transformers import HfArgumentParser\nfrom trl import PPOConfig\n"
            "(c,) = HfArgumentParser((PPOConfig,)).parse_args_into_dataclasses()\n",
            False,
            id="parsed-from-the-command-line",
        ),
    ],
)
def test_a_v2_config_without_report_to_is_told_the_default_changed(src, said):
    """transformers 4 reported to every installed integration when report_to was not set, and 5
    to none: a rewritten v2 config that logged to wandb by default logs nowhere now. Which
    transformers ran the file it does not say, so this is a warning, not a pin."""
    out, findings = run(src, select=SELECT)
    told = [f for f in findings if f.message.startswith("`report_to` is not set")]
    assert [(f.severity, f.message) for f in told] == (
        [
            (
                Severity.WARNING,
                "`report_to` is not set: on transformers 4 its default reported to every "
                "integration installed (wandb, tensorboard, ...); on transformers 5, which TRL "
                "1.13 installs in practice, it reports to none: if this ran on transformers 4 and "
                'logged that way, set `report_to="all"` (or name the tracker)',
            )
        ]
        if said
        else []
    )
    assert "report_to" not in out.replace("report_to='wandb'", "")
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("given", "read"),
    [
        pytest.param("1000", "1000", id="literal"),
        pytest.param("args.episodes", "args.episodes", id="attribute"),
    ],
)
def test_total_episodes_read_gets_what_the_call_gave(given, read):
    """`config.total_episodes` read after the call (a print, the script's own arithmetic) is
    the value the call gave it: RLOOConfig has no such field (an AttributeError on 1.13)."""
    before = dedent(
        f"""
        from trl import PPOConfig
        config = PPOConfig(output_dir="o", total_episodes={given}, num_ppo_epochs=1)
        print(config.total_episodes)
        """
    )
    out, findings = run(before, select=SELECT)
    assert out.splitlines()[-1] == f"print({read})"
    reads = [f for f in findings if f.line == 3]
    assert len(reads) == 1 and reads[0].fix is Fix.APPLIED
    assert run(out, select=SELECT)[0] == out


def test_total_episodes_read_of_an_expression_keeps_its_todo():
    before = dedent(
        """
        from trl import PPOConfig
        config = PPOConfig(output_dir="o", total_episodes=n * 2, num_ppo_epochs=1)
        print(config.total_episodes)
        """
    )
    out, _ = run(before, select=SELECT)
    assert (
        f"{TODO}`config.total_episodes`: `total_episodes` is gone: training length is "
        "`max_steps`\nprint(config.total_episodes)" in out
    )


@pytest.mark.parametrize(
    ("given", "report_to", "read"),
    [
        pytest.param(
            "script_args.log_with",
            'script_args.log_with or "none"',
            'if script_args.log_with == "wandb":',
            id="attribute",
        ),
        pytest.param("tracker", 'tracker or "none"', 'if tracker == "wandb":', id="name"),
        pytest.param(
            '"wandb" if use_wandb else None',
            '("wandb" if use_wandb else None) or "none"',
            f"{TODO}`config.log_with`: `log_with` is not a field of the new config; keep the "
            'value in a variable of your own\nif config.log_with == "wandb":',
            id="conditional-bracketed",
        ),
    ],
)
def test_log_with_variable_becomes_report_to_or_none(given, report_to, read):
    """A tracker given as a variable is `report_to`, with None (no tracker) as "none": on
    transformers 5, `report_to=None` would become `[None]` and fail. A read of the field gets
    what the call gave it."""
    before = dedent(
        f"""
        from trl import PPOConfig
        config = PPOConfig(batch_size=8, mini_batch_size=8, log_with={given})
        if config.log_with == "wandb":
            pass
        """
    )
    out, findings = run(before, select=SELECT)
    assert out == (
        "from trl import RLOOConfig\n"
        f"config = RLOOConfig(per_device_train_batch_size=8, report_to={report_to}{LEGACY_TAIL}\n"
        f"{read}\n"
        "    pass\n"
    )
    note = [f for f in findings if "is `report_to` now" in f.message]
    assert len(note) == 1 and note[0].severity is Severity.INFO
    assert run(out, select=SELECT)[0] == out


def test_log_with_variable_runs_with_and_without_a_tracker():
    """What the rewritten keyword gives a real TRL 1.13 config: a tracker name reports there,
    None reports nowhere."""
    from trl import RLOOConfig

    for value, expected in (("tensorboard", ["tensorboard"]), (None, [])):
        config = RLOOConfig(output_dir="/tmp/o", report_to=value or "none", use_cpu=True)
        assert config.report_to == expected


@pytest.mark.parametrize(
    ("given", "written"),
    [
        pytest.param("warmup_ratio=0.1", "warmup_steps=0.1", id="warmup-ratio"),
        pytest.param('evaluation_strategy="no"', 'eval_strategy="no"', id="evaluation-strategy"),
        pytest.param("report_to=None", 'report_to="all"', id="report-to-none"),
    ],
)
def test_a_v2_config_keeps_the_training_arguments_that_trl108_moves(given, written):
    """A v2 PPOConfig took every TrainingArguments field of its day; one that transformers 5
    renamed is not unknown to TRL103, which rewrites the call and leaves the keyword to TRL108.
    Before, TRL103 left the call under a TODO and TRL108 renamed the keyword, so a second run
    rewrote the call: `fix` refused the file (tyronen/bb-finetune's ppo.py)."""
    before = f'from trl import PPOConfig\nconfig = PPOConfig(output_dir="o", num_ppo_epochs=1, {given})\n'
    out, findings = run(before, select=("TRL103", "TRL108"))
    assert out.startswith(
        f'from trl import RLOOConfig\nconfig = RLOOConfig(output_dir="o", num_iterations=1, {written},'
    )
    assert "TODO" not in out
    assert run(out, select=("TRL103", "TRL108"))[0] == out


@pytest.mark.parametrize(
    ("episodes", "batch", "accumulation", "epochs"),
    [(1000, 4, 2, 1), (1500, 8, 1, 4), (7, 3, 2, 2), (64, 64, 1, 4)],
)
def test_total_episodes_read_at_run_time_gives_the_max_steps_a_literal_would(
    episodes, batch, accumulation, epochs
):
    """`total_episodes=args.total_episodes` (and the batch settings as names) becomes the same
    formula as code, which gives the number the literal call is rewritten to."""
    literal, _ = run(
        "from trl import PPOConfig\n"
        f"c = PPOConfig(output_dir='o', total_episodes={episodes}, per_device_train_batch_size={batch}, "
        f"gradient_accumulation_steps={accumulation}, num_ppo_epochs={epochs})\n",
        select=SELECT,
    )
    expected = int(literal.split("max_steps=")[1].split(",")[0])
    out, findings = run(
        "from trl import PPOConfig\n"
        "c = PPOConfig(output_dir='o', total_episodes=args.total_episodes, "
        "per_device_train_batch_size=args.batch, gradient_accumulation_steps=args.accumulation, "
        "num_ppo_epochs=args.epochs)\n",
        select=SELECT,
    )
    assert out.startswith("from trl import RLOOConfig\nimport math\n")
    code = out.split("max_steps=")[1].split(", per_device_train_batch_size=")[0]
    assert code == (
        "-1 if args.total_episodes is None else math.ceil(args.total_episodes / "
        "(args.batch * args.accumulation)) * args.epochs"
    )
    import math
    import types

    args = types.SimpleNamespace(
        total_episodes=episodes, batch=batch, accumulation=accumulation, epochs=epochs
    )
    assert eval(code, {"math": math, "args": args}) == expected  # noqa: S307
    args.total_episodes = None  # PPO then trained num_train_epochs epochs: so does max_steps=-1
    assert eval(code, {"math": math, "args": args}) == -1  # noqa: S307
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


def test_total_episodes_beside_a_batch_size_computed_in_the_call_keeps_its_todo():
    """An operand evaluated twice (its keyword and the formula) must be a name or attribute."""
    out, _ = run(
        "from trl import PPOConfig\n"
        "c = PPOConfig(output_dir='o', total_episodes=n, per_device_train_batch_size=next(sizes))\n",
        select=SELECT,
    )
    assert f"{TODO}`total_episodes=n` was dropped: set `max_steps = ceil(" in out


def test_batch_sizes_alone_beside_a_v2_trainer_leave_the_era_unknown():
    """`batch_size` and `mini_batch_size` were legacy fields that the v2 config declared too (its
    trainer overwrote them): handed to a v2 trainer (`args=config`), such a call may be either
    era's, so it stays under a TODO rather than get the legacy defaults pinned (bf16=False,
    constant LR), which a v2 run did not have (Vedang1308/RLAIF). It stays so on a second run,
    after TRL104 made the trainer an RLOOTrainer, and the new class is not imported for it."""
    src = dedent(
        """
        from trl import PPOConfig, PPOTrainer
        config = PPOConfig(mini_batch_size=4, batch_size=16, learning_rate=5e-6)
        trainer = PPOTrainer(args=config, model=model, processing_class=tok, train_dataset=ds, reward_model=rm)
        """
    )
    out, findings = run(src, select=("TRL103", "TRL104"))
    assert (
        f"{TODO}`PPOConfig` is gone in TRL 1.13 and this call was left as it is: cannot tell "
        "whether it is legacy (<= 0.11) or v2 PPOConfig" in out
    )
    assert "config = PPOConfig(mini_batch_size=4, batch_size=16, learning_rate=5e-6)" in out
    assert "\nfrom trl import PPOConfig, RLOOTrainer\n" in out  # RLOOConfig is not imported
    assert run(out, select=("TRL103", "TRL104"))[0] == out


def test_batch_sizes_alone_in_a_legacy_file_are_still_legacy():
    src = dedent(
        """
        from trl import PPOConfig, PPOTrainer
        config = PPOConfig(mini_batch_size=4, batch_size=16)
        trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=ds)
        """
    )
    out, _ = run(src, select=("TRL103", "TRL104"))
    assert "config = RLOOConfig(per_device_train_batch_size=4, steps_per_generation=4," in out


def test_a_config_of_no_era_stays_a_todo_on_the_second_run_after_its_trainer_is_rewritten():
    """HanishDhanwalkar/ReinforceBot: `PPOConfig(learning_rate=...)` tells no era, its trainer is
    a v2 call and a legacy `.step()` follows. The first run leaves the config under a TODO and
    makes the trainer an RLOOTrainer; the second must read the same mixed signs (the `.step()` on
    that RLOOTrainer still counts), not rewrite the config as v2."""
    src = dedent(
        """
        from trl import PPOConfig, PPOTrainer
        ppo_config = PPOConfig(learning_rate=1e-5)
        ppo_trainer = PPOTrainer(model=model, args=ppo_config)
        while True:
            ppo_trainer.step([q], [r], [reward])
        """
    )
    out, _ = run(src)
    assert "ppo_config = PPOConfig(learning_rate=1e-5)" in out
    assert run(out)[0] == out


def test_a_v2_config_s_per_gpu_batch_sizes_are_dropped_as_the_trainer_never_read_them():
    # aayushjoshi-12/train-test-regime: `PPOConfig(..., per_gpu_train_batch_size=1)`, a field
    # transformers 5 removed, left the whole call as a TODO (an unknown field)
    src = (
        "from trl import PPOConfig\n"
        "c = PPOConfig(output_dir='o', num_ppo_epochs=2, per_gpu_train_batch_size=1, "
        "per_gpu_eval_batch_size=4)\n"
    )
    out, findings = run(src, select=SELECT)
    assert out.splitlines()[1] == (
        "c = RLOOConfig(output_dir='o', num_iterations=2, max_grad_norm=0.0, learning_rate=5e-05, "
        "max_completion_length=53, temperature=0.7, beta=0.05, disable_dropout=True)"
    )
    dropped = [f for f in findings if "deprecated alias" in f.message]
    assert [(f.severity, f.message.split(" is not")[0]) for f in dropped] == [
        (Severity.INFO, "`per_gpu_train_batch_size`"),
        (Severity.INFO, "`per_gpu_eval_batch_size`"),
    ]
    assert run(out, select=SELECT)[0] == out


def test_legacy_dropout_in_sampling_is_said_where_disable_dropout_is_written():
    """Legacy PPOTrainer (0.7.2-0.11.4) left the policy in train mode after each `step()`, so
    its later generations sampled with dropout on; `disable_dropout=True` (written: the update
    ran in eval mode) samples without it: a warning says so (seen auditing Yancy456/TRL)."""
    src = "from trl import PPOConfig\nconfig = PPOConfig(batch_size=4, mini_batch_size=2)\n"
    out, findings = run(src, select=SELECT)
    assert "disable_dropout=True" in out
    said = [f for f in findings if "sampled with dropout on" in f.message]
    assert [(f.severity, f.message) for f in said] == [
        (
            Severity.WARNING,
            "legacy PPOTrainer (TRL 0.7.2-0.11.4) switched the policy to train mode for each "
            "update in `step()` and left it there, so from the second batch on its `generate` "
            "sampled with dropout on (the log-probs and the update itself ran in eval mode, "
            "without it; 0.4.0-0.7.1 never left eval mode); `disable_dropout=True`, written, "
            "keeps dropout out of the update as legacy did, and out of sampling too",
        )
    ]
    # set by the script: its own choice, nothing to say
    _, findings = run(src.replace("=2)", "=2, disable_dropout=False)"), select=SELECT)
    assert not [f for f in findings if "sampled with dropout on" in f.message]


ALGORITHM = "PPO trained a value head and took GAE advantages from it"


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "c = PPOConfig(batch_size=8, mini_batch_size=4, cliprange=0.02)\n", id="legacy"
        ),
        pytest.param("c = PPOConfig(output_dir='o', num_ppo_epochs=4)\n", id="v2"),
    ],
)
@pytest.mark.parametrize("target", ["rloo", "grpo"])
def test_every_rewritten_config_says_how_the_update_itself_differs_from_ppo(src, target):
    # seen in the eighth-round audit (karthik-sundaram's cliprange=0.02): PPO clipped each
    # token's ratio and whitened GAE advantages of a value head; RLOO clips one ratio per
    # completion and leaves its leave-one-out advantages unwhitened, GRPO scales them by group
    out, findings = run("from trl import PPOConfig\n" + src, select=SELECT, target=target)
    [said] = [f for f in findings if f.message.startswith(ALGORITHM)]
    assert said.severity is Severity.WARNING and said.fix is Fix.APPLIED
    if target == "rloo":
        assert said.message.endswith(
            "RLOO has no critic: a completion's advantage is its reward (KL penalty included) "
            "minus the mean reward of its prompt's other completions, not whitened "
            "(`normalize_advantages=True` whitens it over the batch), and `epsilon` clips one "
            "ratio per completion, its tokens' log-probabilities summed, so on long completions "
            "the same value clips far more often"
        )
    else:
        assert "GRPO has no critic" in said.message and "each token's ratio" in said.message
    assert "normalize_advantages" not in out and "scale_rewards" not in out  # said, not set


NMB_TODO = (
    "# TODO(trl-migrate TRL103): `num_mini_batches={given}` was dropped: since TRL 0.17 PPO split "
    "each rollout into that many minibatches, and where it exceeded gradient_accumulation_steps "
    "(GA) it took num_mini_batches / GA optimizer steps per rollout, over micro-batches of "
    "per_device_train_batch_size * GA / num_mini_batches samples: {to}\n"
)


@pytest.mark.parametrize(
    ("extra", "given", "to"),
    [
        # fsmiu/Anchor-guided-Variance-aware-Reward-Modeling's configs/ppo.yaml: 2 minibatches,
        # no accumulation: PPO took 2 optimizer steps of 4 samples per rollout
        pytest.param(
            ", num_mini_batches=2",
            "2",
            "set per_device_train_batch_size=4 and steps_per_generation=2 to keep that",
            id="more-than-ga",
        ),
        pytest.param(
            ", num_mini_batches=cfg.nmb",
            "cfg.nmb",
            "to keep that, set per_device_train_batch_size to that size and "
            "steps_per_generation=num_mini_batches (where it did not exceed GA, nothing to do)",
            id="read-at-run-time",
        ),
    ],
)
def test_minibatches_beyond_the_accumulation_steps_get_a_todo(extra, given, to):
    before = (
        "from trl.experimental.ppo import PPOConfig\n"
        f"c = PPOConfig(output_dir='o', per_device_train_batch_size=8{extra})\n"
    )
    out, _ = run(before, select=SELECT)
    assert NMB_TODO.format(given=given, to=to) in out
    assert "num_mini_batches" not in out.splitlines()[-1]
    assert run(out, select=SELECT)[0] == out


def test_minibatches_within_the_accumulation_steps_are_dropped():
    before = (
        "from trl.experimental.ppo import PPOConfig\n"
        "c = PPOConfig(output_dir='o', num_mini_batches=2, gradient_accumulation_steps=4)\n"
    )
    out, findings = run(before, select=SELECT)
    assert "TODO" not in out and "num_mini_batches" not in out
    assert any(
        f.message.startswith("`num_mini_batches` dropped: since TRL 0.17 it only split the rollout")
        for f in findings
    )


def test_an_except_import_error_branch_imports_the_new_names_again():
    """SarbasishChowdhury2002/MedLLM installs its dependencies in `except ImportError:` and
    imports them again there: that branch runs instead of the `try:` body's imports, so it needs
    the new names too (it lost them, a NameError on the fallback path)."""
    before = dedent(
        """
        try:
            from trl import PPOConfig
        except ImportError:
            os.system("pip install trl")
            from trl import PPOConfig
        config = PPOConfig(output_dir="o", num_ppo_epochs=2, total_episodes=None)
        """
    )
    out, _ = run(before, select=SELECT)
    assert out.count("from trl import RLOOConfig\n") == 2
    assert run(out, select=SELECT)[0] == out

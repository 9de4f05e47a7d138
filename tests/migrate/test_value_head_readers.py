"""A value-head model handed to the repo's own code that reads the value head (entfane/RLHF's
`src/main.py` hands it to its own `PPOTrainer` in `src/ppo_trainer.py`, which reads
`.pretrained_model` and `.v_head`) is left with a TODO: replaced by a plain model, it would
break that code on TRL 1.13 with no finding."""

from __future__ import annotations

from migrate import api
from migrate.kernel.findings import Fix
from tests.codemods.helpers import dedent

MAIN = dedent(
    """
    from ppo_trainer import PPOTrainer
    from trl import AutoModelForCausalLMWithValueHead

    policy = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
    print(policy.pretrained_model.device)
    trainer = PPOTrainer(policy)
    """
)
TRAINER = dedent(
    """
    class PPOTrainer:
        def __init__(self, policy):
            self.policy = policy
            self.critic = policy.v_head
    """
)


def write(tmp_path, trainer: str):
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "ppo_trainer.py").write_text(trainer)
    return api.fix_paths([str(tmp_path)])


def test_a_model_handed_to_own_code_that_reads_the_value_head_is_left_with_a_todo(tmp_path):
    report = write(tmp_path, TRAINER)
    out = (tmp_path / "main.py").read_text()
    todo = (
        "# TODO(trl-migrate TRL102): `policy` is handed to `PPOTrainer`, code of this repo that "
        "reads the value head (`v_head` or `pretrained_model`): TRL 1.13 has no "
        "`AutoModelForCausalLMWithValueHead`, and a plain model would break that code, so this is "
        "left for you: port that code to TRL 1.13's RLOOTrainer or GRPOTrainer (no critic), or "
        "keep a value head of your own\n"
    )
    assert todo + 'policy = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")\n' in out
    assert "print(policy.pretrained_model.device)\n" in out  # its attributes stay too
    main = next(r for r in report.results if r.path.endswith("main.py"))
    assert all(f.fix is Fix.MANUAL for f in main.findings if f.code == "TRL102")
    again = api.fix_paths([str(tmp_path)])
    assert (tmp_path / "main.py").read_text() == out
    assert all(r.status.value != "changed" for r in again.results)


def test_own_code_that_reads_no_value_head_gets_the_plain_model(tmp_path):
    write(tmp_path, TRAINER.replace("policy.v_head", "policy.config"))
    assert (tmp_path / "main.py").read_text() == (
        "from ppo_trainer import PPOTrainer\n"
        "from transformers import AutoModelForCausalLM\n\n"
        'policy = AutoModelForCausalLM.from_pretrained("gpt2")\n'
        "print(policy.device)\n"
        "trainer = PPOTrainer(policy)\n"
    )


def test_the_same_file_alone_is_rewritten_as_before(tmp_path):
    (tmp_path / "main.py").write_text(MAIN)
    api.fix_paths([str(tmp_path / "main.py")])
    assert (
        "AutoModelForCausalLMWithValueHead.from_pretrained"
        not in (tmp_path / "main.py").read_text()
    )


def test_a_reader_reached_through_a_package_init_and_a_trl_subpackage(tmp_path):
    # huggingface/optimum-habana: examples/trl/ppo.py imports `GaudiPPOTrainer` from the package
    # `optimum.habana.trl`, whose __init__.py passes it on from trainer/ppo_trainer.py (a copy of
    # legacy PPO that reads `.pretrained_model`); the folder named `trl` was taken for a vendored
    # copy of TRL and left out of the run, so the model handed to it was quietly replaced
    pkg = tmp_path / "optimum" / "habana" / "trl"
    (pkg / "trainer").mkdir(parents=True)
    for init in (tmp_path / "optimum", tmp_path / "optimum" / "habana", pkg / "trainer"):
        (init / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .trainer.ppo_trainer import GaudiPPOTrainer\n")
    (pkg / "models").mkdir()
    (pkg / "models" / "__init__.py").write_text("")
    (pkg / "trainer" / "ppo_trainer.py").write_text(
        TRAINER.replace("class PPOTrainer", "class GaudiPPOTrainer")
    )
    (tmp_path / "examples").mkdir()
    script = tmp_path / "examples" / "ppo.py"
    script.write_text(
        MAIN.replace(
            "from ppo_trainer import PPOTrainer", "from optimum.habana.trl import GaudiPPOTrainer"
        ).replace("PPOTrainer(policy)", "GaudiPPOTrainer(policy)")
    )
    report = api.fix_paths([str(tmp_path)])
    out = script.read_text()
    assert "`policy` is handed to `GaudiPPOTrainer`, code of this repo that reads" in out
    assert 'policy = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")\n' in out
    inside = [r for r in report.results if "/optimum/" in r.path]
    assert inside and not [r for r in inside if r.message.startswith("vendored copy of TRL")]

"""TRL103 and a repo's own PPO trainer (0422gky/2025PRML_RL's shaped-rewards trainer, Avalon-LLM's
legacy copy): the config that feeds it stays PPO's, with a TODO, instead of becoming an
RLOOConfig the trainer would fail on at its first step."""

from __future__ import annotations

from migrate.kernel.findings import Fix
from tests.codemods.helpers import assert_fixes, dedent, run

SELECT = ("TRL103", "TRL104")

TODO = (
    "# TODO(trl-migrate TRL103): `PPOConfig` configures a PPO trainer of this repo, not TRL's "
    "({why}). A trainer written for PPO reads PPO's settings, the value-function ones among "
    "them, which `RLOOConfig` lacks, and TRL 1.13 has no `PPOConfig`: copy `PPOConfig` from the "
    "TRL release the trainer was written for into the repo and import it from there, or port "
    "the trainer to `RLOOTrainer`"
)
IMPORT_TODO = (
    "# TODO(trl-migrate TRL103): `trl.PPOConfig` does not exist in TRL 1.13; finish the TODOs on "
    "its remaining uses, then import RLOOConfig (or GRPOConfig) from trl instead"
)

VENDORED = dedent(
    """
    from trl import PPOConfig
    class PPOTrainer:
        def __init__(self, args: PPOConfig, model):
            self.args = args
        def advantages(self, rewards, values, nextvalues):
            args = self.args
            delta = rewards + args.gamma * nextvalues - values
            return delta * args.gamma * args.lam
        def loss(self, pg_loss, vf_loss):
            return pg_loss + self.args.vf_coef * vf_loss
    """
)


def test_a_file_that_defines_its_own_ppo_trainer_keeps_the_config_with_a_todo():
    why = "`PPOTrainer`, defined in this file, reads `gamma`, `lam`, `vf_coef`"
    after = VENDORED.replace("from trl import", IMPORT_TODO + "\nfrom trl import").replace(
        "    def __init__", "    " + TODO.format(why=why) + "\n    def __init__"
    )
    findings = assert_fixes(VENDORED, after, select=SELECT)
    assert sorted((f.line, f.fix) for f in findings) == [(1, Fix.MANUAL), (3, Fix.MANUAL)]


CALLER = dedent(
    """
    from trl import PPOConfig
    from shaped import PPOTrainer
    config = PPOConfig(vf_coef=0.2, learning_rate=1e-5)
    trainer = PPOTrainer(args=config, model=m)
    """
)


def test_a_config_handed_to_a_ppo_trainer_of_another_module_stays_with_a_todo():
    why = "`PPOTrainer` of `shaped` is built here"
    after = CALLER.replace("from trl import", IMPORT_TODO + "\nfrom trl import").replace(
        "config = ", TODO.format(why=why) + "\nconfig = "
    )
    assert_fixes(CALLER, after, select=SELECT)


def test_a_wrapper_that_hands_its_settings_to_trls_config_is_rewritten():
    # epaunova/CONSTRAINT-DECOMPOSITION's shape: its own settings go into TRL's PPOConfig and
    # TRL's PPOTrainer; nothing here computes with them.
    src = dedent(
        """
        from trl import PPOConfig, PPOTrainer
        class Wrapper:
            def build(self):
                cfg = PPOConfig(gamma=self.config.gamma, lam=self.config.lam)
                return PPOTrainer(cfg, self.model, None, self.tokenizer)
        """
    )
    out, findings = run(src, select=SELECT)
    assert "RLOOConfig(" in out and "configures a PPO trainer of this repo" not in out
    assert not any("configures a PPO trainer" in f.message for f in findings)


def test_a_trainer_of_trl_called_beside_it_does_not_count():
    src = CALLER.replace("from shaped import PPOTrainer", "from trl import PPOTrainer")
    out, _ = run(src, select=SELECT)
    assert "configures a PPO trainer of this repo" not in out


def test_a_subclass_of_trl_s_trainer_built_here_reads_alike_with_the_binding_check(tmp_path):
    """EMZEDI/olmo_continual builds its own subclass of TRL's PPOTrainer: the config is TRL's
    (TRL107 marks the subclass), in a plain run and under TRL_MIGRATE_CHECK_BINDINGS=1 alike
    (the check mode read the local class as a trainer of the repo's own)."""
    import os
    import subprocess
    import sys

    src = (
        "from trl import PPOConfig, PPOTrainer\n"
        "class MyPPOTrainer(PPOTrainer):\n"
        "    pass\n"
        "config = PPOConfig(output_dir='o', learning_rate=3e-6)\n"
        "trainer = MyPPOTrainer(args=config, model=m, processing_class=t, train_dataset=d)\n"
    )
    path = tmp_path / "t.py"
    path.write_text(src)
    code = (
        "import sys, codemods\n"
        "from codemods.base import Options\n"
        "from codemods.engine import fix_text\n"
        "out, _ = fix_text(open(sys.argv[1]).read(), path='t.py', rules=codemods.select(('TRL103',)), options=Options())\n"
        "sys.stdout.write(out)\n"
    )
    outs = []
    for check in ("0", "1"):
        env = {**os.environ, "TRL_MIGRATE_CHECK_BINDINGS": check}
        done = subprocess.run(
            [sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout)
    assert outs[0] == outs[1]
    assert "config = RLOOConfig(output_dir='o', learning_rate=3e-6" in outs[0]

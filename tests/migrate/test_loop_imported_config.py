"""TRL106 with a config another file of the run builds (singhnikhil01/Outsmart-AI-detection-System:
`from config import config` in `train.py`, the PPOConfig built in `config.py`): the loop's
generation and length settings go to a copy of that config made above the trainer, since the
config call is out of this file's sight."""

from __future__ import annotations

import pytest

from migrate import api
from migrate.kernel.findings import Fix
from tests.codemods.helpers import dedent

CONFIG = (
    'from trl import PPOConfig\n\nconfig = PPOConfig(model_name="gpt2", learning_rate=1.41e-5)\n'
)
TRAIN = dedent(
    """
    from trl import PPOTrainer

    from config import config

    trainer = PPOTrainer(config, model=model, tokenizer=tokenizer, dataset=dataset)
    generation_kwargs = {"max_new_tokens": 32, "do_sample": True, "top_k": 0.0, "top_p": 1.0}
    epochs = 3

    for epoch in range(epochs):
        for batch in trainer.dataloader:
            query_tensors = batch["input_ids"]
            response_tensors = trainer.generate(query_tensors, return_prompt=False, **generation_kwargs)
            batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tokens=True)
            rewards = [score(r) for r in batch["response"]]
            trainer.step(query_tensors, response_tensors, rewards)
    """
)
AFTER = dedent(
    """
    from trl import RLOOTrainer

    from config import config
    import copy


    def reward_fn(prompts, completions, **kwargs) -> list[float]:
        rewards = [score(r) for r in completions]
        return [float(r) for r in rewards]


    config = copy.copy(config)
    config.max_completion_length = 32
    config.top_k = 0
    config.top_p = 1.0
    config.num_train_epochs = 3
    trainer = RLOOTrainer(args=config, model=model, processing_class=tokenizer, train_dataset=dataset, reward_funcs=reward_fn)
    generation_kwargs = {"max_new_tokens": 32, "do_sample": True, "top_k": 0.0, "top_p": 1.0}
    epochs = 3

    trainer.train()
    """
)
CODES = ("TRL103", "TRL104", "TRL106")


def _loop_findings(report):
    result = next(r for r in report.results if r.path.endswith("train.py"))
    return [f for f in result.findings if f.code == "TRL106"]


def test_the_settings_go_to_a_copy_of_the_imported_config(tmp_path):
    (tmp_path / "config.py").write_text(CONFIG)
    (tmp_path / "train.py").write_text(TRAIN)
    report = api.fix_paths([str(tmp_path)], select=CODES)
    assert (tmp_path / "train.py").read_text() == AFTER
    assert "RLOOConfig(" in (tmp_path / "config.py").read_text()
    [done] = [f for f in _loop_findings(report) if "the PPO loop became" in f.message]
    assert (done.line, done.fix) == (10, Fix.APPLIED)
    assert done.message.endswith(
        "`config` comes from another file of this run, so the loop's generation and length "
        "settings are set on a copy of it made above the trainer (`copy.copy`), which "
        "leaves that file's `config` as it is"
    )
    again = api.fix_paths([str(tmp_path)], select=CODES)
    assert all(r.status.value != "changed" for r in again.results)


def test_a_config_from_outside_the_run_keeps_the_todo(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)  # config.py is not part of the run
    report = api.fix_paths([str(tmp_path)], select=CODES)
    todo = [
        f for f in _loop_findings(report) if f.fix is Fix.MANUAL and "left as it is" in f.message
    ]
    assert len(todo) == 1 and "is neither a `RLOOConfig(...)` call" in todo[0].message


def test_a_loop_that_stops_after_some_batches_keeps_the_todo(tmp_path):
    (tmp_path / "config.py").write_text(CONFIG)
    train = TRAIN.replace(
        "for epoch in range(epochs):\n    for batch in trainer.dataloader:\n",
        "if True:\n    for i, batch in enumerate(trainer.dataloader):\n        if i >= 10:\n            break\n",
    )
    (tmp_path / "train.py").write_text(train)
    report = api.fix_paths([str(tmp_path)], select=CODES)
    [todo] = [f for f in _loop_findings(report) if "left as it is" in f.message]
    assert "`config` is built in another file, so its optimizer steps per batch" in todo.message


def test_the_copy_works_on_a_real_rloo_config(tmp_path):
    # dataclasses.replace would run RLOOConfig.__post_init__ again, which refuses the
    # steps_per_generation and generation_batch_size the first run filled in
    pytest.importorskip("trl")
    from trl import RLOOConfig

    original = RLOOConfig(output_dir=str(tmp_path), learning_rate=1.41e-5, use_cpu=True)
    lines = AFTER.split("\n\n\n")[2].split("trainer = ")[0]
    scope = {"config": original, "copy": __import__("copy")}
    exec(lines, scope)
    copied = scope["config"]
    assert (copied.max_completion_length, copied.top_k, copied.num_train_epochs) == (32, 0, 3)
    assert (original.max_completion_length, original.top_k) == (RLOOConfig.max_completion_length, 0)
    assert copied.generation_batch_size == original.generation_batch_size

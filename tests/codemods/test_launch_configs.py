"""Config files a launch line hands a parsed-config script: their keys get the launch flags'
changes, edited as text and checked by loading the result (codemods/launch_configs.py and
migrate/kernel/config_text.py)."""

from __future__ import annotations

import pytest

from codemods import launch_configs, launch_flags
from codemods.base import todo_comment
from migrate.kernel import config_text

H4 = "parser.parse()\ndef parse(self): return self.parse_yaml_file(sys.argv[1])"
TRL = "parser.parse_args_and_config()"


@pytest.mark.parametrize(
    "args, script, found",
    [
        pytest.param(["recipes/ppo.yaml"], H4, [("recipes/ppo.yaml", False)], id="positional"),
        pytest.param(["c.json", "--lr", "1"], H4, [("c.json", False)], id="json-then-flags"),
        pytest.param(["--config", "p.yaml"], TRL, [("p.yaml", True)], id="trl-parser"),
        pytest.param(["--config=p.yml"], TRL, [("p.yml", True)], id="trl-parser-equals"),
        pytest.param(["--config", "p.yaml"], H4, [], id="config-flag-to-a-file-parser"),
        pytest.param(["p.yaml"], TRL, [], id="positional-to-trl-parser"),
        pytest.param(["--data", "d.json"], H4, [], id="another-flags-value"),
        pytest.param(["p.yaml"], "parser.parse_args_into_dataclasses()", [], id="flags-only"),
    ],
)
def test_the_config_files_a_launch_line_hands_its_script(args, script, found):
    assert launch_configs.config_paths(args, script) == found


YAML = """\
model_name_or_path: gpt2
learning_rate: 3.0e-6   # as tuned
total_episodes: 30000
response_length: 53
stop_token: eos
lora_target_modules:
  - q_proj
  - v_proj

report_to: wandb
"""

YAML_AFTER = """\
model_name_or_path: gpt2
learning_rate: 3.0e-6   # as tuned
# TODO(trl-migrate TRL103): `total_episodes`: set `max_steps` instead: the new config counts `max_steps`, not `total_episodes` (the conversion is in docs/rules.md, TRL103)
total_episodes: 30000
max_completion_length: 53
lora_target_modules:
  - q_proj
  - v_proj

report_to: wandb
"""


def _changes(text: str, suffix: str) -> list[launch_flags.FlagChange]:
    data = config_text.load(text, suffix)
    assert data is not None
    args = launch_configs.as_args(data)
    return launch_flags.changes(args, "rloo", lambda name: False) + launch_flags.drift_changes(
        args, lambda name: False, "RLOOConfig TrainingArguments"
    )


def test_a_yaml_config_gets_the_new_keys_and_todos_and_a_second_run_changes_nothing():
    edited = launch_configs.rewrite(YAML, ".yaml", _changes(YAML, ".yaml"), todo_comment)
    assert edited.text == YAML_AFTER
    assert edited.lines == {"total_episodes": 3, "response_length": 4, "stop_token": 5}
    assert edited.left == ("total_episodes",)
    again = launch_configs.rewrite(YAML_AFTER, ".yaml", _changes(YAML_AFTER, ".yaml"), todo_comment)
    assert again.text is None  # only the TODO's key is left, and its TODO is there
    assert again.left == ("total_episodes",)


JSON = """\
{
  "model_name_or_path": "gpt2",
  "kl_coef": 0.05,
  "gamma": 1,
  "evaluation_strategy": "steps",
  "output_dir": "out",
  "vf_coef": 0.1
}
"""

JSON_AFTER = """\
{
  "model_name_or_path": "gpt2",
  "beta": 0.05,
  "eval_strategy": "steps",
  "output_dir": "out"
}
"""


def test_a_json_config_gets_the_new_keys_and_loses_the_ones_that_changed_nothing():
    changes = _changes(JSON, ".json")
    assert [(c.flag, c.new, c.drop) for c in changes] == [
        ("--kl_coef", "--beta", False),
        ("--gamma", "", True),
        ("--vf_coef", "", True),
        ("--evaluation_strategy", "--eval_strategy", False),
    ]
    edited = launch_configs.rewrite(JSON, ".json", changes, todo_comment)
    assert edited.text == JSON_AFTER  # the last entry went: the one before it lost its comma
    assert (
        launch_configs.rewrite(
            JSON_AFTER, ".json", _changes(JSON_AFTER, ".json"), todo_comment
        ).text
        is None
    )


def test_a_json_key_with_no_new_spelling_stays_without_a_comment():
    text = '{\n  "total_episodes": 100,\n  "output_dir": "o"\n}\n'
    edited = launch_configs.rewrite(text, ".json", _changes(text, ".json"), todo_comment)
    assert edited.text is None  # JSON holds no comment: the finding is the TODO
    assert edited.left == ("total_episodes",)
    assert edited.lines == {"total_episodes": 2}


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("learning_rate: 1e-5\noutput_dir: o\n", id="nothing-to-change"),
        pytest.param("{response_length: 53, kl_coef: 0.1}\n", id="flow-style"),
        pytest.param("kl_coef: 0.1\nkl_coef: 0.2\n", id="a-key-twice"),
        pytest.param("kl_coef: 0.1\nbeta: 0.2\n", id="both-spellings"),
        pytest.param("- kl_coef\n- 0.1\n", id="not-a-mapping"),
        pytest.param("kl_coef: [0.1\n", id="not-yaml"),
    ],
)
def test_a_yaml_config_that_cannot_be_edited_safely_is_left_as_it_was(text):
    data = config_text.load(text, ".yaml")
    args = launch_configs.as_args(data) if data else []
    changes = launch_flags.changes(args, "rloo", lambda name: False)
    assert launch_configs.rewrite(text, ".yaml", changes, todo_comment).text is None


def test_an_alias_keeps_its_anchor_when_its_key_is_renamed():
    text = "a: &x 1\nkl_coef: *x\n"
    changes = launch_flags.changes(["--a", "1", "--kl_coef", "1"], "rloo", lambda name: False)
    edited = launch_configs.rewrite(text, ".yaml", changes, todo_comment)
    assert edited.text == "a: &x 1\nbeta: *x\n"


def test_a_value_transformers_removed_is_replaced_where_it_stands():
    text = "optim: adamw_hf   # the old default\noutput_dir: o\n"
    changes = launch_flags.drift_changes(
        launch_configs.as_args(config_text.load(text, ".yaml") or {}),
        lambda name: False,
        "TrainingArguments",
    )
    assert [(c.flag, c.was, c.value) for c in changes] == [("--optim", "adamw_hf", "adamw_torch")]
    edited = launch_configs.rewrite(text, ".yaml", changes, todo_comment)
    assert edited.text == "optim: adamw_torch   # the old default\noutput_dir: o\n"


def test_the_defaults_a_file_parser_misses_are_added_once():
    values = {"max_grad_norm": 0.0, "learning_rate": 5e-05, "bf16": False}
    text = "learning_rate: 3.0e-6\noutput_dir: o"
    added = config_text.with_defaults(text, ".yaml", values, "# note")
    assert added == (
        "learning_rate: 3.0e-6\noutput_dir: o\n# note\nmax_grad_norm: 0.0\nbf16: false\n"
    )
    assert config_text.with_defaults(added, ".yaml", values, "# note") is None
    js = '{\n    "learning_rate": 3e-06,\n    "output_dir": "o"\n}\n'
    assert config_text.with_defaults(js, ".json", values, "# note") == (
        '{\n    "learning_rate": 3e-06,\n    "output_dir": "o",\n'
        '    "max_grad_norm": 0.0,\n    "bf16": false\n}\n'
    )


@pytest.mark.parametrize(
    "text, suffix, after",
    [
        pytest.param(YAML, ".yaml", None, id="yaml-list-value"),
        pytest.param(JSON, ".json", None, id="json-last-entry"),
    ],
)
def test_without_leaves_keys_out_and_keeps_the_rest(text, suffix, after):
    keys = ["lora_target_modules", "stop_token"] if suffix == ".yaml" else ["vf_coef", "gamma"]
    out = config_text.without(text, suffix, keys)
    assert out is not None
    data = config_text.load(text, suffix) or {}
    assert config_text.load(out, suffix) == {k: v for k, v in data.items() if k not in keys}
    assert config_text.without(text, suffix, ["no_such_key"]) is None

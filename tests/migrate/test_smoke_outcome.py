"""How a smoke run's raw outcome reads in a finding (pure functions, no run): import errors,
the stack of a timed-out run, files the repository lacks."""

from __future__ import annotations

import pytest

from migrate.smoke.outcome import _import_what, _not_in_repo, stack_at_kill


@pytest.mark.parametrize(
    ("err", "expected"),
    [
        (
            {
                "exception": "ModuleNotFoundError",
                "message": "No module named 'editdistance'",
                "source": "from utils.rl_utils import (",
            },
            "cannot import from `utils.rl_utils`: No module named 'editdistance'",
        ),
        (
            {
                "exception": "ModuleNotFoundError",
                "message": "No module named 'trl.core'",
                "source": "from trl.core import LengthSampler as LS, respond_to_batch",
            },
            "cannot import `LengthSampler`, `respond_to_batch` from `trl.core`: No module named "
            "'trl.core'",
        ),
        (
            {
                "exception": "ImportError",
                "name": "BloomTokenizerFast",
                "module": "transformers",
                "message": "cannot import name 'BloomTokenizerFast' from 'transformers' (/x/y.py)",
                "source": "from transformers import BloomTokenizerFast",
            },
            "cannot import `BloomTokenizerFast` from `transformers`: cannot import name "
            "'BloomTokenizerFast' from 'transformers'",
        ),
    ],
)
def test_import_errors_name_what_and_from_where(err, expected):
    assert _import_what(err) == expected


DUMP = """\
step 1
Thread 0x00007f0001 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait

Current thread 0x00007f0000 (most recent call first):
  File "/venv/transformers/generation/utils.py", line 2100 in _sample
  File "/run/repo/train.py", line 42 in main
  File "/run/repo/train.py", line 50 in <module>
"""


def test_the_stack_of_a_killed_run_names_the_scripts_line_and_the_innermost_frame():
    assert stack_at_kill(DUMP, "/run/repo/train.py") == (
        "line 42 of the script (in main), inside /venv/transformers/generation/utils.py:2100 in "
        "_sample"
    )
    assert stack_at_kill(DUMP, "/elsewhere.py") == (
        "/venv/transformers/generation/utils.py:2100 in _sample"
    )
    assert stack_at_kill("no dump here", "/run/repo/train.py") == ""


def test_a_missing_file_is_said_to_be_outside_the_repository():
    assert _not_in_repo(
        {"exception": "FileNotFoundError", "message": "No such file: x"}
    ).startswith("; that file is not in the repository")
    assert _not_in_repo({"exception": "KeyError", "message": "'prompt'"}) == ""
    peft = "Target modules {'c_attn'} not found in the base model."
    assert _not_in_repo({"exception": "NoMatchingPeftModuleError", "message": peft}) == ""
    assert _not_in_repo(
        {"exception": "ValueError", "message": "Can't find 'adapter_config.json' at './sft'"}
    ).startswith("; that file is not in the repository")


@pytest.mark.parametrize(
    ("message", "filled", "said"),
    [
        pytest.param(
            "[Errno 2] No such file or directory: 'stand-in'",
            ["--config", "stand-in"],
            "; `stand-in` is the stand-in the smoke run gave the required `--config`",
            id="a-config-path",  # aayushjoshi-12/train-test-regime
        ),
        pytest.param(
            "[Errno 2] No such file or directory: 'gpt2'",
            ["--output_dir", "/tmp/o", "--reward_model_path", "gpt2"],
            "; `gpt2` is the stand-in the smoke run gave the required `--reward_model_path`",
            id="a-model-name-the-script-opens-as-a-file",  # Tankiit/PPO_Learning_to_rank
        ),
        pytest.param(
            "[Errno 2] No such file or directory: 'data/train.csv'",
            ["--config", "stand-in"],
            "; that file is not in the repository",
            id="another-file",
        ),
    ],
)
def test_a_missing_file_the_harness_named_says_so(message, filled, said):
    err = {"exception": "FileNotFoundError", "message": message}
    assert _not_in_repo(err, filled).startswith(said)


def test_a_failure_away_from_any_todo_lists_the_files_todos(tmp_path):
    from migrate.smoke.outcome import _todos_in_file

    script = tmp_path / "train.py"
    script.write_text(
        "# TODO(trl-migrate TRL105): keep a prompt column\nds = x\ntrainer.train()\n"
        "# TODO(trl-migrate TRL104): generate_completions() was removed\n"
    )
    assert _todos_in_file(str(script)) == (
        "; the rewrite left TODOs in this file for a human: TRL105 (line 1), TRL104 (line 4)"
    )
    script.write_text("trainer.train()\n")
    assert _todos_in_file(str(script)) == ""


def test_flags_of_the_launch_line_the_new_config_lacks_are_traced_to_it(tmp_path):
    from migrate.smoke.entry_points import EntryPoint
    from migrate.smoke.outcome import judge
    from migrate.smoke.result import SmokeResult

    script = tmp_path / "train.py"
    script.write_text("parse()\n")
    result = SmokeResult(str(script), ["--max_prompt_length", "9"], 2, 60)
    result.ran = str(script)
    result.entry = EntryPoint(
        str(script), "run.sh:3", launch="python train.py --max_prompt_length 9"
    )
    message = "Some specified arguments are not used by the HfArgumentParser: ['--max_prompt_length', '9']"
    data = {
        "outcome": "error",
        "trainers": [],
        "error": {"kind": "crash", "exception": "ValueError", "message": message, "line": 1},
    }
    judge(result, data, timed_out=False, returncode=0)
    assert [f.code for f in result.findings] == ["TRL412"]
    assert result.findings[0].message == (
        f"the script raised ValueError: {message}; they come from the launch line at run.sh:3: "
        "TRL 1.13's configs no longer have them, so rename or drop them there"
    )


def test_the_script_that_ran_is_never_a_file_the_rewrite_did_not_touch(tmp_path):
    from migrate.smoke.outcome import _untouched
    from migrate.smoke.result import SmokeResult

    result = SmokeResult(str(tmp_path / "nb.ipynb"), [], 2, 60)
    result.root, result.copy = str(tmp_path), str(tmp_path / "copy")
    result.ran = str(tmp_path / "copy" / "nb.smoke.py")  # a notebook's cells as one script
    result.rewritten = frozenset({str(tmp_path / "nb.ipynb")})
    assert _untouched(result, {"project_frames": [f"{result.ran}:94"]}) == ""
    helper = str(tmp_path / "copy" / "helpers.py")
    assert _untouched(result, {"project_frames": [f"{result.ran}:3", f"{helper}:7"]}) == (
        f"; it came from {result.shown(str(tmp_path / 'helpers.py'))}:7, a file the rewrite did "
        "not touch"
    )


def test_a_crash_in_another_rewritten_file_says_whether_the_rewrite_changed_its_line(tmp_path):
    from migrate.smoke.outcome import _untouched
    from migrate.smoke.result import SmokeResult

    result = SmokeResult(str(tmp_path / "train.py"), [], 2, 60)
    result.root, result.copy = str(tmp_path), str(tmp_path / "copy")
    result.ran = str(tmp_path / "copy" / "train.py")
    data = tmp_path / "data.py"
    result.rewritten = frozenset({str(tmp_path / "train.py"), str(data)})
    result.before = {str(data): b"from modules import *\n\nx = args.size\nq = 'query'\n"}
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "data.py").write_text(
        "from modules import *\nimport extra\n\nx = args.size\nq = p = 'query'\n"
    )
    frame = str(tmp_path / "copy" / "data.py")
    shown = result.shown(str(data))
    assert _untouched(result, {"project_frames": [f"{result.ran}:6", f"{frame}:4"]}) == (
        f"; it came from {shown}:4, a line the rewrite did not change"
    )
    assert _untouched(result, {"project_frames": [f"{frame}:5"]}) == (
        f"; it came from {shown}:5, a line the rewrite changed"
    )
    result.before = {}  # not known (smoke run alone): nothing said
    assert _untouched(result, {"project_frames": [f"{frame}:4"]}) == ""


def test_a_wrapped_error_keeps_the_first_and_last_lines_of_its_cause():
    from migrate.reference.harness import describe

    try:
        try:
            raise ValueError("Couldn't cast\nschema: a\n\nto\nschema: b\nbecause they differ")
        except ValueError as inner:
            raise RuntimeError("generic failure") from inner
    except RuntimeError as outer:
        described = describe(outer, __file__)
    assert described["message"] == "generic failure"
    assert described["cause"] == "ValueError: Couldn't cast ... because they differ"
    try:
        try:
            raise KeyError("k")
        except KeyError:
            raise RuntimeError("while handling")  # noqa: B904 (an implicit context: no cause)
    except RuntimeError as outer:
        assert "cause" not in describe(outer, __file__)


def test_a_crash_on_a_keyword_the_stack_dropped_says_what_became_of_it():
    from migrate.api.hints import explain, keyword_drift
    from migrate.kernel.findings import Finding, Fix, Severity
    from migrate.smoke.result import SmokeResult

    assert keyword_drift("TrainingArguments", "warmup_ratio").startswith(
        "`warmup_ratio` (it is `warmup_steps` now): transformers 5.0 removed warmup_ratio"
    )
    assert keyword_drift("RLOOConfig", "warmup_ratio").startswith("`warmup_ratio` (it is")
    assert keyword_drift("GRPOConfig", "use_liger_loss").startswith(
        "TRL 0.28.0 removed GRPOConfig's `use_liger_loss` (it is `use_liger_kernel` now): pass "
    )
    assert keyword_drift("TrainingArguments", "not_a_field") == ""
    assert keyword_drift("MyArguments", "warmup_ratio") == ""  # not a class the table names

    result = SmokeResult("train.py", [], 2, 60)
    crash = (
        "the script raised TypeError: TrainingArguments.__init__() got an unexpected keyword "
        "argument 'warmup_ratio'; it came from util.py:9, a file the rewrite did not touch"
    )
    other = "the script raised TypeError: f() got an unexpected keyword argument 'x'"
    result.findings = [
        Finding("TRL412", Severity.ERROR, "train.py", 3, 1, crash, Fix.MANUAL),
        Finding("TRL412", Severity.ERROR, "train.py", 4, 1, other, Fix.MANUAL),
    ]
    explain(result)
    assert result.findings[0].message == (
        f"{crash}; TRL 1.13's stack no longer takes it: "
        f"{keyword_drift('TrainingArguments', 'warmup_ratio')}"
    )
    assert result.findings[1].message == other
    explain(result)  # twice: said once
    assert result.findings[0].message.count("no longer takes it") == 1


def test_only_code_libcst_reads_is_called_newer_python(tmp_path):
    import sys

    from migrate.smoke.outcome import _newer_python

    broken = tmp_path / "broken.py"
    broken.write_text("x = (\n")
    assert _newer_python({"syntax_file": str(broken)}) == ""
    fine = tmp_path / "fine.py"
    fine.write_text("x = 1\n")
    assert _newer_python({"syntax_file": str(fine)}) == ""  # parses here: nothing to say
    assert _newer_python({"syntax_file": str(tmp_path / "gone.py")}) == ""
    assert _newer_python({}) == ""
    newer = tmp_path / "newer.py"
    newer.write_text('n = "x"\nlabel = f"{"-".join([n])}"\n')
    said = _newer_python({"syntax_file": str(newer)})
    assert (
        (said == "")
        if sys.version_info >= (3, 12)
        else said.startswith("; newer.py is valid in a newer Python than the ")
    )


def test_flags_of_the_launch_line_left_out_of_a_passing_run_are_said_and_listed(tmp_path):
    """A launch line's `--total_episodes 30000` that RLOOConfig lacks: the smoke run went on
    without it (upgrade's launch_flags), and the pass says the real launch stops on it."""
    from migrate.smoke.entry_points import EntryPoint
    from migrate.smoke.outcome import judge
    from migrate.smoke.result import SmokeResult

    script = tmp_path / "ppo.py"
    script.write_text("train()\n")
    result = SmokeResult(str(script), ["--output_dir", "o"], 2, 60)
    result.ran = str(script)
    result.entry = EntryPoint(
        str(script),
        "ppo.py:40",
        args=("--output_dir", "o"),
        launch="python ppo.py --output_dir o --total_episodes 30000 --whiten_rewards",
        left_out=("--total_episodes 30000", "--whiten_rewards"),
    )
    data = {
        "outcome": "ok",
        "trainers": [{"class": "RLOOTrainer", "global_step": 2, "losses": [0.0, 0.1]}],
        "overrides": [{"config": "RLOOConfig", "field": "max_steps", "was": -1, "now": 2}],
    }
    judge(result, data, timed_out=False, returncode=0)
    assert result.outcome == "passed"
    assert [(f.code, f.message) for f in result.findings[1:]] == [
        (
            "TRL420",
            "the launch line at ppo.py:40 passes `--total_episodes 30000`, which the rewritten "
            "script's parser no longer takes (a finding of this report says what replaces it): "
            "the smoke run left it out, the real launch would stop on it",
        ),
        (
            "TRL420",
            "the launch line at ppo.py:40 passes `--whiten_rewards`, which the rewritten script's "
            "parser no longer takes (a finding of this report says what replaces it): the smoke "
            "run left it out, the real launch would stop on it",
        ),
    ]
    assert result.overrides[1:] == [
        {"config": "launch line", "field": "--total_episodes", "was": "30000", "now": "left out"},
        {"config": "launch line", "field": "--whiten_rewards", "was": True, "now": "left out"},
    ]
    assert result.command == "python " + str(script) + " --output_dir o"


@pytest.mark.parametrize(
    ("exception", "message"),
    [
        ("AttributeError", "'Column' object has no attribute 'ndim'"),  # pd.DataFrame(ds["id"])
        ("AttributeError", "'Column' object has no attribute 'append'"),
        ("TypeError", "unsupported operand type(s) for +: 'Column' and 'list'"),
        ("TypeError", 'can only concatenate list (not "Column") to list'),
        ("TypeError", "Object of type Column is not JSON serializable"),
    ],
)
def test_a_list_operation_on_a_datasets_column_names_datasets_4(exception, message):
    """HexamindOrganisation/HexamindTextToSQL: `pd.DataFrame(test_dataset["db_id"])`."""
    from migrate.smoke.outcome import _dataset_column

    assert _dataset_column({"exception": exception, "message": message}) == (
        '; `dataset["name"]` is a lazy `Column` from datasets 4.0 on (TRL 1.13 installs datasets '
        ">= 4.7), where datasets 3 gave a list: wrap it in `list(...)` where the code needs a list"
    )


@pytest.mark.parametrize(
    ("exception", "message"),
    [
        ("AttributeError", "'Tensor' object has no attribute 'ndim'"),
        ("KeyError", "'Column' object has no attribute 'x'"),
        ("TypeError", "unsupported operand type(s) for +: 'int' and 'list'"),
    ],
)
def test_other_errors_are_not_said_to_be_a_datasets_column(exception, message):
    from migrate.smoke.outcome import _dataset_column

    assert _dataset_column({"exception": exception, "message": message}) == ""


def test_a_mutable_dataclass_default_names_the_projects_python():
    """CambioML/pykoi: `lora_config_rl: LoraConfig = LoraConfig(...)` in a dataclass, which
    Python 3.10 took and 3.11 rejects."""
    from migrate.smoke.outcome import _older_python

    message = (
        "mutable default <class 'peft.tuners.lora.config.LoraConfig'> for field lora_config_rl "
        "is not allowed: use default_factory"
    )
    assert _older_python({"exception": "ValueError", "message": message}) == (
        "; Python 3.11 and later reject a dataclass field whose default is an unhashable object "
        "(`lora_config_rl`: a `LoraConfig`), which Python 3.10 took: the project was written for "
        "3.10, where TRL 1.13 runs too: pass `--python` a 3.10 interpreter, or give the field a "
        "`default_factory`"
    )
    assert _older_python({"exception": "TypeError", "message": message}) == ""
    assert _older_python({"exception": "ValueError", "message": "invalid literal"}) == ""

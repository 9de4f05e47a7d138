"""`trl-migrate smoke NOTEBOOK.ipynb`: the code cells run as one script (IPython lines skipped),
findings point at the cell and its line, and `upgrade` smoke-runs notebooks that train."""

from __future__ import annotations

import pathlib

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")
nbformat = pytest.importorskip("nbformat")

from migrate import api  # noqa: E402
from migrate.kernel.findings import FileResult, Status  # noqa: E402
from migrate.smoke import smoke_script  # noqa: E402

TRAIN = """
from datasets import Dataset
from trl import RLOOConfig, RLOOTrainer

def reward_len(completions, **kwargs):
    return [-abs(8 - len(c)) / 8 for c in completions]
"""
TRAIN_2 = """
dataset = Dataset.from_dict({"prompt": ["The movie was", "I think that"] * 4})
args = RLOOConfig(output_dir="out", per_device_train_batch_size=4, num_generations=2, max_completion_length=8)
trainer = RLOOTrainer(model="Qwen/Qwen2-0.5B-Instruct", reward_funcs=reward_len, args=args, train_dataset=dataset)
trainer.train()
"""


def _notebook(path: pathlib.Path, *cells: str) -> str:
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_markdown_cell("# notes")]
    book.cells += [nbformat.v4.new_code_cell(c.strip("\n")) for c in cells]
    nbformat.write(book, str(path))
    return str(path)


def test_a_notebook_with_ipython_lines_trains(tmp_path, store):
    path = _notebook(
        tmp_path / "train.ipynb",
        "%pip install trl==1.13.0\n!nvidia-smi",
        TRAIN,
        "%%time\n" + TRAIN_2,
    )
    result = smoke_script(path, store=store, timeout=180)
    assert [f.code for f in result.findings if f.code != "TRL420"] == ["TRL410"], result.log_tail
    assert result.findings[0].path == path and result.steps_run == 2 and len(result.losses) == 2
    assert result.log_tail.startswith(
        "IPython lines not run: %pip install trl==1.13.0; !nvidia-smi; %%time"
    )


def test_a_notebook_may_call_display_as_ipython_gives_it(tmp_path, store):
    path = _notebook(tmp_path / "show.ipynb", "x = {'loss': 1.5}\ndisplay(x)", "print('END')")
    result = smoke_script(path, store=store, timeout=120)
    assert [f.code for f in result.findings] == ["TRL413"], result.log_tail  # ran to the end
    assert "{'loss': 1.5}" in result.log_tail and "END" in result.log_tail


def test_a_notebook_that_restarts_its_kernel_after_installs_goes_on_and_trains(tmp_path, store):
    """Colab notebooks kill their own kernel after `%pip install` cells so the next cells import
    the new versions; the smoke run skips the install lines, so it skips the kill too and says
    so, where the harness used to die without a result (TRL418)."""
    path = _notebook(
        tmp_path / "restart.ipynb",
        "%pip install trl==0.4.4\nimport os\nimport signal\nos.kill(os.getpid(), signal.SIGTERM)",
        TRAIN,
        TRAIN_2,
    )
    result = smoke_script(path, store=store, timeout=180)
    assert [f.code for f in result.findings if f.code != "TRL420"] == ["TRL410"], result.log_tail
    assert result.steps_run == 2
    assert {
        "config": "notebook",
        "field": "kernel restart",
        "was": "os.kill(own process, 15)",
        "now": "skipped",
    } in result.overrides


def test_a_failing_cell_is_reported_by_cell_and_line(tmp_path, store):
    path = _notebook(tmp_path / "bad.ipynb", "import os\n%ls", "x = 1\n\nraise ValueError('boom')")
    result = smoke_script(path, store=store, timeout=120)
    assert [(f.code, f.cell, f.line) for f in result.findings] == [("TRL412", 3, 3)], (
        result.log_tail
    )
    assert "ValueError: boom" in result.findings[0].message
    assert result.findings[0].where == f"{path}:cell 3:3:1"


def test_a_stop_on_what_a_todo_names_points_at_its_cell_and_line(tmp_path, store):
    # DhanushGD/RLHF-PPO's PPO_train.ipynb: KeyError: 'prompt', the column TRL105's TODO in
    # another cell asks for
    path = _notebook(
        tmp_path / "keys.ipynb",
        "import os\n%ls",
        'rows = [{"query": "hi"}]\n'
        '# TODO(trl-migrate TRL105): RLOOTrainer reads a "prompt" column (text) from `rows`',
        "x = 1\nrows[0]['prompt']",
    )
    result = smoke_script(path, store=store, timeout=120)
    [stop] = result.findings
    assert (stop.code, stop.cell, stop.line) == ("TRL412", 4, 2)
    assert stop.message == (
        "the script raised KeyError: 'prompt'; the rewrite left a TODO(trl-migrate TRL105) at "
        'cell 3, line 2 that names "prompt", for a human'
    )


def test_a_name_a_later_cell_binds_is_the_notebooks_own_order(tmp_path, store):
    # kir77ki/NLP: cell 4 reads torch.device, cell 5 imports torch (run out of order where it
    # was written); the file's TODOs are not why it stopped
    path = _notebook(
        tmp_path / "order.ipynb",
        "# TODO(trl-migrate TRL106): TRL 1.13 has no PPO step loop\nx = 1",
        "device = torch.device('cpu')",
        "import torch",
    )
    result = smoke_script(path, store=store, timeout=120)
    [stop] = result.findings
    assert (stop.code, stop.cell, stop.line) == ("TRL412", 3, 1)
    assert stop.message == (
        "the script raised NameError: name 'torch' is not defined; the notebook binds `torch` "
        "first at cell 4, line 1, a cell below the one that stopped (its cells ran in another "
        "order where it was written): the repository's own code, not the rewrite"
    )
    # bound above the stop (a name deleted on the way): nothing is claimed
    path = _notebook(tmp_path / "del.ipynb", "import torch\ndel torch", "torch.device('cpu')")
    message = smoke_script(path, store=store, timeout=120).findings[0].message
    assert message == "the script raised NameError: name 'torch' is not defined"


def test_a_stop_in_a_cell_above_every_changed_line_is_not_the_rewrites(tmp_path, store):
    # sseggeb/GENAI_w_LLMs: the course notebook checks the machine's size in a cell above the
    # imports the rewrite changed
    cells = [
        "import os\nassert os.cpu_count() > 10**6, 'instance type'",
        "from trl import PPOConfig",
    ]
    original = _notebook(tmp_path / "old.ipynb", *cells)
    path = _notebook(tmp_path / "lab.ipynb", cells[0], "from trl import RLOOConfig")
    before = {str(tmp_path / "lab.ipynb"): pathlib.Path(original).read_bytes()}
    result = smoke_script(
        path, store=store, timeout=120, rewritten=frozenset(before), before=before
    )
    [stop] = result.findings
    assert (stop.cell, stop.line) == (2, 2)
    assert stop.message == (
        "the script raised AssertionError: instance type; it stopped before any line the "
        "rewrite changed had run (the first is at cell 3, line 1): the rewrite is not why it "
        "stopped"
    )


@pytest.mark.parametrize(
    ("after", "said"),
    [
        # abhaykrishna2010's notebooks reload the adapter they trained in 4 bits: on a machine
        # without a GPU the checkpoint loads unquantized, listed, and the notebook goes on
        pytest.param(
            "trainer.save_model('saved')\n"
            "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n"
            "q = BitsAndBytesConfig(load_in_4bit=True)\n"
            "m = AutoModelForCausalLM.from_pretrained('saved', quantization_config=q, "
            "device_map={'': 0})\n"
            "print('RELOADED', m.device)",
            None,
            id="quantized-reload",
        ),
        pytest.param(
            "from trl import PPOTrainer",
            "after training 2 steps (loss {}), import error on TRL 1.13: cannot import `PPOTrainer`",
            id="import-after",
        ),
        pytest.param(
            "raise ValueError('boom')",
            "after training 2 steps (loss {}), the script raised ValueError: boom",
            id="crash-after",
        ),
    ],
)
def test_what_comes_after_the_training_steps(tmp_path, store, after, said):
    path = _notebook(tmp_path / "after.ipynb", TRAIN, TRAIN_2, after)
    result = smoke_script(path, store=store, timeout=180)
    codes = [f.code for f in result.findings if f.code != "TRL420"]
    assert result.steps_run == 2, result.log_tail
    if said is None:
        import torch

        assert codes == ["TRL410"] and "RELOADED cpu" in result.log_tail, result.findings
        if not torch.cuda.is_available():
            assert {
                "config": "from_pretrained",
                "field": "quantization_config",
                "was": "BitsAndBytesConfig",
                "now": None,
            } in result.overrides
        return
    shown = ", ".join(f"{x:.4f}" for x in result.losses)
    assert result.findings[0].message.startswith(said.format(shown)), result.findings[0].message


def test_a_notebook_that_is_not_json_is_a_clear_harness_finding(tmp_path):
    path = tmp_path / "broken.ipynb"
    path.write_text("{not json")
    result = smoke_script(str(path), timeout=60)
    assert [f.code for f in result.findings] == ["TRL418"]
    assert result.findings[0].message.startswith(f"{path}: cannot run this notebook:")


@pytest.mark.parametrize(
    ("cells", "entry"),
    [
        ((TRAIN, TRAIN_2), True),
        ((TRAIN, "def go(trainer):\n    trainer.train()"), False),
        (("%pip install trl", "x = 1"), False),
    ],
)
def test_upgrade_smoke_runs_notebooks_that_train(tmp_path, cells, entry):
    path = _notebook(tmp_path / "n.ipynb", *cells)
    changed = FileResult(path, Status.CHANGED, new=pathlib.Path(path).read_bytes())
    assert [e.path for e in api.entry_points(path, [changed])[0]] == ([path] if entry else [])
    broken = FileResult(path, Status.CHANGED, new=b"{not json")
    assert api.entry_points(path, [broken])[0] == []

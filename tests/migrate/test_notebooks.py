"""Notebooks: code cells rewritten as one module, IPython syntax and every other byte kept."""

from __future__ import annotations

import ast
import json
import pathlib

import nbformat
import pytest

from migrate import api
from migrate.kernel import notebooks
from migrate.kernel.findings import Fix, Severity, Status

FIXTURE = pathlib.Path(__file__).parents[1] / "fixtures" / "notebooks" / "gpt2_sentiment.ipynb"
SELECT = ["TRL101", "TRL102"]


def code_sources(doc):
    return ["".join(c["source"]) for c in doc["cells"] if c["cell_type"] == "code"]


def fix_cells(path, sources, select):
    """Write a notebook of code cells `sources` at `path` and run `fix` on it: the result, and
    the code cells as they are after it."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    path.write_text(nbformat.writes(nb))
    result = api.fix_paths([str(path)], select=select).results[0]
    return result, code_sources(json.loads(path.read_text()))


def refix(path, select):
    """The result of running `fix` on `path` again."""
    return api.fix_paths([str(path)], select=select).results[0]


@pytest.fixture
def notebook(tmp_path):
    path = tmp_path / "gpt2_sentiment.ipynb"
    path.write_bytes(FIXTURE.read_bytes())
    return path


def test_fixed_notebook_keeps_everything_but_the_rewritten_code(notebook):
    before = json.loads(notebook.read_text())
    report = api.fix_paths([str(notebook)], select=SELECT)
    assert report.results[0].status is Status.CHANGED
    after_text = notebook.read_text()
    after = json.loads(after_text)
    nbformat.validate(nbformat.reads(after_text, as_version=nbformat.NO_CONVERT))
    assert after_text.endswith("}\n") and after_text.startswith(
        '{\n "cells": [\n  {\n   "attachments"'
    )
    for old, new in zip(
        before["cells"], after["cells"]
    ):  # outputs, ids, metadata, attachments kept
        assert {k: v for k, v in old.items() if k != "source"} == {
            k: v for k, v in new.items() if k != "source"
        }
    assert before["metadata"] == after["metadata"]
    sources = code_sources(after)
    assert (
        sources[0]
        == "%pip install transformers==4.44.2 \\\n    trl==0.11.4 \\\n    datasets\n!nvidia-smi"
    )
    assert (
        "from trl import PPOConfig, PPOTrainer\nfrom transformers import AutoModelForCausalLM\n"
        in sources[1]
    )
    assert sources[1].endswith(  # a removed helper is written into the cell that imported it
        "from transformers import set_seed\n\n\nclass LengthSampler:\n"
        '    """trl.core.LengthSampler, which TRL 0.25.0 removed (written in by trl-migrate)."""\n\n'
        "    def __init__(self, min_value, max_value):\n        self.values = list(range(min_value, max_value))\n\n"
        "    def __call__(self):\n        import numpy as np\n\n        return np.random.choice(self.values)"
    )
    assert sources[1].startswith("%load_ext autoreload\n%autoreload 2\n")
    assert sources[2].endswith("AutoModelForCausalLMWithValueHead?")  # help syntax left exactly
    assert sources[3] == (
        "model = AutoModelForCausalLM.from_pretrained(config.model_name)\n"
        "ref_model = AutoModelForCausalLM.from_pretrained(config.model_name)\n"
        "tokenizer = AutoTokenizer.from_pretrained(config.model_name)\n"
        "print(model.device)"
    )
    assert (
        sources[4] == "%%bash\nls -la | grep trl\necho 'from trl import set_seed'"
    )  # not Python: untouched
    assert sources[5].startswith(
        "if torch.cuda.is_available():\n    !nvidia-smi\n    files = !ls\n"
    )
    for source in sources:  # every code cell is Python once its IPython lines are set aside
        ast.parse(notebooks.to_python(source)[0])


def test_findings_name_the_cell_and_the_line_within_it(notebook):
    report = api.fix_paths([str(notebook)], select=SELECT, mode=api.CHECK)
    where = sorted({(f.cell, f.line, f.code) for f in report.results[0].findings})
    assert where == [
        (3, 7, "TRL101"),
        (3, 8, "TRL101"),
        (5, 1, "TRL102"),
        (5, 2, "TRL102"),
        (5, 4, "TRL102"),
    ]
    first = min(report.results[0].findings, key=lambda f: (f.cell, f.line, f.col))
    assert (
        first.where == f"{notebook}:cell 3:7:52"
    )  # `PPOConfig` in `from trl import ..., PPOConfig, ...`


def test_second_run_changes_nothing_and_unchanged_notebook_is_byte_identical(notebook, tmp_path):
    api.fix_paths([str(notebook)], select=SELECT)
    once = notebook.read_bytes()
    again = api.fix_paths([str(notebook)], select=SELECT)
    assert notebook.read_bytes() == once
    assert again.results[0].status is Status.UNCHANGED
    plain = tmp_path / "plain.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import trl\nprint(trl.__version__)")]
    plain.write_text(nbformat.writes(nb))
    original = plain.read_bytes()
    assert api.fix_paths([str(plain)]).results[0].status is Status.UNCHANGED
    assert plain.read_bytes() == original


def test_other_json_layouts_round_trip(tmp_path):
    doc = json.loads(FIXTURE.read_text())
    path = tmp_path / "two_space.ipynb"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=True))  # no trailing newline, escaped
    report = api.fix_paths([str(path)], select=SELECT)
    assert report.results[0].status is Status.CHANGED
    text = path.read_text()
    assert not text.endswith("\n") and "\\u2615" in text and '\n  "cells": [' in text


ODD = (  # hand-edited JSON: keys in no order, 3-space indent, spaces before colons, `\/` escapes
    '{"nbformat": 4, "nbformat_minor": 5,\n'
    ' "metadata" : {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},\n'
    ' "cells" : [\n'
    '   {"cell_type": "markdown", "metadata": {}, "source": ["PPO on <b>\\/tmp<\\/b>"]},\n'
    '   {"source" : [ "from trl import AutoModelForCausalLMWithValueHead\\n" ,\n'
    '                 "m = AutoModelForCausalLMWithValueHead.from_pretrained(\\"gpt2\\")\\n" ,\n'
    '                 "print(\\"caf\\u00e9 \\/ ok\\")" ],\n'
    '    "cell_type": "code", "id": "a1", "metadata": {}, "outputs": [], "execution_count": null},\n'
    '   {"cell_type": "code", "id": "a2", "metadata": {}, "outputs": [], "execution_count": null,\n'
    '    "source": "from trl import AutoModelForCausalLMWithValueHead as VH\\nvh = VH.from_pretrained(\\"x\\")"}\n'
    " ]\n"
    "}"
)
ODD_AFTER = (
    '{"nbformat": 4, "nbformat_minor": 5,\n'
    ' "metadata" : {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},\n'
    ' "cells" : [\n'
    '   {"cell_type": "markdown", "metadata": {}, "source": ["PPO on <b>\\/tmp<\\/b>"]},\n'
    '   {"source" : [ "from transformers import AutoModelForCausalLM\\n" ,\n'
    '                 "m = AutoModelForCausalLM.from_pretrained(\\"gpt2\\")\\n" ,\n'
    '                 "print(\\"caf\\u00e9 \\/ ok\\")" ],\n'
    '    "cell_type": "code", "id": "a1", "metadata": {}, "outputs": [], "execution_count": null},\n'
    '   {"cell_type": "code", "id": "a2", "metadata": {}, "outputs": [], "execution_count": null,\n'
    '    "source": "vh = AutoModelForCausalLM.from_pretrained(\\"x\\")"}\n'  # imported above
    " ]\n"
    "}"
)


def test_any_json_layout_is_rewritten_in_place_and_every_other_byte_kept(tmp_path):
    # Only the changed `source` values are written, each in the layout of the value it
    # replaces: the list keeps its separators, an unchanged line keeps its escapes (`\u00e9`,
    # `\/`), a string stays a string; keys, indent, spacing and the other cells stay as read.
    path = tmp_path / "odd.ipynb"
    path.write_text(ODD)
    result = api.fix_paths([str(path)], select=SELECT).results[0]
    assert result.status is Status.CHANGED, result.message
    assert path.read_text() == ODD_AFTER
    nbformat.validate(nbformat.reads(ODD_AFTER, as_version=nbformat.NO_CONVERT))
    assert api.fix_paths([str(path)], select=SELECT).results[0].status is Status.UNCHANGED


def test_a_layout_jupyter_never_writes_keeps_all_bytes_outside_the_changed_cells(tmp_path):
    path = tmp_path / "odd.ipynb"
    text = FIXTURE.read_text().replace('"cells": [', '"cells":   [', 1).replace("\n   ", "\n\t   ")
    path.write_text(text)
    result = api.fix_paths([str(path)], select=SELECT).results[0]
    assert result.status is Status.CHANGED, result.message
    after = path.read_text()
    assert after.startswith('{\n "cells":   [\n  {\n\t   "attachments"')
    old, new = notebooks.loads(text), notebooks.loads(after)
    changed = {
        i for i, c in enumerate(new.doc["cells"]) if c["source"] != old.doc["cells"][i]["source"]
    }
    assert changed  # the value-head cell and the import cell

    def outside(book, text):
        spans = sorted((s.start, s.end) for i, s in book.spans.items() if i in changed)
        cuts, done = [], 0
        for a, b in spans:
            cuts.append(text[done:a])
            done = b
        return cuts + [text[done:]]

    assert outside(old, text) == outside(new, after)
    assert json.loads(after)["cells"][0] == json.loads(text)["cells"][0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"cells": [{"cell_type": "code", "source": "from trl import set_seed"',
            "not a notebook: invalid JSON at line 1",
        ),
        (
            '{"nbformat": 4, "metadata": {}}\n',
            "not a notebook: no list of cells (nbformat 4 is supported)",
        ),
        (
            '{"nbformat": 3, "cells": [], "worksheets": []}\n',
            "nbformat 3 notebooks are not supported",
        ),
    ],
)
def test_corrupt_notebooks_fail_clearly(tmp_path, content, message):
    path = tmp_path / "bad.ipynb"
    path.write_text(content)
    result = api.fix_paths([str(path)]).results[0]
    assert result.status is Status.FAILED and result.message.startswith(message)


def _broken_cell_message(why):
    return (
        f"this cell is not Python ({why}): it is left as it is, and the other cells are "
        "rewritten as the program they make without it (run, it raises SyntaxError and "
        "defines nothing); fix it, then run `trl-migrate fix` again for its own code"
    )


def test_a_cell_that_is_not_python_is_left_as_it_is_and_the_others_rewritten(tmp_path):
    # seen in DemidOsipov/bert_rlhf (`import torchimport transformers`) and Naowak/LLM-RL (a
    # last cell `ppo_trainer.`): one such cell failed the whole notebook; run, it raises
    # SyntaxError and defines nothing, so the other cells are the program
    path = tmp_path / "broken.ipynb"
    sources = [
        "from trl import set_seed\nset_seed(0)",
        "x = (\nfrom trl import set_seed",
        "set_seed(1)",
    ]
    result, cells = fix_cells(path, sources, ["TRL101"])
    assert result.status is Status.CHANGED, result.message
    assert cells == ["from transformers import set_seed\nset_seed(0)", *sources[1:]]
    left = [f for f in result.findings if f.code == "TRL191"]
    assert [(f.cell, f.line, f.col, f.severity, f.fix) for f in left] == [
        (2, 1, 1, Severity.WARNING, Fix.MANUAL)
    ]
    assert left[0].message == _broken_cell_message("'(' was never closed at line 1, column 5")
    again = refix(path, ["TRL101"])
    assert again.status is Status.UNCHANGED
    assert [(f.code, f.cell) for f in again.findings] == [("TRL191", 2)]


def test_code_a_pass_puts_where_a_left_cell_stands_goes_to_the_next_cell(tmp_path):
    # the imports a rewrite adds go to the top of the module, which is the first cell's place:
    # when that cell is not Python they run where the next cell starts, and go there
    path = tmp_path / "first.ipynb"
    model = "m = trl.AutoModelForCausalLMWithValueHead.from_pretrained('gpt2', peft_config=cfg)"
    result, cells = fix_cells(path, ["x = (", "print(1)", f"import trl\n{model}"], ["TRL102"])
    assert result.status is Status.CHANGED, result.message
    assert cells == [
        "x = (",
        "import transformers\nfrom peft import get_peft_model\n\nprint(1)",
        "import trl\n"
        "m = get_peft_model(transformers.AutoModelForCausalLM.from_pretrained('gpt2'), cfg)",
    ]
    assert refix(path, ["TRL102"]).status is Status.UNCHANGED


def test_split_gives_left_cells_back_and_moves_what_was_written_there():
    joined = notebooks.join_cells(["x = (", "a = 1", "y = ("], frozenset({0, 2}))
    assert joined.text == "__trl_migrate_cell_1__\na = 1\n__trl_migrate_cell_2__\n"
    assert joined.split(joined.text) == ["x = (", "a = 1", "y = ("]
    # written in the first (left) cell's place: the next cell's start; in the last one's
    # place, after the last cell that runs
    written = "import os\n__trl_migrate_cell_1__\na = 1\n__trl_migrate_cell_2__\nb = 2\n"
    assert joined.split(written) == ["x = (", "import os\na = 1\nb = 2\n", "y = ("]
    assert notebooks.unparsable(["a = 1", "x = (", "    b = 2", "%pip install trl"]) == {
        1: "'(' was never closed at line 1, column 5"
    }


def test_a_cell_that_is_not_python_stops_the_smoke_script_where_it_stands():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("ran = []\nran.append(1)"),
        nbformat.v4.new_code_cell("import torchimport transformers\nran.append(2)"),
        nbformat.v4.new_code_cell("ran.append(3)"),
    ]
    found = notebooks.runnable(nbformat.writes(nb))
    problem = "cell 2 of the notebook is not Python: invalid syntax at line 1, column 20"
    assert found.text == (
        f"ran = []\nran.append(1)\nraise SyntaxError({problem!r})\npass\nran.append(3)\n"
    )
    assert found.starts == [1, 3, 5]
    namespace: dict = {}
    with pytest.raises(SyntaxError, match="cell 2 of the notebook is not Python"):
        exec(compile(found.text, "nb.py", "exec"), namespace)
    assert namespace["ran"] == [1]


def test_non_python_notebook_is_skipped(tmp_path):
    nb = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"language": "R", "name": "ir", "display_name": "R"}}
    )
    nb.cells = [nbformat.v4.new_code_cell("library(trl)\n# from trl import set_seed")]
    path = tmp_path / "r.ipynb"
    path.write_text(nbformat.writes(nb))
    result = api.fix_paths([str(path)]).results[0]
    assert (result.status, result.message) == (Status.SKIPPED, "not a Python notebook")


@pytest.mark.parametrize(
    "source",
    [
        "%pip install trl==0.11.4 \\\n  peft\nimport trl",
        "if True:\n    !pip install \\\n        trl\n    x = 1",
        "files = !ls\nx = %env HOME\ntrl.PPOTrainer??\n?trl",
        "%%bash\nfor f in *; do echo $f; done",
        "%%time\nfrom trl import set_seed\n",
        "pip install trl==0.8.6 \\\n    peft\nconda install -y numpy\nimport trl",  # automagic
        "",
    ],
)
def test_ipython_lines_round_trip_and_leave_python(source):
    text, saved = notebooks.to_python(source)
    ast.parse(text)
    assert notebooks.from_python(text, saved) == source
    assert len(text.splitlines()) == len(source.splitlines())


def test_automagic_pip_line_is_kept_and_the_cell_is_fixed(tmp_path):
    # IPython runs `pip install ...` without `%`; before, `fix` called it a syntax error.
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("pip install trl==0.8.6\nfrom trl import set_seed\nset_seed(0)")
    ]
    path = tmp_path / "auto.ipynb"
    path.write_text(nbformat.writes(nb))
    result = api.fix_paths([str(path)], select=SELECT).results[0]
    assert result.status is Status.CHANGED, result.message
    assert code_sources(json.loads(path.read_text())) == [
        "pip install trl==0.8.6\nfrom transformers import set_seed\nset_seed(0)"
    ]


def test_a_written_helper_goes_below_the_imports_cell_not_above_the_pip_cell(tmp_path):
    # seen in AmenallahBouhachem/RLHF-PPO-DPO-GRPO-KTO-Implementation: `scores_in_label_order`
    # landed above the notebook's first cell (`!pip install ...`), ahead of every import
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("!pip install -q trl"),
        nbformat.v4.new_code_cell("import trl\nfrom transformers import pipeline"),
        nbformat.v4.new_code_cell(
            'pipe = pipeline("sentiment-analysis")\nkw = {"return_all_scores": True}\n'
            'print(pipe("good", **kw))'
        ),
    ]
    path = tmp_path / "scores.ipynb"
    path.write_text(nbformat.writes(nb))
    result = api.fix_paths([str(path)], select=["TRL108"]).results[0]
    assert result.status is Status.CHANGED, result.message
    cells = code_sources(json.loads(path.read_text()))
    assert cells[0] == "!pip install -q trl"
    assert cells[1].startswith(
        "import trl\nfrom transformers import pipeline\n\n\ndef scores_in_label_order(pipe, outputs):"
    )
    assert cells[2] == (
        'pipe = pipeline("sentiment-analysis")\nkw = {"top_k": None}\n'
        'print(scores_in_label_order(pipe, pipe("good", **kw)))'
    )
    again = api.fix_paths([str(path)], select=["TRL108"]).results[0]
    assert again.status is Status.UNCHANGED


def test_a_helper_imported_in_two_cells_is_written_in_once(tmp_path):
    # seen in DhanushGD/RLHF-PPO: `from trl.core import LengthSampler` in two cells gave two
    # copies of the class, both above the first cell that used it
    path = tmp_path / "twice.ipynb"
    sampler = "from trl.core import LengthSampler"
    result, cells = fix_cells(
        path,
        [
            f"{sampler}\nimport torch",
            "a = LengthSampler(1, 4)",
            f"{sampler}\nb = LengthSampler(2, 8)",
        ],
        ["TRL101"],
    )
    assert result.status is Status.CHANGED, result.message
    assert "".join(cells).count("class LengthSampler") == 1
    assert cells[0].startswith("import torch\n\n\nclass LengthSampler:")
    assert cells[1:] == ["a = LengthSampler(1, 4)", "b = LengthSampler(2, 8)"]
    assert refix(path, ["TRL101"]).status is Status.UNCHANGED


def test_an_import_the_rewrite_adds_goes_below_the_pip_install_cell(tmp_path):
    # seen in abhaykrishna2010/SAMSUNG_PRISM_...: `from peft import get_peft_model` went above
    # the first cell, `!pip install ... peft ...`, where it runs before peft is installed
    path = tmp_path / "pip.ipynb"
    model = (
        "from trl import AutoModelForCausalLMWithValueHead\n"
        'm = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", peft_config=cfg)'
    )
    result, cells = fix_cells(path, ["!pip install -q peft trl", "import torch", model], ["TRL102"])
    assert result.status is Status.CHANGED, result.message
    assert cells[:2] == [
        "!pip install -q peft trl",
        "import torch\nfrom peft import get_peft_model",
    ]
    assert cells[2] == (
        "from transformers import AutoModelForCausalLM\n"
        'm = get_peft_model(AutoModelForCausalLM.from_pretrained("gpt2"), cfg)'
    )
    assert refix(path, ["TRL102"]).status is Status.UNCHANGED


def test_a_cell_indented_as_a_whole_runs_as_ipython_runs_it(tmp_path):
    # seen in DhanushGD/RLHF-PPO: a cell `    trainer.train()` (pasted from inside a block) is
    # one IPython runs (it takes the first line's indentation off every line): not a syntax error
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "    from trl import AutoModelForCausalLMWithValueHead\n"
            '    m = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")\n'
            "\n"
            "# a note at the margin"
        ),
        nbformat.v4.new_code_cell("    print(m)\n#https://example.com"),
    ]
    path = tmp_path / "indented.ipynb"
    path.write_text(nbformat.writes(nb))
    result = api.fix_paths([str(path)], select=["TRL102"]).results[0]
    assert result.status is Status.CHANGED, result.message
    assert code_sources(json.loads(path.read_text())) == [
        "    from transformers import AutoModelForCausalLM\n"
        '    m = AutoModelForCausalLM.from_pretrained("gpt2")\n'
        "\n"
        "    # a note at the margin",
        "    print(m)\n#https://example.com",  # left alone: byte for byte
    ]
    assert api.fix_paths([str(path)], select=["TRL102"]).results[0].status is Status.UNCHANGED
    script = notebooks.runnable(path.read_text()).text
    assert script.startswith("from transformers import AutoModelForCausalLM\nm = ")
    ast.parse(script)

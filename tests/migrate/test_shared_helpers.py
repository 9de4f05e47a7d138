"""Removed helpers that several files of one folder need are written once, into
`trl_migrate_helpers.py` beside them (codemods/shared.py), when the folder's own imports show
the files will find it; otherwise each file keeps its copy."""

from __future__ import annotations

from codemods import inline
from migrate import api
from migrate.kernel.findings import Fix, Severity, Status
from tests.migrate.test_star_imports import fixed, repo

SAMPLER = "from trl.core import LengthSampler\n"
MAIN = 'if __name__ == "__main__":\n    print(LengthSampler(2, 8)())\n'
COPY = inline.lookup("trl.core.LengthSampler").replace("__NAME__", "LengthSampler")  # type: ignore[union-attr]


def tree(root) -> dict[str, str]:
    return fixed(root)


def result(report, name: str):
    return next(r for r in report.results if r.path.endswith(name))


def test_two_scripts_of_a_folder_import_the_helper_from_one_module(tmp_path):
    root = repo(
        tmp_path,
        {
            "ppo.py": "import torch\n" + SAMPLER + "\n" + MAIN,
            "eval.py": SAMPLER + "from trl.core import masked_mean\n\n" + MAIN,
        },
    )
    report = api.fix_paths([str(root)])
    out = tree(root)
    assert out["ppo.py"] == (
        "import torch\nfrom trl_migrate_helpers import LengthSampler\n\n" + MAIN
    )
    # masked_mean, which only eval.py needs, stays a copy in eval.py
    mean = inline.lookup("trl.core.masked_mean").replace("__NAME__", "masked_mean")  # type: ignore[union-attr]
    assert out["eval.py"].startswith("from trl_migrate_helpers import LengthSampler\n")
    assert mean in out["eval.py"]
    assert out["trl_migrate_helpers.py"] == inline.shared_module(["LengthSampler"])
    module = result(report, "trl_migrate_helpers.py")
    assert module.status is Status.CHANGED
    [finding] = module.findings
    assert (finding.code, finding.severity, finding.fix) == ("TRL101", Severity.INFO, Fix.APPLIED)
    assert "helpers `LengthSampler`, written" in finding.message
    assert "(eval.py, ppo.py)" in finding.message
    messages = [f.message for f in result(report, "ppo.py").findings]
    assert messages == [
        "`trl.core.LengthSampler` was removed in TRL 0.25.0; an equivalent definition was "
        "written into `trl_migrate_helpers.py` beside this file"
    ]
    # A second run changes nothing, and leaves the module as it is.
    again = api.fix_paths([str(root)])
    assert {r.status for r in again.results} <= {Status.UNCHANGED, Status.SKIPPED}
    assert tree(root) == out


def test_the_shared_module_defines_what_the_copies_did():
    space: dict = {}
    exec(inline.shared_module(["LengthSampler", "masked_mean"]), space)  # noqa: S102
    assert 2 <= space["LengthSampler"](2, 4)() < 4
    import torch

    values, mask = torch.tensor([1.0, 2.0, 9.0]), torch.tensor([1.0, 1.0, 0.0])
    assert float(space["masked_mean"](values, mask)) == 1.5


def test_a_package_with_relative_imports_imports_it_relatively(tmp_path):
    root = repo(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from .b import x\n" + SAMPLER + "y = LengthSampler(1, 3)\n",
            "pkg/b.py": "from . import c\nfrom trl.core import LengthSampler as LS\nx = LS(1, 2)\n",
            "pkg/c.py": "",
        },
    )
    api.fix_paths([str(root)])
    out = tree(root)
    assert out["pkg/a.py"] == (
        "from .b import x\nfrom .trl_migrate_helpers import LengthSampler\ny = LengthSampler(1, 3)\n"
    )
    assert out["pkg/b.py"] == (
        "from . import c\nfrom .trl_migrate_helpers import LengthSampler as LS\nx = LS(1, 2)\n"
    )
    assert out["pkg/trl_migrate_helpers.py"] == inline.shared_module(["LengthSampler"])


def test_files_with_no_sign_of_how_they_are_imported_keep_their_copies(tmp_path):
    # Library modules: no neighbour imports, no __main__ guard, run from who knows where.
    root = repo(tmp_path, {"lib/a.py": SAMPLER + "A = 1\n", "lib/b.py": SAMPLER + "B = 2\n"})
    report = api.fix_paths([str(root)])
    out = tree(root)
    assert "lib/trl_migrate_helpers.py" not in out
    assert COPY in out["lib/a.py"] and COPY in out["lib/b.py"]
    assert "trl_migrate_helpers" not in out["lib/a.py"] + out["lib/b.py"]
    assert all(not r.path.endswith("trl_migrate_helpers.py") for r in report.results)


def test_a_script_another_file_imports_by_a_dotted_path_keeps_its_copy(tmp_path):
    root = repo(
        tmp_path,
        {
            "jobs/a.py": SAMPLER + MAIN,
            "jobs/b.py": SAMPLER + MAIN,
            "jobs/c.py": SAMPLER + MAIN,
            "run.py": "from jobs.c import LengthSampler\n",
        },
    )
    api.fix_paths([str(root)])
    out = tree(root)
    assert out["jobs/a.py"].startswith("from trl_migrate_helpers import LengthSampler\n")
    assert out["jobs/b.py"].startswith("from trl_migrate_helpers import LengthSampler\n")
    assert "class LengthSampler" in out["jobs/c.py"]


def test_a_users_module_of_that_name_is_left_alone_and_files_keep_copies(tmp_path):
    mine = "def helper():\n    return 1\n"
    root = repo(
        tmp_path,
        {"a.py": SAMPLER + MAIN, "b.py": SAMPLER + MAIN, "trl_migrate_helpers.py": mine},
    )
    api.fix_paths([str(root)])
    out = tree(root)
    assert out["trl_migrate_helpers.py"] == mine
    assert "class LengthSampler" in out["a.py"] and "class LengthSampler" in out["b.py"]


def test_check_and_diff_create_nothing(tmp_path):
    root = repo(tmp_path, {"a.py": SAMPLER + MAIN, "b.py": SAMPLER + MAIN})
    before = tree(root)
    check = api.fix_paths([str(root)], mode="check")
    assert check.exit_code == 1 and tree(root) == before
    assert result(check, "trl_migrate_helpers.py").status is Status.CHANGED
    diff = api.fix_paths([str(root)], mode="diff")
    assert tree(root) == before
    text = result(diff, "trl_migrate_helpers.py").diff
    assert text.startswith("--- a/") and "+class LengthSampler:\n" in text


def test_our_module_serves_a_later_single_file(tmp_path):
    root = repo(tmp_path, {"a.py": SAMPLER + MAIN, "b.py": SAMPLER + MAIN})
    api.fix_paths([str(root)])
    (root / "c.py").write_text(SAMPLER + "from trl.core import masked_mean\n" + MAIN)
    report = api.fix_paths([str(root / "c.py")])
    out = tree(root)
    assert out["c.py"].startswith("from trl_migrate_helpers import LengthSampler\n")
    assert "def masked_mean(" in out["c.py"]  # needed by c.py alone: its own copy
    assert out["trl_migrate_helpers.py"] == inline.shared_module(["LengthSampler"])
    assert result(report, "trl_migrate_helpers.py").status is Status.UNCHANGED


def test_our_module_grows_when_two_files_need_another_helper(tmp_path):
    root = repo(tmp_path, {"a.py": SAMPLER + MAIN, "b.py": SAMPLER + MAIN})
    api.fix_paths([str(root)])
    mean = "from trl.core import masked_mean\n" + MAIN.replace(
        "LengthSampler(2, 8)()", "masked_mean"
    )
    (root / "c.py").write_text(mean)
    (root / "d.py").write_text(mean)
    api.fix_paths([str(root)])
    out = tree(root)
    assert out["c.py"].startswith("from trl_migrate_helpers import masked_mean\n")
    assert out["trl_migrate_helpers.py"] == inline.shared_module(["LengthSampler", "masked_mean"])


def test_pipeline_scores_helper_is_shared_too(tmp_path):
    script = (
        "from transformers import pipeline\n"
        "from trl.core import LengthSampler\n"
        'pipe = pipeline("sentiment-analysis", return_all_scores=True)\n'
        'scores = pipe(["a"])\n'
        "n = LengthSampler(1, 2)\n"
        "trainer.train()\n"
    )
    root = repo(tmp_path, {"a.py": script, "b.py": script})
    api.fix_paths([str(root)])
    out = tree(root)
    assert out["a.py"] == (
        "from transformers import pipeline\n"
        "from trl_migrate_helpers import scores_in_label_order, LengthSampler\n"
        'pipe = pipeline("sentiment-analysis", top_k=None)\n'
        'scores = scores_in_label_order(pipe, pipe(["a"]))\n'
        "n = LengthSampler(1, 2)\n"
        "trainer.train()\n"
    )
    assert out["trl_migrate_helpers.py"] == inline.shared_module(
        ["LengthSampler", "scores_in_label_order"]
    )


def test_a_module_that_cannot_be_written_leaves_the_files_their_copies(tmp_path, monkeypatch):
    from migrate.api import fix
    from migrate.kernel.files import SourceError

    def refuse(path, data):
        raise SourceError("cannot create the file: disk full")

    monkeypatch.setattr(fix, "create_file", refuse)
    root = repo(tmp_path, {"a.py": SAMPLER + MAIN, "b.py": SAMPLER + MAIN})
    report = api.fix_paths([str(root)])
    out = tree(root)
    assert "trl_migrate_helpers.py" not in out
    assert "class LengthSampler" in out["a.py"] and "class LengthSampler" in out["b.py"]
    module = result(report, "trl_migrate_helpers.py")
    assert module.status is Status.FAILED and "disk full" in module.message
    assert result(report, "a.py").status is Status.CHANGED

"""The pre-commit hooks, run the way users run them: `pre-commit try-repo` in a fresh git repo."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).parents[2]


@pytest.fixture(scope="module")
def precommit_home(tmp_path_factory):
    if shutil.which("pre-commit") is None:
        pytest.skip("pre-commit is not installed (it comes with the `test` extra)")
    if not (ROOT / ".git").exists():
        pytest.skip("needs trl-migrate as a git checkout")
    return tmp_path_factory.mktemp("pre-commit-home")


def user_repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "train.py").write_text("from trl import set_seed\nset_seed(0)\n")
    (tmp_path / "clean.py").write_text("import os\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=tmp_path, check=True, env=env)
    return tmp_path


def try_repo(repo, hook, home):
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run(
        ["pre-commit", "try-repo", str(ROOT), hook, "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_check_hook_fails_then_fix_hook_rewrites_then_check_passes(tmp_path, precommit_home):
    repo = user_repo(tmp_path)
    check = try_repo(repo, "trl-migrate-check", precommit_home)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "train.py:1:17: TRL101 error [fixable]" in check.stdout
    fixed = try_repo(repo, "trl-migrate-fix", precommit_home)
    assert fixed.returncode == 1 and "files were modified by this hook" in fixed.stdout
    assert (repo / "train.py").read_text() == "from transformers import set_seed\nset_seed(0)\n"
    again = try_repo(repo, "trl-migrate-check", precommit_home)
    assert again.returncode == 0, again.stdout

"""compat.declared: the TRL releases a project's own requirement files admit, and what `fix`
does with them (codemods keep those releases' PPO defaults)."""

from __future__ import annotations

import pytest

from codemods import ppo
from compat.declared import admitted, matching, nearest, root_sources

RELEASES = ppo.releases()


def _project(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(tmp_path)


@pytest.mark.parametrize(
    ("files", "first", "last", "said"),
    [
        pytest.param(
            {"requirements.txt": "torch\ntrl==0.7.10\n"},
            "0.7.10",
            "0.7.10",
            "trl==0.7.10 (requirements.txt)",
            id="a-pin",
        ),
        pytest.param(
            {
                "pyproject.toml": '[tool.poetry.dependencies]\ntrl = "^0.4.1"\n',
                "requirements/base.txt": "trl<0.4.6\n",
            },
            "0.4.1",
            "0.4.5",
            "trl = ^0.4.1 (pyproject.toml); trl<0.4.6 (requirements/base.txt)",
            id="poetry-caret-and-a-requirements-folder-intersect",
        ),
        pytest.param(
            {"requirements.txt": "trl>=0.8.0\n", "examples/requirements.txt": "trl==0.4.7\n"},
            "0.8.0",
            "1.12.0",
            "trl>=0.8.0 (requirements.txt)",
            id="a-deeper-file-does-not-count",
        ),
    ],
)
def test_admitted_releases(tmp_path, files, first, last, said):
    found = admitted(_project(tmp_path, files), "trl", RELEASES)
    assert found is not None
    assert (found.releases[0], found.releases[-1], found.said) == (first, last, said)


@pytest.mark.parametrize(
    "files",
    [
        pytest.param({}, id="no-sources"),
        pytest.param({"requirements.txt": "trl\ntorch==2.1\n"}, id="unpinned"),
        pytest.param(
            {"requirements.txt": "trl==0.7.10\n", "constraints.txt": "trl>=0.8\n"},
            id="contradicting",
        ),
        pytest.param({"requirements.txt": "trl>=2\n"}, id="no-release-with-ppo"),
    ],
)
def test_nothing_admitted(tmp_path, files):
    assert admitted(_project(tmp_path, files), "trl", RELEASES) is None


def test_root_sources_are_the_root_s_and_its_requirements_folder(tmp_path):
    root = _project(
        tmp_path,
        {
            "requirements.txt": "",
            "requirements/dev.txt": "",
            "docs/requirements.txt": "",
            "notebook.ipynb": "{}",
            "README.md": "",
        },
    )
    assert [p[len(root) + 1 :] for p in root_sources(root)] == [
        "requirements.txt",
        "requirements/dev.txt",
    ]


def test_matching_reads_a_bare_version_as_a_pin():
    assert matching("0.7.10", RELEASES) == ("0.7.10",)
    assert matching(">=0.11,<0.12", RELEASES) == ("0.11.0", "0.11.1", "0.11.2", "0.11.3", "0.11.4")


def test_fix_keeps_the_defaults_of_the_release_the_project_pins(tmp_path):
    from migrate import api

    root = _project(
        tmp_path,
        {
            "requirements.txt": "trl==0.7.10\n",
            "train.py": "from trl import PPOConfig\nconfig = PPOConfig(learning_rate=1e-5)\n",
        },
    )
    report = api.fix_paths([root], mode=api.DIFF)
    (result,) = [r for r in report.results if r.path.endswith("train.py")]
    assert (
        "config = RLOOConfig(learning_rate=1e-5, per_device_train_batch_size=1, "
        "steps_per_generation=256," in result.new.decode()
    )
    assert (
        "`batch_size` is not set and its legacy PPO (TRL <= 0.11) default changed between "
        "releases; the rewrite keeps 256, the default of the releases that trl==0.7.10 "
        "(requirements.txt) allows" in [f.message for f in result.findings]
    )
    # --trl-version wins over the file
    report = api.fix_paths([root], mode=api.DIFF, options=api.trl_version("0.11.4", api.Options()))
    (result,) = [r for r in report.results if r.path.endswith("train.py")]
    assert "per_device_train_batch_size=128," in result.new.decode()


def test_a_script_takes_the_declaration_of_the_nearest_folder_that_has_one(tmp_path):
    # Myashka/CQA_RLHF: rlhf/requirements.txt pins trl==0.4.1 for rlhf/train_ppo.py; the root
    # declares none
    root = _project(
        tmp_path,
        {
            "requirements.txt": "trl>=0.8.0\n",
            "rlhf/requirements.txt": "trl==0.4.1\n",
            "rlhf/deep/train.py": "",
            "tools/requirements.txt": "trl\n",  # unpinned: says nothing, the root decides
            "tools/t.py": "",
            "t.py": "",
        },
    )
    for script, said in [
        ("rlhf/train.py", "trl==0.4.1 (rlhf/requirements.txt)"),
        ("rlhf/deep/train.py", "trl==0.4.1 (rlhf/requirements.txt)"),
        ("tools/t.py", "trl>=0.8.0 (requirements.txt)"),
        ("t.py", "trl>=0.8.0 (requirements.txt)"),
    ]:
        found = nearest(f"{root}/{script}", root, "trl", RELEASES)
        assert found is not None and found.said == said, script
    assert nearest(f"{root}/rlhf/train.py", root, "trl", RELEASES).releases == ("0.4.1",)
    assert nearest("/elsewhere/t.py", root, "trl", RELEASES) is None


def test_fix_keeps_the_defaults_each_script_s_own_folder_declares(tmp_path):
    from migrate import api

    script = "from trl import PPOConfig\nconfig = PPOConfig(learning_rate=1e-5)\n"
    root = _project(
        tmp_path,
        {"rlhf/requirements.txt": "trl==0.4.1\n", "rlhf/train.py": script, "train.py": script},
    )
    report = api.fix_paths([root], mode=api.DIFF)
    results = {r.path[len(root) + 1 :]: r for r in report.results}
    assert (
        "config = RLOOConfig(learning_rate=1e-5, per_device_train_batch_size=1, "
        "steps_per_generation=256," in results["rlhf/train.py"].new.decode()
    )
    assert (
        "`mini_batch_size` is not set and its legacy PPO (TRL <= 0.11) default changed between "
        "releases; the rewrite keeps 1, the default of the releases that trl==0.4.1 "
        "(rlhf/requirements.txt) allows" in [f.message for f in results["rlhf/train.py"].findings]
    )
    # the root's script has no declaration, and its code does not tell its era
    assert (
        "this call was left as it is: cannot tell whether it is legacy (<= 0.11) or v2 PPOConfig "
        "from its keywords or this file" in results["train.py"].new.decode()
    )


def test_fixing_one_file_of_a_copy_without_git_reads_the_same_pin_as_fixing_the_folder(
    tmp_path, monkeypatch
):
    # a repository copied without .git or a pyproject.toml: `fix src/ppo.py` from its top took
    # src/ as the project and missed the top's requirements.txt, so it wrote other defaults than
    # `fix .` did for the same file
    from migrate import api

    root = _project(
        tmp_path,
        {
            "requirements.txt": "trl==0.7.10\n",
            "src/ppo.py": "from trl import PPOConfig\nconfig = PPOConfig(learning_rate=1e-5)\n",
        },
    )
    monkeypatch.chdir(root)
    (one,) = api.fix_paths(["src/ppo.py"], mode=api.DIFF).results
    (whole,) = api.fix_paths(["."], mode=api.DIFF).results
    assert "per_device_train_batch_size=1, steps_per_generation=256," in one.new.decode()
    assert one.new == whole.new
    assert [f.message for f in one.findings] == [f.message for f in whole.findings]

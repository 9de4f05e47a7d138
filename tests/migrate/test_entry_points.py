"""Entry points as a repository has them: launch lines read from shell scripts, Makefiles and
README fences (cd, continuations, variables, accelerate/deepspeed/torchrun, python -m), and the
scripts that prove a rewritten library module by importing it. Reading only: nothing runs."""

from __future__ import annotations

import os
import pathlib
import shutil

import pytest

from migrate.smoke.entry_points import find, imports_of, project_root, runs_training
from migrate.smoke.launchers import module_file, read_launches

FIXTURE = pathlib.Path(__file__).parents[1] / "fixtures" / "repos" / "rlhf_project"


def _repo(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _launch(tmp_path, launcher: str, text: str, scripts=("train.py",)):  # type: ignore[no-untyped-def]
    files = {s: "print(1)\n" for s in scripts}
    files[launcher] = text
    root = _repo(tmp_path, files)
    return [
        (
            os.path.relpath(x.script, root) if x.script else "",
            x.module,
            list(x.args),
            os.path.relpath(x.cwd, root),
            x.line,
            list(x.unresolved),
        )
        for x in read_launches(str(root / launcher), str(root))
    ]


@pytest.mark.parametrize(
    ("launcher", "text", "scripts", "expected"),
    [
        pytest.param(
            "run.sh",
            "python train.py --lr 1e-5\n",
            ("train.py",),
            [("train.py", "", ["--lr", "1e-5"], ".", 1, [])],
            id="plain",
        ),
        pytest.param(
            "run.sh",
            "#!/bin/bash\nMODEL=gpt2\nexport OUT=runs\npython3 -u train.py \\\n  --model $MODEL \\\n"
            "  --out ${OUT}/a --seed ${SEED:-7}\n",
            ("train.py",),
            [("train.py", "", ["--model", "gpt2", "--out", "runs/a", "--seed", "7"], ".", 4, [])],
            id="variables-and-continuations",
        ),
        pytest.param(
            # ktolnos's evaluate_policy.sh: an optional flag through `${DEBUG_MODE:-}` and a
            # command substitution that adds one when a variable is set
            "run.sh",
            "python train.py --a 1 \\\n  ${DEBUG_MODE:-} \\\n"
            '  $([ ! -z "${BASE:-}" ] && echo "--base $BASE") \\\n'
            '  --out "" --tag `date +%s` --seed 3 && echo done\n',
            ("train.py",),
            [
                (
                    "train.py",
                    "",
                    ["--a", "1", "--out", "", "--seed", "3"],
                    ".",
                    1,
                    ["$([ ! -z ${BASE:-} ] && echo --base $BASE)", "--tag", "`date +%s`"],
                )
            ],
            id="empty-variable-and-command-substitution",
        ),
        pytest.param(
            "run.sh",
            "python train.py --run_name $WANDB_NAME --lr 3\n",
            ("train.py",),
            [("train.py", "", ["--lr", "3"], ".", 1, ["--run_name", "$WANDB_NAME"])],
            id="unset-variable-dropped-with-its-flag",
        ),
        pytest.param(
            "scripts/run.sh",
            "cd src\npython train.py --x 1 > log.txt 2>&1 &\n",
            ("src/train.py",),
            [("src/train.py", "", ["--x", "1"], "src", 2, [])],
            id="cd-and-redirections",
        ),
        pytest.param(
            "scripts/run.sh",
            "python train.py\n",
            ("scripts/train.py",),
            [("scripts/train.py", "", [], "scripts", 1, [])],
            id="script-beside-the-launcher",
        ),
        pytest.param(
            "run.sh",
            "CUDA_VISIBLE_DEVICES=0,1 accelerate launch --num_processes 2 --config_file a.yaml "
            "train.py --bf16 True\ndeepspeed --num_gpus 8 train.py --deepspeed ds.json\n"
            "torchrun --nproc_per_node=4 train.py\n",
            ("train.py",),
            [
                ("train.py", "", ["--bf16", "True"], ".", 1, []),
                ("train.py", "", ["--deepspeed", "ds.json"], ".", 2, []),
                ("train.py", "", [], ".", 3, []),
            ],
            id="accelerate-deepspeed-torchrun",
        ),
        pytest.param(
            "run.sh",
            "cd pkg && python -m pkg.train --steps 3\n",
            ("pkg/pkg/train.py",),
            [("", "pkg.train", ["--steps", "3"], "pkg", 1, [])],
            id="cd-then-module",
        ),
        pytest.param(
            "README.md",
            "Run it:\n\n```bash\n$ python train.py --a 1\n```\n\n```python\npython x.py\n```\n",
            ("train.py",),
            [("train.py", "", ["--a", "1"], ".", 4, [])],
            id="readme-fences-only-shell",
        ),
        pytest.param(
            "Makefile",
            "train:\n\tpython train.py --fast\n\nlint:\n\truff check .\n",
            ("train.py",),
            [("train.py", "", ["--fast"], ".", 2, [])],
            id="makefile-recipe",
        ),
        pytest.param(
            "README.md",
            "```\npython train.py --help\npython train.py --model <your-model> --data d.json ...\n```\n",
            ("train.py",),
            [("train.py", "", ["--data", "d.json"], ".", 3, ["--model", "<your-model>", "..."])],
            id="placeholders-dropped-help-skipped",
        ),
        pytest.param(
            # bcmin1018: a README names RL/PPO/PPO.py by its name alone, for a reader in its
            # folder; a name two files share is left as written
            "README.md",
            "```\npython PPO.py --mode train\npython train.py --lr 1\npython rm/x.py\n"
            "S=PPO.py\npython $S\n```\n",
            ("RL/PPO/PPO.py", "a/train.py", "b/train.py", "src/rm/x.py"),
            [
                ("RL/PPO/PPO.py", "", ["--mode", "train"], "RL/PPO", 2, []),
                ("train.py", "", ["--lr", "1"], ".", 3, []),
                ("src/rm/x.py", "", [], "src/rm", 4, []),
                ("RL/PPO/PPO.py", "", [], "RL/PPO", 6, []),
            ],
            id="readme-file-elsewhere-in-the-repo",
        ),
        pytest.param(
            "run.sh",
            "pip install -r requirements.txt\necho python train.py\nls *.py\n",
            ("train.py",),
            [],
            id="no-launch",
        ),
        pytest.param(
            # JAGADISHSUNILPEDNEKAR/RLHF-training-pipeline: a ```mermaid diagram first; its
            # closing fence was read as an opening one, so the README's fences were read inside
            # out and its `python scripts/run_ppo.py` never found
            "README.md",
            "```mermaid\ngraph TD\n  python x.py --> b\n```\n\nText `python no.py`.\n"
            "```python\nimport os\n```\n```bash\npython train.py --lr 1\n```\n",
            ("train.py", "x.py", "no.py"),
            [("train.py", "", ["--lr", "1"], ".", 11, [])],
            id="readme-fence-of-another-language-first",
        ),
    ],
)
def test_launch_lines(tmp_path, launcher, text, scripts, expected):
    assert _launch(tmp_path, launcher, text, scripts) == expected


def test_module_file_from_root_or_src(tmp_path):
    root = _repo(tmp_path, {"src/pkg/__init__.py": "", "src/pkg/run.py": "", "a/__main__.py": ""})
    assert module_file("pkg.run", str(root)) == str(root / "src/pkg/run.py")
    assert module_file("a", str(root)) == str(root / "a/__main__.py")
    assert module_file("nope", str(root)) == ""
    # a console script's `pkg:main` (Lexsi-Labs/aligntune's `aligntune.cli:main`): the
    # package's own module, where `python -m` would run its __main__.py
    assert module_file("pkg:main", str(root)) == str(root / "src/pkg/__init__.py")
    assert module_file("pkg.run:main", str(root)) == str(root / "src/pkg/run.py")
    assert module_file("a:main", str(root)) == ""


@pytest.mark.parametrize(
    ("source", "how"),
    [
        ('if __name__ == "__main__":\n    main()\n', "__main__ guard"),
        ("t = make()\nt.train()\n", "top-level .train()"),
        ("def go(t):\n    t.train()\n", ""),
        ("ppo = PPOTrainer(config, model)\n", "top-level trainer"),
        ("for batch in loader:\n    stats = ppo.step(q, r, s)\n", "top-level PPO loop"),
        ("ppo.step(q, r, s)\n", ""),
        ("def make():\n    return RLOOTrainer(model='m')\n", ""),
        ("model = AutoModelForCausalLMWithValueHead.from_pretrained('gpt2')\n", ""),
        ("x = (", ""),
        ("def main():\n    pass\n\nmain()\n", "top-level main()"),
        ("rl = RLFinetuning(config)\nrl.train_and_save('out')\n", "top-level train_and_save()"),
        ("def run():\n    main()\n    rl.train_and_save()\n", ""),
        ("log.trainable = 1\nmodel.training_step\n", ""),
        # Python 3.12's f-string reusing its quotes (ivanluk914's notebook): below 3.12 the
        # statement is left out, the rest still says how the file trains
        ('print(f"kl: {stats["kl"]}")\nt = make()\nt.train()\n', "top-level .train()"),
        ('print(f"kl: {stats["kl"]}")\n', ""),
    ],
)
def test_runs_training(source, how):
    assert runs_training(source) == how


def test_imports_resolve_root_src_sibling_and_relative_never_stdlib(tmp_path):
    root = _repo(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/core.py": "from . import util\nfrom .sub import deep\n",
            "src/pkg/util.py": "",
            "src/pkg/sub/__init__.py": "",
            "src/pkg/sub/deep.py": "",
            "scripts/helper.py": "",
            "scripts/time.py": "",
            "scripts/run.py": "import time\nimport helper\nfrom pkg.core import x\n",
        },
    )
    rel = lambda paths: sorted(os.path.relpath(p, root) for p in paths)  # noqa: E731
    run = root / "scripts/run.py"
    assert rel(imports_of(str(run), run.read_text(), str(root))) == [
        "scripts/helper.py",
        "src/pkg/__init__.py",
        "src/pkg/core.py",
    ]
    core = root / "src/pkg/core.py"
    assert rel(imports_of(str(core), core.read_text(), str(root))) == [
        "src/pkg/sub/__init__.py",
        "src/pkg/sub/deep.py",
        "src/pkg/util.py",
    ]


def test_fixture_repo_entry_point_proves_the_library_module(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    rewritten = [str(root / "src/rlhfpkg/train.py"), str(root / "src/rlhfpkg/legacy.py")]
    found, missing = find(str(root), {}, rewritten)
    assert [e.to_json() for e in found] == [
        {
            "path": str(root / "scripts/train_ppo.py"),
            "found_in": "run_ppo.sh:4",
            "args": ["--model_name", "Qwen/Qwen3-0.6B", "--config", "configs/ppo.yaml"],
            "cwd": str(root),
            "launch": "python scripts/train_ppo.py --model_name $MODEL --config configs/ppo.yaml",
            "module": "",
            "via": [str(root / "src/rlhfpkg/train.py")],
            "also": [],
            "unresolved": [],
            "left_out": [],
            "config_left_out": [],
        }
    ]
    assert [(m.path, m.why) for m in missing] == [
        (
            str(root / "src/rlhfpkg/legacy.py"),
            "no entry point reaches it: nothing in the repo imports it, it has no __main__ "
            "guard or top-level .train(), and no launch line of the repo runs it",
        )
    ]


def test_a_module_imported_only_by_other_library_code_says_by_whom(tmp_path):
    root = _repo(
        tmp_path,
        {
            "lib/ppo.py": "import trl\n",
            "lib/api.py": "from lib import ppo\n",
            "lib/__init__.py": "",
        },
    )
    found, missing = find(str(root), {}, [str(root / "lib/ppo.py")])
    assert found == []
    assert missing[0].why.startswith(
        f"no entry point reaches it: imported by {root / 'lib/api.py'}"
    )


def test_transitive_importer_and_launch_line_win_over_main_guard(tmp_path):
    root = _repo(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/ppo.py": "import trl\n",
            "pkg/loop.py": "from pkg.ppo import x\n",
            "train.py": "from pkg.loop import y\nif __name__ == '__main__':\n    y()\n",
            "go.sh": "python train.py --n 2\n",
        },
    )
    found, missing = find(str(root), {}, [str(root / "pkg/ppo.py")])
    assert missing == []
    assert [(e.path, e.found_in, e.args, e.via) for e in found] == [
        (str(root / "train.py"), "go.sh:1", ("--n", "2"), (str(root / "pkg/ppo.py"),))
    ]


def test_a_package_module_with_relative_imports_runs_as_a_module(tmp_path):
    # stephendongg/rlhf-clinical-redteaming: src/cli.py (`from . import config`) has a __main__
    # guard; run by path it raised "attempted relative import with no known parent package"
    main = "from . import config\nimport trl\nif __name__ == '__main__':\n    config.go()\n"
    plain = "import trl\nif __name__ == '__main__':\n    pass\n"
    root = _repo(
        tmp_path,
        {
            "pyproject.toml": "",
            "src/__init__.py": "",
            "src/cli.py": main,
            "src/config.py": "",
            "loose/cli.py": main,  # no package: left as it is (it fails as it would for the user)
            "src/plain.py": plain,
        },
    )
    paths = [str(root / p) for p in ("src/cli.py", "loose/cli.py", "src/plain.py")]
    found, _ = find(str(root), {}, paths)
    assert [(e.path, e.found_in, e.module) for e in found] == [
        (str(root / "loose/cli.py"), "__main__ guard", ""),
        (str(root / "src/cli.py"), "__main__ guard", "src.cli"),
        (str(root / "src/plain.py"), "__main__ guard", ""),
    ]
    # a src/ layout: the package is the folder below src/
    layout = _repo(
        tmp_path / "layout",
        {"pyproject.toml": "", "src/pkg/__init__.py": "", "src/pkg/cli.py": main},
    )
    found, _ = find(str(layout), {}, [str(layout / "src/pkg/cli.py")])
    assert [e.module for e in found] == ["pkg.cli"]


def test_a_nested_project_s_module_is_proven_through_the_script_that_imports_it(tmp_path):
    # PrasannS/rlhf-length-biases: scripts/train_rlhf.py imports rlhfutils.rl_utils from
    # rlhfutils/rlhfutils/ (a project of its own, rlhfutils/setup.py)
    root = _repo(
        tmp_path,
        {
            "pyproject.toml": "",
            "rlhfutils/setup.py": "",
            "rlhfutils/rlhfutils/__init__.py": "",
            "rlhfutils/rlhfutils/rl_utils.py": "import trl\n",
            "scripts/train_rlhf.py": "from rlhfutils.rl_utils import loop\nloop()\n",
            "train.sh": "python scripts/train_rlhf.py --n 2\n",
        },
    )
    library = str(root / "rlhfutils/rlhfutils/rl_utils.py")
    found, missing = find(str(root), {}, [library])
    assert missing == []
    assert [(e.path, e.found_in, e.via) for e in found] == [
        (str(root / "scripts/train_rlhf.py"), "train.sh:1", (library,))
    ]


def test_project_root_is_the_nearest_marker(tmp_path):
    root = _repo(tmp_path, {"pyproject.toml": "", "a/b/c.py": ""})
    assert project_root(str(root / "a/b/c.py")) == str(root)
    bare = _repo(tmp_path / "bare", {"x/y.py": ""})
    assert project_root(str(bare / "x/y.py")) in (str(bare / "x"), str(root))


def test_rewritten_text_is_read_from_sources_not_disk(tmp_path):
    root = _repo(tmp_path, {"x.py": "import trl\n"})
    path = str(root / "x.py")
    found, _ = find(str(root), {path: b'if __name__ == "__main__":\n    pass\n'}, [path])
    assert [e.found_in for e in found] == ["__main__ guard"]


def test_fire_parameters_without_a_default_are_filled_by_name(tmp_path, monkeypatch):
    from migrate.reference.arguments import DATASET, MODEL, fire_fill

    monkeypatch.chdir(tmp_path)  # the stand-in data file is written here

    def main(model_name, data_path, epochs: int, lr=1e-5, *, output_dir, **rest):
        pass

    filled = fire_fill(main, ["--epochs", "3"])
    assert filled[:2] == ["--model_name", MODEL] and filled[4:] == ["--output_dir", filled[5]]
    assert filled[2] == "--data_path" and filled[3].endswith("data.jsonl")
    assert fire_fill(main, ["gpt2", "d.json", "3", "--output_dir=o"]) == []
    assert fire_fill(lambda dataset_name: None, []) == ["--dataset_name", DATASET]
    assert fire_fill(dict, []) == [] and fire_fill(None, []) == []


@pytest.mark.parametrize(
    ("declared", "name"),
    [
        pytest.param(
            {
                "pyproject.toml": '[project]\nname = "rlaif"\n\n[project.scripts]\n'
                'rlaif-train = "rlaif_pipeline.cli:train_main"\n'
            },
            "pyproject",
            id="pyproject",
        ),
        pytest.param(
            {
                "pyproject.toml": '[tool.poetry.scripts]\nrlaif-train = "rlaif_pipeline.cli:train_main"\n'
            },
            "poetry",
            id="poetry",
        ),
        pytest.param(
            {
                "setup.cfg": "[options.entry_points]\nconsole_scripts =\n"
                "    rlaif-train = rlaif_pipeline.cli:train_main\n"
            },
            "setup.cfg",
            id="setup-cfg",
        ),
        pytest.param(
            {
                "setup.py": "from setuptools import setup\nsetup(name='r', entry_points={\n"
                "    'console_scripts': ['rlaif-train=rlaif_pipeline.cli:train_main [extra]'],\n})\n"
            },
            "setup.py",
            id="setup-py",
        ),
    ],
)
def test_a_console_script_of_the_repo_is_a_launch_line(tmp_path, declared, name):
    # arnoni/rlaif-ppo-lora-nlp-rtx-4080-12gb's README runs `rlaif-train --config ...`, the
    # [project.scripts] entry rlaif_pipeline.cli:train_main; cli.py has no __main__ guard.
    root = _repo(
        tmp_path,
        {
            **declared,
            "src/rlaif_pipeline/__init__.py": "",
            "src/rlaif_pipeline/cli.py": "from rlaif_pipeline.pipeline import run\n"
            "def train_main():\n    run()\n",
            "src/rlaif_pipeline/pipeline.py": "def run():\n    trainer.train()\n",
            "README.md": "```bash\ngit clone https://x/rlaif.git\ncd rlaif\n"
            "rlaif-eval --help\nrlaif-train --config configs/c.yml\nother-tool --x 1\n```\n",
        },
    )
    launches = read_launches(str(root / "README.md"), str(root))
    assert [(x.line, x.module, x.args, x.script) for x in launches] == [
        (5, "rlaif_pipeline.cli:train_main", ("--config", "configs/c.yml"), "")
    ], name
    assert launches[0].cwd == str(root)  # `cd rlaif` after the clone: the repo root
    assert module_file("rlaif_pipeline.cli:train_main", str(root)) == str(
        root / "src/rlaif_pipeline/cli.py"
    )
    found, missing = find(str(root), {}, [str(root / "src/rlaif_pipeline/pipeline.py")])
    assert [(e.path, e.found_in, e.module, e.args) for e in found] == [
        (
            str(root / "src/rlaif_pipeline/cli.py"),
            "README.md:5",
            "rlaif_pipeline.cli:train_main",
            ("--config", "configs/c.yml"),
        )
    ] and missing == []


def test_no_console_scripts_where_the_package_declares_none_or_cannot_be_read(tmp_path):
    from migrate.smoke.launchers import console_scripts

    root = _repo(
        tmp_path,
        {
            "pyproject.toml": "[project\nname = ",  # broken: read as declaring nothing
            "setup.py": "setup(entry_points={'console_scripts': SCRIPTS})\n",
            "setup.cfg": "[metadata]\nname = x\n",
        },
    )
    assert console_scripts(str(root)) == {}


def test_the_launch_line_that_names_ppo_is_the_one_run(tmp_path):
    # Lexsi-Labs/aligntune's CLI docs run `aligntune info` before `aligntune train ... ppo`.
    root = _repo(
        tmp_path,
        {
            "cli.py": "import sys\nif __name__ == '__main__':\n    run(sys.argv)\n",
            "docs/cli.md": "```\npython cli.py info\npython cli.py eval --x 1\n"
            "python cli.py train --type ppo\npython cli.py train --type dpo\n```\n",
        },
    )
    [entry], _ = find(str(root), {}, [str(root / "cli.py")])
    assert (entry.found_in, entry.args) == ("docs/cli.md:4", ("train", "--type", "ppo"))
    assert entry.also == ("docs/cli.md:5", "docs/cli.md:2", "docs/cli.md:3")


def test_a_launched_cli_deep_in_a_package_is_found_beside_nearer_scripts(tmp_path):
    # BITnene465/shaft: scripts/train.py -> cli.train -> rl -> rl.dpo -> utils -> compat, the
    # rewritten module; a task script with a __main__ guard imports it more directly
    root = _repo(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/compat.py": "import trl\n",
            "pkg/utils.py": "from pkg.compat import x\n",
            "pkg/rl/__init__.py": "from . import dpo\n",
            "pkg/rl/dpo.py": "from pkg.utils import x\n",
            "pkg/cli/__init__.py": "",
            "pkg/cli/train.py": "from pkg import rl\n",
            "scripts/train.py": (
                "from pkg.cli.train import main\nif __name__ == '__main__':\n    main()\n"
            ),
            "scripts/task.py": "from pkg.utils import x\nif __name__ == '__main__':\n    x()\n",
            "README.md": "```\npython scripts/train.py rl --algorithm ppo\n```\n",
        },
    )
    found, missing = find(str(root), {}, [str(root / "pkg/compat.py")])
    assert missing == []
    assert [(e.path, e.found_in, e.args) for e in found] == [
        (str(root / "scripts/task.py"), "__main__ guard", ()),
        (str(root / "scripts/train.py"), "README.md:2", ("rl", "--algorithm", "ppo")),
    ]
    # without the launch line the CLI is too far to be taken for an entry point of it
    (root / "README.md").write_text("")
    found, _ = find(str(root), {}, [str(root / "pkg/compat.py")])
    assert [e.path for e in found] == [str(root / "scripts/task.py")]


# TRL's example scripts keep their usage in a string after the imports; copies of them in public
# repos (ninoaf/PPO_transfomer_toy, TPNxl/592rli-llm-project) keep TRL's path or their own.
USAGE = '''\
"""Train with PPO.

    python other.py --not this one
"""
import trl

"""
see the paper
python examples/scripts/ppo/ppo_tldr.py \\
    --dataset_name trl-lib/tldr \\
    --total_episodes 30000
accelerate launch --config_file zero2.yaml \\
    examples/scripts/ppo/ppo_tldr.py --output_dir o
"""

if __name__ == "__main__":
    main()
'''


def test_a_scripts_own_usage_string_is_its_launch_line_by_its_name(tmp_path):
    root = _repo(tmp_path, {"scripts/ppo_tldr.py": USAGE, "other.py": "x = 1\n"})
    path = str(root / "scripts" / "ppo_tldr.py")
    [entry], _ = find(str(root), {}, [path])
    assert (entry.found_in, entry.args, entry.cwd) == (
        "scripts/ppo_tldr.py:9",
        ("--dataset_name", "trl-lib/tldr", "--total_episodes", "30000"),
        str(root),
    )
    assert entry.launch.startswith("python examples/scripts/ppo/ppo_tldr.py --dataset_name")
    assert entry.also == ("scripts/ppo_tldr.py:12",)


def test_a_usage_string_naming_the_file_from_its_folder_runs_from_there(tmp_path):
    text = '"""\npython train.py --lr 1\n"""\nif __name__ == "__main__":\n    go()\n'
    root = _repo(tmp_path, {"scripts/train.py": text})
    [entry], _ = find(str(root), {}, [str(root / "scripts" / "train.py")])
    assert (entry.found_in, entry.args, entry.cwd) == (
        "scripts/train.py:2",
        ("--lr", "1"),
        str(root / "scripts"),
    )


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('"""\npython other.py --lr 1\n"""\n', id="another-file-of-the-repo"),
        pytest.param('"""Usage: python train.py --lr 1"""\n', id="prose-not-a-command"),
        pytest.param(
            'def f():\n    """\n    python train.py --lr 1\n    """\n', id="in-a-function"
        ),
    ],
)
def test_usage_strings_that_do_not_run_this_file_are_not_its_launch(tmp_path, text):
    root = _repo(tmp_path, {"train.py": text + 'if __name__ == "__main__":\n    go()\n'})
    (root / "other.py").write_text("y = 2\n")
    [entry], _ = find(str(root), {}, [str(root / "train.py")])
    assert (entry.found_in, entry.args) == ("__main__ guard", ())


def test_a_launch_line_of_the_repo_wins_over_the_usage_string(tmp_path):
    root = _repo(
        tmp_path,
        {"ppo_tldr.py": USAGE, "run.sh": "python ppo_tldr.py --output_dir mine\n"},
    )
    [entry], _ = find(str(root), {}, [str(root / "ppo_tldr.py")])
    assert (entry.found_in, entry.args) == ("run.sh:1", ("--output_dir", "mine"))


def test_the_usage_line_is_where_the_command_begins_not_a_line_of_prose_naming_python(tmp_path):
    text = (
        '"""Fine-tune with python and TRL.\n\n    $ python train.py --lr 1\n"""\n'
        'if __name__ == "__main__":\n    go()\n'
    )
    root = _repo(tmp_path, {"train.py": text})
    [entry], _ = find(str(root), {}, [str(root / "train.py")])
    assert (entry.found_in, entry.args) == ("train.py:3", ("--lr", "1"))


def test_a_required_config_is_the_repository_s_own_file(tmp_path, monkeypatch):
    """JiayiWang-LMU/KP-RLHF's `rlhf/train_ppo.py --config` (its launcher is a Python dict of
    main.py): the run got `--config stand-in` and stopped at opening it."""
    from migrate.reference.arguments import config_file, fire_fill

    root = _repo(
        tmp_path,
        {
            "rlhf/train_ppo.py": "",
            "configs/config_rlhf_ppo.yaml": "",
            "configs/config_rlhf_grpo.yaml": "",
            "configs/config_pair.yaml": "",
            "a/b/c/d/deep_ppo.yaml": "",  # deeper than three folders: not looked at
            ".venv/ppo.yaml": "",
        },
    )
    script = str(root / "rlhf/train_ppo.py")
    assert config_file(script, str(root)) == str(root / "configs/config_rlhf_ppo.yaml")
    assert config_file(str(root / "rlhf/train_grpo.py"), str(root)) == str(
        root / "configs/config_rlhf_grpo.yaml"
    )
    assert config_file(str(root / "train.py"), str(root)) is None  # no word of its own
    assert config_file(str(root / "rlhf/train_rlhf.py"), str(root)) is None  # two tie
    monkeypatch.chdir(root)
    monkeypatch.setattr("sys.argv", [script])
    assert fire_fill(lambda config: None, []) == [
        "--config",
        str(root / "configs/config_rlhf_ppo.yaml"),
    ]
    monkeypatch.setattr("sys.argv", [str(root / "train.py")])
    assert fire_fill(lambda config: None, []) == ["--config", "stand-in"]


def test_a_module_with_its_own_guard_is_also_proven_by_the_script_the_repo_launches(tmp_path):
    # JAGADISHSUNILPEDNEKAR/RLHF-training-pipeline: src/trainer_ppo.py has a __main__ guard, and
    # the README runs `python scripts/run_ppo.py`, which imports and calls its train_ppo()
    root = _repo(
        tmp_path,
        {
            "src/__init__.py": "",
            "src/trainer_ppo.py": "import trl\ndef train_ppo():\n    pass\n"
            "if __name__ == '__main__':\n    train_ppo()\n",
            "scripts/run_ppo.py": "from src.trainer_ppo import train_ppo\n"
            "if __name__ == '__main__':\n    train_ppo()\n",
            "README.md": "```bash\npython scripts/run_ppo.py\n```\n",
        },
    )
    found, missing = find(str(root), {}, [str(root / "src/trainer_ppo.py")])
    assert missing == []
    assert [(os.path.relpath(e.path, root), e.found_in, e.via) for e in found] == [
        ("scripts/run_ppo.py", "README.md:2", (str(root / "src/trainer_ppo.py"),)),
        ("src/trainer_ppo.py", "__main__ guard", ()),
    ]


@pytest.mark.parametrize(
    ("line", "found_in", "args"),
    [
        pytest.param("python train.py --train-using sft", "__main__ guard", (), id="a-mode-flag"),
        pytest.param("python train.py cfg/qwen_lora_sft.yaml", "__main__ guard", (), id="a-config"),
        pytest.param(
            "python train.py --train-using sft\npython train.py --train-using ppo",
            "README.md:3",
            ("--train-using", "ppo"),
            id="the-ppo-line-of-two",
        ),
        pytest.param(
            "python train.py --sft-path m", "README.md:2", ("--sft-path", "m"), id="a-path"
        ),
    ],
)
def test_a_launch_line_that_picks_another_mode_does_not_prove_the_ppo_code(
    tmp_path, line, found_in, args
):
    # syiswell/FTCoT: the README's one line for train/trainer.py trains with `--train-using sft`;
    # it never reaches the PPO code, so the script's own guard proves it (a pass of SFT would
    # have said the PPO rewrite trains)
    root = _repo(
        tmp_path,
        {
            "train.py": "import sys\nfrom trl import PPOTrainer\n"
            "if __name__ == '__main__':\n    run(sys.argv)\n",
            "README.md": f"```bash\n{line}\n```\n",
        },
    )
    [entry], _ = find(str(root), {}, [str(root / "train.py")])
    assert (entry.found_in, entry.args) == (found_in, args)

"""File discovery: recursive walk, .gitignore (nested and the enclosing repo's), default excludes."""

from __future__ import annotations

import os

from migrate.kernel.discovery import discover


def touch(root, *names):
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("import trl\n")


def rel(root, candidates):
    return [os.path.relpath(c.path, root) for c in candidates]


def test_walk_honours_default_excludes_and_suffixes(tmp_path):
    touch(
        tmp_path,
        "a.py",
        "pkg/b.py",
        "notes.txt",
        ".venv/x.py",
        "venv/x.py",
        "build/x.py",
        "dist/x.py",
        ".tox/x.py",
        "node_modules/x.py",
        "__pycache__/x.py",
        "lib/site-packages/x.py",
        ".git/x.py",
    )
    found, missing = discover([str(tmp_path)])
    assert rel(tmp_path, found) == ["a.py", "pkg/b.py"]
    assert missing == []
    assert not any(c.explicit for c in found)


def test_gitignore_nested_and_from_enclosing_repo(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n*_pb2.py\n")
    touch(
        tmp_path,
        "src/keep.py",
        "src/generated/skip.py",
        "src/api_pb2.py",
        "src/sub/skip_me.py",
        "src/sub/ok.py",
    )
    (tmp_path / "src" / "sub" / ".gitignore").write_text("skip_me.py\n")
    found, _ = discover(
        [str(tmp_path / "src")]
    )  # walking a subfolder still honours the root .gitignore
    assert rel(tmp_path / "src", found) == ["keep.py", "sub/ok.py"]


def test_a_gitignore_line_git_cannot_read_is_skipped(tmp_path):
    """nganngants/smes_ppo's .gitignore has a line ending in a backslash, which git reads as no
    pattern: `upgrade` stopped with pathspec's GitIgnorePatternError."""
    (tmp_path / ".gitignore").write_text("configs/user.jsonnet\\\nskip.py\n")
    touch(tmp_path, "skip.py", "main.py")
    found, missing = discover([str(tmp_path)])
    assert rel(tmp_path, found) == ["main.py"]  # the lines after the bad one still apply
    assert missing == []


def test_an_exclude_pattern_that_is_not_one_is_reported(tmp_path):
    touch(tmp_path, "a.py", "b.py")
    found, missing = discover(
        [str(tmp_path)], patterns=["b.py", "c\\"], patterns_root=str(tmp_path)
    )
    assert rel(tmp_path, found) == ["a.py"]
    assert [(m.path, m.message) for m in missing] == [
        ("c\\", "not a valid exclude pattern (.gitignore syntax): it was not applied")
    ]


def test_git_info_exclude(tmp_path):
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("scratch.py\n")
    touch(tmp_path, "scratch.py", "main.py")
    found, _ = discover([str(tmp_path)])
    assert rel(tmp_path, found) == ["main.py"]


def test_named_paths_are_always_taken(tmp_path):
    touch(tmp_path, "build/x.py", "ignored.py", "script")
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    (tmp_path / ".git").mkdir()
    named = [
        str(tmp_path / "build" / "x.py"),
        str(tmp_path / "ignored.py"),
        str(tmp_path / "script"),
    ]
    found, _ = discover(named)
    assert [c.explicit for c in found] == [True, True, True]
    found, _ = discover(
        [str(tmp_path / "build")]
    )  # a named folder is walked even if excluded by name
    assert rel(tmp_path, found) == ["build/x.py"]


def test_each_file_once_and_missing_reported(tmp_path):
    touch(tmp_path, "a.py")
    (tmp_path / "alias.py").symlink_to(tmp_path / "a.py")
    found, missing = discover(
        [str(tmp_path / "a.py"), str(tmp_path), str(tmp_path / "alias.py"), "nope/"]
    )
    assert rel(tmp_path, found) == ["a.py"]
    assert [(m.path, m.message) for m in missing] == [("nope/", "no such file or directory")]


def test_symlinked_folders_are_not_followed(tmp_path):
    touch(tmp_path, "real/a.py")
    (tmp_path / "loop").symlink_to(tmp_path)
    found, _ = discover([str(tmp_path)])
    assert rel(tmp_path, found) == ["real/a.py"]


def test_named_folder_inside_an_ignored_one_is_walked(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text(".venv/\n")
    touch(tmp_path, ".venv/lib/site-packages/pkg/a.py", ".venv/lib/site-packages/pkg/sub/b.py")
    found, _ = discover([str(tmp_path / ".venv" / "lib" / "site-packages")])
    assert rel(tmp_path / ".venv" / "lib" / "site-packages", found) == ["pkg/a.py", "pkg/sub/b.py"]

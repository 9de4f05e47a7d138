"""On a terminal: a progress bar and colour on stderr; NO_COLOR and pipes get plain text."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


def run_on_tty(args, env_extra=None):
    """Run `python -m migrate ARGS` with stderr on a pseudo-terminal; read it while it runs
    (a full pty buffer would otherwise block the child)."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(env_extra or {})
    proc = subprocess.Popen(
        [sys.executable, "-m", "migrate", *args],
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=300), b"".join(chunks).decode()


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    root = tmp_path_factory.mktemp("many")
    for i in range(60):
        (root / f"m{i:02d}.py").write_text("from trl import set_seed\n")
    return root


def test_progress_bar_and_colour_on_a_terminal(many):
    code, err = run_on_tty(["fix", "--check", "--jobs", "1", str(many)])
    assert code == 1
    assert "trl-migrate" in err and "100%" in err  # click's progress bar reached the end
    assert "\x1b[" in err  # coloured findings


def test_no_color_and_quiet_on_a_terminal(many):
    code, err = run_on_tty(["fix", "--check", "--jobs", "1", str(many)], {"NO_COLOR": "1"})
    assert "\x1b[3" not in err  # no colour codes (the bar may still move the cursor)
    code, err = run_on_tty(["fix", "--check", "--quiet", "--jobs", "1", str(many)])
    assert "100%" not in err and err.strip().startswith("trl-migrate: 60 files would be rewritten")


def test_piped_stderr_is_plain(many):
    proc = subprocess.run(
        [sys.executable, "-m", "migrate", "fix", "--check", str(many)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "\x1b[" not in proc.stderr and "%" not in proc.stderr.splitlines()[-1]

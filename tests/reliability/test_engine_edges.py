"""Edge cases the fuzzers found in the engine, kept as plain regression tests."""

from __future__ import annotations

import pytest

import codemods
from codemods.base import Options
from codemods.engine import needs_parse, process, uses_trl
from migrate.kernel.findings import Status

CODES = tuple(r.code for r in codemods.RULES)
VH = "from trl import AutoModelForCausalLMWithValueHead{nl}m = AutoModelForCausalLMWithValueHead.from_pretrained('g'){nl}"


@pytest.mark.parametrize(
    "src", [b"import trl\rx = 1\r", b"# c\rimport trl\r", b"import trl\r\rx = (1,\r 2)\r"]
)
def test_bare_cr_line_ends_are_not_a_change(src):
    # libcst drops a final bare CR; the engine must not report that as a rewrite.
    assert process("x.py", src, codes=CODES, options=Options()).status is Status.UNCHANGED


def test_bare_cr_file_keeps_its_last_line_end():
    result = process("x.py", VH.format(nl="\r").encode(), codes=CODES, options=Options())
    assert result.status is Status.CHANGED and result.new is not None
    assert result.new.endswith(b"\r") and b"\n" not in result.new


@pytest.mark.parametrize("tail", [b" ", b"  ", b"\t", b"    "])
@pytest.mark.parametrize("nl", [b"\n", b"\r\n"])
def test_a_last_line_of_spaces_keeps_the_blank_lines_above_it(tail, nl):
    # seen in puria-radmard/mars-steg's utils/common.py (`...eval()\n\n\n\n `): libcst drops
    # the blank lines above a last line of spaces with no line end, and the rewrite lost them
    src = VH.format(nl=nl.decode()).encode() + nl * 3 + tail
    result = process("x.py", src, codes=CODES, options=Options())
    assert result.status is Status.CHANGED and result.new is not None
    assert result.new.endswith(b"from_pretrained('g')" + nl * 4 + tail)
    again = process("x.py", result.new, codes=CODES, options=Options())
    assert again.status is Status.UNCHANGED


@pytest.mark.parametrize(
    "src",
    [
        b"if TYPE_CHECKING: import trl\n",
        b"try: from trl import PPOConfig\nexcept ImportError: pass\n",
        b"x = 1\rfrom trl import PPOConfig\r",
        b"import os; import trl\n",
        b"\xef\xbb\xbfimport trl\n",
    ],
)
def test_prefilter_sees_imports_in_odd_places(src):
    assert needs_parse(src)


@pytest.mark.parametrize(
    "src", [b"import ctrl\n", b"x = 'trl'\n", b"# uses trl\n", b"from . import trl_utils\n"]
)
def test_prefilter_skips_what_cannot_use_trl(src):
    assert not needs_parse(src)


@pytest.mark.parametrize(
    ("src", "uses"),
    [
        ('"""Usage:\n\nfrom trl import AutoModelForCausalLMWithValueHead\n"""\nx = 1\n', False),
        ("from .core import respond_to_batch\n", False),
        ("def f():\n    from trl import PPOConfig\n", True),
        ("import os, trl.core as c\n", True),
        ("patch('trl.core.respond_to_batch')\n", True),
        ("def broken(:\n", True),  # ast cannot tell: libcst parses it and reports the error
    ],
)
def test_uses_trl_gate(src, uses):
    assert uses_trl(src) is uses


def test_docstring_example_is_not_parsed_for_rules():
    src = b'"""Load it so:\n\nfrom trl import AutoModelForCausalLMWithValueHead\n"""\nx = 1\n'
    assert needs_parse(src)  # the byte prefilter cannot tell a docstring from code
    result = process("x.py", src, codes=CODES, options=Options())
    assert result.status is Status.UNCHANGED and not result.findings


def test_a_rewrite_that_parses_but_does_not_compile_is_not_written(monkeypatch):
    # `break` outside a loop parses (libcst and ast) but does not compile: the engine must see
    # it and leave the file as it was, whichever rule wrote it.
    from codemods import engine

    src = "import trl\nfor x in y:\n    break\n"
    bad = "import trl\nif True:\n    break\n"
    monkeypatch.setattr(engine, "fix_text", lambda text, **kw: (bad if text == src else text, []))
    result = engine.process("t.py", src.encode(), codes=["TRL101"], options=engine.Options())
    assert result.status.value == "failed"
    assert result.message.startswith("internal error: the rewrite does not compile")
    assert result.new is None


def test_no_tree_outlives_its_file():
    # A batch of thousands of files must not keep every file's trees: classes the rules define
    # inside functions once held their hooks (and through them the pass and its trees) in a
    # module-level cache, about 18 MB a run of a 1,300-line file.
    import gc

    import libcst as cst

    from tests.reliability.test_determinism import FIXTURES

    paths = sorted((FIXTURES / "eras").glob("*.py"))
    for path in paths:
        result = process(str(path), path.read_bytes(), codes=CODES, options=Options())
        assert result.status is Status.CHANGED, path.name
    gc.collect()
    # (an empty module is kept for code generation of single nodes)
    assert [o for o in gc.get_objects() if isinstance(o, cst.Module) and o.body] == []

"""The verifying run's parse of a rewrite (`codemods.reparse`): the same module as a parse of
the whole text, node for node, with the statements the passes kept as the same objects and only
the rebuilt ones (and neighbours whose comment lines could change owner) parsed again."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
import pytest

from codemods import reparse
from tests.codemods.helpers import dedent

Edit = Callable[[cst.Module], cst.Module]


def _replace(index: int, code: str) -> Edit:
    """A pass that rebuilds statement `index` as `code` (a node the parser did not make)."""

    def edit(module: cst.Module) -> cst.Module:
        body = list(module.body)
        body[index] = cst.parse_statement(code)
        return module.with_changes(body=body)

    return edit


def _indented(index: int, indent: str) -> Edit:
    """A pass that rebuilds statement `index` as `if x: y = 1` with a block of its own indent."""

    def edit(module: cst.Module) -> cst.Module:
        body = list(module.body)
        stmt = cst.ensure_type(cst.parse_statement("if x:\n    y = 1\n"), cst.If)
        body[index] = stmt.with_changes(body=stmt.body.with_changes(indent=indent))
        return module.with_changes(body=body)

    return edit


def _blank_after_block(index: int) -> Edit:
    def edit(module: cst.Module) -> cst.Module:
        body = list(module.body)
        stmt = cst.ensure_type(cst.parse_statement("if x:\n    y = 1\n"), cst.If)
        body[index] = stmt.with_changes(
            body=stmt.body.with_changes(footer=[cst.EmptyLine(indent=False)])
        )
        return module.with_changes(body=body)

    return edit


def _remove(index: int) -> Edit:
    def edit(module: cst.Module) -> cst.Module:
        return module.with_changes(body=[s for i, s in enumerate(module.body) if i != index])

    return edit


def _insert(index: int, code: str) -> Edit:
    def edit(module: cst.Module) -> cst.Module:
        body = list(module.body)
        body.insert(index, cst.parse_statement(code))
        return module.with_changes(body=body)

    return edit


def _todo_above(index: int, comment: str) -> Edit:
    def edit(module: cst.Module) -> cst.Module:
        body = list(module.body)
        stmt = body[index]
        line = cst.EmptyLine(comment=cst.Comment(comment))
        body[index] = stmt.with_changes(leading_lines=[*stmt.leading_lines, line])
        return module.with_changes(body=body)

    return edit


SCRIPT = dedent(
    """
    # Header comment.

    import os
    from trl import PPOConfig


    def build(x):
        return x
        # the last line of build's body


    class Runner:
        def go(self):
            pass
        # kept with the class


    # about main
    def main():
        config = PPOConfig()
        return config


    if __name__ == "__main__":
        main()
    # trailing comment
    """
)

CASES = [
    pytest.param(SCRIPT, _replace(1, "from trl import RLOOConfig\n"), id="an-import-rebuilt"),
    pytest.param(SCRIPT, _replace(0, "import sys\n"), id="the-first-statement-with-the-header"),
    pytest.param(
        SCRIPT,
        _replace(5, 'if __name__ == "__main__":\n    main()\n    # more\n'),
        id="the-last-statement-with-the-footer",
    ),
    pytest.param(
        SCRIPT,
        _replace(4, "def main():\n    return RLOOConfig()\n"),
        id="a-function-between-two-compound-statements",
    ),
    pytest.param(SCRIPT, _remove(1), id="an-import-removed"),
    pytest.param(SCRIPT, _remove(3), id="a-function-removed-between-blocks"),
    pytest.param(SCRIPT, _insert(3, "x = 1\n"), id="a-line-inserted"),
    pytest.param(SCRIPT, _todo_above(4, "# TODO(trl-migrate TRL103): x"), id="a-todo-above-main"),
    pytest.param(
        # the comment indented under `f`'s body belongs to the block in the original, then to
        # whatever follows once `f` is gone: the kept `g` must not keep its old lines
        "def f():\n    pass\n    # under f\ndef g():\n    pass\n# before h\n    # indented\ndef h():\n    pass\n",
        _replace(1, "x = 1\n"),
        id="indented-comments-change-owner",
    ),
    pytest.param(
        "x = 1\n# before g, indented below:\n    # deep\ndef g():\n    pass\n",
        _replace(0, "if x:\n    y = 1\n"),
        id="a-block-before-indented-comments",
    ),
    pytest.param(
        # `x = 1` goes: the comment indented under it, kept as `g`'s, falls to `f`'s block
        "def f():\n    pass\nx = 1\n    # deep\ndef g():\n    pass\n",
        _remove(1),
        id="a-removal-hands-indented-comments-to-a-block",
    ),
    pytest.param(
        # the same with a line of spaces, which a block owns as it owns a comment
        "def f():\n    pass\nx = 1\n    \n\ndef g():\n    pass\n",
        _remove(1),
        id="a-removal-hands-a-line-of-spaces-to-a-block",
    ),
    pytest.param(
        # a block built with a blank line after its last statement: a parse gives that line to
        # the statement after the block
        "x = 1\n\ndef g():\n    pass\n",
        _blank_after_block(0),
        id="a-block-built-with-blank-lines-after-it",
    ),
    pytest.param("import a\nimport b", _replace(0, "import c\n"), id="no-final-newline"),
    pytest.param(
        "import a\r\n\r\ndef f():\r\n    pass\r\n", _replace(0, "import c\r\n"), id="crlf"
    ),
    pytest.param("import a\n\ndef f():\n\tpass\n", _replace(0, "import c\n"), id="tabs"),
    pytest.param(
        "import a\nx = 1\n\ndef f():\n    pass\n",
        _indented(1, "  "),
        id="a-new-first-block-of-another-indent",
    ),
]


def recorded_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts libcst parses from here on (the check mode's own parse left out)."""
    parsed: list[str] = []
    real = cst.parse_module

    def recording(text: str) -> cst.Module:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(reparse, "CHECK", False)
    monkeypatch.setattr(reparse.cst, "parse_module", recording)
    return parsed


@pytest.mark.parametrize(("src", "edit"), CASES)
def test_the_spliced_module_is_the_parse_of_its_code(src, edit):
    original = cst.parse_module(src)
    final = edit(original)
    text = final.code
    got = reparse.reparse(text, original, final, final.code_for_node)
    assert got.code == text
    assert got.deep_equals(cst.parse_module(text))


def test_statements_away_from_the_change_are_not_parsed_again(monkeypatch):
    original = cst.parse_module(SCRIPT)
    final = _replace(1, "from trl import RLOOConfig\n")(original)
    parsed = recorded_parses(monkeypatch)
    got = reparse.reparse(final.code, original, final, final.code_for_node)
    assert len(parsed) == 1
    assert "RLOOConfig" in parsed[0] and "def main" not in parsed[0]
    kept = [i for i, stmt in enumerate(got.body) if stmt is original.body[i]]
    assert kept == [0, 2, 3, 4, 5]


def test_a_module_whose_first_indent_changes_is_parsed_whole(monkeypatch):
    # The rewrite's first block is indented by two spaces where the original's used four: a
    # parse of the new text takes two as the module's indent, and every kept block would
    # differ. The whole text is parsed.
    src = "import a\nx = 1\n\ndef f():\n    pass\n"
    original = cst.parse_module(src)
    final = _indented(1, "  ")(original)
    assert "if x:\n  y = 1\n" in final.code
    parsed = recorded_parses(monkeypatch)
    got = reparse.reparse(final.code, original, final, final.code_for_node)
    assert parsed == [final.code]
    assert got.default_indent == "  "


def test_the_engine_checks_its_splice_against_a_whole_parse(monkeypatch):
    # Under the check mode (the test suite's), a splice that differs from the parse stops the
    # run: here a statement "kept" whose code is not what the text holds.
    original = cst.parse_module(SCRIPT)
    final = _replace(1, "from trl import RLOOConfig\n")(original)
    monkeypatch.setattr(reparse, "CHECK", True)
    lying = final.with_changes(body=[*final.body[:2], original.body[4], *final.body[3:]])
    with pytest.raises(AssertionError, match="differs from a parse"):
        reparse.reparse(final.code, original, lying, lying.code_for_node)

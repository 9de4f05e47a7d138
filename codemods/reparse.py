"""The verifying run's parse of a rewrite, at the cost of the statements the passes built.

A rewrite's top-level statements are mostly the parser's own nodes from the original text,
kept as they were. A parse of the new text gives them again, node for node, as long as what
decides their shape is unchanged: the statement before them (which trailing comment lines a
block owns and which the next statement owns) and the module's default indent and newline.
So only the rebuilt statements are parsed again, with a kept neighbour where the lines between
them might fall to another owner, and the rest are the same objects. The verifying run then
also reuses what the first run made for them: their code and their listing in `walk.Tree`.
Under `TRL_MIGRATE_CHECK_BINDINGS=1` (the test suite) every such module is checked against a
parse of the whole text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

import libcst as cst

CHECK = os.environ.get("TRL_MIGRATE_CHECK_BINDINGS") == "1"
_NEWLINE = re.compile(r"\r\n?|\n")  # libcst's own first-newline rule for a module's default
_DEFAULT_INDENT = "    "  # libcst's indent for a module without an indented block
_CONTINUED = re.compile(r"\\(\r\n?|\n)")  # a line end after a backslash: not the module's own


def reparse(
    text: str,
    original: cst.Module,
    final: cst.Module,
    code_of: Callable[[cst.CSTNode], str],
) -> cst.Module:
    """`cst.parse_module(text)` where `text` is the code of `final`, a tree the passes made
    from `original` (the parse of the text they started from); `code_of(statement)` is the
    code of a statement of `final`'s body."""
    module = _spliced(text, original, final, code_of)
    if module is None:
        return cst.parse_module(text)
    if CHECK:
        whole = cst.parse_module(text)
        if not module.deep_equals(whole):
            differ = [
                i for i, (a, b) in enumerate(zip(module.body, whole.body)) if not a.deep_equals(b)
            ]
            raise AssertionError(
                f"reparse: the spliced module differs from a parse of its code (statements "
                f"{differ[:3]}, header/footer/defaults otherwise)"
            )
    return module


def _spliced(
    text: str,
    original: cst.Module,
    final: cst.Module,
    code_of: Callable[[cst.CSTNode], str],
) -> cst.Module | None:
    """The parse of `text` built from `final`'s kept statements and parses of the rest, or
    None where the module's defaults might differ (then the whole text is parsed)."""
    body = final.body
    if not body or text.endswith("\r") or not _same_defaults(text, final):
        return None
    where = {id(stmt): at for at, stmt in enumerate(original.body)}
    n = len(body)
    # per statement, its place in the original where it is the parser's node from there
    at: list[int | None] = []
    for stmt in body:
        k = where.get(id(stmt))
        at.append(k if k is not None and original.body[k] is stmt else None)

    def splits(i: int) -> bool:
        """Whether the lines between statements i - 1 and i fall to the same owners in a parse
        of the text as in the trees: a block owns the lines after it up to its last comment
        indented into it (a blank line of spaces counts as one), and a simple statement line
        owns none."""
        return isinstance(body[i - 1], cst.SimpleStatementLine) or all(
            line.comment is None and not line.whitespace.value for line in body[i].leading_lines
        )

    def follows(i: int) -> bool:  # after what it followed in the original
        before = at[i - 1]
        return before is not None and at[i] == before + 1

    # the statements to parse again: those the passes built, and kept ones whose lines before
    # them might fall to another owner now; the first with the header, the last with the footer
    needed = [at[i] is None or (i > 0 and not follows(i) and not splits(i)) for i in range(n)]
    if final.header is not original.header or at[0] != 0:
        needed[0] = True
    if final.footer is not original.footer or at[-1] != len(original.body) - 1:
        needed[-1] = True
    if not any(needed):
        return final
    new_body = list(body)
    header, footer = final.header, final.footer
    i = 0
    while i < n:
        if not needed[i]:
            i += 1
            continue
        start, end = i, i + 1
        while start > 0 and not splits(start):
            start -= 1
        while end < n and (needed[end] or not splits(end)):
            end += 1
        parts = [code_of(stmt) for stmt in body[start:end]]
        if start == 0:
            parts.insert(0, "".join(final.code_for_node(line) for line in header))
        else:
            # after a simple statement line, and with the module's indent and newline for the
            # parser to find first
            nl, indent = final.default_newline, final.default_indent
            parts.insert(0, f"if 1:{nl}{indent}pass{nl}pass{nl}")
        if end == n:
            parts.append("".join(final.code_for_node(line) for line in footer))
        parsed = cst.parse_module("".join(parts))
        got = list(parsed.body)
        if start > 0:
            if parsed.header or len(got) < 2:
                return None
            got = got[2:]
        if len(got) != end - start:
            return None
        if end == n:
            footer = parsed.footer
        elif parsed.footer:
            return None  # lines after the run that the statement after it would own
        if start == 0:
            header = parsed.header
        new_body[start:end] = got
        i = end
    return cst.Module(
        body=new_body,
        header=header,
        footer=footer,
        encoding=final.encoding,
        default_indent=final.default_indent,
        default_newline=final.default_newline,
        has_trailing_newline=_NEWLINE.fullmatch(text[-1]) is not None
        and not (_CONTINUED.fullmatch(text[-2:]) or _CONTINUED.fullmatch(text[-3:])),
    )


def _same_defaults(text: str, final: cst.Module) -> bool:
    """Whether a parse of `text` finds `final`'s default newline (the first line end) and
    indent (that of the first indented block, the body of the first compound statement)."""
    first = _NEWLINE.search(text)
    if first is None or first.group(0) != final.default_newline:
        return False
    for stmt in final.body:
        if isinstance(stmt, cst.BaseCompoundStatement):
            if isinstance(stmt, cst.Match):
                return False  # not worked out: the whole text is parsed
            block = stmt.body
            if isinstance(block, cst.IndentedBlock):
                return (block.indent or final.default_indent) == final.default_indent
            if not isinstance(stmt, (cst.ClassDef, cst.FunctionDef, cst.With)):
                return False  # `if x: y` may have an `else:` block: not worked out
    return final.default_indent == _DEFAULT_INDENT

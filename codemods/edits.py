"""The CST helpers rules share: import statements rewritten in place, literal values, call
arguments and their layout, and the names a node reads or binds.

Moving a name to another module keeps the statement where it was (module level, function
body, try/except), so lazy and guarded imports stay lazy and guarded.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence, Set
from typing import Any, cast

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import walk
from migrate.kernel import notebooks

KEEP = "keep"
REMOVE = "remove"
# A decision per alias: KEEP, REMOVE, or (new module, new aliases) to replace it.
Decision = str | tuple[str, Sequence[cst.ImportAlias]]


def alias_name(alias: cst.ImportAlias) -> str:
    return get_full_name_for_node(alias.name) or ""


def alias_asname(alias: cst.ImportAlias) -> str | None:
    return get_full_name_for_node(alias.asname.name) if alias.asname is not None else None


def new_alias(name: str, asname: str | None = None) -> cst.ImportAlias:
    return cst.ImportAlias(
        name=cst.Name(name), asname=cst.AsName(name=cst.Name(asname)) if asname else None
    )


def import_from(module: str, aliases: Sequence[cst.ImportAlias]) -> cst.SimpleStatementLine:
    fixed = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in aliases]
    return cst.SimpleStatementLine(
        body=[
            cst.ImportFrom(
                module=cast("cst.Attribute | cst.Name", cst.parse_expression(module)), names=fixed
            )
        ]
    )  # type: ignore[arg-type]


def rewrite_import_from(stmt: cst.SimpleStatementLine, decisions: Sequence[Decision]):  # type: ignore[no-untyped-def]
    """Apply one decision per alias of the statement's only `from ... import` (not a star).

    A decision that moves a name to the statement's own module replaces it where it stands.

    Returns the statement unchanged when every decision is KEEP, a removal when nothing is
    left, the edited statement, or a FlattenSentinel of it and the new `from ... import`s.
    """
    node = stmt.body[0]
    assert isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar)
    if all(d == KEEP for d in decisions):
        return stmt
    here = (
        get_full_name_for_node(node.module)
        if node.module is not None and not node.relative
        else None
    )
    kept: list[cst.ImportAlias] = []
    moved: dict[str, list[cst.ImportAlias]] = {}
    ends = False  # whether what is kept ends with what the last alias became
    for alias, decision in zip(node.names, decisions):
        ends = False
        if decision == KEEP:
            kept.append(alias)
            ends = True
        elif isinstance(decision, tuple) and decision[0] == here:  # same module: replace in place
            new = [
                a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                for a in decision[1]
            ]
            kept.extend([*new[:-1], new[-1].with_changes(comma=alias.comma)] if new else [])
            ends = bool(new)
        elif isinstance(decision, tuple):
            moved.setdefault(decision[0], []).extend(decision[1])
    new_lines = [import_from(module, aliases) for module, aliases in moved.items()]
    if not kept:
        if not new_lines:
            return cst.RemovalSentinel.REMOVE
        new_lines[0] = new_lines[0].with_changes(
            leading_lines=stmt.leading_lines, trailing_whitespace=stmt.trailing_whitespace
        )
        return new_lines[0] if len(new_lines) == 1 else cst.FlattenSentinel(new_lines)
    if isinstance(node.names[-1].comma, cst.MaybeSentinel):  # no trailing comma to keep
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    elif not ends:  # the last alias went: the new last one ends as it did (`,` then `)` on
        # its own line in a parenthesized list, not the next alias's indent)
        kept[-1] = kept[-1].with_changes(comma=node.names[-1].comma)
    rest = stmt.with_changes(body=[node.with_changes(names=kept)])
    return cst.FlattenSentinel([rest, *new_lines]) if new_lines else rest


def named_import_from(
    stmt: cst.SimpleStatementLine,
) -> tuple[cst.ImportFrom, str, Sequence[cst.ImportAlias]] | None:
    """(the statement's `from X import a, b`, X, its aliases) when the line is just that import,
    absolute and naming its names (no `*`); else None."""
    node = stmt.body[0] if len(stmt.body) == 1 else None
    if (
        not isinstance(node, cst.ImportFrom)
        or node.relative
        or node.module is None
        or isinstance(node.names, cst.ImportStar)
    ):
        return None
    return node, get_full_name_for_node(node.module) or "", node.names


def is_docstring(stmt: cst.CSTNode) -> bool:
    """A statement line that is only a string: a module's (or block's) docstring."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def is_import_block(stmt: cst.CSTNode) -> bool:
    """An import statement, or a `try:` whose body holds only imports (a guarded import)."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)
    if isinstance(stmt, cst.Try) and isinstance(stmt.body, cst.IndentedBlock):
        return all(is_import_block(s) for s in stmt.body.body)
    return False


def imported_names(
    module: cst.Module, source: str, *, read_after: Set[str] = frozenset()
) -> set[str]:
    """Local names a file binds with `from source import name [as local]`, anywhere in it.
    A name of `read_after` counts only where an import of it runs before any statement reads
    it: one in a later notebook cell, or in a function, does not bind it for a statement above
    (a rule that writes a new use of the name must then add its own import at the top)."""
    found: set[str] = set()

    class _Collect(walk.Visitor):
        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if (
                not node.relative
                and node.module is not None
                and not isinstance(node.names, cst.ImportStar)
                and get_full_name_for_node(node.module) == source
            ):
                found.update(alias_asname(a) or alias_name(a) for a in node.names)

    walk.visit(module, _Collect())
    late = found & read_after
    if late:
        found -= late
        found |= _bound_before_read(module, source, late)
    return found


def module_imported_above(module: cst.Module, name: str, node: cst.CSTNode) -> bool:
    """Whether a module-level `import name` (in a top-level block too, not in a function or
    class) runs in a top-level statement above the one holding `node`: a rule writing `name.X`
    there needs no import then (one added at the top of a notebook would run before its
    `%pip install` cell). False for a node not in `module`."""
    tree = walk.tree_of(module)
    at = tree.index.get(id(node))
    if at is None:
        return False
    while tree.parents[at] > 0:
        at = tree.parents[at]
    top = tree.nodes[at]
    for stmt in module.body:
        if stmt is top:
            return False
        for imp in walk.find_all(stmt, cst.Import):
            if not _held_by(tree, imp, (cst.FunctionDef, cst.ClassDef)) and any(
                a.asname is None and get_full_name_for_node(a.name) == name for a in imp.names
            ):
                return True
    return False


def _held_by(tree: walk.Tree, node: cst.CSTNode, kinds: tuple[type, ...]) -> bool:
    """Whether a node of `kinds` holds `node`, a node of `tree`'s module (the module aside)."""
    at = tree.parents[tree.index[id(node)]]
    while at > 0:
        if isinstance(tree.nodes[at], kinds):
            return True
        at = tree.parents[at]
    return False


def bare_name(stmt: cst.BaseStatement) -> str | None:
    """The name a statement that is one bare name holds (`x`): in a joined notebook, the lines
    that stand for a cell boundary or an IPython line (migrate.kernel.notebooks)."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Name):
            return small.value.value
    return None


def notebook_stand_in(stmt: cst.BaseStatement) -> bool:
    """A line of a joined notebook that stands for a cell boundary or an IPython line."""
    name = bare_name(stmt)
    return name is not None and notebooks.is_stand_in(name)


def _bound_before_read(module: cst.Module, source: str, names: set[str]) -> set[str]:
    """Those of `names` that a module-level `from source import` (in a top-level block too, not
    in a function or class) binds before the first top-level statement that reads them."""
    tree = walk.tree_of(module)
    bound: set[str] = set()
    read: set[str] = set()
    for stmt in module.body:
        for node in walk.find_all(stmt, cst.ImportFrom):
            if (
                node.relative
                or node.module is None
                or isinstance(node.names, cst.ImportStar)
                or get_full_name_for_node(node.module) != source
                or _held_by(tree, node, (cst.FunctionDef, cst.ClassDef))
            ):
                continue
            for a in node.names:
                local = alias_asname(a) or alias_name(a)
                if local in names and local not in read:
                    bound.add(local)
        read.update(
            n.value
            for n in walk.find_all(stmt, cst.Name)
            if n.value in names and not _held_by(tree, n, (cst.Import, cst.ImportFrom))
        )
    return bound


# -- values and call arguments
# ------------------------------------------------------------------------------
NOT_LITERAL = object()


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def arg_text(arg: cst.Arg) -> str:
    """An argument as a message quotes it: `name=value`, without its comma or the comments and
    lines after it."""
    return code(
        arg.with_changes(
            comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace("")
        )
    ).strip()


def literal(expr: cst.BaseExpression) -> Any:
    """The Python value of a literal expression, or NOT_LITERAL."""
    try:
        return ast.literal_eval(code(expr).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NOT_LITERAL


def kwarg(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def new_kwarg(name: str, value: str | cst.BaseExpression) -> cst.Arg:
    expr = cst.parse_expression(value) if isinstance(value, str) else value
    return cst.Arg(
        keyword=cst.Name(name),
        value=expr,
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def relayout(original: cst.Call, args: list[cst.Arg], fresh: set[int]) -> list[cst.Arg]:
    """Commas for a call's new argument list. Each argument's place decides its layout: new ones
    (ids in `fresh`) and a former last argument take the call's separator, kept ones keep
    theirs, and the last argument ends as the old last one did (a multi-line call keeps `)` on
    its own line). A comment at the end of an argument's line stays with that argument."""
    if not args:
        return []
    sep: cst.Comma | None = next(
        (a.comma for a in original.args[:-1] if isinstance(a.comma, cst.Comma)), None
    )
    if sep is not None:
        sep = _without_comments(sep)
    if sep is None:
        ws = original.whitespace_before_args
        sep = cst.Comma(
            whitespace_after=ws
            if isinstance(ws, cst.ParenthesizedWhitespace)
            else cst.SimpleWhitespace(" ")
        )
    last = original.args[-1] if original.args else None
    end = last.comma if last is not None else cst.MaybeSentinel.DEFAULT
    if isinstance(end, cst.Comma):
        # the comments on lines of their own before `)` stay there, whichever argument ends the
        # call now; the one at the end of the old last argument's line goes with that argument
        end = _without_comments(end, own_lines=False)
    # the line break before `)` of a call without a trailing comma sits after its last argument:
    # it stays at the end, whichever argument ends the call now
    closing: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace("")
    last_ws = last.whitespace_after_arg if last is not None else None
    if last is not None and isinstance(last.whitespace_after_arg, cst.ParenthesizedWhitespace):
        closing = last.whitespace_after_arg.with_changes(first_line=cst.TrailingWhitespace())
    carried = _carried_comment_lines(original, args)
    out = []
    for i, arg in enumerate(args):
        note = _line_comment(arg)
        after = arg.whitespace_after_arg
        lines = carried.get(id(arg.comma), [])
        if i == len(args) - 1:
            if after is not last_ws and isinstance(closing, cst.ParenthesizedWhitespace):
                arg = arg.with_changes(whitespace_after_arg=closing)
            out.append(arg.with_changes(comma=_with_lines(_with_comment(end, note), lines, 0)))
            continue
        if lines:
            arg = arg.with_changes(comma=_with_lines(arg.comma, lines, None))
        if isinstance(after, cst.ParenthesizedWhitespace):  # the old last one, moved up
            note = after.first_line if after.first_line.comment is not None else note
            arg = arg.with_changes(whitespace_after_arg=cst.SimpleWhitespace(""))
        if id(arg) in fresh or not isinstance(arg.comma, cst.Comma):
            out.append(arg.with_changes(comma=_with_comment(sep, note)))
        else:
            out.append(arg)
    return out


def _carried_comment_lines(
    original: cst.Call, args: list[cst.Arg]
) -> dict[int, list[cst.EmptyLine]]:
    """Comment lines of their own below an argument the new list drops (`# Logging` above the
    next argument, which stays): by the comma of the kept argument before it, which takes them,
    keyed by that comma's id (a kept argument keeps its comma object, whatever else changed).
    Lines over arguments that all go too (`# GAE` over `gamma=`, `lam=`) go with them; the
    comment lines of a kept argument's own comma stay where they are in any case."""
    kept = {id(a.comma) for a in args if isinstance(a.comma, cst.Comma)}
    carried: dict[int, list[cst.EmptyLine]] = {}
    owner: int | None = None
    given = original.args
    for i, arg in enumerate(given[:-1]):  # the last one's lines before `)` stay in any case
        comma = arg.comma
        if not isinstance(comma, cst.Comma):
            continue
        if id(comma) in kept:
            owner = id(comma)
            continue
        ws = comma.whitespace_after
        if (
            owner is not None
            and isinstance(ws, cst.ParenthesizedWhitespace)
            and any(line.comment is not None for line in ws.empty_lines)
            and _group_kept(given[i + 1 :], kept)
        ):
            carried.setdefault(owner, []).extend(ws.empty_lines)
    return carried


def _group_kept(group: Sequence[cst.Arg], kept: set[int]) -> bool:
    """Whether an argument under a heading stays: the arguments from the first of `group` up
    to one followed by lines of their own (blank or comment: the next group). A heading over
    arguments that all go (`# GAE` over `gamma=`, `lam=`) goes with them."""
    for arg in group:
        if id(arg.comma) in kept:
            return True
        if not isinstance(arg.comma, cst.Comma):
            return True  # the last argument, with no comma to tell by: taken as kept
        ws = arg.comma.whitespace_after
        if isinstance(ws, cst.ParenthesizedWhitespace) and ws.empty_lines:
            return False
    return False


def _with_lines(
    comma: cst.Comma | cst.MaybeSentinel, lines: list[cst.EmptyLine], at: int | None
) -> cst.Comma | cst.MaybeSentinel:
    """`comma` with `lines` among the lines below it (at index `at`, None for the end), and no
    two blank lines in a row where they meet."""
    if not lines or not isinstance(comma, cst.Comma):
        return comma
    ws = comma.whitespace_after
    if not isinstance(ws, cst.ParenthesizedWhitespace):
        return comma  # a one-line layout has no line for them
    own = list(ws.empty_lines)
    where = len(own) if at is None else at
    merged = [*own[:where], *lines, *own[where:]]
    tidy: list[cst.EmptyLine] = []
    for line in merged:
        blank = line.comment is None
        if blank and tidy and tidy[-1].comment is None:
            continue
        tidy.append(line)
    return comma.with_changes(whitespace_after=ws.with_changes(empty_lines=tidy))


def _line_comment(arg: cst.Arg) -> cst.TrailingWhitespace | None:
    """The comment after an argument's comma, at the end of its line."""
    comma = arg.comma
    if isinstance(comma, cst.Comma):
        ws = comma.whitespace_after
        if isinstance(ws, cst.ParenthesizedWhitespace) and ws.first_line.comment is not None:
            return ws.first_line
    return None


def _with_comment(
    comma: cst.Comma | cst.MaybeSentinel, note: cst.TrailingWhitespace | None
) -> cst.Comma | cst.MaybeSentinel:
    if note is None or not isinstance(comma, cst.Comma):
        return comma
    ws = comma.whitespace_after
    if not isinstance(ws, cst.ParenthesizedWhitespace):
        return comma  # a one-line layout: the argument had no line of its own to end
    return comma.with_changes(whitespace_after=ws.with_changes(first_line=note))


def _without_comments(comma: cst.Comma, *, own_lines: bool = True) -> cst.Comma:
    """`comma` without the comment ending its line (and, with `own_lines`, without the
    lines below it: a separator for new arguments is one line break)."""
    ws = comma.whitespace_after
    if not isinstance(ws, cst.ParenthesizedWhitespace):
        return comma
    kept = [] if own_lines else list(ws.empty_lines)
    return comma.with_changes(
        whitespace_after=ws.with_changes(
            first_line=cst.TrailingWhitespace(newline=ws.first_line.newline), empty_lines=kept
        )
    )


# -- names a node reads or binds, statements of a block
# ---------------------------------------------
def statements(block: cst.BaseSuite) -> list[cst.BaseSmallStatement]:
    """The small statements of a loop body; a compound statement makes the loop unrecognisable."""
    out: list = []
    for stmt in getattr(block, "body", []):
        if isinstance(stmt, cst.SimpleStatementLine):
            out.extend(stmt.body)
        else:
            out.append(stmt)
    return out


def elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    return [e.value for e in expr.elements] if isinstance(expr, (cst.Tuple, cst.List)) else []


def target_names(target: cst.BaseExpression) -> list[str]:
    """The names an assignment or loop target binds (`x`, `a, (b, *c)`); `batch["k"] = v` and
    `self.x = v` bind none."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def bound_names(node: cst.CSTNode) -> set[str]:
    """Names a statement assigns anywhere inside it (=, +=, annotated, for, with, walrus)."""
    found: set[str] = set()

    class _V(walk.Visitor):
        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            found.update(names(n.target))

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            found.update(names(n.target))

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            found.update(names(n.target))

        def visit_For(self, n: cst.For) -> None:
            found.update(names(n.target))

        def visit_AsName(self, n: cst.AsName) -> None:
            found.update(names(n.name))

        def visit_NamedExpr(self, n: cst.NamedExpr) -> None:
            found.update(names(n.target))

    walk.visit(node, _V())
    return found


def assignment(stmt: cst.BaseStatement) -> cst.Assign | None:
    if (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Assign)
    ):
        return stmt.body[0] if len(stmt.body[0].targets) == 1 else None
    return None


def names(node: cst.CSTNode, *, skip_imports: bool = False) -> set[str]:
    found: set[str] = set()

    class _V(walk.Visitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Import(self, n: cst.Import) -> bool:
            return not skip_imports

        def visit_ImportFrom(self, n: cst.ImportFrom) -> bool:
            return not skip_imports

    walk.visit(node, _V())
    return found


def bound(stmt: cst.CSTNode) -> set[str]:
    if isinstance(stmt, cst.Assign):
        return {get_full_name_for_node(t.target) or "" for t in stmt.targets}
    return set()


def with_kwarg(
    stmt: cst.BaseStatement, name: str, value: str, *, before: str = ""
) -> cst.BaseStatement:
    """`x = f(...)` with `name=value` added (ahead of the `before` keyword when there is one)."""
    assign = assignment(stmt)
    assert assign is not None and isinstance(assign.value, cst.Call)
    call = assign.value
    if kwarg(call, name) is not None:
        return stmt
    arg = new_kwarg(name, value)
    at = next(
        (
            i
            for i, a in enumerate(call.args)
            if before and a.keyword is not None and a.keyword.value == before
        ),
        len(call.args),
    )
    args = [*call.args[:at], arg, *call.args[at:]]
    new_call = call.with_changes(
        args=relayout(call, args, {id(arg), id(call.args[-1])} if call.args else {id(arg)})
    )
    return stmt.with_deep_changes(assign, value=new_call)  # type: ignore[arg-type]


def leading(stmt: cst.CSTNode) -> list[cst.EmptyLine]:
    """The comment and blank lines above a statement line or compound statement (none for any
    other node): libcst types a block's statements as BaseStatement, which does not declare them."""
    return list(getattr(stmt, "leading_lines", ()))


def without_statements(
    body: Sequence[cst.BaseStatement], gone: Sequence[bool]
) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
    """`body` without the one-line statements `gone` marks; their comments (above them and at
    the end of their line) and blank lines go above the next statement of the block, or come
    back to end the block (its footer): a removed line never takes a comment with it."""
    out: list[cst.BaseStatement] = []
    carried: list[cst.EmptyLine] = []
    for stmt, goes in zip(body, gone, strict=True):
        if goes and isinstance(stmt, cst.SimpleStatementLine):
            carried += stmt.leading_lines
            if stmt.trailing_whitespace.comment is not None:
                carried.append(cst.EmptyLine(comment=stmt.trailing_whitespace.comment))
            continue
        if carried and isinstance(stmt, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            stmt = stmt.with_changes(leading_lines=[*carried, *stmt.leading_lines])
            carried = []
        out.append(stmt)
    return out, carried

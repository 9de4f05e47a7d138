"""Helpers that read the shape of a legacy loop and its block: its lines and comments, the names
each
statement reads, the batch's columns, the prompt argument, the trainers and length samplers."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, reaching, walk
from codemods.base import RuleTransformer
from codemods.rules.ppo_loop.state import REWARD_FN, Block, Refused

Bound = int | cst.BaseExpression  # a LengthSampler bound: an int, or the expression it reads


@dataclasses.dataclass
class Line:
    """One statement of a loop body with the comments and blank lines above its line (for the line's
    first statement) and the line's end comment (for its last)."""

    stmt: cst.BaseSmallStatement | cst.BaseCompoundStatement
    comments: list[cst.EmptyLine]
    trailing: cst.TrailingWhitespace | None = None


def block_lines(block: cst.BaseSuite) -> list[Line]:
    out: list[Line] = []
    for stmt in getattr(block, "body", []):
        if isinstance(stmt, cst.SimpleStatementLine):
            small = list(stmt.body)
            out += [
                Line(
                    s,
                    list(stmt.leading_lines) if i == 0 else [],
                    stmt.trailing_whitespace
                    if i == len(small) - 1 and stmt.trailing_whitespace.comment
                    else None,
                )
                for i, s in enumerate(small)
            ]
        else:
            out.append(Line(stmt, list(stmt.leading_lines)))
    return out


LOGGING = ("print", "logger.", "logging.", "log.", "wandb.", "writer.add_", "tqdm.write")


def logging_call(stmt: cst.CSTNode) -> bool:
    """A statement that only logs: `print(...)`, `logger.info(...)`, `wandb.log(...)`,
    `trainer.log_stats(...)`, ..."""
    if not m.matches(stmt, m.Expr(m.Call())):
        return False
    func = get_full_name_for_node(stmt.value.func) or ""  # type: ignore[attr-defined]
    return func == "print" or func.startswith(LOGGING[1:]) or func.endswith(".log_stats")


def step_guard(stmt: cst.CSTNode, is_step: Callable[[cst.CSTNode], bool]) -> cst.Try | None:
    """`stmt` when it is a `try:` holding the loop's `step(...)` among its own statements, whose
    every `except` only logs, passes, moves on to the next batch or re-raises (no `else`, no
    `finally`): the legacy loop skipped a batch whose step raised. Its body is the loop's own."""
    if not isinstance(stmt, cst.Try) or stmt.orelse is not None or stmt.finalbody is not None:
        return None
    if not any(is_step(s) for s in edits.statements(stmt.body)):
        return None
    for handler in stmt.handlers:
        for s in edits.statements(handler.body):
            if not (
                logging_call(s)
                or isinstance(s, (cst.Pass, cst.Continue))
                or (isinstance(s, cst.Raise) and s.exc is None)
            ):
                return None
    return stmt


def unguarded(
    block: cst.BaseSuite, is_step: Callable[[cst.CSTNode], bool]
) -> tuple[cst.BaseSuite, list[cst.Try]]:
    """`block` with a `try:` around its step (`step_guard`) replaced by the statements it
    guarded (the comments above the `try` go above the first), and the guards replaced. The
    statements are the block's own nodes, so they can be found in the tree."""
    body: list[cst.BaseStatement] = []
    guards: list[cst.Try] = []
    for stmt in getattr(block, "body", []):
        guard = step_guard(stmt, is_step)
        if guard is None or not isinstance(guard.body, cst.IndentedBlock):
            body.append(stmt)
            continue
        guards.append(guard)
        inner = list(guard.body.body)
        inner[0] = inner[0].with_changes(
            leading_lines=[*guard.leading_lines, *edits.leading(inner[0])]
        )
        body += inner
    if not guards:
        return block, []
    return block.with_changes(body=body), guards


def block_footer(block: cst.BaseSuite) -> list[cst.EmptyLine]:
    """Comment lines at the end of an indented block, after its last statement."""
    return list(getattr(block, "footer", []))


def comment_lines(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    return [line.with_changes(indent=True) for line in lines if line.comment is not None]


def names_read(
    stmt: cst.CSTNode, names: set[str], columns: set[str], batch: str | None
) -> set[str]:
    """Which of `names` and of the batch's `columns` (as `batch["c"]`) a statement reads; the
    plain names an assignment binds are not reads."""
    parts: list[cst.CSTNode] = [stmt]
    if isinstance(stmt, cst.Assign):
        parts = [
            stmt.value,
            *(t.target for t in stmt.targets if not isinstance(t.target, cst.Name)),
        ]
    found: set[str] = set()
    for part in parts:
        found |= edits.names(part) & names
        for sub in walk.find_all(part, cst.Subscript):
            if not m.matches(sub.value, m.Name(batch or "")):
                continue
            column = batch_column(sub, batch)  # type: ignore[arg-type]
            if (
                column is not None
                and column in columns
                and sub not in (getattr(t, "target", None) for t in getattr(stmt, "targets", []))
            ):
                found.add(f'{batch}["{column}"]')
    return found


def listed(names: set[str]) -> str:
    return ", ".join(f"`{n}`" for n in sorted(names))


def names_outside(module: cst.Module, node: cst.CSTNode) -> set[str]:
    """Names used anywhere in `module` except inside `node`."""
    found: set[str] = set()

    class _V(walk.Visitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is node:
                return False
            if isinstance(n, cst.Name):
                found.add(n.value)
            return True

    walk.visit(module, _V())
    return found


def range_count(it: cst.BaseExpression, *, attributes: bool = False) -> cst.BaseExpression | None:
    """N of `range(N)` when N is an int literal or a name (or, with `attributes`, an attribute
    of a name: `range(args.epochs)`); of `tqdm(range(N), ...)` and `trange(N, ...)` too, which
    iterate the same numbers behind a progress bar."""
    if m.matches(
        it, m.Call(func=m.Name("tqdm"), args=[m.Arg(keyword=None, star=""), m.ZeroOrMore()])
    ):
        it = it.args[0].value  # type: ignore[attr-defined]
    elif m.matches(
        it,
        m.Call(
            func=m.Name("trange"),
            args=[m.Arg(keyword=None, star=""), m.ZeroOrMore(m.Arg(keyword=m.Name()))],
        ),
    ):
        it = cst.Call(func=cst.Name("range"), args=[it.args[0]])  # type: ignore[attr-defined]
    if m.matches(
        it,
        m.Call(
            func=m.Name("range"), args=[m.Arg(keyword=None, star="", value=m.Integer() | m.Name())]
        ),
    ):
        return it.args[0].value  # type: ignore[attr-defined]
    if attributes and m.matches(
        it, m.Call(func=m.Name("range"), args=[m.Arg(keyword=None, star="", value=m.Attribute())])
    ):
        value = it.args[0].value  # type: ignore[attr-defined]
        root = value
        while isinstance(root, cst.Attribute):
            root = root.value
        return value if isinstance(root, cst.Name) else None
    return None


def first_row(expr: cst.BaseExpression) -> str | None:
    """`q` for `[q[0]]`, `list(q)` or `q` (a one-row tensor), else None."""
    if m.matches(expr, m.List([m.Element(m.Call(func=m.Name("list"), args=[m.Arg(m.Name())]))])):
        return None  # `[list(q)]`: a list of one list, not the rows of q
    if m.matches(expr, m.Call(func=m.Name("list"), args=[m.Arg(m.Name(), keyword=None)])):
        return expr.args[0].value.value  # type: ignore[attr-defined]
    if m.matches(
        expr,
        m.List(
            [
                m.Element(
                    m.Subscript(value=m.Name(), slice=[m.SubscriptElement(m.Index(m.Integer("0")))])
                )
            ]
        ),
    ):
        return expr.elements[0].value.value.value  # type: ignore[attr-defined]
    return expr.value if isinstance(expr, cst.Name) else None


def prompt_arg(call: cst.Call) -> cst.BaseExpression | None:
    """`text` of `tok.encode(text, return_tensors="pt")` / `tok(text, return_tensors="pt")`: a
    string or a name."""
    if len(call.args) != 2 or call.args[0].keyword is not None or call.args[0].star:
        return None
    last = call.args[1]
    if (
        last.keyword is None
        or last.keyword.value != "return_tensors"
        or edits.literal(last.value) != "pt"
    ):
        return None
    text = call.args[0].value
    return text if isinstance(text, (cst.SimpleString, cst.ConcatenatedString, cst.Name)) else None


def loop_batch(target: cst.BaseAssignTargetExpression) -> str | None:
    if isinstance(target, cst.Name):
        return target.value
    if (
        isinstance(target, cst.Tuple)
        and len(target.elements) == 2
        and isinstance(target.elements[1].value, cst.Name)
    ):
        return target.elements[1].value.value
    return None


def batch_column(target: cst.BaseExpression, batch: str | None) -> str | None:
    if m.matches(
        target,
        m.Subscript(
            value=m.Name(batch or ""), slice=[m.SubscriptElement(m.Index(m.SimpleString()))]
        ),
    ):
        return edits.literal(target.slice[0].slice.value)  # type: ignore[attr-defined]
    return None


def reward_function(
    body: list[cst.BaseStatement], returned: str, name: str = REWARD_FN
) -> cst.FunctionDef:
    ret = cst.parse_statement(f"return {returned}\n")
    return cst.FunctionDef(
        name=cst.Name(name),
        params=cst.parse_expression("lambda prompts, completions, **kwargs: 0").params,  # type: ignore[attr-defined]
        body=cst.IndentedBlock(body=[*body, ret]),
        returns=cst.Annotation(cst.parse_expression("list[float]")),
        leading_lines=[],
    )


def target_trainer_vars(owner: RuleTransformer, module: cst.Module) -> set[str]:
    """Names bound to an RLOO/GRPO trainer: one with a `.step(` loop was a PPO trainer (TRL104
    ran)."""
    found: set[str] = set()
    names = tuple(ppo.TARGETS[t][1] for t in ppo.TARGETS)

    class _V(walk.Visitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if isinstance(node.value, cst.Call) and ppo.ppo_class(
                owner.names_from(node.value.func, "trl"), names
            ):
                found.update(get_full_name_for_node(t.target) or "" for t in node.targets)

    walk.visit(module, _V())
    return found


def dict_literals(
    module: cst.Module, scope_of: Callable[[cst.CSTNode], int | None]
) -> tuple[dict[str, Pairs], dict[tuple[int, str], Pairs]]:
    """Generation kwargs the loop expands: `name = {"k": v, ...}` with string keys, or
    `name = dict(k=v, ...)`, not changed by a `name["k"] = v` (or `name.update(...)`) outside a
    loop. By name where the module binds the name once (at any depth: in `main()`, under
    `if __name__ == "__main__":`, in a `try:`); and by (function body, name) where that function
    binds it once (`scope_of`: walk.Tree's numbering), for a name each of several functions
    binds to its own dict (a training function and an evaluation function)."""
    by_name: dict[str, Pairs] = {}
    by_scope: dict[tuple[int, str], Pairs] = {}
    seen: dict[str, int] = {}
    seen_in: dict[tuple[int | None, str], int] = {}
    for assigned in walk.find_all(module, cst.AssignTarget):
        if isinstance(assigned.target, (cst.Name, cst.Attribute)):
            name = get_full_name_for_node(assigned.target) or ""
            seen[name] = seen.get(name, 0) + 1
            key = (scope_of(assigned), name)
            seen_in[key] = seen_in.get(key, 0) + 1
    changed = _changed_outside_loops(module)
    # a `global`/`nonlocal` name may be rebound from another function's body
    shared = {n.name.value for s in walk.find_all(module, cst.Global) for n in s.names} | {
        n.name.value for s in walk.find_all(module, cst.Nonlocal) for n in s.names
    }
    builtin_dict = _builtin_dict(module)
    for assign in walk.find_all(module, cst.Assign):
        if len(assign.targets) != 1:
            continue
        name = get_full_name_for_node(assign.targets[0].target) or ""
        if not name or name in changed:
            continue
        pairs = _string_keyed(assign.value, builtin_dict)
        if pairs is None:
            continue
        if seen.get(name) == 1:
            by_name[name] = pairs
        scope = scope_of(assign)
        if scope is not None and seen_in.get((scope, name)) == 1 and name not in shared:
            by_scope[(scope, name)] = pairs
    return by_name, by_scope


Pairs = dict[str, cst.BaseExpression]


def _builtin_dict(module: cst.Module) -> bool:
    """Whether `dict(...)` in `module` is the builtin."""
    return (
        "dict" not in edits.bound_names(module)
        and not any(d.name.value == "dict" for d in walk.find_all(module, cst.FunctionDef))
        and not any(d.name.value == "dict" for d in walk.find_all(module, cst.ClassDef))
    )


def rebound_dicts(
    module: cst.Module, scope_of: Callable[[cst.CSTNode], int | None]
) -> dict[tuple[int, str], reaching.Rebound[Pairs]]:
    """By (function body, name): the generation dicts bound more than once, every binding a
    statement of one block (`reaching.rebound`), none changed by `name[k] = v` or
    `.update(...)` outside a loop; a loop of that block reads the last of them above it
    (`dict_literals` knows the names bound once)."""
    builtin_dict = _builtin_dict(module)
    return reaching.rebound(
        module,
        scope_of,
        reaching.blocks_of(module),
        lambda assign: _string_keyed(assign.value, builtin_dict),
        excluded=_changed_outside_loops(module),
    )


def _string_keyed(value: cst.BaseExpression, builtin_dict: bool) -> Pairs | None:
    """The keys and values of a dict display with string keys, or of a `dict(k=v, ...)` call
    with keywords only; None for anything else."""
    if isinstance(value, cst.Dict):
        keys = [
            edits.literal(e.key) if isinstance(e, cst.DictElement) else None for e in value.elements
        ]
        if not all(isinstance(k, str) for k in keys):
            return None
        return {k: e.value for k, e in zip(keys, value.elements)}  # type: ignore[misc]
    if (
        builtin_dict
        and isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "dict"
        and all(a.keyword is not None and not a.star for a in value.args)
    ):
        return {a.keyword.value: a.value for a in value.args}  # type: ignore[union-attr]
    return None


def _changed_outside_loops(module: cst.Module) -> set[str]:
    """Names changed by `name[...] = v` (or `name.update(...)`) outside every `for` loop."""
    found: set[str] = set()

    class _V(walk.Visitor):
        def visit_For(self, node: cst.For) -> bool:
            return False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, cst.Subscript):
                found.add(get_full_name_for_node(node.target.value) or "")

        def visit_Call(self, node: cst.Call) -> None:
            if m.matches(node.func, m.Attribute(attr=m.Name("update"))):
                found.add(get_full_name_for_node(node.func.value) or "")  # type: ignore[attr-defined]

    walk.visit(module, _V())
    return found


def length_samplers(
    module: cst.Module, once: dict[str, cst.BaseExpression]
) -> dict[str, tuple[Bound, Bound]]:
    """`LengthSampler(lo, hi)` bound at the top level or in a function's own body, by variable.
    A bound is an int (a literal, or a name the module binds once, at the top level, to one:
    `output_min_length = 4`; in a function, also a name that function's body binds once, above
    the sampler, to an int literal and nothing else binds), or the expression a top-level name
    is bound to (`output_max_length = script_args.output_max_length`), or the bound's own
    expression when it is an attribute (`args.max_len`)."""
    out: dict[str, tuple[Bound, Bound]] = {}
    for stmt in [*module.body, *main_guard_body(module)]:
        _add_sampler(out, stmt, once)
    seen: dict[str, int] | None = None  # counted once, where a function builds a sampler
    for fn in walk.find_all(module, cst.FunctionDef):
        body = getattr(fn.body, "body", [])
        if not any(
            (a := edits.assignment(stmt)) is not None
            and m.matches(a.value, m.Call(func=m.Name("LengthSampler")))
            for stmt in body
        ):
            continue  # no sampler of its own: nothing to read
        own: dict[str, cst.BaseExpression] = {}
        rebound = reaching.bound_otherwise(fn)
        seen = seen if seen is not None else _assigned_counts(module)
        for stmt in body:
            assign = edits.assignment(stmt)
            if assign is None or len(assign.targets) != 1:
                continue
            name = get_full_name_for_node(assign.targets[0].target) or ""
            if seen.get(name) != 1:
                continue
            _add_sampler(out, stmt, {**once, **own})
            value = edits.literal(assign.value)
            if (
                isinstance(assign.targets[0].target, cst.Name)
                and isinstance(value, int)
                and not isinstance(value, bool)
                and name not in rebound
            ):
                own[name] = assign.value
    return out


def _add_sampler(
    out: dict[str, tuple[Bound, Bound]],
    stmt: cst.BaseStatement,
    once: dict[str, cst.BaseExpression],
) -> None:
    assign = edits.assignment(stmt)
    if assign is not None:
        bounds = sampler_bounds(assign.value, once)
        if bounds is not None:
            out[get_full_name_for_node(assign.targets[0].target) or ""] = bounds


def _assigned_counts(module: cst.Module) -> dict[str, int]:
    """How many `name = ...` targets the whole module has for each name."""
    seen: dict[str, int] = {}
    for assigned in walk.find_all(module, cst.AssignTarget):
        name = get_full_name_for_node(assigned.target)
        if name:
            seen[name] = seen.get(name, 0) + 1
    return seen


def sampler_bounds(
    call: cst.BaseExpression, once: dict[str, cst.BaseExpression]
) -> tuple[Bound, Bound] | None:
    """(lo, hi) of `LengthSampler(lo, hi)`, each an int (a literal, or a name `once` binds to
    one), the expression such a name is bound to, or an attribute (`args.max_len`,
    `self.config.max_len`); None for any other call or bound."""

    def bound(expr: cst.BaseExpression) -> Bound | None:
        if isinstance(expr, cst.Name) and expr.value in once:
            expr = once[expr.value]
        value = edits.literal(expr)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if m.matches(expr, m.Attribute(value=m.Name() | m.Attribute())):
            return expr
        return None

    if not m.matches(call, m.Call(func=m.Name("LengthSampler"))):
        return None
    args = call.args  # type: ignore[attr-defined]
    if len(args) != 2 or any(a.keyword or a.star for a in args):
        return None
    lo, hi = (bound(a.value) for a in args)
    return None if lo is None or hi is None else (lo, hi)


def largest_draw(hi: Bound) -> cst.BaseExpression:
    """The largest length `LengthSampler(lo, hi)` draws: hi - 1 (it samples from range(lo, hi))."""
    if isinstance(hi, int):
        return cst.Integer(str(hi - 1))
    return cst.parse_expression(f"{edits.code(hi).strip()} - 1")


def free_name(wanted: str, taken: set[str]) -> str:
    """`wanted`, or `wanted_from_loop` (then numbered) when the file already uses the name: a
    repo's own `reward_fn(texts, kwargs)` must not be shadowed by, or shadow, the new one."""
    if wanted not in taken:
        return wanted
    name, i = f"{wanted}_from_loop", 2
    while name in taken:
        name, i = f"{wanted}_from_loop_{i}", i + 1
    return name


def once_literal(module: cst.Module, expr: cst.BaseExpression) -> cst.BaseExpression:
    """The literal a name stands for when the module binds it once, at the top level, to an
    int, float or string (`num_epochs = 3`, `query_txt = "This morning I went to the "`); else
    `expr` itself. Moving the value is exact where moving the name would read it too early."""
    if not isinstance(expr, cst.Name):
        return expr
    value = single_bindings(module).get(expr.value)
    if (
        value is not None
        and isinstance(edits.literal(value), (int, float, str))
        and not isinstance(edits.literal(value), bool)
    ):
        return value.with_changes(lpar=[], rpar=[]) if hasattr(value, "lpar") else value
    return expr


def single_bindings(module: cst.Module) -> dict[str, cst.BaseExpression]:
    """Module-level names bound exactly once in the whole module, by a plain `name = value` at
    the top level or in the body of an `if __name__ == "__main__":` guard; or bound only by such
    lines that all give the same literal (a notebook whose cells each set
    `output_min_length = 100`): every read sees that one value."""
    seen = _assigned_counts(module)
    values: dict[str, list[cst.BaseExpression]] = {}
    for stmt in [*module.body, *main_guard_body(module)]:
        assign = edits.assignment(stmt)
        if assign is None or len(assign.targets) != 1:
            continue
        target = assign.targets[0].target
        if isinstance(target, cst.Name):
            values.setdefault(target.value, []).append(assign.value)
    return {
        k: v[0]
        for k, v in values.items()
        if seen.get(k) == len(v) and (len(v) == 1 or _one_literal(v))
    }


def main_guard_body(module: cst.Module) -> list[cst.BaseStatement]:
    """The statements of the module's top-level `if __name__ == "__main__":` blocks (their
    own, not nested ones); code there runs at module level when the file is run."""
    return [
        stmt for guard in reaching.main_guards(module) for stmt in getattr(guard.body, "body", [])
    ]


def _one_literal(values: list[cst.BaseExpression]) -> bool:
    """Whether `values` are all the same int, float or string literal."""
    first = edits.literal(values[0])
    return (
        isinstance(first, (int, float, str))
        and not isinstance(first, bool)
        and all(type(edits.literal(v)) is type(first) and edits.literal(v) == first for v in values)
    )


def with_body(node: Block, body: list[cst.BaseStatement]) -> Block:
    """`node` itself when `body` is its own statements (so the pass counts as no change)."""
    if len(body) == len(node.body) and all(a is b for a, b in zip(body, node.body)):
        return node
    return node.with_changes(body=body)


def early_exit(block: cst.BaseSuite) -> str | None:
    """`break`, `continue`, `return` or `yield` that leaves the loop (a `return` or `yield` in a
    loop nested in it too; not those of a nested function): code that would not compile, or
    would mean something else, in `reward_fn`."""
    found: list[str] = []

    class _V(walk.Visitor):
        def __init__(self) -> None:
            self.inner = 0  # loops nested in the block: their break/continue are their own

        def visit_For(self, node: cst.For) -> None:
            self.inner += 1

        def leave_For(self, original_node: cst.For) -> None:
            self.inner -= 1

        def visit_While(self, node: cst.While) -> None:
            self.inner += 1

        def leave_While(self, original_node: cst.While) -> None:
            self.inner -= 1

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Break(self, node: cst.Break) -> None:
            if not self.inner:
                found.append("break")

        def visit_Continue(self, node: cst.Continue) -> None:
            if not self.inner:
                found.append("continue")

        def visit_Return(self, node: cst.Return) -> None:
            found.append("return")

        def visit_Yield(self, node: cst.Yield) -> None:
            found.append("yield")

    walk.visit(block, _V())
    return found[0] if found else None


def loop_state(
    stmts: Sequence[cst.CSTNode],
    target: cst.BaseAssignTargetExpression,
    batch: str | None,
    *,
    outer: cst.For | None = None,
) -> None:
    """Refuse a reward that reads the loop's own counters (`epoch` of `enumerate`, or of an epoch
    loop around it) or carries a value from one batch to the next (`baseline = 0.9 * baseline +
    ...`, a name set in one branch of an `if` and read after it): `reward_fn` is called afresh
    for each batch, with neither. Names are followed through `if`/`for`/`with`/`try` as Python
    runs them; a comprehension's own variables are its own."""
    counters = edits.names(target) - {batch or ""}
    if outer is not None:
        counters |= edits.names(outer.target)
    local: set[str] = set()
    for stmt in stmts:
        local |= _binds_anywhere(stmt)
    _Flow(counters, local).block(stmts, set())


class _Flow:
    """Which names are surely bound at each read of a block, for `loop_state`."""

    def __init__(self, counters: set[str], local: set[str]) -> None:
        self.counters, self.local = counters, local

    def check(self, node: cst.CSTNode | None, bound: set[str]) -> None:
        if node is None:
            return
        read = reads(node)
        used = read & self.counters
        if used:
            raise Refused(
                f"the reward reads the loop counter `{sorted(used)[0]}`, which `reward_fn` "
                "does not have"
            )
        carried = (read & self.local) - bound
        if carried:
            raise Refused(
                f"the reward carries `{sorted(carried)[0]}` from one batch to the next, which a "
                "`reward_fn` called once per batch cannot"
            )

    def block(self, stmts: Sequence[cst.CSTNode], bound: set[str]) -> set[str]:
        bound = set(bound)
        for stmt in stmts:
            bound = self.stmt(stmt, bound)
        return bound

    def suite(self, suite: cst.BaseSuite | None, bound: set[str]) -> set[str]:
        if suite is None:
            return set(bound)
        return self.block(list(getattr(suite, "body", [])), bound)

    def stmt(self, stmt: cst.CSTNode, bound: set[str]) -> set[str]:
        if isinstance(stmt, cst.SimpleStatementLine):
            return self.block(list(stmt.body), bound)
        if isinstance(stmt, cst.Assign):
            self.check(stmt.value, bound)
            for t in stmt.targets:
                if not _plain_target(t.target):
                    self.check(t.target, bound)
            return bound | {n for t in stmt.targets for n in edits.target_names(t.target)}
        if isinstance(stmt, (cst.AugAssign, cst.AnnAssign)):
            self.check(stmt.value, bound)
            if isinstance(stmt, cst.AugAssign) or not _plain_target(stmt.target):
                self.check(stmt.target, bound)
            return bound | set(edits.target_names(stmt.target))
        if isinstance(stmt, cst.If):
            self.check(stmt.test, bound)
            taken = self.suite(stmt.body, bound)
            other = (
                self.stmt(stmt.orelse, bound)
                if isinstance(stmt.orelse, cst.If)
                else self.suite(stmt.orelse.body if stmt.orelse else None, bound)
            )
            return taken & other
        if isinstance(stmt, (cst.For, cst.While)):
            if isinstance(stmt, cst.For):
                self.check(stmt.iter, bound)
                self.suite(stmt.body, bound | set(edits.target_names(stmt.target)))
            else:
                self.check(stmt.test, bound)
                self.suite(stmt.body, bound)
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, bound)
            return bound  # it may run no time
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self.check(item.item, bound)
                if item.asname is not None:
                    bound = bound | set(edits.target_names(item.asname.name))
            return self.suite(stmt.body, bound)
        if isinstance(stmt, cst.Try):
            after = self.suite(stmt.body, bound)
            for handler in stmt.handlers:
                named = {handler.name.name.value} if handler.name is not None else set()  # type: ignore[union-attr]
                after &= self.suite(handler.body, bound | named)
            if stmt.finalbody is not None:
                self.suite(stmt.finalbody.body, bound)
            return after
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return bound | {stmt.name.value}
        self.check(stmt, bound)
        return bound


def _plain_target(target: cst.BaseExpression) -> bool:
    """A name, or a tuple/list of plain targets: binding, not mutating."""
    if isinstance(target, cst.Name):
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_plain_target(e.value) for e in target.elements)
    return False


def _binds_anywhere(node: cst.CSTNode) -> set[str]:
    """Names bound anywhere inside a statement (assignment targets, loop variables, `as`)."""
    found: set[str] = set()

    class _V(walk.Visitor):
        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            found.update(edits.target_names(n.target))

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            found.update(edits.target_names(n.target))

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            found.update(edits.target_names(n.target))

        def visit_For(self, n: cst.For) -> None:
            found.update(edits.target_names(n.target))

        def visit_AsName(self, n: cst.AsName) -> None:
            found.update(edits.target_names(n.name))  # type: ignore[arg-type]

        def visit_NamedExpr(self, n: cst.NamedExpr) -> None:
            found.update(edits.target_names(n.target))

        def visit_CompFor(self, n: cst.CompFor) -> bool:
            return True  # its targets are its own, but a walrus inside binds outside

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            found.add(n.name.value)
            return False

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

    walk.visit(node, _V())
    return found


def reads(node: cst.CSTNode) -> set[str]:
    """Names an expression (or simple statement) loads, without the variables its
    comprehensions and lambdas bind for themselves, and without attribute or keyword names."""
    found: set[str] = set()

    def inner(n: cst.CSTNode) -> set[str]:
        return reads(n)

    class _V(walk.Visitor):
        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)
            return False

        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def _comp(self, n: cst.CSTNode, parts: list[cst.CSTNode]) -> bool:
            own: set[str] = set()
            comp: cst.CompFor | None = n.for_in  # type: ignore[attr-defined]
            first = True
            while comp is not None:
                got = inner(comp.iter)
                found.update(got if first else got - own)
                first = False
                own |= set(edits.target_names(comp.target))  # type: ignore[arg-type]
                for cond in comp.ifs:
                    found.update(inner(cond.test) - own)
                comp = comp.inner_for_in
            for part in parts:
                found.update(inner(part) - own)
            return False

        def visit_ListComp(self, n: cst.ListComp) -> bool:
            return self._comp(n, [n.elt])

        def visit_SetComp(self, n: cst.SetComp) -> bool:
            return self._comp(n, [n.elt])

        def visit_GeneratorExp(self, n: cst.GeneratorExp) -> bool:
            return self._comp(n, [n.elt])

        def visit_DictComp(self, n: cst.DictComp) -> bool:
            return self._comp(n, [n.key, n.value])

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            params = {p.name.value for p in n.params.params}
            found.update(inner(n.body) - params)
            return False

    walk.visit(node, _V())
    return found


def loaded(stmt: cst.CSTNode) -> set[str]:
    """Names a statement loads (its targets' own names excluded, attribute names excluded)."""
    found: set[str] = set()

    class _V(walk.Visitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
            return not isinstance(node.target, cst.Name)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    walk.visit(stmt, _V())
    return found


def batch_limit(loop: cst.For) -> tuple[cst.If, cst.BaseExpression] | None:
    """The loop's guard `if <i> >= N: break` (or `> N - 1`, `== N`), `i` the counter of
    `for i, batch in enumerate(...)` (inside `tqdm(...)` too, default start), with the number
    of batches the loop trains on (when the dataloader has that many): N for the loop's first
    statement; N + 1 for its last, which breaks after batch `i` has trained (`if epoch > 100:
    break` after the step: 102 batches)."""
    body = getattr(loop.body, "body", [])
    if not body:
        return None
    it = loop.iter
    if m.matches(it, m.Call(func=m.Name("tqdm"))) and it.args:  # type: ignore[attr-defined]
        it = it.args[0].value  # type: ignore[attr-defined]
    if not m.matches(it, m.Call(func=m.Name("enumerate"), args=[m.Arg(keyword=None, star="")])):
        return None
    if not m.matches(loop.target, m.Tuple(elements=[m.Element(m.Name()), m.Element(m.Name())])):
        return None
    counter = loop.target.elements[0].value.value  # type: ignore[attr-defined]
    for guard, after in ((body[0], 0), (body[-1], 1)):
        found = _break_guard(guard, counter, after)
        if found is not None:
            return guard, found  # type: ignore[return-value]
        if len(body) == 1:
            break
    return None


def _break_guard(stmt: cst.BaseStatement, counter: str, after: int) -> cst.BaseExpression | None:
    """The batches a loop trains on when `stmt` is `if <counter> >= N: break` (`> N`, `== N`),
    run before (`after` 0) or after (1) the batch's training; None for any other statement."""
    if not isinstance(stmt, cst.If) or stmt.orelse is not None:
        return None
    if not m.matches(
        stmt.body,
        m.IndentedBlock(body=[m.SimpleStatementLine(body=[m.Break()])])
        | m.SimpleStatementSuite(body=[m.Break()]),  # `if i >= 3: break` on one line
    ):
        return None
    test = stmt.test
    if not (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and m.matches(test.left, m.Name(counter))
    ):
        return None
    op, bound = test.comparisons[0].operator, test.comparisons[0].comparator
    if counter in edits.names(bound):
        return None
    if isinstance(op, cst.GreaterThan):
        extra = after + 1
    elif isinstance(op, (cst.GreaterThanEqual, cst.Equal)):
        extra = after
    else:
        return None
    if not extra:
        return bound
    value = edits.literal(bound)
    if isinstance(value, int) and not isinstance(value, bool):
        return cst.Integer(str(value + extra))
    return cst.parse_expression(f"{edits.code(bound).strip()} + {extra}")


def second_loop(above: Sequence[cst.BaseStatement], trainer: str, functions: set[str]) -> str:
    """Why a PPO loop below another of its block is left: the rewrite gives a trainer one
    reward function and one `train()` for one loop. Which of two reasons depends on whether
    the last build of `trainer` in `above` already takes a reward function the rewrite wrote
    (`taken`: the loop above was rewritten), so a second run, which meets this loop first,
    gives the same one."""
    if taken(above, trainer, functions):
        return (
            f"`{trainer}` takes its `reward_funcs` from a PPO loop above this one, which became "
            f"`{REWARD_FN}` and `train()`: this loop needs a trainer of its own, built with its "
            "own reward function"
        )
    return (
        "a PPO loop above it in this block, left for you too, comes first: the rewrite turns "
        "one loop per trainer into `reward_funcs` and `train()`, so once that one is written "
        "this one needs a trainer of its own"
    )


def taken(above: Sequence[cst.BaseStatement], trainer: str, functions: set[str]) -> bool:
    """Whether the last statement of `above` that builds `trainer` passes it `reward_funcs=f`,
    `f` one of `functions` (the reward function a loop's rewrite writes, and the functions the
    file defines): a loop of the block became it. A legacy trainer never took `reward_funcs`;
    one given a reward model (`reward_funcs=reward_model`, from a v2 `reward_model=`) is not
    taken by a loop."""
    for stmt in reversed(above):
        assign = edits.assignment(stmt)
        if assign is not None and get_full_name_for_node(assign.targets[0].target) == trainer:
            given = (
                edits.kwarg(assign.value, "reward_funcs")
                if isinstance(assign.value, cst.Call)
                else None
            )
            return (
                given is not None
                and isinstance(given.value, cst.Name)
                and given.value.value in functions
            )
    return False

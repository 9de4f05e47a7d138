"""codemods.walk: the transform that rebuilds only what changes, and tree listings copied from
the tree a module was made from. Each is held to what libcst's own walk and a fresh listing
give."""

from __future__ import annotations

import libcst as cst
import pytest

from codemods import walk
from tests.codemods.helpers import dedent

SOURCE = dedent(
    """
    import os
    from trl import PPOTrainer as T, PPOConfig

    def helper(x):
        def inner(y):
            return y + 1
        return inner(x)

    class Runner:
        def one(self):
            return PPOConfig(batch_size=8)

        def two(self, n):
            total = [helper(i) for i in range(n)]
            del total[0]
            return T(config=None)

        def three(self):
            return 3

    print(os.getcwd(), helper(2))
    """
)


class _Edit(cst.CSTTransformer):
    """Renames PPOConfig, drops `del` statements, doubles `print(...)` lines and records every
    hook call: what the two walks are compared on."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.calls.append("visit " + type(node).__name__)
        return not isinstance(node, cst.Import)  # an import's names are not walked

    def on_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def, override]
        self.calls.append("leave " + type(original_node).__name__)
        if isinstance(updated_node, cst.Name) and updated_node.value == "PPOConfig":
            return updated_node.with_changes(value="RLOOConfig")
        if isinstance(updated_node, cst.SimpleStatementLine) and isinstance(
            updated_node.body[0], cst.Del
        ):
            return cst.RemovalSentinel.REMOVE
        if (
            isinstance(updated_node, cst.SimpleStatementLine)
            and isinstance(updated_node.body[0], cst.Expr)
            and isinstance(updated_node.body[0].value, cst.Call)
        ):
            return cst.FlattenSentinel([updated_node, updated_node])
        return updated_node


def test_transform_makes_libcsts_code_with_libcsts_calls():
    module = cst.parse_module(SOURCE)
    theirs, ours = _Edit(), _Edit()
    expected = module.visit(theirs)
    got = walk.transform(module, ours)
    assert got.code == expected.code
    assert "RLOOConfig(batch_size=8)" in got.code and "del total" not in got.code
    assert got.code.count("print(os.getcwd(), helper(2))") == 2
    assert ours.calls == theirs.calls


def test_transform_keeps_what_it_does_not_change():
    module = cst.parse_module(SOURCE)
    got = walk.transform(module, _Edit())
    # the function nobody touched is the same object, so is the import line
    assert got.body[0] is module.body[0]
    assert got.body[2] is module.body[2]
    # inside the class, the method without an edit is kept, the edited one rebuilt
    old_one, old_two, old_three = module.body[3].body.body  # type: ignore[attr-defined]
    new_one, new_two, new_three = got.body[3].body.body  # type: ignore[attr-defined]
    assert new_one is not old_one and new_two is not old_two  # both hold an edit
    assert new_three is old_three
    assert walk.transform(module, cst.CSTTransformer()) is module


def test_transform_refuses_a_removal_where_libcst_does():
    class _RemoveName(cst.CSTTransformer):
        def leave_Name(self, original_node, updated_node):  # type: ignore[no-untyped-def]
            return cst.RemovalSentinel.REMOVE if updated_node.value == "helper" else updated_node

    module = cst.parse_module("helper(1)\n")
    with pytest.raises(TypeError):
        module.visit(_RemoveName())
    with pytest.raises(TypeError):
        walk.transform(module, _RemoveName())


FIELDS = ("nodes", "parents", "ends", "masks", "scope_at", "imported", "text_at", "text")


def _listing(tree: walk.Tree) -> dict[str, object]:
    out: dict[str, object] = {f: list(getattr(tree, f)) for f in FIELDS}
    out["nodes"] = [id(n) for n in tree.nodes]
    out["scopes"] = tree.scopes
    return out


@pytest.mark.parametrize(
    "old, new",
    [
        # a function added before the others: every later function body is renumbered
        ("def helper(x):", "def added():\n    pass\n\ndef helper(x):"),
        # one method of the class rebuilt, the rest copied
        ("return PPOConfig(batch_size=8)", "return PPOConfig(batch_size=16)"),
        # a statement gone from the middle
        ("    print(os.getcwd(), helper(2))\n", ""),
        # an import changed: names inside imports stay marked as such
        ("from trl import PPOTrainer as T, PPOConfig", "from trl import RLOOConfig as PPOConfig"),
    ],
)
def test_a_copied_listing_is_the_fresh_one(old, new, monkeypatch):
    before = cst.parse_module(SOURCE)
    edited = cst.parse_module(SOURCE.replace(old, new, 1))
    # the edited module keeps every statement the edit did not reach, as a pass would
    kept = {before.code_for_node(s): s for s in before.body}
    module = edited.with_changes(body=[kept.get(edited.code_for_node(s), s) for s in edited.body])
    assert any(s in before.body for s in module.body)
    copies = []
    monkeypatch.setattr(walk, "CHECK", False)
    original_copy = walk.Tree._copy

    def counting(self, *args):  # type: ignore[no-untyped-def]
        copies.append(args[1])
        return original_copy(self, *args)

    monkeypatch.setattr(walk.Tree, "_copy", counting)
    copied = walk.Tree(module, walk.Tree(before))
    assert copies, "nothing was copied from the earlier tree"
    fresh = walk.Tree(module)
    assert _listing(copied) == _listing(fresh)
    assert copied.index == fresh.index


def test_a_parsed_module_copies_nothing(monkeypatch):
    before = cst.parse_module(SOURCE)
    monkeypatch.setattr(
        walk.Tree, "_copy", lambda *a: pytest.fail("a fresh parse shares no node to copy")
    )
    walk.Tree(cst.parse_module(SOURCE), walk.Tree(before))


CONTEXTS = dedent(
    """
    a.b = c.d
    a.b += c.d
    x: a.b = c.d
    a.b, [c.d, *e.f] = g.h
    del a.b, c[d.e]
    for a.b in c.d:
        pass
    with open(a.b) as c.d, open(e.f) as (g.h, i.j):
        pass
    print([a.b for c.d in e.f if g.h])
    (y := a.b)
    a[b.c].d = e.f(g.h).i
    import a.b as c
    import d.e
    f(a.b)[c.d] = 1

    def k(p: a.b = c.d) -> e.f:
        pass

    class K(a.b, metaclass=c.d):
        e.f = g.h

    def generic[T: a.b](x: T) -> T:
        return x
    """
)


def test_context_is_libcsts():
    from libcst.metadata import ExpressionContextProvider, MetadataWrapper

    wrapper = MetadataWrapper(cst.parse_module(CONTEXTS), unsafe_skip_copy=True)
    libcst_says = wrapper.resolve(ExpressionContextProvider)
    tree = walk.Tree(wrapper.module)
    targets = [n for n in tree.nodes if isinstance(n, (cst.Attribute, cst.Subscript))]
    assert len(targets) > 40
    told = {"load": 0, "store": 0, "del": 0, None: 0}
    for node in targets:
        ours = tree.context(node)
        theirs = libcst_says.get(node)
        assert ours == (theirs.name.lower() if theirs is not None else None), cst.Module(
            []
        ).code_for_node(node)
        told[ours] += 1
    assert all(told.values())  # every answer was given at least once
    assert tree.context(cst.parse_expression("a.b")) is None  # not in the tree


def test_a_read_only_walk_skips_subtrees_without_hooks_and_calls_what_libcst_calls():
    module = cst.parse_module(SOURCE)

    def recorder(base: type) -> cst.CSTVisitor:
        class _Calls(base):  # type: ignore[misc, valid-type]
            def __init__(self) -> None:
                super().__init__()
                self.calls: list[str] = []

            def visit_Call(self, node: cst.Call) -> bool:
                self.calls.append("call " + cst.Module([]).code_for_node(node.func))
                return not isinstance(node.func, cst.Attribute)

            def leave_Lambda(self, node: cst.Lambda) -> None:
                self.calls.append("lambda")

            def visit_ClassDef(self, node: cst.ClassDef) -> None:
                self.calls.append("class " + node.name.value)

        return _Calls()

    ours, theirs = recorder(walk.Visitor), recorder(cst.CSTVisitor)
    walk.visit(module, ours)
    module.visit(theirs)
    assert ours.calls == theirs.calls
    assert "call os.getcwd" in ours.calls and "class Runner" in ours.calls
    # the skip itself: a visitor hooked on nothing the module holds is never called
    hooked: list[str] = []

    class _Never(walk.Visitor):
        def visit_Lambda(self, node: cst.Lambda) -> None:
            hooked.append("lambda")

        def visit_Module(self, node: cst.Module) -> None:
            hooked.append("module")

    walk.visit(module, _Never())
    assert hooked == ["module"]
    # and no other node's hooks were even looked up: the walk went past every subtree
    assert set(_Never.__dict__[walk._TABLE]) == {cst.Module}

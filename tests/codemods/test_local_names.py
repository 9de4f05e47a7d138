"""The plain variables' answers (which assignments a read sees, which reads an assignment has)
are libcst's scope answers, or None (the engine then asks the scope)."""

from __future__ import annotations

import ast
from textwrap import dedent

import libcst as cst
import pytest
from libcst.metadata import GlobalScope, MetadataWrapper, PositionProvider, ScopeProvider

from codemods import walk
from codemods.bindings import Bindings
from codemods.local_names import LocalNames

ANSWERED = {
    "module-config": """
        config = PPOConfig(a=1)
        print(config.x)
        config = config.replace(b=2)
        def f():
            return config.y
        class K:
            z = config.z
            def m(self):
                return config
        [config for _ in range(3)]
        (lambda: config)()
    """,
    "function-locals": """
        def main():
            print(cfg)
            cfg = make()
            cfg += 1
            for cfg in range(3):
                print(cfg)
            def inner():
                return cfg
            return cfg
        cfg = 0
    """,
    "read-before-any-binding": """
        print(x, len)
        x = 1
        len = 3
        print(x, len)
    """,
    "comprehension-iterables": """
        data = [1]
        out = [d for d in data if data]
        nest = [e for d in data for e in data]
        pairs = {k: data for k in data}
    """,
    "loop-target-read-in-the-loop": """
        item = [1]
        for item in item:
            print(item)
        total = 0
        total = total + 1
    """,
    "a-walrus-counts-too": """
        x = 1
        x = [(z := 2), x]
        print(x, z)
    """,
    "a-class-in-a-function": """
        def outer():
            v = 1
            class C:
                w = v
                def m(self):
                    return v
            return C
    """,
    "decorators-and-defaults": """
        deco = make()
        @deco
        def f(a=deco, *, b: deco = None) -> deco:
            deco = 2
            return deco
    """,
    "obj-attribute-and-keyword": """
        model = load()
        other.model = model
        run(model=model)
        value: int = model.size
    """,
    "parameters": """
        cfg = 1
        def f(cfg, *rest, key=cfg, **kw):
            print(cfg, rest, kw)
            cfg = 2
            return cfg
        def g(other=cfg):
            return cfg
    """,
    "inner-reads-see-every-binding": """
        config = 1
        get = lambda: config
        items = [config for _ in range(2)]
        config = 2
    """,
    "a-read-between-two-bindings": """
        cfg = 0
        def main():
            cfg = 1
            print(cfg)
            cfg = 2
            return cfg
        class K:
            def m(self):
                print(cfg)
                cfg = 3
    """,
    "class-attributes-read-as-attributes": """
        class Base:
            trl_model_class = None
            def test(self):
                return self.trl_model_class.from_pretrained("x")
        class Sub(Base):
            trl_model_class = AutoModelForCausalLMWithValueHead
            if flag:
                trl_model_class = Other
            class Inner:
                trl_model_class = Third
        def f():
            class Local:
                trl_model_class = Fourth
            return Local
    """,
}

LEFT_TO_THE_SCOPE = {
    "a-lambda-parameter": """
        cfg = 1
        f = lambda cfg: cfg
        print(cfg)
    """,
    "global": """
        cfg = 1
        def f():
            global cfg
            cfg = 2
        print(cfg)
    """,
    "imported": """
        import cfg
        cfg = 1
        print(cfg)
    """,
    "deleted": """
        cfg = 1
        print(cfg)
        del cfg
    """,
    "a-class-attribute": """
        class K:
            cfg = 1
        cfg = 2
        print(cfg)
    """,
    "a-class-attribute-read-in-its-class": """
        class K:
            cfg = 1
            other = [cfg]
        print(K)
    """,
    "an-as-target": """
        with open("x") as cfg:
            pass
        print(cfg)
    """,
    "a-string-annotation": """
        cfg = 1
        def f(x: "cfg"):
            return cfg
    """,
    "a-lambda-default": """
        cfg = 1
        f = lambda a=cfg: a
        print(cfg)
    """,
    "a-comprehension-target": """
        cfg = 1
        [cfg for cfg in range(3)]
        print(cfg)
    """,
}


def _setup(text: str):  # type: ignore[no-untyped-def]
    text = dedent(text).lstrip()
    module = cst.parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    lines = wrapper.resolve(PositionProvider)
    tree = walk.Tree(module)
    local = LocalNames(tree, Bindings(ast.parse(text)).hints)
    return module, scopes, lines, tree, local


def _compare(text: str) -> tuple[int, int, dict[tuple[str, int, int], object]]:
    """Every answer against the scope's: (referents answered, assignments answered, each
    name's answer by (name, line, column))."""
    module, scopes, lines, tree, local = _setup(text)
    referred = assigned = 0
    answers: dict[tuple[str, int, int], object] = {}
    for name in walk.find_all(module, cst.Name):
        if tree.in_import(name):
            continue
        where = (name.value, lines[name].start.line, lines[name].start.column)
        scope = scopes.get(name)
        fast = local.referents(name)
        answers[where] = fast
        if fast is not None:
            referred += 1
            exact = (
                {
                    id(getattr(r, "node", None))
                    for a in scope.accesses[name]
                    if a.node is name
                    for r in a.referents
                }
                if scope is not None
                else set()
            )
            assert fast == exact, where
        if tree.stored(name) == walk.ASSIGNED:
            found = local.bindings_and_reads(name)
            if found is not None:
                assigned += 1
                bound = scope.assignments[name.value]
                own = next(a for a in bound if getattr(a, "node", None) is name)
                assert {id(n) for n in found[0]} == {id(getattr(a, "node", None)) for a in bound}
                assert {id(n) for n in found[1]} == {id(r.node) for r in own.references}, where
    return referred, assigned, answers


@pytest.mark.parametrize("name", sorted(ANSWERED))
def test_plain_variables_are_answered_as_the_scope_answers(name: str) -> None:
    referred, assigned, _ = _compare(ANSWERED[name])
    assert referred > 0 and assigned > 0


@pytest.mark.parametrize("name", sorted(LEFT_TO_THE_SCOPE))
def test_other_bindings_are_left_to_the_scope(name: str) -> None:
    _, _, answers = _compare(LEFT_TO_THE_SCOPE[name])
    assert all(v is None for (n, _, _), v in answers.items() if n == "cfg"), answers


def _referents(text: str) -> dict[tuple[int, int], list[int]]:
    """(line, column) of each read -> the lines of the bindings it sees (0: a builtin)."""
    module, _, lines, tree, local = _setup(text)
    where = {id(n): lines[n].start.line for n in walk.find_all(module, cst.CSTNode)}
    out = {}
    for name in walk.find_all(module, cst.Name):
        found = local.referents(name)
        if found and tree.stored(name) is None:
            out[(lines[name].start.line, lines[name].start.column)] = sorted(
                where.get(i, 0) for i in found
            )
    return out


def test_what_a_read_sees() -> None:
    got = _referents(ANSWERED["module-config"])
    assert got[(2, 6)] == [1]  # print(config.x): the first assignment only
    assert got[(3, 9)] == [1]  # config.replace(...) on the line that rebinds it
    assert got[(5, 11)] == [1, 3]  # in a function: every module-level assignment
    assert got[(7, 8)] == [1, 3]  # in a class body
    assert got[(9, 15)] == [1, 3]  # in a method
    assert got[(10, 1)] == [1, 3] and got[(11, 9)] == [1, 3]  # a comprehension, a lambda
    local = _referents(ANSWERED["function-locals"])
    assert local[(2, 10)] == [10]  # read before its function binds it: libcst looks outside
    assert local[(6, 14)] == [3, 4, 5]  # in the loop, after the loop's own target
    assert local[(8, 15)] == [3, 4, 5]  # in a function inside: every binding of main
    early = _referents(ANSWERED["read-before-any-binding"])
    assert early[(1, 9)] == [0]  # `len` before its module binding: the builtin
    assert (1, 6) not in early  # `x` before its binding: unbound, nothing
    assert early[(4, 6)] == [2] and early[(4, 9)] == [3]
    params = _referents(ANSWERED["parameters"])
    assert params[(2, 22)] == [1]  # a default is read where the function is defined
    assert params[(3, 10)] == [2] and params[(3, 15)] == [2]  # the parameters' Param nodes
    assert params[(5, 11)] == [2, 4] and params[(7, 11)] == [1]
    inner = _referents(ANSWERED["inner-reads-see-every-binding"])
    assert inner[(2, 14)] == [1, 4] and inner[(3, 9)] == [1, 4]  # a lambda's, a comprehension's
    walrus = _referents(ANSWERED["a-walrus-counts-too"])
    assert walrus[(2, 15)] == [1, 2]  # the walrus before it counts the new `x` as made


def test_what_an_assignment_is_read_by() -> None:
    module, _, lines, tree, local = _setup(ANSWERED["module-config"])
    targets = [n for n in walk.find_all(module, cst.Name) if tree.stored(n) == walk.ASSIGNED]
    first = next(t for t in targets if t.value == "config")
    found = local.bindings_and_reads(first)
    assert found is not None
    bound, reads = found
    assert [lines[n].start.line for n in bound] == [1, 3]
    # the two reads before the rebinding, and those of every other scope
    assert [lines[n].start.line for n in reads] == [2, 3, 5, 7, 9, 10, 11]


def test_a_class_attribute_nothing_reads_bare_is_its_class_assignments() -> None:
    module, _, lines, tree, local = _setup(ANSWERED["class-attributes-read-as-attributes"])
    targets = [
        n
        for n in walk.find_all(module, cst.Name)
        if tree.stored(n) == walk.ASSIGNED and n.value == "trl_model_class"
    ]
    answers = {}
    for target in targets:
        found = local.bindings_and_reads(target)
        assert found is not None
        answers[lines[target].start.line] = ([lines[n].start.line for n in found[0]], found[1])
    assert answers == {
        2: ([2], []),
        6: ([6, 8], []),
        8: ([6, 8], []),
        10: ([10], []),
        13: ([13], []),
    }


def test_a_read_before_one_of_its_scopes_bindings_is_the_enclosing_ones_too() -> None:
    """libcst hands a read made before one of its own scope's bindings to the bindings the
    enclosing scopes give the name as well (a quirk, kept: the answers are libcst's)."""
    module, _, lines, tree, local = _setup(ANSWERED["a-read-between-two-bindings"])
    first = next(n for n in walk.find_all(module, cst.Name) if n.value == "cfg")
    found = local.bindings_and_reads(first)
    assert found is not None
    assert [lines[n].start.line for n in found[1]] == [4, 9]


def _sees_alike_exact(scopes, one, other, name):  # type: ignore[no-untyped-def]
    """libcst's answer, as `RuleTransformer.sees_alike` reads it off the scopes."""
    first, second = scopes.get(one), scopes.get(other)
    if first is None or second is None:
        return False
    if first is second:
        return True
    there = {id(a.node) for a in first[name]} if name in first else set()
    return bool(there) and there == (
        {id(getattr(a, "node", None)) for a in second[name]} if name in second else set()
    )


@pytest.mark.parametrize("name", sorted(ANSWERED) + sorted(LEFT_TO_THE_SCOPE))
def test_scopes_compared_as_the_scope_compares_them(name: str) -> None:
    text = {**ANSWERED, **LEFT_TO_THE_SCOPE}[name]
    module, scopes, _, _, local = _setup(text)
    statements = walk.find_all(module, (cst.Assign, cst.Expr, cst.Return, cst.Call))
    names = {n.value for n in walk.find_all(module, cst.Name)}
    answered = 0
    for one in statements:
        fast = local.at_module_level(one)
        if fast is not None:
            assert fast == isinstance(scopes.get(one), GlobalScope)
        for other in statements:
            for variable in sorted(names):
                fast = local.sees_alike(one, other, variable)
                if fast is not None:
                    answered += 1
                    assert fast == _sees_alike_exact(scopes, one, other, variable), (
                        cst.Module([]).code_for_node(one),
                        cst.Module([]).code_for_node(other),
                        variable,
                    )
    assert answered > 0


def test_what_a_name_means_in_two_places() -> None:
    module, _, _, _, local = _setup(ANSWERED["function-locals"])
    calls = walk.find_all(module, cst.Call)  # print(cfg), make(), range(3), print(cfg)
    assert local.sees_alike(calls[0], calls[1], "cfg") is True  # both in main
    module, _, _, _, local = _setup(ANSWERED["module-config"])
    first, in_f = walk.find_all(module, cst.Assign)[0], walk.find_all(module, cst.Return)[0]
    assert local.sees_alike(first, in_f, "config") is True  # f sees the module's bindings
    assert local.at_module_level(first) is True and local.at_module_level(in_f) is False
    module, _, _, _, local = _setup(ANSWERED["a-read-between-two-bindings"])
    outer, inner = walk.find_all(module, cst.Assign)[:2]
    assert local.sees_alike(outer, inner, "cfg") is False  # main binds its own

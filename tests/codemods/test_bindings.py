"""The import bindings answer qualified-name questions exactly as libcst's scope analysis does,
or not at all (None: the engine then asks the scope)."""

from __future__ import annotations

import ast
from textwrap import dedent

import libcst as cst
import pytest
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    MetadataWrapper,
    PositionProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from codemods import walk
from codemods.bindings import Bindings

SNIPPETS = {
    "module-imports": """
        import trl
        import trl.core
        import a.b.c as abc
        from trl import PPOTrainer as P, PPOConfig
        from . import rel
        from .x import y
        print(trl.PPOTrainer, trl.core.LengthSampler, abc.d, rel.q, y, P(), PPOConfig.x)
    """,
    "dotted-only": """
        import trl.core
        print(trl.SFTTrainer, trl.core.x, trl)
    """,
    "local-imports": """
        from transformers import AutoTokenizer
        def f():
            from trl import PPOTrainer
            return PPOTrainer, AutoTokenizer
        def g():
            return PPOTrainer
        class C:
            def m(self):
                from trl import PPOConfig
                def inner():
                    return PPOConfig
                return inner
    """,
    "shadowed": """
        from trl import PPOTrainer
        try:
            from trl import PPOConfig
        except ImportError:
            PPOConfig = None
        def f(PPOTrainer):
            return PPOTrainer, PPOConfig
    """,
    "read-before-import": """
        print(trl)
        import trl
        def f():
            x = np.zeros(1)
            import numpy as np
            return x
    """,
    "builtins-and-locals": """
        import os
        model = os.path.join("a")
        def f(x):
            return len(x), open(x), model, undefined_name
        [v for v in range(3)]
    """,
    "class-body-import": """
        class C:
            from trl import PPOTrainer
            x = PPOTrainer
    """,
    "early-read-in-a-function": """
        from unsloth import FastLanguageModel
        def load():
            return FastLanguageModel.from_pretrained("a")
        def train(flag):
            if flag:
                m = FastLanguageModel.from_pretrained("b")
            def inner():
                return FastLanguageModel.get_peft_model
            from unsloth import FastLanguageModel
            return m, inner, FastLanguageModel.for_inference
    """,
    "early-dotted-import": """
        import os
        def f():
            p = os.path.join("a"), os.getcwd()
            import os.path
            return p, os.path.exists
    """,
    "same-import-twice": """
        def f(flag):
            import types
            a = types.MethodType(len, 1)
            if flag:
                from transformers import AutoModel, AutoTokenizer
                t = AutoTokenizer
            from transformers import AutoTokenizer
            import types
            return a, types.SimpleNamespace, t, AutoTokenizer
        def g():
            from x import thing
            y = thing
            from z import thing
            return y, thing
    """,
    "strings": """
        from trl import PPOTrainer, PPOConfig, LengthSampler, ValueHead, Other
        from typing import Optional, cast
        print("PPOTrainer is gone", {"Other": 1}, f"{PPOConfig!r}")
        def f(x: "PPOConfig") -> Optional["LengthSampler"]:
            y: "list[Other]" = []
            return cast("ValueHead", x), y
    """,
    "annotation-strings": """
        from typing import TYPE_CHECKING, Literal, Optional
        def early(x: "Late") -> None:
            return None
        if TYPE_CHECKING:
            from trl import AutoModelForCausalLMWithValueHead, Late, Quoted, Shadowed
        def f(model: Optional["AutoModelForCausalLMWithValueHead"]) -> Literal["Quoted"]:
            return model
        def g(m: "Shadowed", n: "AutoModelForCausalLMWithValueHead"):
            from trl import Shadowed
            return m
    """,
    "references": """
        \"\"\"A docstring naming PPOTrainer and LengthSampler.\"\"\"
        from trl import PPOTrainer, PPOConfig, AutoModelForCausalLMWithValueHead
        from trl.core import LengthSampler, respond_to_batch
        from typing import List
        import numpy as np
        def f():
            from trl.core import LengthSampler
            return LengthSampler, PPOConfig
        def g():
            "a docstring naming respond_to_batch"
            def h():
                return np.zeros(1)
            return h
        def k(x: "List[int]") -> "AutoModelForCausalLMWithValueHead":
            return x
        PPOTrainer()
    """,
    "guarded-imports": """
        try:
            import pynvml
        except ImportError:
            pynvml = None
        try:
            from trl import DPOConfig as TRLDPOConfig
        except ImportError:
            TRLDPOConfig = None
        def f():
            pynvml.nvmlInit()
            return TRLDPOConfig, pynvml
        if pynvml is not None:
            pynvml.nvmlShutdown()
        x = TRLDPOConfig(a=1)
    """,
    "guarded-read-early": """
        try:
            from trl import PPOConfig
        except ImportError:
            print(PPOConfig)
            PPOConfig = None
        print(PPOConfig.x, PPOConfig)
        def f():
            return PPOConfig
    """,
    "rebound-in-a-function": """
        from trl import PPOTrainer
        def f():
            PPOTrainer = None
            return PPOTrainer
        print(PPOTrainer, PPOTrainer.train)
    """,
    "class-named-like-an-import": """
        from trl import ScriptArguments
        from dataclasses import dataclass
        @dataclass
        class ScriptArguments:
            x: int = 1
        def main(args: ScriptArguments):
            return ScriptArguments(), ScriptArguments.x
        print(ScriptArguments)
    """,
    "targets-of-every-kind": """
        import json
        import numpy as np
        import os as o
        for json in []:
            pass
        with open("x") as o:
            pass
        np: object = None
        np += 1
        if (o := None):
            pass
        a, (json, *np) = 1, (2, 3)
        try:
            pass
        except ValueError as np:
            pass
        print(json.loads, np.zeros, o.path)
        def f():
            return json.dumps(np.ones), o
        del json
    """,
    "bound-in-a-comprehension": """
        import numpy as np
        np = [np for np in range(3)]
        print(np.zeros, [o for o in np])
    """,
}


def _exact(scope, node):  # type: ignore[no-untyped-def]
    """libcst's answer, with a local or builtin answer read as the bindings' ()."""
    found = scope.get_qualified_names_for(node) if scope is not None else set()
    if not any(q.source is QualifiedNameSource.IMPORT for q in found):
        return ()
    return tuple(sorted(q.name for q in found))


def _both(name: str):  # type: ignore[no-untyped-def]
    """A snippet's tree, libcst's scopes of it, its bindings and its walk.Tree."""
    text = dedent(SNIPPETS[name]).lstrip()
    module = cst.parse_module(text)
    scopes = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    return module, scopes, Bindings(ast.parse(text)), walk.Tree(module)


def _fast(bindings: Bindings, tree: walk.Tree, node: cst.CSTNode) -> tuple[str, ...] | None:
    """The bindings' answer for `node` as the rules' base asks it (`RuleTransformer.
    _bound_names`): the target of an assignment of a name an import binds too is named by
    that assignment."""
    full = get_full_name_for_node(node)
    if not full:
        return ()
    name_node = isinstance(node, cst.Name)
    if name_node and bindings.bound_otherwise(full):
        stored = tree.stored(node)
        if stored == walk.ASSIGNED:
            return bindings.assigned(full)
        if stored == walk.BOUND:
            return None
    return bindings.qualified(full, tree.scope(node), name_node=name_node)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_every_answer_matches_the_scope(name: str) -> None:
    module, scopes, bindings, tree = _both(name)
    assert tree.scopes == bindings.scopes
    answered = 0
    for node in walk.find_all(module, (cst.Name, cst.Attribute, cst.Call)):
        if tree.in_import(node):
            continue
        fast = _fast(bindings, tree, node)
        if fast is None:
            continue
        answered += 1
        scope = scopes.get(node)
        found = scope.get_qualified_names_for(node) if scope is not None else set()
        code = cst.Module([]).code_for_node(node)
        if fast == ():  # no import binds it: libcst's answer is a local or builtin name
            assert _exact(scope, node) == (), code
        else:
            assert fast == tuple(sorted({q.name for q in found})), code
    assert answered > 0


def _answers(text: str) -> dict[str, tuple[str, ...] | None]:
    text = dedent(text).lstrip()
    module = cst.parse_module(text)
    bindings = Bindings(ast.parse(text))
    tree = walk.Tree(module)
    out = {}
    for node in walk.find_all(module, (cst.Name, cst.Attribute)):
        if not tree.in_import(node):
            code = cst.Module([]).code_for_node(node)
            out[code] = bindings.qualified(get_full_name_for_node(node) or "", tree.scope(node))
    return out


def test_answers_for_import_forms() -> None:
    got = _answers(SNIPPETS["module-imports"])
    assert got["trl.PPOTrainer"] == ("trl.PPOTrainer",)
    assert got["trl.core.LengthSampler"] == ("trl.core.LengthSampler",)
    assert got["abc.d"] == ("a.b.c.d",)
    assert got["rel.q"] == (".rel.q",)
    assert got["y"] == (".x.y",)
    assert got["P"] == ("trl.PPOTrainer",)
    assert got["print"] == ()  # no import binds it: a builtin, which no rule matches


def test_what_is_left_to_the_scope() -> None:
    shadowed = _answers(SNIPPETS["shadowed"])
    assert shadowed["PPOTrainer"] is None  # also a parameter
    early = _answers(SNIPPETS["read-before-import"])
    assert early["trl"] is None and early["np.zeros"] is None  # read before the import ran
    assert _answers(SNIPPETS["class-body-import"])["PPOTrainer"] is None


def _answered(name: str) -> dict[tuple[str, int], tuple[str, ...] | None]:
    """(code, line) -> the bindings' answer, for each name and attribute of a snippet."""
    module, _, bindings, tree = _both(name)
    lines = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {
        (cst.Module([]).code_for_node(node), lines[node].start.line): _fast(bindings, tree, node)
        for node in walk.find_all(module, (cst.Name, cst.Attribute))
        if not tree.in_import(node)
    }


def test_names_an_import_and_other_code_bind_at_module_level() -> None:
    """`try: import x` / `except ImportError: x = None`: every binding is a module-level one, so
    a read gets every import's path and, for the other bindings, the name itself, without the
    scope; the target of an assignment gets its own binding's name."""
    got = _answered("guarded-imports")
    assert got[("pynvml.nvmlInit", 10)] == ("pynvml.nvmlInit",)
    assert got[("TRLDPOConfig", 11)] == ("TRLDPOConfig", "trl.DPOConfig")
    assert got[("TRLDPOConfig", 14)] == ("TRLDPOConfig", "trl.DPOConfig")  # after every binding
    assert got[("TRLDPOConfig", 8)] == ("TRLDPOConfig",)  # `TRLDPOConfig = None`
    assert got[("pynvml.nvmlShutdown", 13)] == ("pynvml.nvmlShutdown",)
    cls = _answered("class-named-like-an-import")
    assert cls[("ScriptArguments", 7)] == ("ScriptArguments", "trl.ScriptArguments")
    assert cls[("ScriptArguments.x", 7)] == ("ScriptArguments.x", "trl.ScriptArguments.x")


def test_what_other_bindings_still_leave_to_the_scope() -> None:
    early = _answered("guarded-read-early")
    # read at module level before the last binding: libcst counts only the bindings before it
    assert early[("PPOConfig", 4)] is None and early[("PPOConfig", 6)] is None
    assert early[("PPOConfig.x", 6)] == ("PPOConfig.x", "trl.PPOConfig.x")  # not a read of a name
    assert early[("PPOConfig", 8)] == ("PPOConfig", "trl.PPOConfig")  # in a function: every one
    rebound = _answered("rebound-in-a-function")
    assert rebound[("PPOTrainer", 5)] is None and rebound[("PPOTrainer.train", 5)] is None
    targets = _answered("targets-of-every-kind")
    assert targets[("o", 6)] is None  # `with ... as o`: an `as` target is the scope's to name
    assert targets[("o", 10)] is None and targets[("np", 15)] is None  # a walrus, `except as`
    # the targets of an assignment, a loop or an unpacking are named by their own binding, and
    # the reads after them by every binding (those of `as` and walrus targets too)
    assert targets[("json", 4)] == ("json",) and targets[("np", 12)] == ("np",)
    assert targets[("np.zeros", 17)] == ("np.zeros", "numpy.zeros")
    assert targets[("o", 19)] == ("o", "os")
    comprehension = _answered("bound-in-a-comprehension")
    assert comprehension[("np.zeros", 3)] is None  # the comprehension binds np in its scope


def _imports(module: cst.Module) -> list[tuple[cst.ImportFrom | cst.Import, str]]:
    found: list[tuple[cst.ImportFrom | cst.Import, str]] = []
    for node in walk.find_all(module, (cst.Import, cst.ImportFrom)):
        if isinstance(node.names, cst.ImportStar):
            continue
        for alias in node.names:
            bound = alias.asname.name if alias.asname else alias.name  # type: ignore[union-attr]
            found.append((node, get_full_name_for_node(bound) or ""))
    return found


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_referenced_matches_the_scope(name: str) -> None:
    module, scopes, bindings, tree = _both(name)
    for node, bound in _imports(module):
        fast = bindings.referenced(bound, tree.scope(node))
        if fast is None:
            continue
        exact = any(a.references for a in scopes[node][bound] if getattr(a, "node", None) is node)
        assert fast == exact, (name, bound)


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_fallback_matches_the_scope(name: str) -> None:
    module, scopes, bindings, tree = _both(name)
    for node, bound in _imports(module):
        fast = bindings.fallback(bound)
        if fast is None:
            continue
        exact = any(
            not isinstance(getattr(a, "node", None), (cst.Import, cst.ImportFrom))
            for a in scopes[node].assignments[bound]
        )
        assert fast == exact, (name, bound)


def test_guarded_imports_are_answered_without_the_scope() -> None:
    """A guarded import's other bindings are all at module level: whether its name is read
    and whether other code binds it are known from the bindings."""
    module, _, bindings, tree = _both("guarded-imports")
    got = {
        bound: (bindings.referenced(bound, tree.scope(node)), bindings.fallback(bound))
        for node, bound in _imports(module)
    }
    assert got == {"pynvml": (True, True), "TRLDPOConfig": (True, True)}
    module, _, bindings, tree = _both("guarded-read-early")
    assert bindings.referenced("PPOConfig", 0) is None  # read before its last binding
    assert bindings.fallback("PPOConfig") is True
    assert _both("rebound-in-a-function")[2].fallback("PPOTrainer") is None  # a local of f


def test_referenced_answers() -> None:
    text = dedent(SNIPPETS["references"]).lstrip()
    module = cst.parse_module(text)
    bindings = Bindings(ast.parse(text))
    tree = walk.Tree(module)
    got = {
        (bound, tree.scope(node)): bindings.referenced(bound, tree.scope(node))
        for node, bound in _imports(module)
    }
    assert got == {
        ("PPOTrainer", 0): True,  # the docstring does not count, the call does
        ("PPOConfig", 0): True,  # read in f, which does not import it
        # named in a string annotation, which libcst reads as code
        ("AutoModelForCausalLMWithValueHead", 0): True,
        ("LengthSampler", 0): False,  # f reads its own import
        ("LengthSampler", 1): True,
        ("respond_to_batch", 0): False,  # only a docstring names it
        ("List", 0): True,  # read in a string annotation too
        ("np", 0): True,  # read in h, inside g
    }


def test_an_early_read_leaves_only_its_function_to_the_scope() -> None:
    got = _answers(SNIPPETS["early-read-in-a-function"])
    # load() reads the module's import; train() reads its own import before it runs
    assert got["FastLanguageModel.from_pretrained"] is None
    assert got["FastLanguageModel.get_peft_model"] is None
    module = cst.parse_module(dedent(SNIPPETS["early-read-in-a-function"]).lstrip())
    bindings = Bindings(ast.parse(module.code))
    assert bindings.qualified("FastLanguageModel.from_pretrained", 1) == (
        "unsloth.FastLanguageModel.from_pretrained",
    )
    assert bindings.qualified("FastLanguageModel.from_pretrained", 2) is None
    # an attribute chain is no read of a name: libcst counts every import of train() for it
    assert bindings.qualified("FastLanguageModel.from_pretrained", 2, name_node=False) == (
        "unsloth.FastLanguageModel.from_pretrained",
    )
    early = Bindings(ast.parse(dedent(SNIPPETS["early-dotted-import"]).lstrip()))
    assert early.qualified("os.path.join", 1, name_node=False) == ("os.path.join",)
    assert early.qualified("os.path", 1, name_node=False) is None  # `import os.path` binds it


def test_only_strings_in_annotations_and_type_hints_count_as_reads() -> None:
    """A name in a log message or a dict key is no read of it; one in a string that is a whole
    annotation is (libcst parses those), and one in a string inside an annotation's subscript
    or the first argument of cast may be (libcst parses it unless the subscript is a Literal,
    and where `cast` is typing's, which only the scope knows)."""
    bindings = Bindings(ast.parse(dedent(SNIPPETS["strings"]).lstrip()))
    assert bindings.unreferenced("PPOTrainer") and bindings.referenced("PPOTrainer", 0) is False
    for name in ("LengthSampler", "ValueHead", "Other", "PPOConfig"):
        assert not bindings.unreferenced(name), name
    got = {name: bindings.referenced(name, 0) for name in ("LengthSampler", "Other", "ValueHead")}
    assert got == {"LengthSampler": None, "Other": True, "ValueHead": None}


def test_a_name_in_an_annotation_string_is_read() -> None:
    module, _, bindings, tree = _both("annotation-strings")
    got = {
        (bound, tree.scope(node)): bindings.referenced(bound, tree.scope(node))
        for node, bound in _imports(module)
        if node.module is not None and node.module.value == "trl"  # type: ignore[union-attr]
    }
    assert got == {
        ("AutoModelForCausalLMWithValueHead", 0): True,  # the whole annotation of g's n
        ("Late", 0): None,  # read before the import: left to the scope
        ("Quoted", 0): None,  # a Literal's strings are not code
        ("Shadowed", 0): None,  # a function imports it too
        ("Shadowed", 3): None,  # g's own import, named in the string: left to the scope
    }


def test_a_read_between_two_imports_that_bind_alike() -> None:
    """A read after one import of a name and before another that binds it to the same path
    gets that path without the scope; imports that bind it differently leave it to the scope."""
    got = _answers(SNIPPETS["same-import-twice"])
    assert got["types.MethodType"] == ("types.MethodType",)
    assert got["AutoTokenizer"] == ("transformers.AutoTokenizer",)
    assert got["thing"] is None


def test_local_imports_resolve_in_their_function_only() -> None:
    text = SNIPPETS["local-imports"]
    module = cst.parse_module(dedent(text).lstrip())
    bindings = Bindings(ast.parse(dedent(text).lstrip()))
    tree = walk.Tree(module)
    returns = walk.find_all(module, cst.Return)
    answers = [
        [
            bindings.qualified(get_full_name_for_node(e.value) or "", tree.scope(e.value))
            for e in (
                r.value.elements if isinstance(r.value, cst.Tuple) else [cst.Element(r.value)]
            )  # type: ignore[union-attr]
        ]
        for r in returns
    ]
    assert answers == [
        [("trl.PPOTrainer",), ("transformers.AutoTokenizer",)],  # f
        [()],  # g: PPOTrainer is unbound there
        [("trl.PPOConfig",)],  # inner sees m's import
        [()],  # m returns its own local function
    ]


ORDER_SNIPPET = '''\
# a comment
from __future__ import annotations
from . import x as y, z
from trl import *
import a.b as c

s = f"{a} {b:>{c}} {d=}"


@decorator(arg=[1, 2])
async def f(p: int = 3, *args, k: "T" = None, **kw) -> dict[str, int]:
    """doc"""
    async with ctx() as (m, n):
        yield f"{p!r:>{k}} {{}}" + rb'x'
    return lambda q=1: q if q else -q


class K(Base, metaclass=Meta):
    x: int = 1

    def g(self, /, a, *, b):
        global G
        match a:
            case [1, *rest] | {"k": v, **others}:
                pass
            case Point(x=0) as pt if pt:
                del a[0], b.c
        try:
            pass
        except* (ValueError, TypeError) as e:
            raise e from None
        finally:
            print(*a, sep="", **b)
        for i, j in enumerate(a[1:2, ::3]):
            while not i:
                i += 1
            else:
                continue
        return {k: v for k, v in b.items() if v}, [*a], (yield), await z
'''


def test_tree_lists_nodes_in_libcst_order() -> None:
    """`walk.Tree` reads fields in the order libcst's walk visits them: the same nodes, in the
    same order, with the same subtree ends, as libcst's own visitor (read-only hooks and
    `find_all` rely on it)."""
    module = cst.parse_module(ORDER_SNIPPET)
    tree = walk.Tree(module)
    walked = walk.libcst_order(module)
    assert [id(n) for n in tree.nodes] == [id(n) for n, _ in walked]
    assert tree.ends == [end for _, end in walked]
    assert len(tree.nodes) > 300
    # a subtree is contiguous: the class holds the function g, which starts after it
    classes = tree.by_type()[cst.ClassDef]
    functions = tree.by_type()[cst.FunctionDef]
    assert classes[0] < functions[1] < tree.ends[classes[0]]
    assert tree.scopes == 3

"""The engine's shortcuts change no byte and no finding: statements a pass passes over (focus),
positions found in one code generation, and the top-level import adder, each checked against
the long way round on every fixture."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper, PositionProvider, ScopeProvider

import codemods
from codemods import positions, walk
from codemods.base import Options, RuleTransformer
from codemods.engine import _TopLevelAddImports, fix_text
from tests.codemods.helpers import dedent

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# Imports inside functions, an alias, a star import, statements with no trl word at all, a
# class body: the shapes where skipping a statement could miss something.
MIXED = dedent(
    '''
    """Training script."""
    import os
    import trl.core as tc

    from trl import PPOConfig, PPOTrainer as Trainer, AutoModelForCausalLMWithValueHead


    def unrelated(x):
        y = os.path.join(x, "a")
        return [y for _ in range(3)]


    def build(name):
        from trl.core import LengthSampler, respond_to_batch
        from transformers import TrainingArguments

        args = TrainingArguments("out", evaluation_strategy="steps")
        model = AutoModelForCausalLMWithValueHead.from_pretrained(name)
        sampler = LengthSampler(4, 16)
        return model, sampler, args


    class Runner:
        size = 3

        def go(self, model, tok, ds):
            config = PPOConfig(batch_size=self.size, learning_rate=1e-5)
            trainer = Trainer(config, model, None, tok, dataset=ds)
            tc.set_seed(0)
            return trainer

        def other(self):
            return self.size * 2
    '''
)
STAR = "from trl.core import *\n\nset_seed(1)\nx = LengthSampler(1, 2)\n"


def _sources() -> list[tuple[str, str]]:
    found = [(str(p.relative_to(FIXTURES)), p.read_text()) for p in sorted(FIXTURES.rglob("*.py"))]
    found += [(f"{r.code} before", r.before) for r in codemods.RULES]
    found += [(f"{r.code} after", r.after) for r in codemods.RULES]
    # a file that does not end with a newline (libcst drops the final one it writes), one whose
    # last line ends with a newline other than the file's own, and one ending in a comment
    endings = [
        ("mixed, no final newline", MIXED.rstrip("\n")),
        ("mixed, CRLF last line only", MIXED.rstrip("\n") + "\r\n"),
        ("star, final comment without newline", STAR + "# done"),
    ]
    return [*found, ("mixed", MIXED), ("star", STAR), *endings]


SOURCES = _sources()


def test_the_sources_exercise_the_focus():
    # Some file must hold statements a focused pass passes over, or the next test proves nothing.
    skipped = 0
    original = RuleTransformer.on_leave

    def counting(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        nonlocal skipped
        if original_node is self._skipped:
            skipped += 1
        return original(self, original_node, updated_node)

    RuleTransformer.on_leave = counting  # type: ignore[method-assign]
    try:
        fix_text(MIXED, path="m.py", rules=codemods.RULES, options=Options())
    finally:
        RuleTransformer.on_leave = original  # type: ignore[method-assign]
    assert skipped > 5


@pytest.mark.parametrize("target", ["rloo", "grpo"])
def test_focus_changes_no_byte_and_no_finding(monkeypatch, target):
    options = Options(target=target)
    focused = [
        fix_text(src, path=name, rules=codemods.RULES, options=options) for name, src in SOURCES
    ]
    monkeypatch.setattr(RuleTransformer, "focus", lambda self: None)
    for cls in _subclasses(RuleTransformer):
        if "focus" in cls.__dict__:
            monkeypatch.setattr(cls, "focus", lambda self: None)
    for (name, src), (text, findings) in zip(SOURCES, focused):
        whole = fix_text(src, path=name, rules=codemods.RULES, options=options)
        assert text == whole[0], name
        assert findings == whole[1], name


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


@pytest.mark.parametrize("name,src", SOURCES, ids=[n for n, _ in SOURCES])
def test_starts_are_libcst_positions(name, src):
    module = cst.parse_module(src)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    expected = wrapper.resolve(PositionProvider)
    nodes = list(expected.keys())
    found = positions.starts(module, nodes)
    assert len(found) == len(nodes)
    for node in nodes:
        pos = expected[node].start
        assert found[id(node)] == (pos.line, pos.column), (name, type(node).__name__)


@pytest.mark.parametrize("name,src", SOURCES, ids=[n for n, _ in SOURCES])
def test_written_code_and_starts_are_libcsts(name, src):
    """The engine writes a new tree's code from the statements it kept (a pass returns the
    statements it did not touch as they were) and finds positions in the statements that hold
    the nodes: both must be what libcst writes and counts for the whole module."""
    first = cst.parse_module(src)
    written = positions.Written()
    assert written.code(first) == first.code
    body = list(first.body)
    if body:
        body[-1] = body[-1].deep_clone()  # one statement rebuilt, the others kept
    module = first.with_changes(body=body)
    assert written.code(module) == module.code
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = [n for n in expected if not isinstance(n, cst.Module)]
    found = written.starts(module, nodes)
    for node in nodes:
        pos = expected[node].start
        assert found.get(id(node)) == (pos.line, pos.column), (name, type(node).__name__)


BIG_CLASS = """\
class Trainer:
    # the class is one top-level statement
    def a(self):
        if self.x:
            return 1
        elif self.y:
            return 2

    @property
    def b(self):
        with open("f") as fh:
            return fh.read()

    def c(self):
        for i in range(3):
            try:
                self.step(i)
            except ValueError:
                pass
"""


def test_a_method_rebuilt_inside_a_kept_class_is_the_only_one_written_again(monkeypatch):
    # Lexsi-Labs/aligntune: a 2,345-line module that is one class; each pass that changed one
    # of its methods wrote the whole class out again.
    first = cst.parse_module(BIG_CLASS)
    written = positions.Written()
    assert written.code(first) == first.code
    cls = first.body[0]
    a, b, c = cls.body.body  # type: ignore[attr-defined]
    # a pass keeps what it did not touch: the same nodes, in new parents
    body = cls.body.with_changes(body=[a, b, c.with_changes(name=cst.Name("d"))])  # type: ignore[attr-defined]
    module = first.with_changes(body=[cls.with_changes(body=body)])
    calls: list[str] = []
    plain = cst.FunctionDef._codegen_impl

    def counted(self, state, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(self.name.value)
        return plain(self, state, **kwargs)

    monkeypatch.setattr(cst.FunctionDef, "_codegen_impl", counted)
    text = written.code(module)
    # `a` and `b` came from the tokens they gave last time (the check mode of the test suite,
    # TRL_MIGRATE_CHECK_BINDINGS, writes the whole module once more with libcst's own writer)
    assert calls == (["d", "a", "b", "d"] if positions.CHECK else ["d"])
    monkeypatch.undo()
    assert text == module.code == BIG_CLASS.replace("def c(", "def d(")
    nodes = [n for n in walk.find_all(module, cst.Name) if n.value in ("step", "d", "fh")]
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    found = written.starts(module, nodes)
    assert found == {id(n): (expected[n].start.line, expected[n].start.column) for n in nodes}
    assert cst.FunctionDef._codegen.__qualname__ == "CSTNode._codegen"  # the patch is undone


def test_starts_of_a_few_nodes_and_of_nodes_not_in_the_tree():
    module = cst.parse_module("x = 1\n\n\ndef f():\n    # note\n    return g(2)\n")
    call = module.body[1].body.body[0].body[0].value  # type: ignore[attr-defined]
    stranger = cst.Name("nowhere")
    found = positions.starts(module, [call, stranger])
    assert found == {id(call): (6, 11)}
    assert positions.starts(module, []) == {}


def test_the_count_stops_once_every_start_is_known():
    # A finding in the first method of a long class: the methods after it are not written out.
    body = "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(200))
    module = cst.parse_module(
        "class T:\n    def first(self):\n        # why\n        x = 1\n" + body
    )
    first = module.body[0].body.body[0]  # type: ignore[attr-defined]
    assign = first.body.body[0]
    state = positions._StartFinder(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        targets={id(first), id(assign)},
    )
    state.run(module)
    assert state.found == {id(first): (2, 4), id(assign): (4, 8)}
    assert len("".join(state.tokens)) < 100


ADDS = [
    # (source, [(module, name or None)])
    ('"""Doc."""\nimport os\n\nx = 1\n', [("trl", "RLOOConfig"), ("dataclasses", None)]),
    ("from trl import GRPOConfig\n\ndef f():\n    from trl import X\n", [("trl", "RLOOConfig")]),
    ("import os\nif True:\n    from trl import A\nprint(1)\n", [("trl", "B"), ("trl", "C")]),
    ("from __future__ import annotations\n\nclass A:\n    pass\n", [("transformers", "AutoModel")]),
    ("x = 1\nfrom trl import A\n", [("trl", "B")]),
    ("", [("datasets", "Dataset")]),
]


@pytest.mark.parametrize("src,needed", ADDS)
def test_top_level_import_adder_writes_what_libcst_writes(src, needed):
    def add(visitor_class: type) -> str:
        context = CodemodContext()
        for module, name in needed:
            AddImportsVisitor.add_needed_import(context, module, name)
        tree = cst.parse_module(src)
        visitor = visitor_class(context)
        return MetadataWrapper(tree, unsafe_skip_copy=True).visit(visitor).code

    assert add(_TopLevelAddImports) == add(AddImportsVisitor)


@pytest.mark.parametrize("target", ["rloo", "grpo"])
def test_no_changed_file_is_reported_clean(target):
    # Exactness class 8 of issue #14: every rewrite is a finding; "0 findings" means unchanged.
    options = Options(target=target)
    for name, src in SOURCES:
        text, findings = fix_text(src, path=name, rules=codemods.RULES, options=options)
        if text != src:
            assert findings, f"{name} changed with no finding"


def test_each_text_is_read_with_ast_once(monkeypatch):
    # the first look (does it use trl), the passes' identifiers and the verifying run's checks
    # of the original and the rewrite share one `ast` parse per text
    import ast
    from collections import Counter

    from codemods import base
    from codemods.engine import process

    parsed: Counter[str] = Counter()
    plain = ast.parse

    def counting(text, *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed[text] += 1
        return plain(text, *args, **kwargs)

    monkeypatch.setattr(base.ast, "parse", counting)
    base.parse_ast.cache_clear()
    src = MIXED
    result = process(
        "mixed.py", src.encode(), codes=[r.code for r in codemods.RULES], options=Options()
    )
    assert result.new is not None and result.new.decode() != src
    assert parsed[src] == 1 and parsed[result.new.decode()] == 1
    # every text of the module (each pass's output): once; rules parse snippets of their own
    assert all(n == 1 for text, n in parsed.items() if "\n" in text)


def test_each_text_binds_its_imports_once(monkeypatch):
    # the verifying run starts from the text the last pass wrote: the import bindings and the
    # identifiers the passes after it read are not worked out again
    from collections import Counter

    from codemods import base
    from codemods.engine import process

    built: Counter[str] = Counter()
    plain = base.Identifiers.__init__

    def counting(self, text):  # type: ignore[no-untyped-def]
        built[text] += 1
        plain(self, text)

    monkeypatch.setattr(base.Identifiers, "__init__", counting)
    made: list[object] = []
    bindings = base.Bindings

    def binding(tree):  # type: ignore[no-untyped-def]
        made.append(tree)
        return bindings(tree)

    monkeypatch.setattr(base, "Bindings", binding)
    base.identifiers.cache_clear()
    result = process(
        "mixed.py", MIXED.encode(), codes=[r.code for r in codemods.RULES], options=Options()
    )
    assert result.new is not None and result.new.decode() != MIXED
    assert built[result.new.decode()] == 1 and all(n == 1 for n in built.values())
    assert len(made) == len({id(t) for t in made})  # one per text's tree, never built twice
    assert base.identifiers.cache_info().currsize == 0  # dropped when the file is done


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param("a\nb\n", "a\nb\n", {1: 1, 2: 2}, id="unchanged"),
        pytest.param(
            "a\nb\nc\nd\ne\n",
            "a\nb\nX\nY\nc\nd\ne\n",
            {1: 1, 2: 2, 3: 3, 4: 3, 5: 3, 6: 4, 7: 5},
            id="lines-inserted",
        ),
        pytest.param(
            "a\nold\nb\n", "a\nnew one\nnew two\nb\n", {1: 1, 2: 2, 3: 2, 4: 3}, id="replaced"
        ),
        # Two ways to line these up: difflib over the whole texts would match the new A, B with
        # the old lines 3 and 4; the lines before the first change map to themselves.
        pytest.param("A\nB\nA\nB\nC\n", "A\nB\nC\n", {1: 1, 2: 2, 3: 5}, id="repeated-lines"),
        pytest.param("x\n", "# TODO\nx\n", {1: 1, 2: 1}, id="a-line-above-all"),
    ],
)
def test_a_pass_lines_map_back_to_the_text_it_was_given(old, new, expected):
    from codemods.engine import _line_map

    assert _line_map(new, old) == expected


def test_the_verifying_run_parses_only_what_the_passes_built(monkeypatch):
    # A v2 script whose config, trainer and imports the passes rebuild: the verifying run
    # parses those statements again (`reparse`), not the whole rewrite, and keeps the rest as
    # the nodes the first parse made.
    from codemods.engine import process
    from tests.codemods.test_reparse import recorded_parses

    path = FIXTURES / "eras" / "ppo_v2_0_14.py"
    parsed = recorded_parses(monkeypatch)
    result = process(
        str(path), path.read_bytes(), codes=[r.code for r in codemods.RULES], options=Options()
    )
    assert result.new is not None
    new = result.new.decode()
    first, *after = parsed  # the original, then the verifying run's (and a rule's snippets)
    assert first == path.read_text() and after, "the verifying run parsed nothing"
    assert new not in after
    assert sum(map(len, after)) < len(new) * 0.7


def test_the_ast_listing_holds_what_ast_walk_yields():
    # `base.ast_nodes` lists a module's nodes for the identifier and trl-import questions:
    # every node `ast.walk` meets (shared operator nodes as often), expression contexts aside
    import ast
    from collections import Counter

    from codemods.bindings import ast_nodes

    contexts = (ast.Load, ast.Store, ast.Del)
    for path in sorted((FIXTURES / "eras").glob("*.py")):
        tree = ast.parse(path.read_text())
        walked = Counter(id(n) for n in ast.walk(tree) if not isinstance(n, contexts))
        assert Counter(map(id, ast_nodes(tree))) == walked, path.name


# `Dataset` is read before its import (only libcst's scope tells what such a read names), and
# `pipeline` is a function of the file's own: neither can name a trl or transformers path.
NOT_TRL_NAMES = dedent(
    """
    from trl import PPOConfig, PPOTrainer, AutoModelForCausalLMWithValueHead
    train = Dataset.from_dict({"query": ["a"]})
    from datasets import Dataset


    def pipeline(task):
        return task


    scorer = pipeline("sentiment-analysis")
    config = PPOConfig(batch_size=8)
    model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
    trainer = PPOTrainer(config, model, None, None, dataset=Dataset.from_dict({"query": []}))
    """
)


def test_names_no_import_of_the_package_binds_cost_no_scope_analysis(monkeypatch):
    # the rules ask "is this a PPO class / a value head / transformers' pipeline" of every
    # call; a name that no import of trl (or transformers) binds is answered "no" without
    # libcst's scope analysis, which `Dataset` (read before its import) would otherwise need
    from codemods import base
    from codemods.engine import process

    asked: list[object] = []
    resolve = MetadataWrapper.resolve

    def counting(self, key):  # type: ignore[no-untyped-def]
        if key is ScopeProvider and key not in self._metadata:
            asked.append(key)
        return resolve(self, key)

    monkeypatch.setattr(MetadataWrapper, "resolve", counting)
    monkeypatch.setattr(base, "CHECK_BINDINGS", False)
    codes = [r.code for r in codemods.RULES]
    result = process("gated.py", NOT_TRL_NAMES.encode(), codes=codes, options=Options())
    assert result.new is not None and b"RLOOTrainer(" in result.new
    assert asked == []
    # the same questions asked without the gate need the scope
    monkeypatch.setattr(RuleTransformer, "may_resolve_to", lambda self, node, package: True)
    process("gated.py", NOT_TRL_NAMES.encode(), codes=codes, options=Options())
    assert asked


def test_the_gate_is_checked_against_the_scope(monkeypatch):
    # under TRL_MIGRATE_CHECK_BINDINGS a gate that wrongly says "no trl path" is caught
    from codemods import base
    from codemods.engine import process

    monkeypatch.setattr(base, "CHECK_BINDINGS", True)
    monkeypatch.setattr(RuleTransformer, "may_resolve_to", lambda self, node, package: False)
    result = process(
        "gated.py",
        NOT_TRL_NAMES.encode(),
        codes=[r.code for r in codemods.RULES],
        options=Options(),
    )
    assert result.status.value == "failed" and "ungated" in result.message

"""Run the rules over one file's bytes and return a result value; never raises, never writes.

The guarantees of DESIGN.md live here: a cheap byte prefilter before any parse; decoding as
Python does (BOM, PEP 263 cookie); the rewritten text must parse again (with libcst, and with
`ast` when the original did) and a second pass over it must change nothing; the encoding and
newline style of the original are kept.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import os
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import libcst as cst
from libcst.codemod import Codemod, CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import MetadataWrapper

from codemods import BY_CODE, inline, positions, project, reparse, top_imports, walk
from codemods.base import (
    CHECK_BINDINGS,
    FileState,
    Options,
    Rule,
    RuleTransformer,
    identifiers,
    parse_ast,
)
from migrate.kernel import notebooks
from migrate.kernel.files import SourceError, decode_python, read_bytes
from migrate.kernel.findings import FileResult, Finding, Fix, Severity, Status

# Files that cannot use TRL are never parsed: a file must import trl (`import trl`,
# `import os, trl.core`, `from trl... import`, also after `;`, after a `:` as in
# `if TYPE_CHECKING: import trl`, and after a bare CR line end) or name it in a string
# (`mock.patch("trl.core...")`). Mentions in prose, `tags=["trl"]`, relative
# imports inside trl itself, `ctrl` and `trlx` do not count.
PREFILTER = re.compile(
    rb"(?m)(?:^(?:\xef\xbb\xbf)?|[;:\r])[ \t]*"
    rb"(?:from[ \t]+trl\b|import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*trl\b)"
    rb"|[\"']trl\."
)


# In a notebook the code sits inside JSON strings, so line starts cannot anchor the match.
NOTEBOOK_PREFILTER = re.compile(rb"\b(?:from|import)[ \t]+trl\b|,[ \t]*trl\b|[\"']trl\.")
NOT_TRL = "does not import trl"  # the prefilter's verdict: never parsed, never listed


def needs_parse(data: bytes, *, notebook: bool = False) -> bool:
    # The substring test runs at memchr speed and rules out nearly every file; the regex alone
    # costs about 15x more on a site-packages tree.
    if b"trl" in data and (NOTEBOOK_PREFILTER if notebook else PREFILTER).search(data):
        return True
    return any(word in data for word in _beyond_trl())


@functools.cache
def _beyond_trl() -> tuple[bytes, ...]:
    """Identifiers that make a file worth parsing though it does not use TRL (Rule.beyond_trl)."""
    return tuple(sorted({w.encode() for rule in BY_CODE.values() for w in rule.beyond_trl}))


def _mentions_beyond_trl(text: str, rules: Sequence[Rule]) -> bool:
    return any(w in text for rule in rules for w in rule.beyond_trl)


def _ast_parses(text: str) -> bool:
    return parse_ast(text) is not None


def uses_trl(text: str) -> bool:
    """False only when `text` parses with `ast` and neither imports trl nor names a `trl.` path
    in a string. The byte prefilter also matches `from trl import ...` inside a docstring; rules
    match by qualified name, so such a module gives them nothing, and skipping it saves a libcst
    parse plus every rule pass (seconds on a large file, against milliseconds for `ast`)."""
    tree = parse_ast(text)
    if tree is None:
        return True  # libcst decides, and says what is wrong
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(a.name.split(".")[0] == "trl" for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").split(".")[0] == "trl":
                return True
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("trl.")
        ):
            return True
    return False


def fix_text(
    text: str,
    *,
    path: str,
    rules: Sequence[Rule],
    options: Options,
    placed: bool = True,
    helpers: inline.Helpers | None = None,
    facts: project.RunFacts = project.NO_FACTS,
    handoff: Handoff | None = None,
) -> tuple[str, list[Finding]]:
    """Apply `rules` in order; raises libcst.ParserSyntaxError for text that is not Python.

    Each rule runs one or more passes; a pass sees the output of the one before, so the line
    of a finding made in a later pass is mapped back to the original text. `placed=False`
    leaves every finding at line 0 (the verifying run wants the text only). `helpers`: which
    removed helpers come from the folder's shared module; the rules add those they write in.
    `facts`: what the other files of the run tell about this one (`project.run_facts`).
    `handoff`: filled by a first run (`placed`), read by the verifying run of its text.
    """
    tail = _blank_tail(text)
    if tail:
        # libcst drops the blank lines above a last line of spaces with no line end
        # (`x = 1\n\n ` comes back as `x = 1\n `): the code is rewritten without that line,
        # which holds nothing, and it is put back after
        new, findings = fix_text(
            text[: -len(tail)],
            path=path,
            rules=rules,
            options=options,
            placed=placed,
            helpers=helpers,
            facts=facts,
            handoff=handoff,
        )
        return new + tail, findings
    active = [rule for rule in rules if rule.triggered(text) or rule.by_facts(facts)]
    if not active and _ast_parses(text):
        return text, []  # no rule wants this file: skip the libcst parse (~2 MB/s)
    made = handoff.made if handoff is not None and not placed else None
    if made is not None:
        first, final, writer = made
        module = reparse.reparse(
            text, first, final, lambda stmt: writer.statement_code(final, stmt)
        )
    else:
        module = cst.parse_module(text)
    if text.endswith("\r") and not module.has_trailing_newline:
        # libcst does not count a final bare CR (classic Mac line ends) as a line end and would
        # drop it on writing the module back: every such file would come out one byte shorter.
        module = module.with_changes(has_trailing_newline=True)
    target, reason = file_target(text, options)
    state = FileState(
        path=path,
        options=options,
        codes=frozenset(r.code for r in rules),
        target=target,
        target_reason=reason,
        helpers=helpers,
        facts=facts,
    )
    stages: list[tuple[int, str]] = []  # (first finding index of the pass, text the pass saw)
    current = text
    # One metadata wrapper per distinct tree: a pass that changes nothing hands the next pass
    # the same tree, whose scope and qualified-name analysis is then not computed again.
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    names = identifiers(text)
    written = made[2] if made is not None else positions.Written()
    for rule in active:
        for transformer in rule.transformers:
            if not transformer.wanted(state, names):
                continue
            state.identifiers = names
            stages.append((len(state.findings), current))
            new_module, changed = _run_pass(
                transformer(CodemodContext(filename=path), state),
                wrapper,
                written if placed else None,
            )
            if changed:
                code = written.code(new_module)
                if code == current:
                    continue  # rebuilt the same code: the old tree and its metadata stand
                current = code
                wrapper = MetadataWrapper(new_module, unsafe_skip_copy=True)
                names = identifiers(current)
    if handoff is not None and placed:
        # the verifying run parses again only what the passes built, and lists and writes
        # again only that (`reparse`); the trees go after it
        handoff.made = (module, wrapper.module, written)
    else:
        walk.forget()  # the file's trees go with it
    if not placed:
        return current, state.findings
    return current, _map_back(state.findings, stages, text)


def _blank_tail(text: str) -> str:
    """The last line of `text` when it holds only spaces and has no line end, else "" (read
    from the end: the check costs nothing on the usual file, which ends in a line end)."""
    kept = text.rstrip(" \t\f")
    return text[len(kept) :] if len(kept) < len(text) and kept.endswith(("\n", "\r")) else ""


@dataclasses.dataclass
class Handoff:
    """What a file's first run leaves its verifying run: the tree it started from, the tree
    it ended with (whose code is the rewrite) and the writer that wrote their code."""

    made: tuple[cst.Module, cst.Module, positions.Written] | None = None


def file_target(text: str, options: Options) -> tuple[str, str]:
    """The trainer this file moves to, and why when it is not the chosen one: TextEnvironment
    trained with tools, which of TRL 1.13's trainers only GRPOTrainer does."""
    if options.target_chosen or options.target == "grpo" or "TextEnvironment" not in text:
        return options.target, ""
    bound = identifiers(text).trl_bound()
    if (
        bound is None
        or "TextEnvironment" in bound
        or ("trl" in bound and "trl.TextEnvironment" in text)
    ):
        return "grpo", (
            "this file trains with tools (TextEnvironment): its PPO code moves to GRPOTrainer, "
            "the TRL 1.13 trainer that takes `tools=` (RLOO has none); pass --target rloo to "
            "choose RLOO anyway"
        )
    return options.target, ""


def _run_pass(
    transformer: RuleTransformer, wrapper: MetadataWrapper, written: positions.Written | None
) -> tuple[cst.Module, bool]:
    """One pass over the wrapper's tree, reusing the metadata the wrapper already holds; the
    import additions and removals the pass scheduled run after it, as libcst's codemods do.

    The tree is never copied: nodes are immutable and each pass builds a new tree, so a
    wrapper's node-keyed metadata stays valid for as long as its tree is the current one.
    """
    module = _transform(transformer, wrapper)
    if written is not None:  # None: the verifying run, which wants the text only
        transformer.place_findings(wrapper.module, written)
    changed = transformer.changed
    context = transformer.context
    requests = context.scratch.get(AddImportsVisitor.CONTEXT_KEY)
    if requests:
        added = top_imports.add(module, requests, context.full_package_name)
        if added is not None:
            if CHECK_BINDINGS and not top_imports.joined_notebook(module):
                theirs = _transform(
                    _TopLevelAddImports(context), MetadataWrapper(module, unsafe_skip_copy=True)
                )
                if theirs.code != added.code:
                    raise AssertionError("top_imports.add differs from libcst's AddImportsVisitor")
            del context.scratch[AddImportsVisitor.CONTEXT_KEY]
            module, changed = added, True
    for key, follow_up in (
        (AddImportsVisitor.CONTEXT_KEY, _TopLevelAddImports),
        (RemoveImportsVisitor.CONTEXT_KEY, RemoveImportsVisitor),
    ):
        if context.scratch.get(key):
            # libcst's own transform_module would deep-copy the whole tree first.
            module = _transform(
                follow_up(transformer.context), MetadataWrapper(module, unsafe_skip_copy=True)
            )
            changed = True
    return module, changed


class _TopLevelAddImports(AddImportsVisitor):
    """libcst's AddImportsVisitor, walking only what it can change: the module and its
    top-level import lines. The original walks (and so rebuilds) every node of the tree twice,
    once to gather the imports at the top and once to add to them."""

    def visit_Module(self, node: cst.Module) -> None:
        # The gatherer reads the leading simple statements only (it stops at the first one that
        # is not an import); it is handed those, not the whole tree to walk.
        head = []
        for stmt in node.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                break
            head.append(stmt)
        super().visit_Module(node.with_changes(body=head))

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseCompoundStatement):
            return False  # imports inside blocks are never extended
        if isinstance(node, cst.SimpleStatementLine) and not any(
            isinstance(small, cst.ImportFrom) for small in node.body
        ):
            return False
        return super().on_visit(node)


def _transform(codemod: Codemod, wrapper: MetadataWrapper) -> cst.Module:
    codemod.context = dataclasses.replace(codemod.context, wrapper=wrapper)
    with codemod.resolve(wrapper):
        if isinstance(codemod, RuleTransformer):
            # the rules' hooks are on_visit and on_leave: walk.transform rebuilds only what
            # they change, where libcst's walk rebuilds every node it enters
            # (its on_visit keeps a subtree with no node it has a hook for as it is)
            return walk.transform(wrapper.module, codemod, walk.hooked_mask(type(codemod)))
        return codemod.transform_module_impl(wrapper.module)


def _map_back(
    findings: list[Finding], stages: list[tuple[int, str]], original: str
) -> list[Finding]:
    """Rewrite each finding's line from the text its pass saw to the original text's line."""
    maps: list[dict[int, int] | None] = []  # per stage: its text's lines -> previous stage's lines
    previous = original
    for _, seen in stages:
        maps.append(None if seen == previous else _line_map(seen, previous))
        previous = seen
    out = list(findings)
    for stage_index, (start, _) in enumerate(stages):
        end = stages[stage_index + 1][0] if stage_index + 1 < len(stages) else len(findings)
        for i in range(start, end):
            line = out[i].line
            for m in reversed(maps[: stage_index + 1]):
                if m is not None and line:
                    line = m.get(line, line)
            if line != out[i].line:
                out[i] = dataclasses.replace(out[i], line=line)
    return out


def _line_map(new: str, old: str) -> dict[int, int]:
    """1-based lines of `new` -> the line of `old` they came from (or stand nearest to)."""
    a, b = old.splitlines(), new.splitlines()
    # A pass changes a few statements: the lines before the first change and after the last
    # map to themselves, and only those between go through difflib, whose matching costs up to
    # the product of the two lengths (a tenth of a large file's whole rewrite when run on all).
    head, limit = 0, min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mapping = {j: j for j in range(1, head + 1)}
    middle = difflib.SequenceMatcher(
        None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False
    )
    for tag, i1, i2, j1, j2 in middle.get_opcodes():
        for k, j in enumerate(range(j1, j2)):
            mapping[head + j + 1] = (
                (head + i1 + k + 1)
                if tag == "equal"
                else min(head + i1 + 1 + min(k, max(i2 - i1 - 1, 0)), len(a))
            )
    for k in range(tail):
        mapping[len(b) - tail + k + 1] = len(a) - tail + k + 1
    return mapping


def syntax_error(text: str, error: cst.ParserSyntaxError) -> str:
    """Where `text` stops being Python, as this Python says it (`ast`: the line and column an
    editor shows, and its words, "'(' was never closed"); libcst's own position is read from the
    token after the error and is often a line late. Text this Python reads (newer syntax libcst
    lacks, or the reverse) keeps libcst's report."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as e:
        if e.lineno:
            return f"syntax error at line {e.lineno}, column {e.offset or 1}: {e.msg}"
    except (ValueError, RecursionError, MemoryError):
        pass
    return f"syntax error at line {error.raw_line}, column {error.raw_column + 1}: {error.message}"


def scan(path: str, display: str, *, explicit: bool) -> tuple[FileResult | None, bytes]:
    """Read the file; a result when it needs no parse (skipped or unreadable), else None."""
    try:
        data = read_bytes(path)
    except SourceError as e:
        return FileResult(display, Status.FAILED, message=str(e)), b""
    if not explicit and not needs_parse(data, notebook=path.endswith(".ipynb")):
        return FileResult(display, Status.SKIPPED, message=NOT_TRL), data
    if not data.strip():
        return FileResult(display, Status.SKIPPED, message="empty file"), data
    nul = data.find(b"\x00")
    if nul != -1:
        return FileResult(
            display, Status.FAILED, message=f"binary file: NUL byte at offset {nul}"
        ), data
    return None, data


def process(
    display: str,
    data: bytes,
    *,
    codes: Sequence[str],
    options: Options,
    want_diff: bool = False,
    passed: Sequence[project.Passed] = (),
    shared: inline.Helpers | None = None,
    facts: project.RunFacts = project.NO_FACTS,
) -> FileResult:
    """Rewrite one file's bytes with the rules named by `codes`; the result carries new bytes.
    `passed`: the TRL names other files of the run give this one through star imports
    (`project.star_passes`), imported explicitly before the rules run (with TRL101). `shared`:
    the removed helpers this file imports from its folder's shared module instead of holding
    them; the result's `helpers` names every helper the file was given. `facts`: what the
    other files of the run tell about this one (`project.run_facts`)."""
    rules = [BY_CODE[c] for c in codes]
    if display.endswith(".ipynb"):
        return _process_notebook(
            display, data, rules=rules, options=options, want_diff=want_diff, facts=facts
        )
    try:
        decoded = decode_python(data)
    except SourceError as e:
        return FileResult(display, Status.FAILED, message=str(e))
    start, before = decoded.text, []
    if passed and "TRL101" in codes:
        start = project.with_passed(decoded.text, passed)
        before = [_passed_finding(display, p) for p in passed]
    helpers = shared or inline.Helpers()
    outcome = _rewrite(
        start, path=display, rules=rules, options=options, helpers=helpers, facts=facts
    )
    if isinstance(outcome, str):
        return FileResult(display, Status.FAILED, message=outcome)
    new_text, findings = outcome
    findings = before + findings
    if new_text == decoded.text:
        return FileResult(display, Status.UNCHANGED, findings=findings)
    try:
        new = decoded.encode(new_text)
    except SourceError as e:
        return FileResult(display, Status.FAILED, findings=findings, message=str(e))
    diff = unified_diff(display, decoded.text, new_text) if want_diff else ""
    return FileResult(
        display,
        Status.CHANGED,
        findings=findings,
        old=data,
        new=new,
        diff=diff,
        helpers=tuple(sorted(helpers.used)),
    )


def _passed_finding(display: str, p: project.Passed) -> Finding:
    return Finding(
        "TRL101",
        Severity.INFO,
        display,
        p.line,
        p.col,
        f"`{p.name}` reaches this file from `{p.trl_module}` through `from {p.star} import *` "
        f"({os.path.basename(p.source)} imports it); it is now imported here from "
        f"`{p.trl_module}` (the same object), so its uses here are rewritten too",
        Fix.APPLIED,
    )


_R = TypeVar("_R")


def _one_file(run: Callable[..., _R]) -> Callable[..., _R]:
    """`run` for one file's text, the `ast` trees and identifiers kept for that file dropped
    after it."""

    @functools.wraps(run)
    def once(*args: Any, **kwargs: Any) -> _R:
        try:
            return run(*args, **kwargs)
        finally:
            parse_ast.cache_clear()
            identifiers.cache_clear()
            walk.forget()

    return once


@_one_file
def _rewrite(
    text: str,
    *,
    path: str,
    rules: Sequence[Rule],
    options: Options,
    helpers: inline.Helpers | None = None,
    facts: project.RunFacts = project.NO_FACTS,
) -> tuple[str, list[Finding]] | str:
    """The verified rewrite of `text` and its findings, or why there is none (a message)."""
    if not uses_trl(text):
        # Only the rules that look beyond TRL have anything to do in a file that does not use it.
        rules = [
            r
            for r in rules
            if (r.beyond_trl and _mentions_beyond_trl(text, [r])) or r.by_facts(facts)
        ]
        if not rules:
            return text, []
    handoff = Handoff()
    try:
        new_text, findings = fix_text(
            text,
            path=path,
            rules=rules,
            options=options,
            helpers=helpers,
            facts=facts,
            handoff=handoff,
        )
    except cst.ParserSyntaxError as e:
        return syntax_error(text, e)
    except RecursionError:
        return "too deeply nested for the parser"
    except Exception as e:  # a rule's bug must not take the batch down; report it as this file's
        return f"internal error ({type(e).__name__}: {e}); please report it with this file"
    if new_text != text:
        again = None if helpers is None else inline.Helpers(helpers.shared, helpers.level)
        problem = _verify(
            text,
            new_text,
            path=path,
            rules=rules,
            options=options,
            helpers=again,
            facts=facts,
            handoff=handoff,
        )
        if problem:
            return problem
    return new_text, findings


def _process_notebook(
    display: str,
    data: bytes,
    *,
    rules: Sequence[Rule],
    options: Options,
    want_diff: bool,
    facts: project.RunFacts = project.NO_FACTS,
) -> FileResult:
    """All code cells run as one module (cells share a namespace), then split back per cell."""
    try:
        bom = data.startswith(b"\xef\xbb\xbf")
        nb = notebooks.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        return FileResult(
            display, Status.FAILED, message=f"not a notebook: not UTF-8 (byte offset {e.start})"
        )
    except SourceError as e:
        return FileResult(display, Status.FAILED, message=str(e))
    if not nb.is_python:
        return FileResult(display, Status.SKIPPED, message="not a Python notebook")
    cells = nb.code_cells()
    sources = [notebooks.cell_source(c) for _, c in cells]
    numbers = [i for i, _ in cells]
    joined = notebooks.join_cells(sources)
    outcome = _rewrite(joined.text, path=display, rules=rules, options=options, facts=facts)
    broken: dict[int, str] = {}
    if isinstance(outcome, str) and outcome.startswith("syntax error"):
        # a cell that is not Python runs nothing (it raises SyntaxError when run): the others
        # are rewritten as the program they are without it, and it is given back as it was
        broken = notebooks.unparsable(sources)
        if broken:
            joined = notebooks.join_cells(sources, frozenset(broken))
            outcome = _rewrite(joined.text, path=display, rules=rules, options=options, facts=facts)
    if isinstance(outcome, str):
        return FileResult(display, Status.FAILED, message=joined.locate_message(outcome, numbers))
    new_text, findings = outcome
    findings = [_left_cell(display, numbers[k], why) for k, why in broken.items()] + [
        joined.locate(f, numbers) for f in findings
    ]
    if new_text == joined.text:
        return FileResult(display, Status.UNCHANGED, findings=findings)
    try:
        sources = joined.split(new_text)
    except SourceError as e:
        return FileResult(display, Status.FAILED, findings=findings, message=str(e))
    diffs = []
    for (index, cell), source in zip(cells, sources):
        old_source = notebooks.cell_source(cell)
        if source != old_source:
            if want_diff:
                diffs.append(unified_diff(f"{display}:cell {index}", old_source, source))
            notebooks.set_cell_source(cell, source)
    new = nb.dumps().encode("utf-8-sig" if bom else "utf-8")
    return FileResult(
        display, Status.CHANGED, findings=findings, old=data, new=new, diff="".join(diffs)
    )


def _left_cell(display: str, number: int, why: str) -> Finding:
    return Finding(
        "TRL191",
        Severity.WARNING,
        display,
        1,
        1,
        f"this cell is not Python ({why}): it is left as it is, and the other cells are "
        "rewritten as the program they make without it (run, it raises SyntaxError and "
        "defines nothing); fix it, then run `trl-migrate fix` again for its own code",
        Fix.MANUAL,
        cell=number,
    )


def _verify(
    old: str,
    new: str,
    *,
    path: str,
    rules: Sequence[Rule],
    options: Options,
    helpers: inline.Helpers | None = None,
    facts: project.RunFacts = project.NO_FACTS,
    handoff: Handoff | None = None,
) -> str:
    """Why the rewrite must not be written, or "" when it is sound."""
    try:
        again, _ = fix_text(
            new,
            path=path,
            rules=rules,
            options=options,
            placed=False,
            helpers=helpers,
            facts=facts,
            handoff=handoff,
        )
    except cst.ParserSyntaxError as e:
        return f"internal error: the rewrite does not parse ({e.message}); file left as it was"
    if again != new:
        return "internal error: a second pass would change the rewrite again; file left as it was"
    old_tree = parse_ast(old)
    if old_tree is None:
        return ""  # newer syntax than this interpreter knows; libcst's parse is the check
    new_tree = parse_ast(new)
    if new_tree is None:
        try:
            ast.parse(new)  # again, for the error's words
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            return f"internal error: the rewrite is not valid Python ({e}); file left as it was"
        return "internal error: the rewrite is not valid Python; file left as it was"
    # Some errors only the compiler sees (`break` outside a loop, `return` outside a function,
    # a name both global and local): the rewrite must compile when the original did. The trees
    # just parsed are compiled, not the texts again.
    if _compiles(old_tree, path):
        try:
            _compile(new_tree, path)
        except (SyntaxError, ValueError) as e:
            return f"internal error: the rewrite does not compile ({e}); file left as it was"
    return ""


def _compile(tree: ast.Module, path: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compile(tree, path, "exec", dont_inherit=True)


def _compiles(tree: ast.Module, path: str) -> bool:
    try:
        _compile(tree, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def unified_diff(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)

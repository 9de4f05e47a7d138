"""What every rule shares: the Rule contract, the per-file context, findings and TODO comments.

A rule is a libcst codemod (`RuleTransformer`) plus metadata: a stable code, a name that is
also its module name and CLI id, a one-line summary and a before/after example. Rules report
findings through `RuleTransformer.report`, and leave TODOs with `RuleTransformer.todo`; the
TODO is attached above the statement being visited and never duplicated on a rerun.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import ClassVar, TypeVar

import libcst as cst
from libcst.codemod import Codemod, CodemodContext, VisitorBasedCodemodCommand
from libcst.helpers import get_full_name_for_node
from libcst.metadata import GlobalScope, QualifiedNameSource, ScopeProvider

from codemods import inline, positions, project, walk
from codemods.bindings import Bindings, ast_nodes
from codemods.local_names import LocalNames
from migrate.kernel.findings import Finding, Fix, Severity

_T = TypeVar("_T")

# Check every answer the import bindings give against libcst's scope analysis (tests set it).
CHECK_BINDINGS = os.environ.get("TRL_MIGRATE_CHECK_BINDINGS") == "1"
TODO_PREFIX = "# TODO(trl-migrate {code}): "
_NO_DEFAULT = object()
_UNSET = object()
_BLANK = cst.Module(body=[])


@dataclasses.dataclass(frozen=True)
class Options:
    """Settings that change what rules write. Picklable: it travels to worker processes."""

    target: str = "rloo"  # rloo | grpo: the trainer PPO code moves to
    # False: `target` is the default, and a file that needs GRPO (tools) gets GRPO
    target_chosen: bool = False
    # The TRL releases the project says it ran on (its requirement files' `trl`, or
    # --trl-version), among codemods.ppo.releases(); None: not known. Where a PPO config's
    # default changed between releases, those releases' default is kept.
    trl_releases: tuple[str, ...] | None = None
    trl_declared: str = ""  # what said so: "trl==0.16.1 (requirements.txt)"


@dataclasses.dataclass
class Shared:
    """What a pass leaves for a later pass of the same file (of its own rule or another)."""

    # TRL101: modules TRL 1.13 lacks that an import still names (RewriteImports ->
    # GoneModuleImports)
    gone_modules: set[str] = dataclasses.field(default_factory=set)
    # TRL102: transformers classes the value-head rewrite wrote, to import (->
    # FinishValueHeadImports)
    value_head_imports: set[str] = dataclasses.field(default_factory=set)
    # TRL103 / TRL104: the target config / trainer names written (-> their import-finishing pass)
    config_imports: set[str] = dataclasses.field(default_factory=set)
    trainer_imports: set[str] = dataclasses.field(default_factory=set)
    # TRL104 -> TRL105: the datasets a PPO trainer call was handed (code of each expression)
    ppo_datasets: set[str] = dataclasses.field(default_factory=set)
    # TRL103 / TRL104 -> TRL108: the era the file's PPO code reads as (codemods.ppo), which
    # tells the transformers major it ran on
    ppo_era: str | None = None
    # TRL103 -> TRL104: config variable -> the era of the PPO config call it was built by
    # ("" when calls of two eras build it), which the trainer handed it should share
    config_eras: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class FileState:
    """Per-file state shared by the rules that run on one file."""

    path: str
    options: Options
    findings: list[Finding] = dataclasses.field(default_factory=list)
    shared: Shared = dataclasses.field(default_factory=Shared)
    codes: frozenset[str] = frozenset()  # the rules running on this file
    # The trainer this file's PPO code moves to: options.target, or GRPO for a file that trains
    # with tools (TextEnvironment) when no target was chosen; `target_reason` says why
    target: str = "rloo"
    target_reason: str = ""
    # The identifiers of the text the current pass receives (set by the engine before each pass)
    identifiers: Identifiers | None = None
    # Source code of statements, by node: what `RuleTransformer.focus` is matched against
    segments: dict[int, tuple[cst.CSTNode, str]] = dataclasses.field(default_factory=dict)
    # Where the nodes of the tree the current pass walks sit (walk.Tree), made on first ask
    tree: walk.Tree | None = None
    # The plain variables of that tree (kept here, not on the tree: the names hold the tree,
    # and a tree holding them back would live on until the garbage collector's next sweep)
    local_names: LocalNames | None = None
    # The removed helpers written in (or imported from the folder's shared module), by key
    helpers: inline.Helpers | None = None
    # What the other files of the run tell about this one (project.run_facts)
    facts: project.RunFacts = dataclasses.field(default_factory=lambda: project.NO_FACTS)

    def tree_of(self, module: cst.Module) -> walk.Tree:
        """The walk.Tree of `module`: a node a rule asks about is one of the tree the pass
        walks (libcst's metadata knows it) or one the rule built (libcst knows nothing of it)."""
        if self.tree is None or self.tree.module is not module:
            self.tree = walk.tree_of(module)
        return self.tree

    def statement_code(self, node: cst.CSTNode) -> str:
        """The code of `node` (cached for as long as the node lives: a tree a pass did not
        change, and the statements it passed over, keep their nodes)."""
        hit = self.segments.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        code = _BLANK.code_for_node(node)
        self.segments[id(node)] = (node, code)
        return code

    def resolve_todo(self, code: str, prefix: str, message: str) -> None:
        """A later pass removed the code an earlier pass's TODO marked (TRL106 drops the
        `respond_to_batch` import TRL101 marked, once the loop that used it is rewritten): that
        finding becomes a fixed one, with `message`. The one way a rule changes another's."""
        for i, f in enumerate(self.findings):
            if f.code == code and f.fix is Fix.MANUAL and f.message.startswith(prefix):
                self.findings[i] = dataclasses.replace(
                    f, severity=Severity.INFO, fix=Fix.APPLIED, message=message
                )


@functools.lru_cache(maxsize=32)
def parse_ast(text: str) -> ast.Module | None:
    """`ast.parse(text)`, None where it fails; kept while one file is processed (the engine
    clears it after each). A file's text is read with `ast` by the engine's first look (does
    it use trl), by the first pass's identifiers and by the verifying run (the original and
    the rewrite once more each): one parse each. The trees are only read, never changed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not our report
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=32)
def identifiers(text: str) -> Identifiers:
    """The `Identifiers` of `text`, kept while one file is processed (cleared with `parse_ast`):
    the verifying run starts from the text the last pass wrote, whose identifiers and import
    bindings that pass's successors already read."""
    return Identifiers(text)


class Identifiers:
    """The identifiers a module's code uses (names, attributes, import paths, keywords) and its
    short string constants, read with `ast`; a pass's names are matched as substrings of them.
    Comments do not count, so the names a TODO mentions do not re-trigger a pass. Code `ast`
    cannot read counts as containing every name."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._tree: ast.Module | None | bool = False  # False: not parsed yet; None: unparsable
        self._joined: str | None = None
        self._bound: dict[str, frozenset[str] | None] = {}  # package -> bound_by(package)
        self._bindings: Bindings | None | bool = False
        self._nodes: list[ast.AST] | None = None

    def _ast(self) -> ast.Module | None:
        if self._tree is False:
            self._tree = parse_ast(self._text)
        return self._tree  # type: ignore[return-value]

    def _all(self) -> list[ast.AST] | None:
        """The nodes of the text's `ast` tree (`ast_nodes`), listed once for both questions."""
        tree = self._ast()
        if tree is None:
            return None
        if self._nodes is None:
            self._nodes = ast_nodes(tree)
        return self._nodes

    def has_any(self, parts: Sequence[str]) -> bool:
        if not parts:
            return True
        if self._joined is None:
            self._joined = _identifier_text(self._all())
        return self._joined == "" or any(p in self._joined for p in parts)

    def has_name(self, name: str) -> bool:
        """Whether the code uses `name` itself (not as a part of a longer identifier, as
        `PreTrainedModel` is of `PreTrainedModelWrapper`); True for code `ast` cannot read."""
        return self.has_any((f"\n{name}\n",))  # the identifiers are joined one per line

    def unpacks_a_name(self) -> bool:
        """Whether some call unpacks a plain name (`f(**config)`): True for code `ast` cannot
        read."""
        nodes = self._all()
        if nodes is None:
            return True
        return any(
            isinstance(node, ast.keyword) and node.arg is None and isinstance(node.value, ast.Name)
            for node in nodes
        )

    def trl_bound(self) -> frozenset[str] | None:
        """The local names the module's imports of trl bind: `bound_by("trl")`."""
        return self.bound_by("trl")

    def bound_by(self, package: str) -> frozenset[str] | None:
        """The local names the module's imports of `package` bind (`trl` for `import
        trl.core`, `Y` for `from trl import X as Y`), at any depth: a name that resolves to a
        path under `package` starts with one of them. None when a star import from it (or
        unreadable code) may bind any."""
        if package not in self._bound:
            self._bound[package] = _bound_by(self._all(), package)
        return self._bound[package]

    def bindings(self) -> Bindings | None:
        """What the module's imports bind (None for code `ast` cannot read)."""
        if self._bindings is False:
            tree = self._ast()
            self._bindings = Bindings(tree) if tree is not None else None
        return self._bindings  # type: ignore[return-value]


def _bound_by(nodes: list[ast.AST] | None, package: str) -> frozenset[str] | None:
    if nodes is None:
        return None
    bound = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == package:
                    bound.add(a.asname or package)
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == package
        ):
            for a in node.names:
                if a.name == "*":
                    return None
                bound.add(a.asname or a.name)
    return frozenset(bound)


def _identifier_text(nodes: list[ast.AST] | None) -> str:
    if nodes is None:
        return ""  # treated as "every name present"
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.name)
            if node.asname:
                found.add(node.asname)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.keyword) and node.arg:
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200
        ):
            found.add(node.value)
    return "\n" + "\n".join(sorted(found)) + "\n"


class RuleTransformer(VisitorBasedCodemodCommand):
    """Base transformer: findings with positions, and TODO comments on enclosing statements."""

    # No metadata is computed up front: `get_metadata` resolves a provider over the current
    # tree the first time a pass asks (the engine's wrapper keeps it for later passes over the
    # same tree). Scope analysis costs about two parses, and a pass that finds nothing to ask
    # about on a tree (most passes over most trees) never pays for it. Qualified names are
    # asked of the scope for the few nodes a rule looks at (libcst's QualifiedNameProvider walks
    # the whole tree to set up the same look-up).
    METADATA_DEPENDENCIES: ClassVar[Sequence[type]] = ()
    CODE: ClassVar[str] = ""

    def __init__(self, context: CodemodContext, state: FileState) -> None:
        # Not super().__init__: the matcher-decoratable transformer under libcst's codemods
        # inspects every method for matcher decorators (~15 ms a pass); rules use none.
        Codemod.__init__(self, context)
        cst.CSTTransformer.__init__(self)
        self.state = state
        self._pending: list[list[str]] = []
        self._first: cst.CSTNode | None = None
        self._import_depth = 0  # > 0 while inside an import statement
        self._mutation_depth = (
            0  # > 0 inside a `del` target or an attribute/subscript being assigned
        )
        self._header: set[str] = set()  # comments above the first statement live in Module.header
        # Whether a leave_ hook returned anything but the node it was handed: libcst rebuilds
        # every parent on the way up, so this is the one place a change can start. The engine
        # keeps the tree (and its computed metadata) of a pass that changed nothing.
        self.changed = False
        self._tables: dict[type, Mapping[cst.CSTNode, object]] = {}
        self._unplaced: list[tuple[int, cst.CSTNode]] = []  # (finding index, node reported)
        self._focus: Collection[str] | None | object = _UNSET
        self._skipped: cst.CSTNode | None = None  # the statement being passed over (focus)
        self._tree: walk.Tree | None = None  # of the tree this pass walks, made on first ask
        self._plain: frozenset[str] | None = None  # the focus, when walk.Tree can test it
        self._mask = 0  # walk.hooked_mask of this class, read with the tree

    def get_metadata(self, key, node, default=_NO_DEFAULT):  # type: ignore[no-untyped-def, override]
        table = self._tables.get(key)
        if table is None:
            wrapper = self.context.wrapper
            if wrapper is None:
                if default is _NO_DEFAULT:
                    raise KeyError(f"no metadata wrapper for {key.__name__}")
                return default
            table = self._tables[key] = wrapper.resolve(key)
        if default is _NO_DEFAULT:
            return table[node]
        return table.get(node, default)

    def visit_Module(self, node: cst.Module) -> None:
        self._first = node.body[0] if node.body else None
        self._header = {line.comment.value for line in node.header if line.comment is not None}

    # Identifiers (or parts of them) one of which the code must contain for this pass to find
    # anything; () runs the pass on every file its rule is triggered for.
    NAMES: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def wanted(cls, state: FileState, names: Identifiers) -> bool:
        """Whether this pass can do anything on code with `names`, given what earlier passes left
        in `state`. Checked on the text each pass receives, so the verifying second run skips
        the passes whose subject the first run rewrote away."""
        return names.has_any(cls.NAMES)

    # -- findings ---------------------------------------------------------------------------
    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        severity: Severity = Severity.ERROR,
        fix: Fix = Fix.APPLIED,
    ) -> None:
        # The position is filled in once the pass is over (`place_findings`), for all of its
        # findings in one code generation.
        self._unplaced.append((len(self.state.findings), node))
        self.state.findings.append(
            Finding(self.CODE, severity, self.state.path, 0, 0, message, fix=fix)
        )

    def forget_findings(self, start: int) -> None:
        """Drop the findings reported from index `start` on (a rewrite that was given up)."""
        del self.state.findings[start:]
        self._unplaced = [(i, node) for i, node in self._unplaced if i < start]

    def place_findings(self, module: cst.Module, written: positions.Written | None = None) -> None:
        """Give this pass's findings the line and column of their node in `module`, the tree
        the pass walked. A node built by the rule is not in it: its finding keeps line 0, which
        the engine reads as the line of the statement around it. `written`: the file's code
        writer, which knows where the statements of `module` begin."""
        nodes = [node for _, node in self._unplaced]
        found = written.starts(module, nodes) if written else positions.starts(module, nodes)
        for index, node in self._unplaced:
            start = found.get(id(node))
            if start is not None:
                f = self.state.findings[index]
                self.state.findings[index] = dataclasses.replace(f, line=start[0], col=start[1] + 1)
        self._unplaced = []

    def todo(self, node: cst.CSTNode, message: str, *, severity: Severity = Severity.ERROR) -> None:
        """A manual finding plus a `# TODO(trl-migrate CODE): message` above the statement."""
        self.report(node, message, severity=severity, fix=Fix.MANUAL)
        if self._pending:
            self._pending[-1].append(message)

    def qualified_names(self, node: cst.CSTNode) -> tuple[str, ...]:
        """What `node` may name (several after conditional imports), sorted: a rule that takes
        the first match reads the same one in every process, whatever the hash seed. A name
        that no import of the module binds may come back as () instead of its local or builtin
        name (`f.<locals>.model`, `builtins.print`): rules match import paths only."""
        fast = self._bound_names(node)
        if fast is not None and not CHECK_BINDINGS:
            return fast
        scope = self.get_metadata(ScopeProvider, node, None)
        found = scope.get_qualified_names_for(node) if scope is not None else set()
        exact = tuple(sorted({q.name for q in found}))
        if fast == () and not any(q.source is QualifiedNameSource.IMPORT for q in found):
            return exact  # the local or builtin name: () stands for it
        if fast is not None and fast != exact:
            raise AssertionError(
                f"bindings answer {fast} for {_BLANK.code_for_node(node)!r}, the scope {exact}"
            )
        return exact

    def _without_scope(self) -> tuple[Bindings, walk.Tree] | None:
        """The import bindings and the walk.Tree of the pass's tree, the tables that answer
        for libcst's scope analysis, when none of the tree is at hand already (that one is
        as cheap to ask)."""
        wrapper = self.context.wrapper
        ids = self.state.identifiers
        if wrapper is None or ids is None or ScopeProvider in self._tables:
            return None
        if ScopeProvider in wrapper._metadata and not CHECK_BINDINGS:
            return None
        bindings = ids.bindings()
        tree = self.state.tree_of(wrapper.module)
        if bindings is None or tree.scopes != bindings.scopes:
            return None
        return bindings, tree

    def _bindings(self, node: cst.CSTNode) -> tuple[Bindings, int] | None:
        """The import bindings of the pass's tree and the function body `node` sits in, when
        `node` is one of the tree's nodes outside an import (see `_without_scope`)."""
        found = self._without_scope()
        if found is None:
            return None
        bindings, tree = found
        scope = tree.scope(node)
        if scope is None or tree.in_import(node):
            return None
        return bindings, scope

    def handed_to(
        self, module: cst.Module, roots: Collection[str]
    ) -> dict[tuple[int | None, str], str]:
        """(function body, variable) -> the first call whose function's root name is one of
        `roots` (`PPOTrainer(...)`, `utils.build(...)`) and that gets the variable as an
        argument there: where a value leaves for code elsewhere."""
        out: dict[tuple[int | None, str], str] = {}
        if not roots:
            return out
        for call in walk.find_all(module, cst.Call):
            func = get_full_name_for_node(call.func) or ""
            if func.split(".")[0] not in roots:
                continue
            for arg in call.args:
                if isinstance(arg.value, cst.Name):
                    out.setdefault((self.function_of(call), arg.value.value), func)
        return out

    def function_of(self, node: cst.CSTNode) -> int | None:
        """The function body `node` of the pass's tree sits in (0: the module; walk.Tree's
        numbering), None for a node the rule built."""
        wrapper = self.context.wrapper
        if wrapper is None:
            return None
        return self.state.tree_of(wrapper.module).scope(node)

    def _bound_names(self, node: cst.CSTNode) -> tuple[str, ...] | None:
        found = self._bindings(node)
        if found is None:
            return None
        full = get_full_name_for_node(node)
        # libcst names no node without a dotted name either
        if not full:
            return ()
        bindings, scope = found
        name_node = isinstance(node, cst.Name)
        if name_node and bindings.bound_otherwise(full):
            wrapper = self.context.wrapper
            stored = self.state.tree_of(wrapper.module).stored(node)  # type: ignore[union-attr]
            if stored == walk.ASSIGNED:
                # an assignment of its own: libcst names it by that binding alone
                return bindings.assigned(full)
            if stored == walk.BOUND:
                return None
        return bindings.qualified(full, scope, name_node=name_node)

    def _local_names(self) -> LocalNames | None:
        """The plain variables of the pass's tree (see `_without_scope`)."""
        found = self._without_scope()
        if found is None:
            return None
        bindings, tree = found
        local = self.state.local_names
        if local is None or local.tree is not tree:
            local = self.state.local_names = LocalNames(tree, bindings.hints)
        return local

    def _checked(self, fast: _T | None, exact: Callable[[], _T], what: str) -> _T:
        """A table's answer (`fast`, None where it has none), else the scope's (`exact()`);
        with TRL_MIGRATE_CHECK_BINDINGS=1 both, which must agree (`what` names the question)."""
        if fast is not None and not CHECK_BINDINGS:
            return fast
        found = exact()
        if fast is not None and fast != found:
            raise AssertionError(f"the fast tables and the scope disagree on {what}")
        return found

    def referents(self, name: cst.Name) -> set[int]:
        """ids of the nodes that bind what `name` may refer to where it stands (empty when
        unknown; a builtin's binding has no node, and counts as id(None))."""
        local = self._local_names()

        def exact() -> set[int]:
            scope = self.get_metadata(ScopeProvider, name, None)
            if scope is None:
                return set()
            return {
                id(getattr(r, "node", None))
                for a in scope.accesses[name]
                if a.node is name
                for r in a.referents
            }

        fast = local.referents(name) if local is not None else None
        return self._checked(fast, exact, f"what {name.value!r} refers to")

    def bindings_and_reads(self, target: cst.Name) -> tuple[list[cst.CSTNode], list[cst.CSTNode]]:
        """For the target of an assignment: the bindings of its name in its scope, and the
        nodes that read this one (libcst's `scope.assignments[name]` and the `references` of
        the one whose node is `target`), each in source order; none of either when the scope
        knows nothing of `target`."""
        local = self._local_names()
        wrapper = self.context.wrapper
        index = self.state.tree_of(wrapper.module).index if wrapper is not None else {}

        def ordered(nodes: Collection[cst.CSTNode]) -> list[cst.CSTNode]:
            return sorted(nodes, key=lambda n: index.get(id(n), -1))

        def exact() -> tuple[list[cst.CSTNode], list[cst.CSTNode]]:
            scope = self.get_metadata(ScopeProvider, target, None)
            if scope is None:
                return [], []
            bound = scope.assignments[target.value]
            own = next((a for a in bound if getattr(a, "node", None) is target), None)
            reads = [r.node for r in own.references] if own is not None else []
            return ordered([a.node for a in bound]), ordered(reads)  # type: ignore[attr-defined]

        fast = local.bindings_and_reads(target) if local is not None else None
        return self._checked(
            (ordered(fast[0]), ordered(fast[1])) if fast is not None else None,
            exact,
            f"the bindings and reads of {target.value!r}",
        )

    def sees_alike(self, one: cst.CSTNode, other: cst.CSTNode, name: str) -> bool:
        """Whether `name` means at node `one` what it means at node `other` (of the pass's
        tree): the same scope, or scopes that see the same bindings of it."""
        local = self._local_names()

        def exact() -> bool:
            first = self.get_metadata(ScopeProvider, one, None)
            second = self.get_metadata(ScopeProvider, other, None)
            if first is None or second is None:
                return False
            if first is second:
                return True
            there = {id(a.node) for a in first[name]} if name in first else set()  # type: ignore[attr-defined]
            return bool(there) and there == (
                {id(getattr(a, "node", None)) for a in second[name]} if name in second else set()
            )

        fast = local.sees_alike(one, other, name) if local is not None else None
        return self._checked(fast, exact, f"what {name!r} means at two places")

    def at_module_level(self, node: cst.CSTNode) -> bool:
        """Whether libcst gives `node` (of the pass's tree) the module's own scope."""
        local = self._local_names()
        fast = local.at_module_level(node) if local is not None else None
        return self._checked(
            fast,
            lambda: isinstance(self.get_metadata(ScopeProvider, node, None), GlobalScope),
            "a node at module level",
        )

    def import_referenced(self, import_node: cst.ImportFrom, bound: str) -> bool:
        """Whether the name `bound` by this import is still used (needs ScopeProvider metadata)."""
        found = self._bindings(import_node)
        fast: bool | None = None
        if found is not None:
            fast = False if found[0].unreferenced(bound) else found[0].referenced(bound, found[1])

        def exact() -> bool:
            scope = self.get_metadata(ScopeProvider, import_node, None)
            if scope is None:
                return True
            return any(
                a.references
                for a in scope.assignments[bound]
                if getattr(a, "node", None) is import_node
            )

        return self._checked(fast, exact, f"whether {bound!r} is read")

    def import_has_fallback(self, import_node: cst.Import | cst.ImportFrom, bound: str) -> bool:
        """Whether the scope of this import also binds `bound` by other code than an import (the
        `except ImportError:` branch of a guarded import, say): the file is written to run
        without the import, so the import is the guard's to keep."""
        found = self._bindings(import_node)

        def exact() -> bool:
            scope = self.get_metadata(ScopeProvider, import_node, None)
            if scope is None or bound not in scope.assignments:
                return False
            return any(
                not isinstance(getattr(a, "node", None), (cst.Import, cst.ImportFrom))
                for a in scope.assignments[bound]
            )

        fast = found[0].fallback(bound) if found is not None else None
        return self._checked(fast, exact, f"whether other code binds {bound!r}")

    # -- statement frames: where TODOs land --------------------------------------------------
    @property
    def in_mutation(self) -> bool:
        """Inside `del X.y` or the target of `X.y = ...` / `X[k] = ...`: code that changes an object
        (a monkeypatch), where renaming a removed class to its successor would patch another
        class."""
        return self._mutation_depth > 0

    @property
    def in_import(self) -> bool:
        """Inside `import ...` / `from ... import ...`: names there are bindings, not uses."""
        return self._import_depth > 0

    # The walk itself: libcst's matcher-decoratable hooks are bypassed for the cached look-up of
    # codemods.walk (rules use no matcher decorators and no per-field hooks).
    def focus(self) -> Collection[str] | None:
        """Words (identifiers) without one of which a statement holds nothing this pass acts
        on; asked once per pass, at the first statement. A statement whose code contains none
        of them is passed over whole: no hook runs inside it and libcst keeps its nodes as they
        are instead of rebuilding them (most of the cost of a pass over a large file). None: the
        pass sees every statement. A pass that follows values through variables, or reads
        statements for what they do not name, must not narrow its focus."""
        return None

    def trl_focus(self, *extra: str) -> Collection[str] | None:
        """A focus for passes that act only on what resolves to a `trl.` path (plus `extra`):
        the local names the module's trl imports bind, and `trl` itself (imports, and strings
        such as `mock.patch("trl...")`)."""
        ids = self.state.identifiers
        bound = ids.trl_bound() if ids is not None else None
        return None if bound is None else ("trl", *sorted(bound), *extra)

    def resolves_to_trl(self, node: cst.CSTNode) -> bool:
        """Cheap gate before a scope look-up: whether the root name of `node` (a name or an
        attribute chain) is one a trl import binds, or no gate can be set (star import)."""
        return self.may_resolve_to(node, "trl")

    def may_resolve_to(self, node: cst.CSTNode, package: str) -> bool:
        """Whether the root name of `node` is one an import of `package` binds, or no gate can
        be set (a star import from it, code `ast` cannot read)."""
        ids = self.state.identifiers
        bound = ids.bound_by(package) if ids is not None else None
        if bound is None:
            return True
        while isinstance(node, cst.Attribute):
            node = node.value
        return not isinstance(node, cst.Name) or node.value in bound

    def names_from(self, node: cst.CSTNode, package: str) -> tuple[str, ...]:
        """`qualified_names(node)` for a caller that wants only paths under `package` (`trl`,
        `transformers`): () without asking when no import of it binds the root name (its
        names then hold no such path, and asking may cost a scope analysis: `Dataset` read
        before its import)."""
        if self.may_resolve_to(node, package):
            return self.qualified_names(node)
        if CHECK_BINDINGS and any(
            q == package or q.startswith(package + ".") for q in self.qualified_names(node)
        ):
            raise AssertionError(f"{_BLANK.code_for_node(node)!r} resolves to {package}, ungated")
        return ()

    def on_visit(self, node: cst.CSTNode) -> bool:
        node_type = type(node)
        kind = _kind(node_type)
        tree = self._tree
        if tree is None:
            tree = self.walked_tree()
        at = tree.index.get(id(node)) if tree is not None else None
        if (
            at is not None
            and not tree.masks[at] & self._mask  # type: ignore[union-attr]
            and self._skipped is None
            and node_type is not cst.Module
        ):
            # No node this pass has a hook for is in here: libcst keeps the subtree as it is.
            # (walk.transform, handed the same mask by the engine, keeps such a subtree
            # without calling this: the two must agree, see engine._transform.)
            self._skipped = node
            if kind is _STATEMENT:
                self._pending.append([])
            return False
        if kind is _STATEMENT:
            self._pending.append([])
            if self._focus is _UNSET:
                self._focus = self.focus()
            words = self._focus
            if words is not None and self._skipped is None and not self._holds(node, at, words):  # type: ignore[arg-type]
                self._skipped = node
                return False
        elif kind is _IMPORT:
            self._import_depth += 1
        elif kind is _TARGET and _mutates(node):
            self._mutation_depth += 1
        visit = walk.hooks(type(self), node_type)[0]
        return visit is None or visit(self, node) is not False

    def _walked_tree(self) -> walk.Tree | None:
        """The walk.Tree of the tree this pass walks."""
        wrapper = self.context.wrapper
        return self.state.tree_of(wrapper.module) if wrapper is not None else None

    def walked_tree(self) -> walk.Tree | None:
        """The walk.Tree of the tree this pass walks (None outside a pass)."""
        if self._tree is None:
            self._tree = self._walked_tree()
            self._mask = walk.hooked_mask(type(self))
        return self._tree

    def _holds(self, node: cst.CSTNode, at: int | None, words: Collection[str]) -> bool:
        """Whether the code of statement `node` (at position `at` of the walked tree) contains
        one of `words`."""
        if at is not None and self._plain is None:
            self._plain = frozenset(words) if walk.plain_words(words) else frozenset()
        if at is None or not self._plain:
            return any(w in self.state.statement_code(node) for w in words)
        held = bool(self._tree.holding(self._plain)[at])  # type: ignore[union-attr]
        if CHECK_BINDINGS and held != any(w in self.state.statement_code(node) for w in words):
            raise AssertionError(f"walk.Tree.holding and the code disagree on {words}")
        return held

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        if original_node is self._skipped:
            self._skipped = None
            if _kind(type(original_node)) is _STATEMENT:
                self._pending.pop()
            return updated_node
        node_type = type(original_node)
        kind = _kind(node_type)
        if kind is _IMPORT:
            self._import_depth -= 1
        elif kind is _TARGET and _mutates(original_node):
            self._mutation_depth -= 1
        leave = walk.hooks(type(self), node_type)[1]
        result = updated_node if leave is None else leave(self, original_node, updated_node)
        if kind is _STATEMENT:
            messages = self._pending.pop()
            if messages:
                seen = self._header if original_node is self._first else set()
                result = _attach_todos(result, self.CODE, messages, seen)
        if result is not updated_node:
            self.changed = True
        return result


# What the statement frames need to know of a node, by its type (isinstance against libcst's
# abstract node classes costs a Python-level ABC check, at every node of every pass).
_STATEMENT, _IMPORT, _TARGET, _OTHER = "statement", "import", "target", "other"
_KINDS: dict[type, str] = {}


def _kind(node_type: type) -> str:
    kind = _KINDS.get(node_type)
    if kind is None:
        if issubclass(node_type, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            kind = _STATEMENT
        elif issubclass(node_type, (cst.Import, cst.ImportFrom)):
            kind = _IMPORT
        elif issubclass(node_type, (cst.Del, cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            kind = _TARGET
        else:
            kind = _OTHER
        _KINDS[node_type] = kind
    return kind


def _mutates(node: cst.CSTNode) -> bool:
    """`del` targets, and assignments to an attribute or an item: code that changes an object."""
    if isinstance(node, cst.Del):
        return True
    return isinstance(node.target, (cst.Attribute, cst.Subscript))  # type: ignore[attr-defined]


def todo_comment(code: str, message: str) -> str:
    return TODO_PREFIX.format(code=code) + " ".join(message.split())


def _attach_todos(result, code: str, messages: list[str], seen: set[str]):  # type: ignore[no-untyped-def]
    """Put TODO lines above the first statement of `result` (a node or a FlattenSentinel)."""
    if isinstance(result, cst.FlattenSentinel):
        nodes = list(result.nodes)
        if nodes:
            nodes[0] = with_todos(nodes[0], code, messages, seen)
        return cst.FlattenSentinel(nodes)
    if isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        return with_todos(result, code, messages, seen)
    return result  # removed statement: nothing to annotate


def with_todos(stmt, code: str, messages: list[str], seen: set[str]):  # type: ignore[no-untyped-def]
    existing = {
        line.comment.value for line in stmt.leading_lines if line.comment is not None
    } | seen
    added = []
    for message in dict.fromkeys(messages):  # keep order, drop repeats
        text = todo_comment(code, message)
        if text not in existing:
            added.append(cst.EmptyLine(comment=cst.Comment(text)))
            existing.add(text)
    if not added:
        return stmt
    return stmt.with_changes(leading_lines=[*stmt.leading_lines, *added])


class Rule:
    """A rule's metadata and its passes. A subclass registers itself under its code; its name
    (the CLI id and docs anchor) is its module's: `codemods/rules/ppo_config` is `ppo-config`."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    before: ClassVar[str]
    after: ClassVar[str]
    transformers: ClassVar[Sequence[type[RuleTransformer]]]
    triggers: ClassVar[tuple[str, ...]] = ()  # a file must contain one of these to need the rule
    # Identifiers that make a file worth this rule even when it does not use TRL (TRL108: a
    # repo's SFT or data script breaks on a removed transformers API all the same).
    beyond_trl: ClassVar[tuple[str, ...]] = ()

    registry: ClassVar[dict[str, type[Rule]]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = cls.__module__.rsplit(".", 1)[-1].replace("_", "-")
        other = Rule.registry.get(cls.code)
        if other is not None and other.__qualname__ != cls.__qualname__:
            raise TypeError(f"{cls.__module__}: code {cls.code} is already {other.__module__}'s")
        Rule.registry[cls.code] = cls
        for transformer in cls.transformers:
            transformer.CODE = cls.code

    def triggered(self, text: str) -> bool:
        return not self.triggers or any(t in text for t in self.triggers)

    def by_facts(self, facts: project.RunFacts) -> bool:
        """Whether what the other files of the run tell about this one gives the rule work here
        though its triggers (or TRL itself) are absent from the text."""
        return False

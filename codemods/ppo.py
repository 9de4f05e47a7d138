"""What the PPO rules (TRL103-TRL107) share: the mapping data, PPO class matching, era detection,
literal values, call-argument layout, and the pass that swaps PPO imports once their uses are gone.

Eras: `legacy` (<= 0.11 `step()` API), `ppov2` (PPOv2Config/PPOv2Trainer, 0.9-0.12), `v2` (top-level
PPOConfig/PPOTrainer with `train()`, 0.12-0.28), `experimental` (`trl.experimental.ppo`, 0.26-1.12).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from typing import Any

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node
from packaging.version import Version

from codemods import symbols, walk
from codemods.base import RuleTransformer

LEGACY, PPOV2, V2, EXPERIMENTAL = "legacy", "ppov2", "v2", "experimental"
CONFIG_NAMES = ("PPOConfig", "PPOv2Config")
TRAINER_NAMES = ("PPOTrainer", "PPOv2Trainer")
TRAINER_HELPERS = ("OnlineTrainerState", "PolicyAndValueWrapper")  # gone with the trainer
TARGETS = {"rloo": ("RLOOConfig", "RLOOTrainer"), "grpo": ("GRPOConfig", "GRPOTrainer")}
TARGET_TRAINERS = frozenset({"trl.RLOOTrainer", "trl.GRPOTrainer"})
ERA_TEXT = {
    LEGACY: "legacy PPO (TRL <= 0.11)",
    PPOV2: "PPOv2 (TRL 0.9-0.12)",
    V2: "PPO v2 (TRL 0.12-0.28)",
    EXPERIMENTAL: "trl.experimental.ppo (TRL 0.26-1.12)",
}


@functools.cache
def mapping() -> dict[str, Any]:
    return json.loads(
        resources.files("codemods").joinpath("data/ppo_mapping.json").read_text("utf-8")
    )


@functools.cache
def targets() -> dict[str, Any]:
    return json.loads(
        resources.files("codemods").joinpath("data/ppo_targets.json").read_text("utf-8")
    )


@functools.cache
def _defaults() -> dict[str, Any]:
    return json.loads(
        resources.files("codemods").joinpath("data/ppo_defaults.json").read_text("utf-8")
    )


@dataclasses.dataclass(frozen=True)
class Declared:
    """The TRL releases a project says it ran on: what its requirement files declare for `trl`
    (or `--trl-version`), among the releases of codemods/data/ppo_defaults.json."""

    releases: frozenset[str]
    text: str  # "trl==0.16.1 (requirements.txt)", for the findings


def era_of_releases(releases: Sequence[str] | None) -> str | None:
    """The era `trl.PPOConfig`/`trl.PPOTrainer` had in every one of `releases`: legacy up to
    0.11, v2 from 0.12 to 0.28 (0.29 moved them to trl.experimental.ppo); None when they span
    both, or none."""
    if not releases:
        return None
    versions = [Version(r) for r in releases]
    if all(v < Version("0.12.0") for v in versions):
        return LEGACY
    if all(Version("0.12.0") <= v < Version("0.29.0") for v in versions):
        return V2
    return None


def releases() -> tuple[str, ...]:
    """Every TRL release whose PPO config defaults are known, oldest first."""
    return tuple(_defaults()["versions"])


def default_history(
    era: str, field: str, before: str | None = None, declared: Declared | None = None
) -> list[tuple[str, str, Any]]:
    """(first release, last release, default) for each run of releases of `era` in which the PPO
    config's `field` had one default, oldest first (codemods/data/ppo_defaults.json). `before`:
    only the releases older than this one (what the file's code tells: `release_cap`).
    `declared`: only the releases the project declares, unless it admits none of the era's (a
    declaration the file's own code contradicts says nothing of it)."""
    if declared is not None:
        narrowed = _history(era, field, before, declared.releases)
        if narrowed:
            return narrowed
    return _history(era, field, before, None)


def _history(
    era: str, field: str, before: str | None, admitted: frozenset[str] | None
) -> list[tuple[str, str, Any]]:
    runs: list[tuple[str, str, Any]] = []
    for version, eras in _defaults()["versions"].items():
        if before is not None and Version(version) >= Version(before):
            continue
        if admitted is not None and version not in admitted:
            continue
        fields = eras.get(era)
        if fields is None or field not in fields:
            continue
        if runs and runs[-1][2] == fields[field]:
            runs[-1] = (runs[-1][0], version, fields[field])
        else:
            runs.append((version, version, fields[field]))
    return runs


# Keywords of a PPO v2 `PPOTrainer(...)` call that TRL 0.15 removed (0.13 renamed them to args=,
# model=, ref_model= and kept the old names as deprecated aliases; W:0.13.0 ppo_trainer.py
# deprecate_kwarg(..., "0.15.0", ...)): a v2 file that passes one ran on TRL 0.12-0.14.
V2_OLD_TRAINER_KEYWORDS = ("config", "policy", "ref_policy")
V2_OLD_TRAINER_GONE_IN = "0.15.0"


def release_cap(module: cst.Module) -> str | None:
    """The first release a v2 PPO file cannot have run on, when its `PPOTrainer(...)` call says
    so (`config=`, `policy=`, `ref_policy=`: TRL 0.12-0.14), else None. Only meaningful for the
    v2 era: legacy PPOTrainer took `config=` too."""
    for call in walk.find_all(module, cst.Call):
        func = get_full_name_for_node(call.func) or ""
        if func.rpartition(".")[2] in TRAINER_NAMES and any(
            a.keyword is not None and a.keyword.value in V2_OLD_TRAINER_KEYWORDS for a in call.args
        ):
            return V2_OLD_TRAINER_GONE_IN
    return None


def era_keys(keys: Iterable[str]) -> tuple[bool, bool]:
    """(a legacy sign, a v2 sign) in a PPO config's keywords or a script's PPO flags. `batch_size`
    and `mini_batch_size` are legacy fields that the v2 config also declares (its trainer
    computes them): beside a v2-only keyword they are no legacy sign."""
    given = set(keys)
    v2 = bool(given & set(mapping()["v2_only"]))
    legacy = given & legacy_only()
    if v2:
        legacy -= v2_runtime()
    return bool(legacy), v2


@functools.cache
def legacy_only() -> frozenset[str]:
    """Fields only the legacy PPO config had (`batch_size` and `mini_batch_size` among them)."""
    return frozenset(mapping()["legacy_only"])


@functools.cache
def v2_runtime() -> frozenset[str]:
    """Legacy fields the v2 config also declared, which its trainer computed (`batch_size`)."""
    return frozenset(mapping()["v2_runtime"]["fields"])


@functools.cache
def era_reads(era: str) -> frozenset[str]:
    """Config attributes only `era` (legacy | v2) had, distinctive enough that reading one in a
    PPO file tells the era (generic ones like `batch_size` or `output_dir` are left out)."""
    return frozenset(mapping()["era_reads"][era])


def script_fields(era: str) -> dict[str, dict[str, Any]]:
    """Fields of the era's PPO config that the target config lacks but a parsed script may set."""
    return mapping()["script_fields"]["legacy" if era == LEGACY else "v2"]


def config_fields(target: str) -> frozenset[str]:
    return frozenset(targets()["config_fields"][target])


@functools.cache
def moved_by_drift() -> frozenset[str]:
    """Keywords of TRL's configs that TRL108 rewrites for transformers 5 (drift.json:
    `warmup_ratio`, `evaluation_strategy`, `group_by_length`, ...): fields a v2 PPOConfig took
    from the TrainingArguments of its day, which TRL103 keeps for TRL108 to move."""
    data = json.loads(resources.files("codemods").joinpath("data/drift.json").read_text("utf-8"))
    return frozenset(
        keyword
        for section in ("keywords", "dropped", "switches")
        for keyword, row in data[section].items()
        if any(callee.startswith("trl.") for callee in row.get("callees", ()))
    )


def target_config(target: str) -> str:
    return TARGETS[target][0]


def target_trainer(target: str) -> str:
    return TARGETS[target][1]


def ppo_class(qnames: Iterable[str], names: Sequence[str]) -> tuple[str, str | None] | None:
    """(class name, era the import path implies or None) when a qualified name is a TRL PPO
    class, and the only thing the name may be: one the file also binds itself (a fallback
    `PPOTrainer = None` or `class PPOTrainer: ...` beside a guarded import) is not renamed."""
    qnames = sorted(qnames)
    if any(not (q == "trl" or q.startswith("trl.")) for q in qnames):
        return None
    for q in qnames:
        head, _, name = q.rpartition(".")
        if name in names and (head == "trl" or head.startswith("trl.")) and not elsewhere(q):
            if head.startswith("trl.experimental"):
                return name, EXPERIMENTAL
            return name, PPOV2 if "v2" in name else None
    return None


def elsewhere(path: str) -> bool:
    """A path of a PPO class's name that is no part of PPO: `trl.trainer.utils.OnlineTrainerState`,
    the online trainers' shared state class that TRL 0.27 removed (TRL101 says so), is not the
    experimental PPO trainer's `OnlineTrainerState`."""
    known = symbols.load().get(path)
    return known is not None and known.fate != symbols.PPO


# -- era of a whole file
# ------------------------------------------------------------------------------
class FileFacts(walk.Visitor):
    """Era signals and the names bound to PPO configs and trainers, gathered before a rewrite."""

    def __init__(self, owner: RuleTransformer) -> None:
        self.owner = owner
        self.signals: set[str] = set()
        self.trainer_vars: set[str] = set()
        self.config_vars: set[str] = set()
        self._rewritten: set[str] = set()  # names bound to a `_rewritten_trainer` call
        self.weak: set[str] = (
            set()
        )  # reads of fields only one era's config had: `ppo_config.query_dataset`

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in era_reads("legacy"):
            self.weak.add(LEGACY)
        elif node.attr.value in era_reads("v2"):
            self.weak.add(V2)

    def visit_Call(self, node: cst.Call) -> None:
        qn = self.owner.names_from(node.func, "trl")
        trainer = ppo_class(qn, TRAINER_NAMES)
        config = ppo_class(qn, CONFIG_NAMES)
        found = trainer or config
        if found is not None and found[1] is not None:
            self.signals.add(found[1])
        keys = {a.keyword.value for a in node.args if a.keyword is not None}
        if trainer is not None:
            positional = sum(1 for a in node.args if a.keyword is None and not a.star)
            if positional >= 2 or keys & {
                "dataset",
                "num_shared_layers",
                "training_data_collator",
                "optimizer",
            }:
                self.signals.add(LEGACY)
            if keys & {
                "args",
                "processing_class",
                "reward_model",
                "value_model",
                "train_dataset",
                "policy",
            }:
                self.signals.add(V2)
        if config is not None:
            legacy, v2 = era_keys(keys)
            if legacy:
                self.signals.add(LEGACY)
            if v2:
                self.signals.add(V2)
        if self._rewritten_trainer(node, qn, keys):
            # `RLOOTrainer(args=config)` where `config` is still a PPO config: what TRL104 made
            # of a v2 trainer call, whose sign a second run must read as the first did
            self.signals.add(V2)
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("step", "log_stats")
            and (get_full_name_for_node(func.value) or "") in self.trainer_vars | self._rewritten
        ):
            self.signals.add(LEGACY)

    def visit_Assign(self, node: cst.Assign) -> None:
        if not isinstance(node.value, cst.Call):
            return
        qn = self.owner.names_from(node.value.func, "trl")
        keys = {a.keyword.value for a in node.value.args if a.keyword is not None}
        rewritten = self._rewritten_trainer(node.value, qn, keys)
        for target in node.targets:
            name = get_full_name_for_node(target.target)
            if name and ppo_class(qn, TRAINER_NAMES):
                self.trainer_vars.add(name)
            if name and ppo_class(qn, CONFIG_NAMES):
                self.config_vars.add(name)
            if name and rewritten:  # its `.step()` loop is still the legacy sign it was
                self._rewritten.add(name)

    def _rewritten_trainer(self, call: cst.Call, qn: Sequence[str], keys: set[str]) -> bool:
        """Whether `call` is an RLOO/GRPO trainer handed a PPO config as `args=`: TRL104's
        rewrite of a v2 trainer call whose config TRL103 left under a TODO."""
        if "args" not in keys or not set(qn) & TARGET_TRAINERS:
            return False
        given = next(a.value for a in call.args if a.keyword and a.keyword.value == "args")
        return (get_full_name_for_node(given) or "") in self.config_vars

    def era(self) -> str | None:
        """One era when the signals agree; PPOv2/experimental imports win over keyword shapes."""
        for strong in (EXPERIMENTAL, PPOV2):
            if strong in self.signals:
                return strong if LEGACY not in self.signals else None
        if len(self.signals) == 1:
            return next(iter(self.signals))
        if not self.signals and len(self.weak) == 1 and self._names_a_ppo_class():
            return next(iter(self.weak))  # e.g. a parsed config and no call to judge by
        if not self.signals and not self.weak:
            # nothing in the code tells: the releases the project declares may
            return era_of_releases(self.owner.state.options.trl_releases)
        return None

    def _names_a_ppo_class(self) -> bool:
        """Whether the file's trl imports may bind a PPO config or trainer (by its own name,
        through `import trl`, or a star import): reads of fields only one era's config had are
        no sign of an era in a file without one, such as this rule's own output, where they
        sit under TODOs (`config.adap_kl_ctrl = True`)."""
        names = self.owner.state.identifiers
        bound = names.trl_bound() if names is not None else None
        return bound is None or bool(bound & {"trl", *CONFIG_NAMES, *TRAINER_NAMES})


def bar_loop(stmt: cst.With) -> cst.For | None:
    """The loop a `with` holds only to show a progress bar: `with tqdm(X, total=n) as bar:`
    whose body is one loop `for ... in bar:` (no `else`) that never reads `bar` otherwise. Such
    a loop iterates X; the `with` adds nothing else."""
    body: Sequence[cst.CSTNode] = getattr(stmt.body, "body", ())
    loop = body[0] if len(body) == 1 else None
    if len(stmt.items) != 1 or not isinstance(loop, cst.For):
        return None
    item = stmt.items[0]
    if not (
        m.matches(item.item, m.Call(func=m.Name("tqdm") | m.Attribute(attr=m.Name("tqdm"))))
        and item.asname is not None
        and isinstance(item.asname.name, cst.Name)
        and m.matches(loop.iter, m.Name(item.asname.name.value))
        and loop.orelse is None
    ):
        return None
    bar = item.asname.name.value
    if any(n.value == bar for n in walk.find_all(loop.body, cst.Name)):
        return None
    return loop


def once_steps(
    module: cst.Module, step_of: Callable[[cst.CSTNode], str | None]
) -> list[tuple[Sequence[cst.BaseStatement], int]]:
    """Each block (the module's body or a function's) whose one PPO `step(...)` (`step_of`
    names the trainer a small statement steps, else None) is a statement of its own, outside any
    loop of that block, of a trainer assigned above it in that block: the block and the
    statement's index. A step run once, as TRL 0.5-0.11's README quick start runs it, which
    TRL106 rewrites as the loop over `range(1)` it amounts to."""
    blocks: list[Sequence[cst.BaseStatement]] = [module.body]
    blocks += [f.body.body for f in walk.find_all(module, cst.FunctionDef)]  # type: ignore[misc]
    found = []
    for block in blocks:
        hits = [
            (i, owner)
            for i, s in enumerate(block)
            if isinstance(s, cst.SimpleStatementLine)
            for x in s.body
            if (owner := step_of(x)) is not None
        ]
        looped = any(
            isinstance(s, (cst.For, cst.While))
            and any(
                step_of(x) is not None
                for line in walk.find_all(s, cst.SimpleStatementLine)
                for x in line.body
            )
            for s in block
        )
        if len(hits) != 1 or looped:
            continue
        at, owner = hits[0]
        if any(
            isinstance(small, cst.Assign)
            and any(get_full_name_for_node(t.target) == owner for t in small.targets)
            for s in block[:at]
            if isinstance(s, cst.SimpleStatementLine)
            for small in s.body
        ):
            found.append((block, at))
    return found

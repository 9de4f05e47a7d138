"""TRL108: Trainer methods a script overrides whose call transformers changed. Since 4.46 the
Trainer calls `self.compute_loss(model, inputs, num_items_in_batch=...)` and
`self.training_step(model, inputs, num_items_in_batch)`; an override written before, such as the
stack-llama reward script's `compute_loss(self, model, inputs, return_outputs=False)`, stops the
first step with `compute_loss() got an unexpected keyword argument 'num_items_in_batch'`.

The override gets the parameter, with a default of None, and goes on ignoring it. What the
Trainer does with the loss it returns is then what it did before: it divides it by the
gradient-accumulation steps, except where the batches carry `labels` and the model's `forward`
takes `**kwargs` (transformers then counts the label tokens and takes the loss as already
normalized by them, 4.56.2 and 5.25 alike). A finding says so; a warning where the override
reads a `labels` key of its inputs.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence

import libcst as cst

from codemods import edits, walk
from codemods.base import RuleTransformer
from migrate.kernel.findings import Severity

# method -> (the argument the Trainer passes it now, whether by name: else as the third)
HOOKS = {
    "compute_loss": ("num_items_in_batch", True),
    "training_step": ("num_items_in_batch", False),
}
# The classes whose subclasses' overrides the Trainer calls.
TRAINERS = (
    "transformers.Trainer",
    "transformers.Seq2SeqTrainer",
    "transformers.trainer.Trainer",
    "transformers.trainer_seq2seq.Seq2SeqTrainer",
    "trl.*Trainer",
    "trl.*.*Trainer",
    "trl.*.*.*Trainer",
)


class TrainerHooks(RuleTransformer):
    """The part of RewriteDrift that gives Trainer overrides the parameters the Trainer passes."""

    def hooks_prescan(self, module: cst.Module) -> None:
        """The classes of the module that subclass a Trainer, directly or through another class
        of the module defined before them; and, for those that define no `__init__` on the way,
        the library trainer whose `__init__` a call of them runs (`trainer_bases`)."""
        self._trainer_classes: set[int] = set()
        self._scopes: list[cst.ClassDef | None] = []  # the class or function each def is in
        # the name of a class of the module (at any depth: a trainer class defined inside the
        # function that builds it) -> the library trainer's qualified names whose __init__ a
        # call of it runs (none of the module's classes between them defines one)
        self.trainer_bases: dict[str, tuple[str, ...]] = {}
        names: dict[str, tuple[str, ...]] = {}  # trainer subclass -> library names, () if __init__
        ids = self.state.identifiers
        if ids is not None and not ids.has_any((*HOOKS, "Trainer")):
            return
        for node in walk.find_all(module, cst.ClassDef):
            own_init = any(
                isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__"
                for stmt in node.body.body
            )
            for base in node.bases:
                value = base.value
                local = names.get(value.value) if isinstance(value, cst.Name) else None
                library = () if local is not None else self._library_trainer(value)
                if local is None and not library:
                    continue
                self._trainer_classes.add(id(node))
                reached = () if own_init else (local if local is not None else library)
                if node.name.value in names:  # defined twice: no one answer
                    reached = ()
                names[node.name.value] = reached
                break
        self.trainer_bases = {name: found for name, found in names.items() if found}

    def _library_trainer(self, value: cst.BaseExpression) -> tuple[str, ...]:
        if not any(self.may_resolve_to(value, p) for p in ("transformers", "trl")):
            return ()
        return tuple(
            q
            for q in self.qualified_names(value)
            if any(fnmatch.fnmatchcase(q, p) for p in TRAINERS)
        )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(node)

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        self._scopes.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(None)

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        self._scopes.pop()
        cls = self._scopes[-1] if self._scopes else None  # a method: directly in a class
        hook = HOOKS.get(original_node.name.value)
        if hook is None or cls is None or id(cls) not in self._trainer_classes:
            return updated_node
        return self._hook_method(*hook, original_node, updated_node)

    def _hook_method(
        self, keyword: str, by_name: bool, original: cst.FunctionDef, updated: cst.FunctionDef
    ) -> cst.FunctionDef:
        params = updated.params
        taken = [*params.params, *params.kwonly_params, *params.posonly_params]
        star = isinstance(params.star_arg, cst.Param)
        if (
            isinstance(params.star_kwarg, cst.Param)
            or any(p.name.value == keyword for p in taken)
            or (star and not by_name)  # `*args` takes a third argument already
        ):
            return updated
        new = cst.Param(
            cst.Name(keyword),
            default=cst.Name("None"),
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""),
                whitespace_after=cst.SimpleWhitespace(""),
            ),
        )
        if star:  # `*args`: only by name after it
            params = params.with_changes(kwonly_params=_append(params.kwonly_params, new))
        else:
            params = params.with_changes(params=_append(params.params, new))
        said = (
            f"`{original.name.value}` takes `{keyword}=None` now: transformers 4.46 and later "
            f"(TRL 1.13 needs 4.56.2) pass it {'by name' if by_name else 'as its third argument'}"
            ", which this override did not take; it still ignores it"
        )
        if not by_name:  # the override runs the whole step, its own scaling included
            self.report(original, said, severity=Severity.INFO)
            return updated.with_changes(params=params)
        labels = _LABELS.search(edits.code(original.body)) is not None
        self.report(
            original,
            f"{said}, and the Trainer still divides the loss it returns by the "
            "gradient-accumulation steps, as before, unless the batches carry `labels` and the "
            "model's forward takes `**kwargs`: then it takes the loss as normalized by the "
            f"label tokens (`{keyword}`) and does not divide it"
            + (
                " (this override reads `labels`: with gradient_accumulation_steps > 1, divide "
                f"by `{keyword}` as the Trainer's own compute_loss does, or by the steps)"
                if labels
                else ""
            ),
            severity=Severity.WARNING if labels else Severity.INFO,
        )
        return updated.with_changes(params=params)


def _append(params: Sequence[cst.Param], new: cst.Param) -> list[cst.Param]:
    """`params` and `new` after them, laid out as they are: one per line with a trailing comma
    stays so (the new one takes the last one's comma, the last one the comma of the one before
    it); on one line, `, ` before the new one."""
    out = list(params)
    if not out:
        return [new]
    last = out[-1]
    if isinstance(last.comma, cst.Comma):  # a trailing comma: the new one goes before `)`
        between = out[-2].comma if len(out) > 1 and isinstance(out[-2].comma, cst.Comma) else None
        out[-1] = last.with_changes(
            comma=between or cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
        return [*out, new.with_changes(comma=last.comma)]
    out[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return [*out, new]


# A batch key `labels` read by the override (`inputs["labels"]`, `inputs.get("labels")`): the
# Trainer counts label tokens only for batches with that key.
_LABELS = re.compile(r"""["']labels["']""")

"""TRL108: the arguments of `Trainer.__init__` by position, which transformers 4.46 shifted.

transformers 4.46 put `compute_loss_func` after `model_init`, so a call that hands the Trainer
eight or more arguments by position (a Trainer subclass forwarding its own parameters to
`super().__init__(model, args, ..., model_init, compute_metrics, callbacks, optimizers, ...)`,
avinashreddych/dadpo-'s ClassifierTrainer) gives `compute_metrics` to `compute_loss_func`,
`callbacks` to `compute_metrics`, and so on: on transformers 5, `callbacks` then receives the
optimizers tuple and the Trainer stops (TypeError). Where the arguments from the eighth on are
names spelled as the 4.45 parameters they filled, they become those keywords (what they are is
in their names, whatever the release); any other such call gets a TODO.
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, walk
from codemods.base import RuleTransformer
from migrate.kernel.findings import Severity

# transformers 4.45's Trainer.__init__, in order (4.46 inserted compute_loss_func at 7)
BEFORE_4_46 = (
    "model",
    "args",
    "data_collator",
    "train_dataset",
    "eval_dataset",
    "tokenizer",
    "model_init",
    "compute_metrics",
    "callbacks",
    "optimizers",
    "preprocess_logits_for_metrics",
)
SHIFTED_FROM = 7
# 4.46 and later, in order: a call forwarding these names was written for them already
# (optimum-habana's GaudiTrainer)
SINCE_4_46 = (
    *BEFORE_4_46[:5],
    "processing_class",
    "model_init",
    "compute_loss_func",
    "compute_metrics",
    "callbacks",
    "optimizers",
    "optimizer_cls_and_kwargs",
    "preprocess_logits_for_metrics",
)
TRAINERS = ("transformers.Trainer", "transformers.trainer.Trainer", "transformers.Seq2SeqTrainer")
# what makes a file that does not use TRL worth parsing for this: the forwarding call names
# them (naming `Trainer` would parse every training script); a file parsed for another reason
# is read whole (FOCUS)
NAMES = ("compute_metrics", "preprocess_logits_for_metrics")
FOCUS = ("Trainer", "Seq2SeqTrainer")


class TrainerPositions(RuleTransformer):
    """The part of RewriteDrift that names the Trainer's arguments given by position."""

    _module: cst.Module  # the pass's tree (RewriteDrift.visit_Module)

    def positional_call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        positional = [a for a in updated.args if a.keyword is None]
        if len(positional) <= SHIFTED_FROM or any(a.star for a in updated.args):
            return updated
        if not self._builds_a_trainer(original):
            return updated
        if all(
            isinstance(a.value, cst.Name) and i < len(SINCE_4_46) and a.value.value == SINCE_4_46[i]
            for i, a in enumerate(positional)
            if i >= SHIFTED_FROM
        ):
            return updated  # the order of 4.46 on, by its names
        if len(positional) > len(BEFORE_4_46) or any(
            not (isinstance(a.value, cst.Name) and a.value.value == BEFORE_4_46[i])
            for i, a in enumerate(positional)
            if i >= SHIFTED_FROM
        ):
            self.todo(
                original,
                "transformers 4.46 put `compute_loss_func` after `model_init` in "
                "`Trainer.__init__`, so the arguments given here by position from the eighth on "
                "land one parameter later than in 4.45 and earlier (`compute_metrics` as "
                "`compute_loss_func`, ...): pass them by keyword",
            )
            return updated
        named = {id(a) for a in positional[SHIFTED_FROM:]}
        args = [
            edits.new_kwarg(a.value.value, a.value.value) if id(a) in named else a  # type: ignore[attr-defined]
            for a in updated.args
        ]
        fresh = {id(new) for new, old in zip(args, updated.args) if id(old) in named}
        shown = ", ".join(BEFORE_4_46[SHIFTED_FROM : len(positional)])
        self.report(
            original,
            "transformers 4.46 put `compute_loss_func` after `model_init` in `Trainer.__init__`, "
            "so arguments given by position from the eighth on land one parameter later than "
            f"in 4.45 and earlier: {shown} are passed by keyword now, as their names say",
            severity=Severity.INFO,
        )
        return updated.with_changes(args=edits.relayout(updated, args, fresh))

    def _builds_a_trainer(self, call: cst.Call) -> bool:
        """A call of transformers' Trainer, or `super().__init__(...)` in a class of the file
        that derives from it (`class ClassifierTrainer(Trainer):`)."""
        if any(q in TRAINERS for q in self.names_from(call.func, "transformers")):
            return True
        if not (
            isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "__init__"
            and isinstance(call.func.value, cst.Call)
            and get_full_name_for_node(call.func.value.func) == "super"
        ):
            return False
        for cls in walk.find_all(self._module, cst.ClassDef):
            if any(c is call for c in walk.find_all(cls, cst.Call)):
                return any(
                    q in TRAINERS
                    for base in cls.bases
                    for q in self.names_from(base.value, "transformers")
                )
        return False

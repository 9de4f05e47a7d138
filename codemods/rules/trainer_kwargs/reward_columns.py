"""TRL109, the columns of preference pairs a script tokenized itself.

TRL <= 0.23's RewardTrainer trained on pairs a script had tokenized from the columns
`input_ids_chosen`, `attention_mask_chosen`, `input_ids_rejected` and `attention_mask_rejected`.
TRL 1.13's reads tokenized pairs from `chosen_ids` and `rejected_ids` (and the 0.24-0.28 names
`chosen_input_ids`/`rejected_input_ids`); finding neither, it tokenizes the `chosen` and
`rejected` text columns again itself (adding an EOS token, without the script's truncation),
or stops on `KeyError: 'chosen'` where the script removed them. So the old key strings of a
module that builds TRL's RewardTrainer are renamed, everywhere in it (the dict that builds a
row, the filters and prints that read one), and the rest said:

- TRL 1.13 reads no attention mask: its collator pads each batch and masks only that padding.
  Ids the script padded itself (`padding="max_length"` in the function that builds the rows)
  would put the pad tokens in front of the model, so that call gets a TODO.
- It drops pairs longer than `max_length` (1024 unless set), which the old trainer never did to
  tokenized pairs.
- A collator of the script's own (`data_collator=`) or a RewardTrainer subclass that reads the
  old keys builds or reads the batches of the old trainer; nothing is renamed and the trainer
  call gets a TODO.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, cast

import libcst as cst

from codemods import edits, walk
from codemods.base import FileState, Identifiers, RuleTransformer
from migrate.kernel.findings import Severity

RENAMED = {"input_ids_chosen": "chosen_ids", "input_ids_rejected": "rejected_ids"}
OLD_MASKS = ("attention_mask_chosen", "attention_mask_rejected")
NOT_PADDING = (False, None, "do_not_pad")  # `padding=` values that leave the ids unpadded
NEW_BATCH = (
    "TRL 1.13's RewardTrainer batches `chosen_ids`/`rejected_ids` columns as `input_ids` and "
    "`attention_mask`, the chosen sequences in the first half of the batch and the rejected in "
    "the second"
)


class RewardColumns(RuleTransformer):
    NAMES: ClassVar[tuple[str, ...]] = ("RewardTrainer",)

    @classmethod
    def wanted(cls, state: FileState, names: Identifiers) -> bool:
        return names.has_any(cls.NAMES) and names.has_any(tuple(RENAMED))

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._rename = False
        self._said = False
        self._blocked: dict[int, str] = {}  # id(trainer call) -> why nothing is renamed
        self._padded: set[int] = set()  # id(`padding=` arg or "padding" dict entry)
        self._keywords: set[int] = set()  # id(`input_ids_chosen=` arg of a dict(...) call)
        self._words: tuple[str, ...] = ()
        self._halves: dict[int, cst.Subscript] = {}  # id -> `batch["input_ids_chosen"]`
        self._batch_keys: set[int] = set()  # ids of the key strings of those
        keys: list[cst.CSTNode] = [s for s in walk.find_all(node, cst.SimpleString) if _old_key(s)]
        calls = walk.find_all(node, cst.Call)
        for call in calls:
            if isinstance(call.func, cst.Name) and call.func.value == "dict":
                for arg in call.args:
                    if arg.keyword is not None and arg.keyword.value in RENAMED:
                        self._keywords.add(id(arg))
                        keys.append(arg.keyword)
        if not keys:
            return  # the old names only in comments, or built by concatenation
        subclasses: dict[str, cst.ClassDef] = {}
        for cls in walk.find_all(node, cst.ClassDef):
            if any(self._reward_trainer(base.value) for base in cls.bases):
                subclasses[cls.name.value] = cls
        trainers = [
            call
            for call in calls
            if self._reward_trainer(call.func)
            or (isinstance(call.func, cst.Name) and call.func.value in subclasses)
        ]
        if not trainers:
            return
        self._words = ("padding", *RENAMED, *sorted(subclasses), "RewardTrainer")
        reading = sorted(
            name
            for name, cls in subclasses.items()
            if any(_old_key(s) for s in walk.find_all(cls, cst.SimpleString))
        )
        for call in trainers:
            collator = edits.kwarg(call, "data_collator")
            if collator is not None and edits.literal(collator.value) is not None:
                self._blocked[id(call)] = (
                    f"`data_collator={edits.code(collator.value).strip()}` builds the batches "
                    "of TRL <= 0.23's RewardTrainer from the `input_ids_chosen`/"
                    f"`input_ids_rejected` columns; {NEW_BATCH}: rename the columns "
                    "`chosen_ids`/`rejected_ids` and drop the collator (the trainer pads and "
                    "masks each batch itself)"
                )
            elif reading:
                self._blocked[id(call)] = (
                    f"`{'`, `'.join(reading)}` reads the batch keys of TRL <= 0.23's "
                    f"RewardTrainer (`input_ids_chosen`, ...); {NEW_BATCH}: read those, then "
                    "rename the columns `chosen_ids`/`rejected_ids`"
                )
        if self._blocked:
            return
        self._rename = True
        self._halves = _batch_reads(node, keys, self.function_of)
        indexes = (cast(cst.Index, sub.slice[0].slice) for sub in self._halves.values())
        self._batch_keys = {id(index.value) for index in indexes}
        # the functions that build rows (a dict with the keys, a key assigned): their padding
        scopes = {self.function_of(k) for k in _building(node, keys)}
        for call in walk.find_all(node, cst.Call):
            pad = edits.kwarg(call, "padding")
            if pad is not None and _pads(pad.value) and self.function_of(call) in scopes:
                self._padded.add(id(pad))
        for entry in walk.find_all(node, cst.DictElement):
            if (
                isinstance(entry.key, cst.SimpleString)
                and entry.key.raw_value == "padding"
                and _pads(entry.value)
                and self.function_of(entry) in scopes
            ):
                self._padded.add(id(entry))

    def focus(self):  # type: ignore[no-untyped-def]
        return self._words

    def leave_SimpleString(
        self, original_node: cst.SimpleString, updated_node: cst.SimpleString
    ) -> cst.SimpleString:
        old = _old_key(original_node)
        if not self._rename or old is None or id(original_node) in self._batch_keys:
            return updated_node  # (a batch read's key goes with its subscript)
        self._say(original_node)
        quote = original_node.quote
        return updated_node.with_changes(
            value=f"{original_node.prefix}{quote}{RENAMED[old]}{quote}"
        )

    def leave_Subscript(
        self, original_node: cst.Subscript, updated_node: cst.Subscript
    ) -> cst.BaseExpression:
        if id(original_node) not in self._halves:
            return updated_node
        old = cast(cst.SimpleString, cast(cst.Index, original_node.slice[0].slice).value).raw_value
        batch = edits.code(original_node.value).strip()
        ids = f'{batch}["input_ids"]'
        half = f"[: len({ids}) // 2]" if old.endswith("chosen") else f"[len({ids}) // 2 :]"
        self.report(
            original_node,
            f"`{batch}` is a batch of the trainer's dataloader: TRL <= 0.23's collator gave it "
            f"`{old}`, TRL 1.13's gives the pairs as `input_ids`, the chosen sequences in the "
            f"first half and the rejected in the second, so this reads `{ids}{half}` (padded "
            "together, to the longest of both)",
            severity=Severity.INFO,
        )
        return cst.parse_expression(ids + half)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        if self._rename and id(original_node) in self._keywords and updated_node.keyword:
            self._say(original_node)
            keyword = updated_node.keyword
            return updated_node.with_changes(
                keyword=keyword.with_changes(value=RENAMED[keyword.value])
            )
        if id(original_node) in self._padded:
            self._pad_todo(original_node, original_node.value)
        return updated_node

    def leave_DictElement(
        self, original_node: cst.DictElement, updated_node: cst.DictElement
    ) -> cst.DictElement:
        if id(original_node) in self._padded:
            self._pad_todo(original_node, original_node.value)
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        why = self._blocked.get(id(original_node))
        if why is not None:
            self.todo(original_node, why)
        return updated_node

    def _say(self, node: cst.CSTNode) -> None:
        if self._said:
            return
        self._said = True
        self.report(
            node,
            "the columns `input_ids_chosen`/`input_ids_rejected` are now `chosen_ids`/"
            "`rejected_ids`: TRL <= 0.23's RewardTrainer read pairs the script tokenized from "
            "the old names, and TRL 1.13's, not finding the new ones, would tokenize the "
            "`chosen`/`rejected` text again itself (or stop on KeyError: 'chosen'). It reads no "
            f"`{OLD_MASKS[0]}`/`{OLD_MASKS[1]}` (it masks the padding it adds) and drops pairs "
            "longer than `max_length` (1024 unless set), which the old trainer did not do to "
            "tokenized pairs",
            severity=Severity.INFO,
        )

    def _pad_todo(self, node: cst.CSTNode, value: cst.BaseExpression) -> None:
        shown = edits.code(value).strip()
        pads = (
            "pads the tokenized pairs"
            if edits.literal(value) == "max_length"
            else "pads texts tokenized together to the longest of them (where this call "
            "tokenizes one text, nothing is padded and this does not apply)"
        )
        self.todo(
            node,
            f"`padding={shown}` {pads}: TRL 1.13's "
            "RewardTrainer reads no attention mask and masks only the padding its collator "
            "adds, so these pad tokens would be read by the model (TRL <= 0.23 masked them "
            f"with `{OLD_MASKS[0]}`/`{OLD_MASKS[1]}`); drop the padding, the trainer pads each "
            "batch itself",
            severity=Severity.WARNING,
        )

    def _reward_trainer(self, node: cst.BaseExpression) -> bool:
        """Whether `node` names TRL's RewardTrainer (and nothing else)."""
        names = self.names_from(node, "trl")
        return bool(names) and all(
            q.startswith("trl.") and q.rpartition(".")[2] == "RewardTrainer" for q in names
        )


def _building(module: cst.Module, keys: list[cst.CSTNode]) -> list[cst.CSTNode]:
    """The `keys` that build a row: a dict's key (`{"input_ids_chosen": ids}`, `dict(
    input_ids_chosen=ids)`) or a key assigned (`row["input_ids_chosen"] = ids`); the others
    read one."""
    ids = {id(k) for k in keys}
    out: list[cst.CSTNode] = [k for k in keys if isinstance(k, cst.Name)]  # dict(...) keywords
    out += [e.key for e in walk.find_all(module, cst.DictElement) if id(e.key) in ids]
    for assign in walk.find_all(module, cst.Assign):
        for target in assign.targets:
            if isinstance(target.target, cst.Subscript):
                out += [
                    s.slice.value
                    for s in target.target.slice
                    if isinstance(s.slice, cst.Index) and id(s.slice.value) in ids
                ]
    return out


def _batch_reads(
    module: cst.Module, keys: list[cst.CSTNode], function_of: Callable[[cst.CSTNode], int | None]
) -> dict[int, cst.Subscript]:
    """`batch["input_ids_chosen"]` where `batch` is the target of a loop over the trainer's
    `get_train_dataloader()`/`get_eval_dataloader()` in the same function (BaleChen/LaGE's
    look at a first batch), by id."""
    batches: set[tuple[int | None, str]] = set()
    for loop in walk.find_all(module, cst.For):
        it = loop.iter
        if (
            isinstance(loop.target, cst.Name)
            and isinstance(it, cst.Call)
            and isinstance(it.func, cst.Attribute)
            and it.func.attr.value in ("get_train_dataloader", "get_eval_dataloader")
        ):
            batches.add((function_of(loop), loop.target.value))
    if not batches:
        return {}
    ids = {id(k) for k in keys}
    out: dict[int, cst.Subscript] = {}
    for sub in walk.find_all(module, cst.Subscript):
        if (
            isinstance(sub.value, cst.Name)
            and (function_of(sub), sub.value.value) in batches
            and len(sub.slice) == 1
            and isinstance(sub.slice[0].slice, cst.Index)
            and id(sub.slice[0].slice.value) in ids
        ):
            out[id(sub)] = sub
    return out


def _old_key(node: cst.SimpleString) -> str | None:
    """The old column `node` spells ("input_ids_chosen"), None for any other string."""
    if node.prefix.lower() not in ("", "u"):
        return None
    value = node.raw_value
    return value if value in RENAMED else None


def _pads(value: cst.BaseExpression) -> bool:
    """A `padding=` value that may pad: anything but False, None or "do_not_pad"."""
    return edits.literal(value) not in NOT_PADDING

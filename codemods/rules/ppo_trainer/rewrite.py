"""TRL104's pass: the file's facts, then `PPOTrainer(...)` calls (call.py), references to the class
and
the trainer variables (references.py) and statements that go with the trainer (here)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, walk
from codemods.rules.ppo_trainer.call import TrainerCall
from codemods.rules.ppo_trainer.references import TrainerReferences
from codemods.rules.ppo_trainer.state import (
    TrainerPass,
)
from migrate.kernel.findings import Severity


class RewritePPOTrainer(TrainerCall, TrainerReferences, TrainerPass):
    NAMES = CLASSES = (*ppo.TRAINER_NAMES, *ppo.TRAINER_HELPERS)

    def target_class(self) -> str:
        return ppo.target_trainer(self.target)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)  # ppo_class.PPOClassPass: the file's facts, target, new name
        self.trainer_vars = self.facts.trainer_vars
        self.param_trainers = self._handed_params(node)
        self.loop_vars = _looped(node, self.facts.trainer_vars)
        self.in_loops = _in_loops(node, self.loop_vars)
        self.loaded, self.peft_models, self.dtypes = _models(node)
        self.assignments: dict[str, cst.Call] = {}  # variable -> the call assigned to it
        self._dropped: set[int] = (
            set()
        )  # `trainer.generate_completions()` statements, and their callees
        # statements that only show the legacy trainer's DataLoader: dropped with a warning
        ids = self.state.identifiers
        showing = (
            _shown_dataloader(node, self.trainer_vars)
            if ids is None or ids.has_any(("dataloader",))
            else []
        )
        for stmt in showing:
            self._dropped.add(id(stmt))
            self._dropped |= {
                id(a) for a in walk.find_all(stmt, cst.Attribute) if a.attr.value == "dataloader"
            }
            shown = " ".join(edits.code(stmt).split())
            self.report(
                stmt,
                f"`{shown[:120]}` only showed the legacy trainer's DataLoader; dropped: "
                f"{self.new_name} has none (it builds its batches inside `train()`)",
                severity=Severity.WARNING,
            )
        table = ppo.mapping()["trainer"]
        self.kwargs, self.positional, self.methods = (
            table["kwargs"],
            table["positional"],
            table["methods"],
        )

    def _handed_params(self, module: cst.Module) -> set[tuple[int | None, str]]:
        """(scope of a function's body, parameter) for the parameters of this file's module-level
        functions that a PPO trainer is handed to, directly or through other such functions
        (Lee-CBG/BAP_Attack_n_Defend: `rlhf_init(cfg, ppo_trainer, tok)` hands it on to
        `lm_generation(trainer, ...)`, which reads `trainer.dataloader` and `trainer.generate`):
        there the parameter is the trainer, and what TRL 1.13's trainer lacks gets its TODO."""
        functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
        if not functions or not self.trainer_vars:
            return set()
        found: set[tuple[int | None, str]] = set()
        calls = [
            c
            for c in walk.find_all(module, cst.Call)
            if isinstance(c.func, cst.Name) and c.func.value in functions
        ]
        for _ in range(4):  # a few hops
            before = len(found)
            for call in calls:
                scope = self.function_of(call)
                func = functions[call.func.value]  # type: ignore[attr-defined]
                if not func.body.body:
                    continue
                body_scope = self.function_of(func.body.body[0])
                params = _params(func)
                for i, arg in enumerate(call.args):
                    if arg.star or not isinstance(arg.value, cst.Name):
                        continue
                    name = arg.value.value
                    if name not in self.trainer_vars and (scope, name) not in found:
                        continue
                    param = arg.keyword.value if arg.keyword else None
                    if param is None and i < len(params):
                        param = params[i]
                    if param in params:
                        found.add((body_scope, param))
            if len(found) == before:
                break
        return {(s, n) for s, n in found if n not in self.trainer_vars}

    # -- `trainer.generate_completions()` on its own line: removed, its TODO stays in its place
    # ---------

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        expr = node.body[0] if len(node.body) == 1 else None
        call = expr.value if isinstance(expr, cst.Expr) else None
        if (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "generate_completions"
            and (get_full_name_for_node(call.func.value) or "") in self.trainer_vars
        ):
            self._dropped.update((id(node), id(call.func)))

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        if not any(id(s) in self._dropped for s in original_node.body):
            return updated_node
        body, rest = _drop_statements(original_node.body, updated_node.body, self._dropped)
        if not body:  # a block needs a statement
            body, rest = [cst.SimpleStatementLine([cst.Pass()], leading_lines=rest)], []
        return updated_node.with_changes(body=body, footer=_merged(rest, updated_node.footer))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not any(id(s) in self._dropped for s in original_node.body):
            return updated_node
        body, rest = _drop_statements(original_node.body, updated_node.body, self._dropped)
        return updated_node.with_changes(body=body, footer=_merged(rest, updated_node.footer))


def _drop_statements(
    original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement], dropped: set[int]
) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
    """The block without the `dropped` statements, whose comments (and TODOs) go on the next
    statement; those of a dropped last statement are returned, for the block's footer."""
    assert len(original) == len(updated)  # this pass adds or removes no other statement
    body: list[cst.BaseStatement] = []
    carry: list[cst.EmptyLine] = []
    for orig, stmt in zip(original, updated):
        if id(orig) in dropped and isinstance(stmt, cst.SimpleStatementLine):
            carry += list(stmt.leading_lines)
            comment = stmt.trailing_whitespace.comment
            if comment is not None:
                carry.append(cst.EmptyLine(comment=comment))
            continue
        if id(orig) in dropped and isinstance(stmt, cst.For):  # a peek at the first batch
            carry += list(stmt.leading_lines)
            continue
        if carry:
            stmt = stmt.with_changes(leading_lines=_merged(carry, edits.leading(stmt)))
            carry = []
        body.append(stmt)
    return body, carry


def _merged(first: Sequence[cst.EmptyLine], then: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """`first` + `then`, a repeated trl-migrate TODO written once."""
    out: list[cst.EmptyLine] = []
    seen: set[str] = set()
    for line in [*first, *then]:
        text = line.comment.value if line.comment is not None else ""
        if text.startswith("# TODO(trl-migrate ") and text in seen:
            continue
        seen.add(text)
        out.append(line)
    return out


def _params(func: cst.FunctionDef) -> list[str]:
    """The names of a function's positional-or-keyword parameters, in order."""
    return [p.name.value for p in (*func.params.posonly_params, *func.params.params)]


def _looped(module: cst.Module, trainer_vars: set[str]) -> set[str]:
    """Trainer variables whose `.step(...)` is called: the legacy loop, rewritten by TRL106."""
    found: set[str] = set()

    class _Find(walk.Visitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "step":
                owner = get_full_name_for_node(func.value) or ""
                if owner in trainer_vars:
                    found.add(owner)

    walk.visit(module, _Find())
    return found


def _in_loops(module: cst.Module, loop_vars: set[str]) -> set[int]:
    """Ids of the `<trainer>.<attr>` nodes inside a `for` loop that calls that trainer's
    `step(...)`: TRL106 rewrites such a loop whole, or leaves it with a TODO of its own."""
    found: set[int] = set()
    for loop in walk.find_all(module, cst.For):
        attrs = [
            a
            for a in walk.find_all(loop, cst.Attribute)
            if (get_full_name_for_node(a.value) or "") in loop_vars
        ]
        if any(a.attr.value == "step" for a in attrs):
            found |= {id(a) for a in attrs}
    # a progress bar's `with` around such a loop (`with tqdm(enumerate(t.dataloader)) as bar:`):
    # TRL106 rewrites the two together
    for bar in walk.find_all(module, cst.With):
        held = ppo.bar_loop(bar)
        if held is not None and any(
            a.attr.value == "step" and (get_full_name_for_node(a.value) or "") in loop_vars
            for a in walk.find_all(held, cst.Attribute)
        ):
            found |= {
                id(a)
                for a in walk.find_all(bar.items[0], cst.Attribute)
                if (get_full_name_for_node(a.value) or "") in loop_vars
            }

    def steps(stmt: cst.CSTNode) -> str | None:
        return next(
            (
                owner
                for a in walk.find_all(stmt, cst.Attribute)
                if a.attr.value == "step"
                and (owner := get_full_name_for_node(a.value) or "") in loop_vars
            ),
            None,
        )

    # a step run once outside a loop: TRL106 rewrites its block from the generation on, or
    # gives the step a TODO of its own
    for block, at in ppo.once_steps(module, steps):
        for stmt in block[: at + 1]:
            found |= {
                id(a)
                for a in walk.find_all(stmt, cst.Attribute)
                if (get_full_name_for_node(a.value) or "") in loop_vars
            }
    return found


def _models(module: cst.Module) -> tuple[dict[str, set[str]], dict[str, str], dict[str, str]]:
    """Names assigned from `X.from_pretrained(...)`: models whose path the trainer can reload,
    each with the code of the paths it was loaded from; and the names assigned a PEFT model
    (`get_peft_model(...)`, `PeftModel.from_pretrained(...)`,
    `AutoPeftModelForCausalLM.from_pretrained(...)`; TRL102 writes the first for a value-head
    model given `peft_config`), whose reference is their own adapter, each with the name of
    the call that made it (the first in the file); and the names a load gave a dtype other than
    float32 (`torch_dtype=torch.bfloat16`, `dtype="float16"`), with that keyword as written."""
    loaded: dict[str, set[str]] = {}
    peft: dict[str, str] = {}
    dtypes: dict[str, str] = {}

    class _Find(walk.Visitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            if isinstance(value, cst.Name) and value.value in peft:
                # `ppo_model = peft_model`: what TRL102 makes of a value-head model wrapped
                # around a PeftModel object (the FLAN-T5 detoxification lab)
                for t in node.targets:
                    if name := get_full_name_for_node(t.target):
                        peft.setdefault(name, peft[value.value])
                return
            if not isinstance(value, cst.Call):
                return
            value = _moved(value)  # `X.from_pretrained(...).to(device)` is that load
            name = get_full_name_for_node(value.func) or ""
            last = name.rpartition(".")[2]
            owner = name.rpartition(".")[0].rpartition(".")[2]
            targets = [n for t in node.targets if (n := get_full_name_for_node(t.target))]
            if isinstance(value.func, cst.Attribute) and value.func.attr.value == "from_pretrained":
                path = edits.code(value.args[0].value).strip() if value.args else "?"
                for target in targets:
                    loaded.setdefault(target, set()).add(path)
                given = next(
                    (a for a in value.args if a.keyword and a.keyword.value in _DTYPE_KEYWORDS),
                    None,
                )
                if given is not None and not _is_float32(given.value):
                    for target in targets:
                        dtypes[target] = edits.arg_text(given)
            if last == "get_peft_model" or (last == "from_pretrained" and "Peft" in owner):
                for target in targets:
                    peft.setdefault(target, name)
            first = value.args[0].value if value.args else None
            if last == "from_pretrained" and isinstance(first, cst.Name) and first.value in peft:
                # a value-head model wrapped around a PeftModel object (the FLAN-T5
                # detoxification lab's `from_pretrained(peft_model, is_trainable=True)`)
                for target in targets:
                    peft.setdefault(target, peft[first.value])

    walk.visit(module, _Find())
    return loaded, peft, dtypes


def _moved(call: cst.Call) -> cst.Call:
    """The call under `.to(device)`, `.cuda()` and `.eval()` (a move that keeps the dtype):
    `AutoModelForCausalLM.from_pretrained(p, torch_dtype=...).to(device)` for that load."""
    while (
        isinstance(call.func, cst.Attribute)
        and call.func.attr.value in ("to", "cuda", "eval")
        and isinstance(call.func.value, cst.Call)
        and not any(
            word in edits.code(a).lower()
            for a in call.args
            for word in ("float", "half", "dtype", "bf16", "fp16")
        )
    ):
        call = call.func.value
    return call


_DTYPE_KEYWORDS = ("torch_dtype", "dtype")


def _is_float32(value: cst.BaseExpression) -> bool:
    """A dtype that is float32 as written (`torch.float32`, `"float32"`, `torch.float`), or
    None (torch's default, float32, as the reload's). `"auto"`, the checkpoint's own dtype
    (bf16 for most), is not."""
    code = edits.code(value).strip().strip("\"'")
    return code.rpartition(".")[2] in ("float32", "float", "None")


def _shown_dataloader(module: cst.Module, trainers: set[str]) -> list[cst.BaseStatement]:
    """Statements that only show a PPO trainer's `dataloader`: `print(...)` of it (or of its
    `len`), a name bound to it (or its `len`) that only such prints read, and a peek at a
    batch, `for batch in trainer.dataloader:` whose body only prints and breaks."""
    blocks = [module.body, *(b.body for b in walk.find_all(module, cst.IndentedBlock))]
    loaders = {f"{t}.dataloader" for t in trainers}
    reads: dict[str, int] = {}
    for node in walk.find_all(module, cst.Name):
        reads[node.value] = reads.get(node.value, 0) + 1

    def mentions(node: cst.CSTNode) -> bool:
        return any(get_full_name_for_node(a) in loaders for a in walk.find_all(node, cst.Attribute))

    def printed(stmt: cst.CSTNode) -> bool:
        return (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, cst.Call)
            and get_full_name_for_node(stmt.body[0].value.func) == "print"
        )

    found: list[cst.BaseStatement] = []
    for block in blocks:
        for stmt in block:
            if printed(stmt) and mentions(stmt):
                found.append(stmt)
            elif isinstance(stmt, cst.For) and mentions(stmt.iter) and stmt.orelse is None:
                inner = list(getattr(stmt.body, "body", []))
                if inner and all(
                    printed(s)
                    or (
                        isinstance(s, cst.SimpleStatementLine)
                        and all(isinstance(x, cst.Break) for x in s.body)
                    )
                    for s in inner
                ):
                    found.append(stmt)
            elif (
                isinstance(stmt, cst.SimpleStatementLine)
                and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Assign)
                and len(stmt.body[0].targets) == 1
                and isinstance(stmt.body[0].targets[0].target, cst.Name)
                and mentions(stmt.body[0].value)
            ):
                name = stmt.body[0].targets[0].target.value
                users = [s for s in block if s is not stmt and name in edits.names(s)]
                # every read of the name is in this block's prints (reads counts the binding)
                if (
                    users
                    and all(printed(s) for s in users)
                    and reads[name]
                    == 1
                    + sum(1 for s in users for n in walk.find_all(s, cst.Name) if n.value == name)
                ):
                    found.append(stmt)
                    found += [s for s in users if s not in found]
    return found

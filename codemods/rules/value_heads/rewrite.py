"""TRL102's first pass: loading calls, wrappers of loaded models, `.pretrained_model` and the other
uses of the value-head classes."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import edits, inline, quantization, symbols, walk
from codemods.base import RuleTransformer
from codemods.rules.value_heads import variables
from codemods.rules.value_heads.tables import (
    ADAPTER_PATH,
    CAUSAL,
    DROPPED_KWARGS,
    ENCODER_DECODER_BRANCH_TODO,
    ENCODER_DECODER_TODO,
    KBIT_KWARGS,
    MODEL_FACTORIES,
    PEFT_LOAD_KWARGS,
    QUANT_KWARGS,
    REPLACEMENT,
    REWARD_ADAPTER,
    REWARD_ADAPTER_KWARGS,
    SEQ2SEQ,
    WRAPPER_ONLY,
)
from migrate.kernel.findings import Severity


def _ending_like(args: list[cst.Arg], original: cst.Call) -> list[cst.Arg]:
    """The new last argument ends as the old last one did: its comma carries a multi-line
    call's final newline, so `)` stays on its own line."""
    if args and original.args:
        args[-1] = args[-1].with_changes(comma=original.args[-1].comma)
    return args


# str methods that return several strings: names unpacked from them are not models
STRING_SPLITS = frozenset({"split", "rsplit", "partition", "rpartition", "splitlines"})
# functions that hand back the model they were given, with its tokenizer
MODEL_AND_TOKENIZER = frozenset({"setup_chat_format"})


class RewriteValueHeads(RuleTransformer):
    NAMES = ("ValueHead", "PreTrainedModelWrapper", "SUPPORTED_ARCHITECTURES")

    def __init__(self, context, state) -> None:  # type: ignore[no-untyped-def]
        super().__init__(context, state)
        table = symbols.load()
        self.paths = {p: s.name for p, s in table.by_fate(symbols.VALUE_HEAD).items()}
        self.model_vars: set[str] = set()  # names bound to value-head models in this file
        self.loaded_vars: set[str] = set()  # names bound to already-loaded transformers/peft models
        self.other_vars: set[str] = set()  # names bound to anything else (a path, say) too
        # (function, name) unpacked from a call's result (`tok, model = load(...)`): a model or
        # a path; the function as `function_of` numbers it (0 at module level)
        self.unpacked_vars: set[tuple[int | None, str]] = set()
        self._self_wraps: set[int] = set()  # id(statement): `X = VH(X)`, X a loaded model
        # the rewritten `X = X` lines that have comments, to drop (their blocks keep the
        # comments): held by id and node, as a line built in the walk may be freed and its id
        # taken by another node before its block is left
        self._commented_wraps: dict[int, cst.CSTNode] = {}
        self._backbone_refs: set[int] = set()  # id(`X.pretrained_model`) that X would hold itself
        # the same through a name, `b = X.pretrained_model` -> whether the lines setting `b` onto
        # X can all go; and those lines, with `X.model = X.pretrained_model` ones (removed)
        self._alias_copies: dict[int, bool] = {}
        self._self_copies: dict[int, str] = {}  # id(line) -> the model it copies onto itself
        # id(line) -> the models whose value heads are all the line touches (prints, moves or
        # copies); id(`X.v_head`) of those lines
        self._head_lines: dict[int, tuple[frozenset[str], str]] = {}
        self._head_refs: set[int] = set()
        self._line: cst.SimpleStatementLine | None = None  # the simple statement being walked
        self._handled: set[int] = set()
        self._guards: dict[
            int, cst.BaseStatement
        ] = {}  # id(statement) -> `if cfg is not None: ...` after it
        self._after: dict[
            int, cst.BaseStatement
        ] = {}  # id(statement) -> `X.compute_reward_score = ...`
        self._adapter_helper = False  # the RewardAdapter definition is to be written in
        self._annotations = 0  # depth of annotations (`-> X`, `m: X`) the walk is inside

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.facts = variables.collect(self, node, self._vh_class, tuple(REPLACEMENT))
        self._alias_copies, self._self_copies = _aliased_self_copies(node)
        self._forwards = _forwarded_attributes(node)
        self._head_lines, self._head_refs = _value_head_lines(node)
        self._helper_written = inline.defines(node, REWARD_ADAPTER)
        self._adapter_name_taken = not self._helper_written and REWARD_ADAPTER in edits.names(node)
        self._kept = self._handed_to_value_head_readers(node)
        self._module = node
        self._bnb_names: dict[str, str] | None = None  # name -> ON / OFF / MAYBE, when asked
        # name -> whether each load bound to it quantizes in 8/4 bits (ON / OFF / MAYBE), through
        # what hands back the model it is given (`get_peft_model(model, ...)`), in the order of
        # the file, with the block (`_blocks`) of the statement that bound it
        self._load_states: dict[str, list[tuple[int, set[str]]]] = {}
        self._blocks: list[int] = [0]  # id() of the blocks the walk is in (0: the module's)

    def _handed_to_value_head_readers(self, module: cst.Module) -> dict[int, tuple[str, str]]:
        """id(value-head construction) -> (its variable, the callee) for a model handed to code
        of the repo that reads a value head (`RunFacts.vh_readers`: a repo's own PPO
        trainer in another file of the run). That code needs the value head, which TRL 1.13
        does not have: the construction is left as it is, with a TODO, not quietly replaced."""
        handed = self.handed_to(module, self.state.facts.vh_readers)
        if not handed:
            return {}
        out: dict[int, tuple[str, str]] = {}
        for assign in walk.find_all(module, cst.Assign):
            value = assign.value
            while (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in MODEL_CHAINS
            ):
                value = value.func.value
            if not isinstance(value, cst.Call) or self._construction(value) is None:
                continue
            scope = self.function_of(assign)
            for target in assign.targets:
                if not isinstance(target.target, cst.Name):
                    continue
                callee = handed.get((scope, target.target.value))
                if callee is not None:
                    out[id(value)] = (target.target.value, callee)
        return out

    # -- which class does a node name? -----------------------------------------------------------
    def _vh_class(self, node: cst.CSTNode) -> str | None:
        for qname in self.names_from(node, "trl"):
            if qname in self.paths:
                return self.paths[qname]
        return None

    def _construction(self, call: cst.Call) -> tuple[str, cst.BaseExpression] | None:
        """(class name, class node) when `call` is `X.from_pretrained(...)` or `X(...)`."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained":
            cls = self._vh_class(func.value)
            if cls in REPLACEMENT:
                return cls, func.value
            if id(call) in self.facts.calls:  # `trl_model_class.from_pretrained(...)`
                return self.facts.calls[id(call)], func.value
        cls = self._vh_class(func)
        if cls in REPLACEMENT:
            return cls, func
        return None

    def _is_loaded_model(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            func = expr.func
            name = (
                func.attr.value
                if isinstance(func, cst.Attribute)
                else get_full_name_for_node(func) or ""
            )
            return name.split(".")[-1] in MODEL_FACTORIES
        return (get_full_name_for_node(expr) or "") in self.loaded_vars

    # -- imports (rewritten by the second pass, once uses are known) ------------------------------
    # -- assignments: remember which names hold models ------------------------------------------
    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        value = original_node.value
        while (  # `VH.from_pretrained(...).to(device)` still holds the value-head model
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in MODEL_CHAINS
        ):
            value = value.func.value
        is_vh = isinstance(value, cst.Call) and self._construction(value) is not None
        for target in original_node.targets:
            if isinstance(target.target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call):
                func = value.func
                called = (get_full_name_for_node(func) or "").rpartition(".")[2]
                elements = target.target.elements
                if called in MODEL_AND_TOKENIZER and elements:  # (model, tokenizer) back
                    first = get_full_name_for_node(elements[0].value)
                    if first is not None:
                        self.loaded_vars.add(first)
                elif not (isinstance(func, cst.Attribute) and func.attr.value in STRING_SPLITS):
                    for element in target.target.elements:
                        unpacked = get_full_name_for_node(element.value)
                        if unpacked is not None:
                            self.unpacked_vars.add((self.function_of(original_node), unpacked))
                continue
            name = get_full_name_for_node(target.target)
            if name is None:
                continue
            if is_vh and id(value) in self._kept:
                continue  # left as it was: its attributes too
            if is_vh:
                self.model_vars.add(name)
            elif self._is_loaded_model(value):
                self.loaded_vars.add(name)
                state = self._load_state(value)
                self._load_states.setdefault(name, []).append((self._blocks[-1], state))
            else:
                self.other_vars.add(name)
        return updated_node

    def _states_of(self, name: str) -> set[str]:
        """What the loads bound to `name` above give: from the last of them that is a statement
        of the block the walk is in (the one a read here sees, unless a nested block below it
        binds the name again) on, else all of them (an `if` and its `else` may each load it)."""
        bound = self._load_states.get(name, [])
        here = [i for i, (block, _) in enumerate(bound) if block == self._blocks[-1]]
        return set().union(*(state for _, state in bound[here[-1] if here else 0 :]))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(id(node))

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._blocks.append(id(node))

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        self._blocks.pop()
        return updated_node

    def _load_state(self, call: cst.BaseExpression) -> set[str]:
        """Whether the model a loading call gives is quantized in 8/4 bits: its own flags for a
        `from_pretrained` (of a path), the state of the model it is handed for the calls that
        give back that model (`get_peft_model(model, ...)`, `PeftModel.from_pretrained(model,
        ...)`); OFF for the rest."""
        if not isinstance(call, cst.Call):
            return {quantization.OFF}
        first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
        given = get_full_name_for_node(first) if first is not None else None
        if given in self._load_states:
            return self._states_of(given)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "from_pretrained":
            if self._bnb_names is None:
                self._bnb_names = quantization.config_names(self._module)
            return {quantization.load_state(call, self._bnb_names)}
        return {quantization.OFF}

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._line = node

    def _may_hold_wrapper_keys(self, value: cst.BaseExpression) -> bool:
        """False only for a name bound once to a dict literal of none of WRAPPER_ONLY's keys,
        with no `name[...] = ...` elsewhere."""
        name = get_full_name_for_node(value)
        if name is None or not isinstance(value, cst.Name):
            return True
        literal = self.facts.dicts.get(name)
        if literal is None or name in self.facts.dict_writes:
            return True
        keys = {edits.literal(e.key) for e in literal.elements if isinstance(e, cst.DictElement)}
        return bool(keys & set(WRAPPER_ONLY)) or any(
            not isinstance(e, cst.DictElement) for e in literal.elements
        )

    def _statement_assigns(self, call: cst.Call, bound: str | None) -> int:
        """id of the line when it is just `bound = call`, else 0."""
        line = self._line
        if (
            bound is None
            or line is None
            or len(line.body) != 1
            or not isinstance(line.body[0], cst.Assign)
            or line.body[0].value is not call
            or len(line.body[0].targets) != 1
        ):
            return 0
        target = get_full_name_for_node(line.body[0].targets[0].target)
        return id(line) if target == bound else 0

    def visit_Assign(self, node: cst.Assign) -> None:
        # `logits, _, values = model(**inputs)`: the wrapper's forward gave (logits, loss, value)
        value = node.value
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and value.func.value in self.model_vars
            and any(
                isinstance(t.target, (cst.Tuple, cst.List)) and len(t.target.elements) == 3
                for t in node.targets
            )
        ):
            self.todo(
                node,
                f"`{value.func.value}(...)` of the value-head model gave (logits, loss, values); "
                f"the plain model gives a ModelOutput (`.logits`) and no values: take "
                f"`{value.func.value}(...).logits` here, and drop what read the values",
            )
        # `X.backbone = X.pretrained_model`: X is that model itself in TRL 1.13.
        value = node.value
        if _bare_backbone(value):
            owner = get_full_name_for_node(value.value)  # type: ignore[attr-defined]
            for target in node.targets:
                if _rooted_at(target.target, owner):
                    self._backbone_refs.add(id(value))
                    self._copy_line(owner)

    def visit_Call(self, node: cst.Call) -> None:
        found = self._construction(node)
        if found is not None:
            self._handled.add(id(found[1]))
        # `setattr(X, name, getattr(X.pretrained_model, name))`: copies from X to X.
        if get_full_name_for_node(node.func) == "setattr" and node.args:
            owner = get_full_name_for_node(node.args[0].value)
            for inner in walk.find_all(node, cst.Attribute):
                if _bare_backbone(inner) and get_full_name_for_node(inner.value) == owner:
                    self._backbone_refs.add(id(inner))
                    line = self._line
                    if (
                        line is not None
                        and len(line.body) == 1
                        and isinstance(line.body[0], cst.Expr)
                        and line.body[0].value is node
                    ):
                        self._copy_line(owner)

    def _copy_line(self, owner: str | None) -> None:
        """The line being walked copies `owner`'s inner model onto `owner`: remove it (when it
        is one statement of its own and `owner` is a value-head model of this file)."""
        line = self._line
        if line is not None and len(line.body) == 1 and owner in self.model_vars:
            self._self_copies[id(line)] = owner

    def _head_line_goes(self, node: cst.Attribute) -> bool:
        """`node` (`X.v_head`) is in a line that touches only value heads of models this file
        makes plain: the line is removed, so `node` needs no TODO."""
        line = self._line
        return (
            id(node) in self._head_refs
            and line is not None
            and self._head_lines.get(id(line), (frozenset({""}), ""))[0] <= self.model_vars
        )

    # -- calls: X.from_pretrained(...) and X(model) ------------------------------------------------

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        found = self._construction(original_node)
        if found is None:
            self._attribute_probe(original_node)
            return updated_node
        cls, cls_node = found
        handed = self._kept.get(id(original_node))
        if handed is not None:
            var, callee = handed
            self.todo(
                original_node,
                f"`{var}` is handed to `{callee}`, code of this repo that reads the value head "
                f"(`v_head` or `pretrained_model`): TRL 1.13 has no `{cls}`, and a plain model "
                "would break that code, so this is left for you: port that code to TRL 1.13's "
                "RLOOTrainer or GRPOTrainer (no critic), or keep a value head of your own",
            )
            return updated_node
        given = next((a for a in original_node.args if a.keyword is None and not a.star), None)
        source = get_full_name_for_node(given.value) if given is not None else None
        via_var = (
            id(original_node) in self.facts.calls
        )  # its class variable carries the seq2seq TODO
        # `AutoModelForCausalLMWithValueHead(model)`: the wrapper's own constructor, which only
        # ever took a model object (from_pretrained takes a path or a model)
        constructed = not via_var and not (
            isinstance(original_node.func, cst.Attribute)
            and original_node.func.attr.value == "from_pretrained"
        )
        if (
            not constructed
            and source is not None
            and (self.function_of(original_node), source) in self.unpacked_vars
            and source not in self.loaded_vars | self.other_vars
        ):
            self.todo(
                original_node,
                f"`{source}` comes out of a call that returns several values, so whether it is a "
                "loaded model or a path is known only at run time: if a model, TRL 1.13 uses it "
                f"as it is (drop this wrapper; a `peft_config` goes to `peft.get_peft_model("
                f"{source}, ...)`); if a path, load `{REPLACEMENT[cls]}.from_pretrained({source})`",
            )
            return updated_node
        if cls == SEQ2SEQ and not via_var:
            self.todo(original_node, ENCODER_DECODER_TODO, severity=Severity.WARNING)
        kept: list[cst.Arg] = []
        peft_arg = peft_orig = None
        adapter: list[tuple[cst.Arg, cst.Arg]] = []  # reward_adapter=, reward_adapter_name=
        quant: list[tuple[cst.Arg, cst.Arg]] = []  # (original for positions, updated)
        kbit: list[tuple[cst.Arg, cst.Arg]] = []  # the 8/4-bit preparation's own arguments
        peft_load: list[cst.Arg] = []  # is_trainable=: read only when loading from a path
        own_todo: list[cst.Arg] = []  # `**kw` that may hold peft_config: a TODO of its own
        for orig, arg in zip(original_node.args, updated_node.args):
            key = arg.keyword.value if arg.keyword is not None else None
            if key in DROPPED_KWARGS:
                self.report(
                    orig,
                    f"`{key}` configured the value head, which TRL 1.13 does not have; dropped",
                    severity=Severity.INFO,
                )
            elif key in PEFT_LOAD_KWARGS:
                peft_load.append(arg)
            elif arg.star == "**" and self._may_hold_wrapper_keys(arg.value):
                kept.append(arg)
                own_todo.append(arg)
                self.todo(
                    original_node,
                    f"`**{edits.code(arg.value).strip()}` may hold arguments only the value-head "
                    f"wrapper took ({', '.join(WRAPPER_ONLY)}); {REPLACEMENT[cls]}.from_pretrained "
                    "rejects them: move peft_config to peft.get_peft_model, 8/4-bit flags to "
                    "quantization_config=BitsAndBytesConfig(...), drop the rest",
                )
            elif key in REWARD_ADAPTER_KWARGS:
                adapter.append((orig, arg))
            elif key == "peft_config":
                peft_arg, peft_orig = arg, orig
            elif key in KBIT_KWARGS:
                kbit.append((orig, arg))
            elif key in QUANT_KWARGS and edits.kwarg(original_node, "quantization_config") is None:
                if not quant:
                    kept.append(
                        arg
                    )  # placeholder: becomes quantization_config=... in the same place
                quant.append((orig, arg))
            else:
                kept.append(arg)
        first = next(
            (
                a
                for a in kept
                if a.keyword is None
                or (constructed and a.keyword.value == "pretrained_model" and not a.star)
            ),
            None,
        )
        wraps_model = first is not None and (constructed or self._is_loaded_model(first.value))
        bound = get_full_name_for_node(first.value) if first is not None else None
        if wraps_model and not constructed and bound in self.other_vars:
            self.todo(
                original_node,
                f"`{bound}` holds a loaded model in one place and something else (a path?) in "
                f"another: where it is a path, load `{REPLACEMENT[cls]}.from_pretrained"
                f"({bound})`; where it is a model, it needs no wrapper (drop this call)",
            )
            return updated_node
        if not (wraps_model and first is not None):
            for arg in peft_load:
                self.todo(
                    original_node,
                    f"`{edits.arg_text(arg)}` was dropped: the wrapper loaded a "
                    "PEFT adapter saved at this path as trainable; load it with "
                    "`peft.AutoPeftModelForCausalLM.from_pretrained(path, is_trainable=True)` "
                    "(transformers loads an adapter frozen), or drop it for a plain model",
                )
        if wraps_model and first is not None:
            # Handed a model, every release's wrapper used it as it was: the loading arguments
            # (and is_trainable, the 8/4-bit flags) went unread (modeling_base.py from_pretrained,
            # the `supported_pretrained_model_architectures` branch); only the 8/4-bit
            # preparation's own ones ran, on a quantized model given a peft_config.
            ignored = [
                a
                for a in kept
                if a is not first
                and not (quant and a is quant[0][1])
                and not any(a is t for t in own_todo)
            ]
            ignored += [*(q for _, q in quant), *peft_load]
            if peft_arg is None:  # the preparation ran only before adding a peft_config adapter
                ignored += [a for _, a in kbit]
                kbit = []
            if ignored:
                self.report(
                    original_node,
                    f"`{', '.join(edits.arg_text(a) for a in ignored)}` dropped: "
                    "handed a loaded model, the value-head wrapper used it as it was and read "
                    "none of these (they apply to a load from a path), in every TRL release",
                    severity=Severity.INFO,
                )
            if kbit:
                self.todo(
                    original_node,
                    "this wraps an already-loaded model; move these arguments to where it is "
                    "loaded: " + ", ".join(edits.arg_text(a) for _, a in kbit),
                )
            kbit = []
            result: cst.BaseExpression = first.value
            line = self._statement_assigns(original_node, bound)
            removed = bool(line)
            if removed:
                self._self_wraps.add(line)
            self.report(
                original_node,
                f"`{cls}` wrapped an already-loaded model; TRL 1.13 uses the model itself"
                + (
                    f" (`{bound} = {bound}` was all that was left: the line is removed)"
                    if removed
                    else ""
                ),
            )
        else:
            if quant:
                placeholder = quant[0][1]
                new_arg, quantized = self._quantization_arg(quant)
                placed: list[cst.Arg] = []
                for a in kept:
                    if a is not placeholder:
                        placed.append(a)
                    elif new_arg is not None:  # None: every flag was False, and goes
                        placed.append(new_arg)
                kept = placed
            if via_var:  # the variable's own assignment now holds the plain class
                func = updated_node.func
                self.report(
                    original_node,
                    f"`{cls}` holds plain transformers classes now; `{cls}.from_pretrained` "
                    "loads the model without a value head",
                )
            else:
                func = (
                    updated_node.func.with_changes(value=self._replacement(cls, cls_node))
                    if isinstance(updated_node.func, cst.Attribute)
                    and updated_node.func.attr.value == "from_pretrained"
                    else cst.Attribute(
                        value=self._replacement(cls, cls_node), attr=cst.Name("from_pretrained")
                    )
                )
                self.report(
                    original_node,
                    f"`{cls}` was removed in TRL 1.13; loading `{REPLACEMENT[cls]}` instead "
                    "(a value head saved with the checkpoint, `v_head.*`, is not loaded)",
                )
            result = updated_node.with_changes(func=func, args=_ending_like(kept, updated_node))
        if adapter:
            self._reward_adapter(original_node, adapter, peft_arg, wraps_model, cls)
        if not quant or wraps_model:
            quantized = "off"
        # quantized in the load's own `quantization_config=`: legacy PPO ran no 8/4-bit
        # preparation for it (only for the flags), but RLOO/GRPO cast the adapter all the same
        cast = quantized
        if not quant and not wraps_model:
            given = edits.kwarg(original_node, "quantization_config")
            if given is not None:
                if self._bnb_names is None:
                    self._bnb_names = quantization.config_names(self._module)
                cast = quantization.config_state(given.value, self._bnb_names)
        peft_on = peft_arg is not None and variables.peft_move(original_node, self.facts) != (
            variables.DROP
        )
        prepare = self._kbit_preparation(original_node, kbit, quantized if peft_on else "off")
        if peft_arg is not None and peft_orig is not None:
            result = self._move_peft(original_node, result, peft_arg, peft_orig, prepare)
        loaded = self._states_of(bound) if wraps_model and bound else set()
        if not peft_on and loaded - {quantization.OFF}:
            # handed a model that was loaded in 8/4 bits (its adapter added before the wrapper):
            # RLOO/GRPO read the quantization off the model itself
            said = (
                f"`{bound}` is loaded in 8/4 bits above: "
                if loaded == {quantization.ON}
                else f"`{bound}` may be loaded in 8/4 bits above (a flag read at run time, or "
                "one load of several): where it is, "
            )
            self.report(
                original_node,
                said + "RLOOTrainer and GRPOTrainer cast the trainable parameters of an 8/4-bit "
                "model (the adapter's) to bf16 (the QLoRA recipe: trl/trainer/rloo_trainer.py, "
                "grpo_trainer.py); the value-head model's PPO trained the adapter in fp32",
                severity=Severity.WARNING,
            )
        if peft_on and cast != "off":
            given = edits.kwarg(original_node, "quantization_config")
            self.report(
                original_node,
                (
                    f"if `{edits.code(given.value).strip()}` quantizes the model in 8/4 bits: "
                    if given is not None and cast == quantization.MAYBE
                    else ""
                )
                + "RLOOTrainer and GRPOTrainer cast the trainable parameters of an 8/4-bit model "
                "(the adapter's) to bf16 (the QLoRA recipe: trl/trainer/rloo_trainer.py, "
                "grpo_trainer.py); the value-head model's PPO trained the adapter in fp32",
                severity=Severity.WARNING,
            )
        return result

    def _attribute_probe(self, call: cst.Call) -> None:
        """`hasattr(model, "pretrained_model")` (or `"v_head"`, or `getattr` with a default) of
        a value-head model: True, or the wrapper's attribute, before; False, or the default, on
        the plain model TRL 1.13 uses, so the code it decides changes course. A TODO, not a
        rewrite: the name may hold other models where the check was written for them."""
        if not isinstance(call.func, cst.Name) or len(call.args) < 2:
            return
        func = call.func.value
        if func not in ("hasattr", "getattr"):
            return
        owner, attr = call.args[0], call.args[1]
        name = get_full_name_for_node(owner.value)
        probed = edits.literal(attr.value)
        if (
            owner.keyword is not None
            or name not in self.model_vars
            or probed not in ("pretrained_model", "v_head")
        ):
            return
        was = "True" if func == "hasattr" else f"`{name}.{probed}`"
        now = "False" if func == "hasattr" else "its default (or an AttributeError)"
        self.todo(
            call,
            f"`{edits.code(call).strip()}` gave {was} for the value-head model; `{name}` is a "
            f"plain model in TRL 1.13, which has no `{probed}`, so it gives {now}: the code it "
            "decides now takes the other way; drop the check, keeping the way the value-head "
            "model took if that is what you want",
            severity=Severity.WARNING,
        )

    def _kbit_preparation(
        self, original: cst.Call, kbit: list[tuple[cst.Arg, cst.Arg]], quantized: str
    ) -> list[cst.Arg] | None:
        """The arguments of `prepare_model_for_kbit_training(model, ...)` when the wrapper ran it
        (`quantized` "on": a literal 8/4-bit flag and an adapter), else None; the wrapper's
        preparation arguments are reported either way."""
        args: list[cst.Arg] = []
        for orig, arg in kbit:
            key = arg.keyword.value if arg.keyword is not None else ""
            if key == "layer_norm_names":
                self.report(
                    orig,
                    "`layer_norm_names` was an argument of old peft's 8-bit preparation; "
                    "`prepare_model_for_kbit_training` takes no list (it casts every weight that "
                    "is not quantized to fp32) and from_pretrained rejects it: dropped",
                    severity=Severity.INFO,
                )
            elif quantized == "on":
                args.append(
                    arg.with_changes(
                        comma=cst.MaybeSentinel.DEFAULT,
                        whitespace_after_arg=cst.SimpleWhitespace(""),
                    )
                )
            elif quantized == "off":
                self.report(
                    orig,
                    f"`{key}` went to peft's 8/4-bit preparation, which the value-head model "
                    "ran only on an 8/4-bit model given a `peft_config`; it did nothing here: "
                    "dropped",
                    severity=Severity.INFO,
                )
        if quantized == "maybe":
            shown = "".join(
                f", {edits.arg_text(a)}"
                for _, a in kbit
                if a.keyword is not None and a.keyword.value != "layer_norm_names"
            )
            self.todo(
                original,
                "where the 8/4-bit flag is true, the value-head model ran "
                f"`peft.prepare_model_for_kbit_training(model{shown})` before adding the "
                "adapter (weights that are not quantized to fp32, input gradients for "
                "gradient checkpointing): call it there, before `get_peft_model`",
            )
        if quantized != "on":
            return None
        AddImportsVisitor.add_needed_import(self.context, "peft", "prepare_model_for_kbit_training")
        return args

    def _reward_adapter(
        self,
        original: cst.Call,
        adapter: list[tuple[cst.Arg, cst.Arg]],
        peft_arg: cst.Arg | None,
        wraps_model: bool,
        cls: str,
    ) -> None:
        """`X = VH.from_pretrained(..., peft_config=cfg, reward_adapter=R)`: X, now a PeftModel,
        gets the reward adapter back as `X.compute_reward_score`, a RewardAdapter written into
        the file. Anything less certain (no peft_config the rewrite moves, a model wrapped after
        loading, a seq2seq policy, not a plain `X = ...` line) keeps a TODO."""
        given = {a.keyword.value: a for _, a in adapter if a.keyword is not None}
        shown = ", ".join(edits.arg_text(a) for _, a in adapter)
        placed = self.facts.statements.get(id(original))
        if (
            "reward_adapter" not in given
            or peft_arg is None
            or variables.peft_move(original, self.facts) != variables.WRAP
            or wraps_model
            or cls != CAUSAL
            or placed is None
            or placed[1] in self._after
            or self._adapter_name_taken
        ):
            self.todo(
                original,
                f"`{shown}` was dropped: TRL 1.13 has no multi-adapter reward; pass a reward "
                "model or a reward function to the trainer's reward_funcs",
            )
            return
        target, stmt = placed
        args = [target, edits.code(given["reward_adapter"].value).strip()]
        if "reward_adapter_name" in given:
            args.append("adapter_name=" + edits.code(given["reward_adapter_name"].value).strip())
        self._after[stmt] = cst.parse_statement(
            f"{target}.compute_reward_score = {REWARD_ADAPTER}({', '.join(args)})\n"
        )
        self._adapter_helper = True
        self.report(
            adapter[0][0],
            f"`{shown}`: TRL 1.13 has no multi-adapter reward, so `{target}.compute_reward_score` "
            f"is now a `{REWARD_ADAPTER}` (written into this file) that loads the adapter frozen "
            "beside the policy's and scores with it as the value-head model did; it leaves the "
            "model in the train/eval mode it found (the value-head model left it in eval)",
            severity=Severity.WARNING,
        )

    def _move_peft(
        self,
        original: cst.Call,
        loaded: cst.BaseExpression,
        peft_arg: cst.Arg,
        peft_orig: cst.Arg,
        prepare: list[cst.Arg] | None = None,
    ) -> cst.BaseExpression:
        """`peft_config=cfg` -> `get_peft_model(loaded, cfg)`; a cfg the file also sets to None is
        applied by an `if cfg is not None:` statement after the assignment (the value head took
        None)."""
        move = variables.peft_move(original, self.facts)
        cfg = edits.code(peft_arg.value).strip()
        value = peft_orig.value
        bound = self.referents(value) if isinstance(value, cst.Name) else set()
        if move == variables.DROP or (bound and bound <= self.facts.none_targets):
            self.report(
                peft_orig,
                "`peft_config=None` dropped: the plain model loads without adapters"
                if move == variables.DROP
                else f"`peft_config={cfg}` dropped: `{cfg}` is None here (every assignment it may "
                "come from sets None), so the plain model loads without adapters",
                severity=Severity.INFO,
            )
            return loaded
        AddImportsVisitor.add_needed_import(self.context, "peft", "get_peft_model")
        if prepare is not None:
            self.report(
                original,
                "the value-head model ran `peft.prepare_model_for_kbit_training` on this 8/4-bit "
                "model before adding the adapter (weights that are not quantized to fp32, input "
                "gradients for gradient checkpointing); written out, with the arguments it was "
                "given",
                severity=Severity.INFO,
            )
        if move == variables.GUARD:
            target, stmt = self.facts.statements[id(original)]
            prepared = target
            if prepare is not None:
                extra = "".join(f", {edits.code(a).strip()}" for a in prepare)
                prepared = f"prepare_model_for_kbit_training({target}{extra})"
            self._guards[stmt] = cst.parse_statement(
                f"if {cfg} is not None:\n    {target} = get_peft_model({prepared}, {cfg})\n"
            )
            self.report(
                peft_orig,
                f"`peft_config` moved to `peft.get_peft_model`, applied when `{cfg}` is not None "
                "(TRL 1.13 trainers also take `peft_config=`)",
                severity=Severity.WARNING,
            )
            return loaded
        if move == variables.UNSURE:
            self.todo(
                original,
                f"`get_peft_model` fails when `{cfg}` is None (the value head loaded without "
                "adapters then): apply it only to a real PEFT config",
            )
        self.report(
            peft_orig,
            "`peft_config` moved to `peft.get_peft_model` (TRL 1.13 trainers also take "
            "`peft_config=`)",
            severity=Severity.WARNING,
        )
        if prepare is not None:
            loaded = cst.Call(
                func=cst.Name("prepare_model_for_kbit_training"), args=[cst.Arg(loaded), *prepare]
            )
        return cst.Call(
            func=cst.Name("get_peft_model"),
            args=[
                cst.Arg(loaded),
                peft_arg.with_changes(
                    keyword=None, equal=cst.MaybeSentinel.DEFAULT, comma=cst.MaybeSentinel.DEFAULT
                ),
            ],
        )

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ):  # type: ignore[no-untyped-def]
        # only a value-head model of this file (another object's `pretrained_model` is its own)
        if self._self_copies.get(id(original_node)) in self.model_vars:
            shown = " ".join(edits.code(original_node.body[0]).split())
            self.report(
                original_node,
                f"`{shown}` made the value-head wrapper look like the model inside it "
                "(`pretrained_model`); in TRL 1.13 the model is that model, so the line would "
                "only set the model onto itself (a module that holds itself: `.to()` then "
                "recurses forever): removed",
                severity=Severity.WARNING,
            )
            # its block drops it, keeping its comments, and holds a `pass` if nothing is left
            self._commented_wraps[id(updated_node)] = updated_node
            return updated_node
        heads, did = self._head_lines.get(id(original_node), (None, ""))
        if heads is not None and heads <= self.model_vars:
            shown = " ".join(edits.code(original_node.body[0]).split())
            self.report(
                original_node,
                f"`{shown}` only {did}, which TRL 1.13's plain model does not have (GRPO/RLOO "
                "need no critic): removed",
                severity=Severity.INFO,
            )
            self._commented_wraps[id(updated_node)] = updated_node  # its block keeps the comments
            return updated_node
        owner = self._forwards.get(id(original_node))
        if owner is not None and owner in self.model_vars:
            shown = " ".join(edits.code(original_node.body[0]).split())
            self.report(
                original_node,
                f"`{shown}` made the value-head wrapper pass on what the model inside it has; in "
                f"TRL 1.13 `{owner}` is that model, so the line would only set the attribute to "
                "itself: removed",
                severity=Severity.INFO,
            )
            self._commented_wraps[id(updated_node)] = updated_node  # its block keeps the comments
            return updated_node
        if id(original_node) in self._self_wraps:  # `X = X` is all that was left
            if not _has_comments(original_node):
                return cst.RemovalSentinel.REMOVE
            self._commented_wraps[id(updated_node)] = updated_node  # its block keeps the comments
            return updated_node
        after = [
            s
            for s in (
                self._guards.pop(id(original_node), None),
                self._after.pop(id(original_node), None),
            )
            if s is not None
        ]
        if not after:
            return updated_node
        return cst.FlattenSentinel([updated_node, *after])

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        self._blocks.pop()  # pushed by visit_IndentedBlock
        if not self._commented_wraps:
            return updated_node
        body, carried = self._drop_commented_wraps(updated_node.body)
        if not body:  # the block held nothing else: a `pass` under the comments
            return updated_node.with_changes(
                body=[cst.SimpleStatementLine([cst.Pass()], leading_lines=carried)]
            )
        return updated_node.with_changes(body=body, footer=[*carried, *updated_node.footer])

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._adapter_helper and not self._helper_written:
            source = inline.lookup(ADAPTER_PATH) or ""
            updated_node = inline.after_imports(
                updated_node, inline.statements(source, REWARD_ADAPTER)
            )
        if not self._commented_wraps:
            return updated_node
        body, carried = self._drop_commented_wraps(updated_node.body)
        return updated_node.with_changes(body=body, footer=[*carried, *updated_node.footer])

    def _drop_commented_wraps(
        self, body: Sequence[cst.BaseStatement]
    ) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
        """Removes the `X = X` lines left of commented self-wraps; their comments stay, above
        the next statement of the block, or returned to end the block, so no comment is lost."""
        return edits.without_statements(body, [self._commented_wraps.get(id(s)) is s for s in body])

    def _replacement(self, cls: str, cls_node: cst.BaseExpression) -> cst.BaseExpression:
        new = REPLACEMENT[cls]
        if isinstance(cls_node, cst.Name):
            self.state.shared.value_head_imports.add(new)
            return cst.Name(new)
        module = self.context.wrapper.module if self.context.wrapper is not None else None
        if module is None or not edits.module_imported_above(module, "transformers", cls_node):
            AddImportsVisitor.add_needed_import(self.context, "transformers")
        return cst.parse_expression(f"transformers.{new}")

    def _quantization_arg(self, quant: list[tuple[cst.Arg, cst.Arg]]) -> tuple[cst.Arg | None, str]:
        """`load_in_8bit=`/`load_in_4bit=` -> `quantization_config=...` (codemods/quantization.py),
        and whether the model is quantized ("on", "off", "maybe")."""
        value, state = quantization.bnb_config([a for _, a in quant])
        if value is None:
            for orig, arg in quant:
                self.report(orig, quantization.dropped_message(arg), severity=Severity.INFO)
            return None, state
        self.state.shared.value_head_imports.add("BitsAndBytesConfig")
        for orig, arg in quant:
            name = arg.keyword.value if arg.keyword else ""
            self.report(orig, quantization.moved_message(name, state), severity=Severity.WARNING)
        # Take the place, comma and spacing of the first 8/4-bit flag, so the call keeps its layout.
        arg = quant[0][1].with_changes(keyword=cst.Name("quantization_config"), value=value)
        return arg, state

    # -- other references: .pretrained_model, .v_head, isinstance(...) -----------------------------
    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        if self.in_import:
            return updated_node
        if id(original_node) in self.facts.leaves:
            return self._variable_class(original_node)
        owner = get_full_name_for_node(original_node.value)
        attr = original_node.attr.value
        if owner in self.model_vars:
            if not self._alias_copies.get(id(original_node), True):
                self.todo(
                    original_node,
                    f"`{owner}.pretrained_model` was the model inside the value-head wrapper; "
                    f"in TRL 1.13 it is `{owner}` itself, and this code later sets it onto "
                    f"`{owner}` (setattr or an attribute), which would make the model its own "
                    "submodule (`.to()` then recurses forever): delete that copy and use "
                    f"`{owner}` here",
                )
                return updated_node
            if (
                id(original_node) in self._backbone_refs
                and self._line is not None
                and (id(self._line) in self._self_copies)
            ):
                return updated_node  # its line goes: leave_SimpleStatementLine reports it
            if id(original_node) in self._backbone_refs:
                self.todo(
                    original_node,
                    f"`{owner}.pretrained_model` was the model inside the value-head wrapper; "
                    f"in TRL 1.13 `{owner}` is that model, so this would copy `{owner}` onto "
                    "itself: delete this code",
                )
                return updated_node
            if attr == "pretrained_model":
                if self._line is not None and self._forwards.get(id(self._line)) == owner:
                    return updated_node.value  # its line goes: leave_SimpleStatementLine says so
                self.report(
                    original_node,
                    f"`{owner}.pretrained_model` is `{owner}` itself without the value head",
                )
                return updated_node.value
            if attr == "current_device" and self.in_mutation:
                self.todo(
                    original_node,
                    f"`{owner}.current_device` was the wrapper's own attribute; a plain model's "
                    "`device` cannot be set: delete this line (accelerate and `.to()` place the "
                    "model)",
                )
                return updated_node
            if attr == "current_device":
                self.report(
                    original_node, f"`{owner}.current_device` is `{owner}.device` on a plain model"
                )
                return updated_node.with_changes(attr=cst.Name("device"))
            if attr == "v_head" and self._head_line_goes(original_node):
                return updated_node  # its line goes: leave_SimpleStatementLine says so
            if attr == "v_head":
                self.todo(
                    original_node,
                    "the value head is gone in TRL 1.13 (GRPO/RLOO need no critic); if a value "
                    "model is really needed, load AutoModelForSequenceClassification(..., "
                    "num_labels=1)",
                )
        return self._other_reference(original_node) or updated_node

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self._annotations += 1

    def leave_Annotation(
        self, original_node: cst.Annotation, updated_node: cst.Annotation
    ) -> cst.Annotation:
        self._annotations -= 1
        return updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if self.in_import:
            return updated_node
        if id(original_node) in self.facts.leaves:
            return self._variable_class(original_node)
        return self._other_reference(original_node) or updated_node

    def _variable_class(self, node: cst.Name | cst.Attribute) -> cst.BaseExpression:
        """A class in a value-head class variable's assignment: the plain class takes its place."""
        leaf = self.facts.leaves[id(node)]
        self._handled.add(id(node))
        if leaf.cls == SEQ2SEQ:
            self.todo(
                node,
                ENCODER_DECODER_BRANCH_TODO.format(var=leaf.var)
                if leaf.conditional
                else ENCODER_DECODER_TODO,
                severity=Severity.WARNING,
            )
        self.report(
            node,
            f"`{leaf.cls}` was removed in TRL 1.13; `{leaf.var}` holds `{REPLACEMENT[leaf.cls]}` "
            f"instead (its from_pretrained calls are rewritten to match)",
        )
        return self._replacement(leaf.cls, node)

    def _plain_class(self) -> str | None:
        """How `PreTrainedModel` can name transformers' class here: "bound" where an import of
        transformers binds it already, "free" where the file names it nowhere; None where the
        file binds it otherwise, or reads a value head (`.v_head`): there the annotation says
        which code handles value-head models, and its TODO stays."""
        names = self.state.identifiers
        if names is None or names.has_any(("v_head",)):
            return None
        if not names.has_name("PreTrainedModel"):  # not `PreTrainedModelWrapper`'s part
            return "free"
        return "bound" if "PreTrainedModel" in (names.bound_by("transformers") or ()) else None

    def _other_reference(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """A TODO for a use of a value-head class this rule has no rewrite for; in a type
        annotation (`-> AutoModelForCausalLMWithValueHead`), which nothing runs, the class
        becomes `PreTrainedModel` (what the functions now return), returned here."""
        if id(node) in self._handled:
            return None
        cls = self._vh_class(node)
        if cls is None:
            return None
        self._handled.add(id(node))
        plain = self._plain_class() if self._annotations and cls != "ValueHead" else None
        if plain is not None:
            if plain == "free":
                AddImportsVisitor.add_needed_import(self.context, "transformers", "PreTrainedModel")
            self.report(
                node,
                f"`{cls}` does not exist in TRL 1.13: this annotation names "
                "`transformers.PreTrainedModel`, the class the models it described are now",
            )
            return cst.Name("PreTrainedModel")
        hint = (
            "use `transformers.PreTrainedModel` for type and isinstance checks"
            if cls != "ValueHead"
            else "there is no value head in TRL 1.13"
        )
        self.todo(node, f"`{cls}` does not exist in TRL 1.13: {hint}")
        return None


# Methods of a model that return the model itself.
MODEL_CHAINS = frozenset(("to", "cuda", "cpu", "eval", "train", "half", "float", "bfloat16"))


def _aliased_self_copies(module: cst.Module) -> tuple[dict[int, bool], dict[int, str]]:
    """`base = X.pretrained_model` followed by `setattr(X, name, base)` or `X.attr = base`:
    ids of those `X.pretrained_model` nodes, and of the lines that set `base` onto `X` (alone
    on their line; each with its `X`). In TRL 1.13 `base` is `X` itself, so such a line would
    make the model its own submodule (`.to()` then recurses forever); the wrapper needed it to
    look like the model inside, which the model now is. Each `X.pretrained_model` id maps to
    whether every such line of it is one statement of its own (and so can go)."""
    aliases: dict[str, tuple[str, int]] = {}  # name -> (owner, id of its X.pretrained_model)
    for assign in walk.find_all(module, cst.Assign):
        if _bare_backbone(assign.value) and len(assign.targets) == 1:
            name = assign.targets[0].target
            owner = get_full_name_for_node(assign.value.value)  # type: ignore[attr-defined]
            if isinstance(name, cst.Name) and owner:
                aliases[name.value] = (owner, id(assign.value))
    if not aliases:
        return {}, {}
    refs: dict[int, bool] = {}
    lines: dict[int, str] = {}
    for line in walk.find_all(module, cst.SimpleStatementLine):
        for stmt in line.body:
            ref, owner = None, ""
            call = stmt.value if isinstance(stmt, cst.Expr) else None
            if (
                isinstance(call, cst.Call)
                and get_full_name_for_node(call.func) == "setattr"
                and len(call.args) == 3
            ):
                target = get_full_name_for_node(call.args[0].value) or ""
                value = call.args[2].value
                if isinstance(value, cst.Name) and aliases.get(value.value, ("",))[0] == target:
                    owner, ref = target, aliases[value.value][1]
            if (
                isinstance(stmt, cst.Assign)
                and isinstance(stmt.value, cst.Name)
                and stmt.value.value in aliases
            ):
                target, alias_ref = aliases[stmt.value.value]
                if any(_rooted_at(t.target, target) for t in stmt.targets):
                    owner, ref = target, alias_ref
            if ref is not None:
                refs[ref] = refs.get(ref, True) and len(line.body) == 1
                if len(line.body) == 1:
                    lines[id(line)] = owner
    return refs, lines


def _forwarded_attributes(module: cst.Module) -> dict[int, str]:
    """Lines that are one statement `X.attr = X.pretrained_model.attr` (TRL's gpt-neox example:
    `model.gradient_checkpointing_enable = model.pretrained_model.gradient_checkpointing_enable`):
    id(line) -> X. The wrapper needed the model's own attribute on itself; in TRL 1.13 X is
    that model, and the line would set the attribute to itself."""
    found: dict[int, str] = {}
    for line in walk.find_all(module, cst.SimpleStatementLine):
        if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign):
            continue
        assign = line.body[0]
        value, targets = assign.value, assign.targets
        if (
            len(targets) != 1
            or not isinstance(targets[0].target, cst.Attribute)
            or not isinstance(value, cst.Attribute)
            or not _bare_backbone(value.value)
            or value.attr.value != targets[0].target.attr.value
        ):
            continue
        owner = get_full_name_for_node(value.value.value)  # type: ignore[attr-defined]
        if owner and get_full_name_for_node(targets[0].target.value) == owner:
            found[id(line)] = owner
    return found


# methods that move or cast a module, or set its mode, in place (and give it back)
_HEAD_MOVES = frozenset(
    {"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_"}
)


def _value_head_lines(
    module: cst.Module,
) -> tuple[dict[int, tuple[frozenset[str], str]], set[int]]:
    """One-statement lines that do nothing but print, move or copy a value head: `print(X.v_head)`,
    `X.v_head.to(device)` and `X.v_head = X.v_head.to(device)` (a device or dtype as a name, an
    attribute or a literal), `A.v_head.load_state_dict(B.v_head.state_dict())`: id(line) -> the
    models (X; A and B) whose heads they touch and what the line did, and the ids of those
    `X.v_head` nodes. Where the
    models become plain models, nothing is left for such a line to do."""
    lines: dict[int, tuple[frozenset[str], str]] = {}
    refs: set[int] = set()
    for line in walk.find_all(module, cst.SimpleStatementLine):
        if len(line.body) != 1:
            continue
        found, did = _head_statement(line.body[0])
        if found:
            owners = frozenset(get_full_name_for_node(h.value) or "" for h in found)
            lines[id(line)] = (owners, did)
            refs.update(id(h) for h in found)
    return lines, refs


_PRINTED, _MOVED, _COPIED = (
    "printed the value head",
    "moved or cast the value head",
    "copied one value head into another",
)


def _head_statement(stmt: cst.BaseSmallStatement) -> tuple[list[cst.Attribute], str]:
    """The `X.v_head` nodes of `stmt` and what it did with them, when it is one of
    `_value_head_lines`' shapes, else ([], "")."""
    if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
        call = stmt.value
        if get_full_name_for_node(call.func) == "print":
            one = len(call.args) == 1 and not call.args[0].star and call.args[0].keyword is None
            if one and _head(call.args[0].value):
                return [call.args[0].value], _PRINTED  # type: ignore[list-item]
            return [], ""
        if moved := _head_move(call):
            return moved, _MOVED
        if copied := _head_copy(call):
            return copied, _COPIED
        return [], ""
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0].target
        moved = _head_move(stmt.value) if isinstance(stmt.value, cst.Call) else []
        if moved and _head(target) and edits.code(target) == edits.code(moved[0]):
            return [target, *moved], _MOVED  # type: ignore[list-item]
    return [], ""


def _head(expr: cst.BaseExpression) -> bool:
    """`X.v_head`, X a plain name."""
    return (
        isinstance(expr, cst.Attribute)
        and expr.attr.value == "v_head"
        and isinstance(expr.value, cst.Name)
    )


def _head_move(call: cst.Call) -> list[cst.Attribute]:
    """[`X.v_head`] for `X.v_head.to(device)` and the other `_HEAD_MOVES`, whose arguments
    are names, attributes or literals (nothing they would run), else []."""
    func = call.func
    if not (
        isinstance(func, cst.Attribute) and func.attr.value in _HEAD_MOVES and _head(func.value)
    ):
        return []
    plain = (cst.Name, cst.Attribute, cst.SimpleString, cst.Integer, cst.Float)
    if any(a.star or not isinstance(a.value, plain) for a in call.args):
        return []
    return [func.value]  # type: ignore[list-item]


def _head_copy(call: cst.Call) -> list[cst.Attribute]:
    """[`A.v_head`, `B.v_head`] for `A.v_head.load_state_dict(B.v_head.state_dict())`."""
    func = call.func
    if not (
        isinstance(func, cst.Attribute)
        and func.attr.value == "load_state_dict"
        and _head(func.value)
        and len(call.args) == 1
        and not call.args[0].star
        and call.args[0].keyword is None
    ):
        return []
    inner = call.args[0].value
    if (
        isinstance(inner, cst.Call)
        and not inner.args
        and isinstance(inner.func, cst.Attribute)
        and inner.func.attr.value == "state_dict"
        and _head(inner.func.value)
    ):
        return [func.value, inner.func.value]  # type: ignore[list-item]
    return []


def _bare_backbone(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and expr.attr.value == "pretrained_model"


def _rooted_at(target: cst.BaseExpression, owner: str | None) -> bool:
    """`target` is an attribute or item of `owner` (`X.a`, `X.a.b`, `X[k]`)."""
    while isinstance(target, (cst.Attribute, cst.Subscript)):
        target = target.value
        if owner is not None and get_full_name_for_node(target) == owner:
            return True
    return False


def _has_comments(stmt: cst.SimpleStatementLine) -> bool:
    return stmt.trailing_whitespace.comment is not None or any(
        line.comment is not None for line in stmt.leading_lines
    )

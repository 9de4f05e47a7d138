"""TRL106: the generation settings of `.generate(...)` (keyword arguments, dicts, length samplers)
move to the target config, or stop the rewrite with the reason."""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, reaching
from codemods.rules.ppo_config.parsed import PARSE_METHODS
from codemods.rules.ppo_loop.loop_pass import LoopPass
from codemods.rules.ppo_loop.rewards import factory_call
from codemods.rules.ppo_loop.shape import Pairs, largest_draw, rebound_dicts, sampler_bounds
from codemods.rules.ppo_loop.state import BATCHES, GEN_DROPPED, GEN_FIELDS, Refused
from migrate.kernel.findings import Severity


class Generation(LoopPass):
    def _generation(
        self,
        call: cst.Call,
        queries: str | None,
        *,
        ref: bool = False,
        at: cst.CSTNode | None = None,
    ) -> dict[str, cst.BaseExpression]:
        """generate(...) keywords -> config fields; raises for what has no place. `ref`: the result
        is unpacked into (responses, reference responses). `at`: the call in the file, when
        `call` is one the rule built from it (findings about the whole call point there)."""
        if not call.args or get_full_name_for_node(call.args[0].value) != queries:
            raise Refused("`.generate(...)` does not take the batch's query tensors")
        out: dict[str, cst.BaseExpression] = {}
        extra: dict[str, str] = {}
        given: set[str] = set()
        capped = ""  # a `max_length` the loop gave generate()
        self.prompt_returned = True  # legacy generate() returned prompt + response by default
        for arg in call.args[1:]:
            if arg.star == "**":
                name = get_full_name_for_node(arg.value) or ""
                literal = self.dicts.get(name)
                scope = self.function_of(at or call)
                if literal is None and scope is not None:
                    literal = self.scoped_dicts.get((scope, name))
                if literal is None and scope is not None:
                    entry = self._rebound_dicts().get((scope, name))
                    if entry is not None:
                        literal = reaching.read_above(
                            entry, at or call, self.state.tree_of(self.tree)
                        )
                if literal is None:
                    raise Refused(
                        f"`**{edits.code(arg.value).strip()}` is not a dict literal in this file"
                    )
                pairs = literal
            elif arg.keyword is not None:
                pairs = {arg.keyword.value: arg.value}
            else:
                raise Refused("`.generate(...)` has extra positional arguments")
            given |= set(pairs)
            for key, value in pairs.items():
                shown = edits.code(value).strip()
                if key == "return_prompt":
                    if edits.literal(value) not in (True, False):
                        raise Refused(
                            f"`return_prompt={shown}` is not a literal, so whether the responses "
                            "hold the prompt is known only at run time"
                        )
                    self.prompt_returned = edits.literal(value)
                elif key == "length_sampler":  # a sampler bound to a name, or built right here
                    bounds = self.samplers.get(shown) or sampler_bounds(value, self.single)
                    if bounds is None:
                        raise Refused(
                            f"`length_sampler={shown}` is not a LengthSampler(min, max) whose "
                            "bounds are ints or attributes (`args.max_len`)"
                        )
                    largest = largest_draw(bounds[1])
                    out.setdefault("max_completion_length", largest)
                    self.report(
                        value,
                        f"`length_sampler={shown}` drew a random length per sample; TRL 1.13 "
                        "generates up to "
                        f"max_completion_length={edits.code(largest).strip()} (its largest draw)",
                        severity=Severity.WARNING,
                    )
                elif key in GEN_FIELDS:
                    lit = edits.literal(value)
                    if key == "top_k" and isinstance(lit, float) and lit.is_integer():
                        value = cst.parse_expression(
                            str(int(lit))
                        )  # GenerationConfig top_k is an int
                    out[GEN_FIELDS[key]] = value
                elif key in GEN_DROPPED and _as_trl_does(key, value, shown):
                    continue  # the value TRL 1.13 uses itself
                elif key == "max_length":
                    capped = shown  # decided once every keyword is known, below
                elif key == "eos_token_id":
                    extra[key] = shown
                    self.report(
                        value,
                        f"`eos_token_id={shown}` kept the loop generating past the tokenizer's "
                        "end-of-sequence token, and it scored and trained on every token "
                        "generated; TRL 1.13 generates as far (`generation_kwargs` keeps the "
                        "setting) but cuts each completion at its first end-of-sequence token "
                        "(the processing class's `eos_token_id`) for the reward and the loss "
                        "(rloo_trainer.py, grpo_trainer.py: `_generate_single_turn`)",
                        severity=Severity.WARNING,
                    )
                elif key == "do_sample" and edits.literal(value) is False:
                    raise Refused(
                        "`do_sample=False` (greedy) gives every completion of a prompt the same "
                        "text, so RLOO/GRPO would learn nothing from it; sample (the default) and "
                        "set a temperature"
                    )
                elif key == "generate_ref_response":
                    if edits.literal(value) is not ref:
                        raise Refused(
                            f"`generate_ref_response={shown}` does not match the result's "
                            "assignment to "
                            + ("(responses, reference responses)" if ref else "one name")
                        )
                elif key == "batch_size":
                    raise Refused(f"`{key}` has no place in TRL 1.13 generation")
                else:
                    extra[key] = shown
        if capped and not {"max_new_tokens", "length_sampler"} & given:
            # with max_new_tokens (a length sampler sets it) transformers ignored max_length
            raise Refused(
                f"`max_length={capped}` capped the prompt and the response together; TRL 1.13 "
                "caps the completion alone (`max_completion_length`, which wins over a "
                "`max_length` in `generation_kwargs`), so that cap depends on each prompt's "
                "length"
            )
        self._left_to_model(at or call, given)
        if extra:
            out["generation_kwargs"] = cst.parse_expression(
                "{" + ", ".join(f"{k!r}: {v}" for k, v in extra.items()) + "}"
            )
        return out

    def _rebound_dicts(self) -> dict[tuple[int, str], reaching.Rebound[Pairs]]:
        if self.rebound is None:
            self.rebound = rebound_dicts(self.tree, self.function_of)
        return self.rebound

    def _left_to_model(self, call: cst.CSTNode, given: set[str]) -> None:
        """Say which sampling settings the loop left to the model's generation config, which
        legacy `generate` fell back on and TRL 1.13 ignores (it builds its own from the config)."""
        left = [k for k in MODEL_FALLBACK if k not in given]
        if "length_sampler" in given and "max_new_tokens" in left:
            left.remove("max_new_tokens")
        if not left:
            return
        defaults = ", ".join(MODEL_FALLBACK[k][0] for k in left)
        new_side = ", ".join(
            MODEL_FALLBACK[k][1].format(
                n=ppo.targets()["config_defaults"][self.state.target]["max_completion_length"]
            )
            for k in left
        )
        fields = [f"`{MODEL_FALLBACK[k][2]}`" for k in left if MODEL_FALLBACK[k][2]]
        advice = (
            f"set {_joined(fields)} there to what the model's config gave"
            if fields
            else "TRL 1.13 has no greedy decoding"
        )
        # transformers' own defaults for temperature and top_p are TRL 1.13's: only a model
        # whose generation_config.json sets them trains differently
        severity = Severity.INFO if set(left) <= {"temperature", "top_p"} else Severity.WARNING
        self.report(
            call,
            f"`.generate(...)` left {_joined([f'`{k}`' for k in left])} to the model's "
            f"generation config (transformers' defaults: {defaults}; a model's "
            "generation_config.json may say otherwise); TRL 1.13 ignores that config and "
            f"generates with {new_side} unless the new config sets "
            f"{'it' if len(left) == 1 else 'them'}: {advice}",
            severity=severity,
        )

    def _config_copy(
        self, gen: dict[str, cst.BaseExpression], config_name: str
    ) -> list[cst.BaseStatement]:
        """`config = copy.copy(config)`, then `config.<field> = <value>` for each setting, for a
        config another file of the run builds. Its fields are out of sight, so a loop that
        stopped after N batches (whose optimizer steps depend on them) is refused, and one pass
        over the data is said outright. Not `dataclasses.replace`: that runs `__post_init__`
        again, and RLOO/GRPO's refuses the `steps_per_generation` and `generation_batch_size`
        its first run filled in; none of the settings set here is derived there."""
        if BATCHES in gen:
            raise Refused(
                f"it stops after a number of batches, and `{config_name}` is built in another "
                "file, so its optimizer steps per batch are not known here: set `max_steps` to "
                "that many generations' steps"
            )
        if not ({"max_steps", "num_train_epochs"} & set(gen)):
            gen = {**gen, "num_train_epochs": cst.Integer("1")}  # one pass over the dataloader
        AddImportsVisitor.add_needed_import(self.context, "copy")
        lines = [f"{config_name} = copy.copy({config_name})"]
        lines += [f"{config_name}.{k} = {edits.code(v).strip()}" for k, v in gen.items()]
        return [cst.parse_statement(line + "\n") for line in lines]

    def _inline_generation(
        self, trainer_stmt: cst.BaseStatement, gen: dict[str, cst.BaseExpression]
    ) -> cst.BaseStatement:
        """The trainer statement with the settings in its `args=RLOOConfig(...)` call, as
        `_with_generation` puts them into a config call of their own."""
        assign = edits.assignment(trainer_stmt)
        assert assign is not None and isinstance(assign.value, cst.Call)
        arg = edits.kwarg(assign.value, "args")
        assert arg is not None and isinstance(arg.value, cst.Call)
        alone = cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name("_"))], value=arg.value)]
        )
        done = edits.assignment(self._with_generation(alone, gen)[0])
        assert done is not None
        return trainer_stmt.deep_replace(arg.value, done.value)  # type: ignore[return-value, arg-type]

    def _with_generation(
        self,
        stmt: cst.BaseStatement,
        gen: dict[str, cst.BaseExpression],
        config_name: str = "",
    ) -> list[cst.BaseStatement]:
        """The config statement with the generation settings: new keywords of a config call, or
        `parser.set_defaults(...)` above a parse (a command-line flag still wins)."""
        assign = edits.assignment(stmt)
        if assign is not None:
            assert isinstance(assign.value, cst.Call)
            call = assign.value
        else:  # the config is a dataclass field's default factory (`tyro.cli(ScriptArguments)`)
            assert isinstance(stmt, cst.ClassDef)
            found = factory_call(stmt, config_name.rpartition(".")[2], self.config_cls)
            assert found is not None
            call = found
        loop_batches = gen.get(BATCHES)
        func = get_full_name_for_node(call.func) or ""
        parsed = func.rpartition(".")[2] in PARSE_METHODS
        have = set() if parsed else {a.keyword.value for a in call.args if a.keyword is not None}
        if BATCHES in gen:
            gen = {k: v for k, v in gen.items() if k != BATCHES}
            if parsed:
                raise Refused(
                    "it stops after a number of batches, and the config is parsed from the "
                    "command line, so its optimizer steps per batch are known only at run time: "
                    "set `max_steps` to that many generations' steps"
                )
            if "max_steps" in have:
                raise Refused("it stops after a number of batches and the config sets max_steps")
            gen["max_steps"] = _steps_for(call, loop_batches)
        if not ({"max_steps", "num_train_epochs"} & (have | set(gen))):
            gen = {
                **gen,
                "num_train_epochs": cst.Integer("1"),
            }  # the loop made one pass over the dataloader
        new = [edits.new_kwarg(k, v) for k, v in gen.items() if k not in have]
        if parsed:
            args = [
                a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                for a in new[:-1]
            ] + new[-1:]
            defaults = cst.SimpleStatementLine(
                body=[
                    cst.Expr(
                        cst.Call(
                            func=cst.parse_expression(func.rpartition(".")[0] + ".set_defaults"),
                            args=args,
                        )
                    )
                ],
                leading_lines=edits.leading(stmt),
            )
            return [defaults, stmt.with_changes(leading_lines=[])]
        if not new:
            return [stmt]
        args = [*call.args, *new]
        fresh = {id(a) for a in new} | ({id(call.args[-1])} if call.args else set())
        new_call = call.with_changes(args=edits.relayout(call, args, fresh))
        if assign is None:
            return [stmt.deep_replace(call, new_call)]  # type: ignore[arg-type, list-item]
        return [stmt.with_deep_changes(assign, value=new_call)]  # type: ignore[arg-type]


# A generate() keyword legacy PPO left to the model's generation config: (transformers' default,
# what TRL 1.13 does instead, the TRL 1.13 config field that sets it)
MODEL_FALLBACK = {
    "do_sample": ("greedy decoding", "sampling always", ""),
    "top_k": ("top_k=50", "top_k=0 (off)", "top_k"),
    "temperature": ("temperature=1.0", "temperature=1.0", "temperature"),
    "top_p": ("top_p=1.0", "top_p=1.0", "top_p"),
    "max_new_tokens": (
        "max_length=20 tokens, the prompt's included",
        "up to max_completion_length={n} new tokens",
        "max_completion_length",
    ),
}


def _joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _as_trl_does(key: str, value: cst.BaseExpression, shown: str) -> bool:
    """Whether a generate() keyword has the value TRL 1.13 sets itself (ppo_mapping.json
    `generation.dropped`): the tokenizer's own pad and eos tokens, sampling, no minimum length.
    Any other value (an extra stop token, a minimum length) is kept in generation_kwargs."""
    if key == "pad_token_id":
        return True  # padding only: the trainer pads with the processing class's token
    if key == "eos_token_id":
        return shown.endswith(".eos_token_id")
    return bool(edits.literal(value) == GEN_DROPPED[key])


def _steps_for(call: cst.Call, batches: cst.BaseExpression | None) -> cst.BaseExpression:
    """`max_steps` for a run that stops after `batches` generations: each generation is
    steps_per_generation micro-batches (gradient_accumulation_steps when unset), reused
    num_iterations times, and gradient_accumulation_steps micro-batches make an optimizer step;
    the config call's own values, computed when they are literals."""
    assert batches is not None
    given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    ga = given.get("gradient_accumulation_steps", cst.Integer("1"))
    spg = given.get("steps_per_generation", ga)
    iters = given.get("num_iterations", cst.Integer("1"))
    values = [edits.literal(e) for e in (batches, spg, iters, ga)]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        n, s, k, g = values
        return cst.Integer(str(n * s * k // g))  # type: ignore[operator]

    def text(e: cst.BaseExpression) -> str:
        code = " ".join(edits.code(e).split())
        atom = isinstance(e, (cst.Name, cst.Attribute, cst.Call, cst.Integer, cst.Subscript))
        return code if atom or e.lpar else f"({code})"

    factors = [text(batches)]
    if edits.code(spg).strip() != edits.code(ga).strip():
        factors.append(text(spg))
    if edits.literal(iters) != 1:
        factors.append(text(iters))
    expr = " * ".join(factors)
    if edits.code(spg).strip() != edits.code(ga).strip() and edits.literal(ga) != 1:
        expr += f" // {text(ga)}"
    return cst.parse_expression(expr)

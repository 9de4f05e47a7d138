"""Stand-ins that run a legacy PPO loop and its TRL 1.13 rewrite on the same generated tokens.

`old_run` executes the loop as written against a legacy `PPOTrainer` whose `generate` returns
fixed response tokens the way legacy TRL returned them (with the prompt in front unless
`return_prompt=False`; one query at a time as prompt + response) and whose `step` records the
scores it is handed. `new_run` executes the rewrite against a TRL 1.13 trainer that calls its
`reward_funcs` the way RLOOTrainer/GRPOTrainer do: `prompts`, completions decoded with
`skip_special_tokens=True`, `completion_ids` and the trainer's extra keywords."""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

import torch

QUERIES = ["the cat sat", "a dog ran far"]
RESPONSES = [" on the mat", " away from home"]  # the first one ends in EOS


def generated(tok: Any) -> list[list[int]]:
    ids = [tok(r, add_special_tokens=False)["input_ids"] for r in RESPONSES]
    ids[0] = [*ids[0], tok.eos_token_id]
    return ids


class SentimentPipe:
    """A text-classification pipeline: with `return_all_scores=True` (transformers < 5) every
    label's score in label order; with `top_k=None` (transformers 5) every label's score, the
    highest first."""

    model = types.SimpleNamespace(
        config=types.SimpleNamespace(id2label={0: "NEGATIVE", 1: "POSITIVE"})
    )

    def __call__(self, texts: Sequence[str], **kwargs: Any) -> list[list[dict[str, Any]]]:
        out = []
        for t in texts:
            score = len(t) / 10 + t.count("o")
            row = [{"label": "NEGATIVE", "score": -score}, {"label": "POSITIVE", "score": score}]
            if "top_k" in kwargs:
                row.sort(key=lambda s: -s["score"])
            out.append(row)
        return out


sentiment_pipe = SentimentPipe()


def adapter_scores(input_ids: Any, attention_mask: Any = None, **kwargs: Any) -> torch.Tensor:
    """What a reward adapter's `compute_reward_score` gives: (batch, tokens, 2 labels), here a
    function of the token ids so that scoring other texts gives other numbers."""
    x = input_ids.float()
    return torch.stack([-x, x.cumsum(-1) / 7], dim=-1)


class Accelerator:
    device = "cpu"

    @staticmethod
    def unwrap_model(model: Any) -> Any:
        return model


class ValueHeadModel:
    """A legacy value-head model built with `reward_adapter=`: it scores with `adapter_scores`."""

    @classmethod
    def from_pretrained(cls, *args: Any, reward_adapter: Any = None, **kwargs: Any) -> Any:
        return types.SimpleNamespace(
            compute_reward_score=adapter_scores if reward_adapter else None
        )


# the RewardAdapter TRL102 writes in is checked against TRL 0.11.4's own code in
# tests/codemods/test_reward_adapter.py; here it is a stand-in that scores as the legacy model did
ADAPTER_STAND_IN = """class RewardAdapter:
    def __init__(self, model, adapter_id, adapter_name="reward_adapter"):
        pass

    def __call__(self, input_ids, attention_mask=None, **kwargs):
        return adapter_scores(input_ids, attention_mask, **kwargs)
"""


def peft_stand_in() -> types.ModuleType:
    peft = types.ModuleType("peft")
    peft.LoraConfig = lambda **kwargs: dict(kwargs)  # type: ignore[attr-defined]
    peft.get_peft_model = lambda model, config: model  # type: ignore[attr-defined]
    return peft


def transformers_stand_in() -> types.ModuleType:
    transformers = types.ModuleType("transformers")
    loader = types.SimpleNamespace(from_pretrained=lambda *a, **k: types.SimpleNamespace())
    transformers.AutoModelForCausalLM = loader  # type: ignore[attr-defined]
    return transformers


def old_run(src: str, tok: Any, ids: list[list[int]], *, draw: int = 0) -> list[float]:
    """The loop as written: one batch of QUERIES, the responses `ids`, the scores `step` got.
    `draw` is what `LengthSampler()` returns."""
    got: list[float] = []
    responses = [torch.tensor(x) for x in ids]

    class PPOTrainer:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.model = args[1] if len(args) > 1 else kwargs.get("model")
            self.config = args[0] if args else kwargs.get("config")
            self.accelerator = Accelerator()
            queries = [torch.tensor(tok(q)["input_ids"]) for q in QUERIES]
            self.dataloader = [{"input_ids": queries, "query": list(QUERIES)}]

        def generate(
            self,
            query: Any,
            return_prompt: bool = True,
            generate_ref_response: bool = False,
            length_sampler: Any = None,
            **kwargs: Any,
        ) -> Any:
            if isinstance(query, list):
                out = [torch.cat([q, r]) if return_prompt else r for q, r in zip(query, responses)]
                return (out, list(out)) if generate_ref_response else out
            # one query (a 1-D tensor, the same ids as one of the batch's, maybe retyped): the
            # legacy trainer generated for it as a batch of one, and returned that batch, 2-D
            at = [
                i
                for i, q in enumerate(self.dataloader[0]["input_ids"])
                if q.shape == query.shape and torch.equal(q.long(), query.long())
            ]
            r = responses[at[0] if at else 0]
            return (torch.cat([query, r]) if return_prompt else r).unsqueeze(0)

        def step(self, queries: Any, responses: Any, scores: Any) -> dict[str, Any]:
            got.extend(float(s) for s in scores)
            return {}

        def log_stats(self, *args: Any, **kwargs: Any) -> None:
            pass

        def save_pretrained(self, *args: Any) -> None:
            pass

    @dataclasses.dataclass
    class PPOConfig:
        batch_size: int = 2
        mini_batch_size: int = 1
        seed: int = 0
        steps: int = 20000
        ppo_epochs: int = 4

    class LengthSampler:
        def __init__(self, *args: Any) -> None:
            pass

        def __call__(self) -> int:
            return draw

    def respond_to_batch(model: Any, queries: Any, **kwargs: Any) -> torch.Tensor:
        return responses[0].unsqueeze(0)

    core = types.SimpleNamespace(LengthSampler=LengthSampler, respond_to_batch=respond_to_batch)
    trl = types.SimpleNamespace(
        PPOTrainer=PPOTrainer,
        PPOConfig=PPOConfig,
        AutoModelForCausalLMWithValueHead=ValueHeadModel,
        core=core,
    )
    execute(src, {"trl": trl, "trl.core": core, "peft": peft_stand_in()}, tok)
    return got


def new_run(src: str, tok: Any, target: str, ids: list[list[int]]) -> list[float]:
    """The rewrite: the trainer calls its reward function as TRL 1.13's RLOO/GRPO do."""
    got: list[float] = []

    class Trainer:
        def __init__(self, args: Any = None, reward_funcs: Any = None, **kwargs: Any) -> None:
            self.model, self.accelerator = kwargs.get("model"), Accelerator()
            self.reward_funcs = reward_funcs if isinstance(reward_funcs, list) else [reward_funcs]

        def train(self) -> None:
            completions = tok.batch_decode(ids, skip_special_tokens=True)
            for fn in self.reward_funcs:
                got.extend(
                    fn(
                        prompts=list(QUERIES),
                        completions=completions,
                        completion_ids=ids,
                        trainer_state=None,
                        log_extra=lambda *a, **k: None,
                        log_metric=lambda *a, **k: None,
                    )
                )

        def save_model(self, *args: Any) -> None:
            pass

    cls = target.upper()
    Config = config_type(f"{cls}Config")
    trl = types.SimpleNamespace(**{f"{cls}Trainer": Trainer, f"{cls}Config": Config})
    modules: dict[str, Any] = {"trl": trl}
    if "class RewardAdapter:" in src:  # the model is built in the file: build a stand-in
        from codemods import inline
        from codemods.rules.value_heads.tables import ADAPTER_PATH

        written = (inline.lookup(ADAPTER_PATH) or "").replace("__NAME__", "RewardAdapter")
        assert written in src, "the golden does not hold the RewardAdapter TRL102 writes"
        src = src.replace(written, ADAPTER_STAND_IN)
        modules.update(peft=peft_stand_in(), transformers=transformers_stand_in())
    execute(src, modules, tok)
    return got


def config_type(name: str) -> type:
    """A dataclass with the fields of TRL 1.13's real config `name` (so that a command-line
    parser's `set_defaults` finds every field it sets), none of its checks."""
    import trl

    real = dataclasses.fields(getattr(trl, name))
    fields = [(f.name, str, dataclasses.field(default=None)) for f in real]  # type: ignore[arg-type]
    return dataclasses.make_dataclass(name, fields)


def execute(src: str, modules: dict[str, Any], tok: Any, **names: Callable[..., Any]) -> None:
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        env: dict[str, Any] = {
            "__name__": "__main__",
            "torch": torch,
            "tokenizer": tok,
            # a policy the loop may switch between generation and training
            "model": types.SimpleNamespace(
                gradient_checkpointing_enable=lambda *a, **k: None,
                gradient_checkpointing_disable=lambda: None,
                config=types.SimpleNamespace(use_cache=True),
            ),
            "model_name": "tiny",
            "rm_adapter": "tiny-rm-adapter",
            "adapter_scores": adapter_scores,
            "ds": None,
            "tqdm": lambda it, *a, **k: it,
            "sentiment_pipe": sentiment_pipe,
            **names,
        }
        exec(compile(src, "loop.py", "exec"), env)
    finally:
        for name, module in saved.items():
            if module is not None:
                sys.modules[name] = module
            else:
                sys.modules.pop(name, None)

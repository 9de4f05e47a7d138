"""Loss parity for `smoke --env --loss-parity`: our chunked bf16 NLL and TRL 1.13's against the
plain
loss on one batch, values and gradients, within the dtype's tolerance."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

# Relative loss gap to the plain loss above which TRL404 fires. Both sides round the logits to
# the compute dtype the same way, so honest implementations agree to ~1e-6; this is generous.
PARITY_TOL = {"bfloat16": 1e-3, "float32": 1e-5}


PARITY_GRAD_TOL = {"bfloat16": 2e-2, "float32": 1e-4}


@dataclasses.dataclass(frozen=True)
class Parity:
    """Loss (and lm_head gradient) of the plain, our and TRL 1.13's chunked loss on one batch."""

    plain: float
    ours: float
    trl: float | None  # None when TRL's chunked loss could not be imported
    ours_rel: float  # |ours - plain| / |plain|
    trl_rel: float | None
    ours_grad_rel: float  # relative L2 gap of d loss / d lm_head.weight to the plain loss's
    trl_grad_rel: float | None
    tolerance: float
    grad_tolerance: float

    @property
    def ok(self) -> bool:
        rels = [(self.ours_rel, self.ours_grad_rel), (self.trl_rel, self.trl_grad_rel)]
        return all(
            r is None or (r <= self.tolerance and (g or 0.0) <= self.grad_tolerance)
            for r, g in rels
        )


def _trl_chunked_loss() -> Any:
    try:
        from trl.trainer.sft_trainer import _chunked_cross_entropy_loss
    except Exception:  # not installed, or the private helper moved
        return None
    return _chunked_cross_entropy_loss


def parity(model: Any, batch: dict[str, torch.Tensor], dtype: torch.dtype) -> Parity:
    """One batch through the plain loss (full logits), ours and TRL 1.13's, same autocast."""
    import torch

    device_type = batch["input_ids"].device.type
    _, head = lm_head_of(model)
    weight = head.weight

    def run(fn: Any) -> tuple[float, torch.Tensor]:
        model.zero_grad(set_to_none=True)
        was = weight.requires_grad
        weight.requires_grad_(True)  # frozen under LoRA: we still want its gradient to compare
        with torch.autocast(device_type, dtype=dtype, enabled=dtype is not torch.float32):
            loss = fn()
        loss.backward()
        grad = weight.grad.detach().double().clone()
        weight.requires_grad_(was)
        model.zero_grad(set_to_none=True)
        return loss.detach().item(), grad

    plain, g_plain = run(lambda: model(**batch).loss)
    ours, g_ours = run(lambda: chunked_loss(model, batch))
    trl_fn = _trl_chunked_loss()
    trl = g_trl = None
    if trl_fn is not None:
        backbone, _ = lm_head_of(model)

        def trl_loss() -> torch.Tensor:
            hidden = backbone(
                input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
            ).last_hidden_state
            return trl_fn(hidden, weight, 256, labels=batch["labels"], lm_head_bias=head.bias)[0]

        trl, g_trl = run(trl_loss)
    key = "bfloat16" if dtype is torch.bfloat16 else "float32"

    def rel(a: float | None) -> float | None:
        return None if a is None else abs(a - plain) / max(abs(plain), 1e-12)

    def grel(g: torch.Tensor | None) -> float | None:
        return None if g is None else float((g - g_plain).norm() / g_plain.norm().clamp_min(1e-30))

    return Parity(
        plain=plain,
        ours=ours,
        trl=trl,
        ours_rel=rel(ours) or 0.0,
        trl_rel=rel(trl),
        ours_grad_rel=grel(g_ours) or 0.0,
        trl_grad_rel=grel(g_trl),
        tolerance=PARITY_TOL[key],
        grad_tolerance=PARITY_GRAD_TOL[key],
    )


def lm_head_of(model: Any) -> tuple[Any, Any]:
    """(backbone, lm_head) of a causal LM, through a peft wrapper if there is one."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return base.model, base.lm_head


def chunked_loss(model: Any, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    from migrate.reference.loss import chunked_nll

    backbone, head = lm_head_of(model)
    hidden = backbone(
        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
    ).last_hidden_state  # (B, T, H)
    return chunked_nll(hidden, head.weight, batch["labels"], bias=head.bias)

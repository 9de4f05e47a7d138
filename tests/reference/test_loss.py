"""chunked_nll against an fp64 reference, TRL 1.13's own chunked loss, and a memory bound."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

torch = pytest.importorskip("torch")

from migrate.reference.loss import auto_chunk_size, chunked_nll  # noqa: E402 (needs torch)

F = torch.nn.functional

# Tolerances per compute dtype: relative error of the loss, and relative L2 error of each
# gradient, against fp64 math on the same (already rounded) inputs. bf16/fp16 error comes from
# rounding the logits and dL/dlogits to the compute dtype, exactly as a plain bf16 lm_head does.
TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.bfloat16: (2e-3, 1.5e-2),
    torch.float16: (5e-4, 3e-3),
}


def _inputs(b, t, h, v, dtype, *, seed=0, ignore_frac=0.2, bias=False):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(b, t, h, generator=g).to(dtype)  # (B, T, H)
    weight = (torch.randn(v, h, generator=g) * h**-0.5 * 2).to(dtype)  # (V, H)
    labels = torch.randint(0, v, (b, t), generator=g)  # (B, T)
    labels[torch.rand(b, t, generator=g) < ignore_frac] = -100
    bias_t = torch.randn(v, generator=g).to(dtype) if bias else None  # (V,)
    return hidden, weight, labels, bias_t


def _reference(hidden, weight, labels, *, bias=None, softcap=None, num_items=None, shift=True):
    """fp64 loss and grads (hidden, weight, bias) with full logits."""
    h = hidden.detach().double().requires_grad_()
    w = weight.detach().double().requires_grad_()
    b = bias.detach().double().requires_grad_() if bias is not None else None
    hs, ys = (h[..., :-1, :], labels[..., 1:]) if shift else (h, labels)
    z = hs @ w.t()  # (B, T-1, V)
    if b is not None:
        z = z + b
    if softcap is not None:
        z = softcap * torch.tanh(z / softcap)
    flat_y = ys.reshape(-1)
    total = F.cross_entropy(z.reshape(-1, z.shape[-1]), flat_y, reduction="sum")
    denom = num_items if num_items is not None else max(int((flat_y != -100).sum()), 1)
    loss = total / denom
    loss.backward()
    return loss.detach(), h.grad, w.grad, (b.grad if b is not None else None)


def _ours(hidden, weight, labels, *, bias=None, **kw):
    h = hidden.detach().clone().requires_grad_()
    w = weight.detach().clone().requires_grad_()
    b = bias.detach().clone().requires_grad_() if bias is not None else None
    loss = chunked_nll(h, w, labels, bias=b, **kw)
    loss.backward()
    return loss.detach(), h.grad, w.grad, (b.grad if b is not None else None)


def _rel(a, ref):
    return float((a.double() - ref).norm() / ref.norm().clamp_min(1e-30))


def _check(ours, ref, dtype):
    loss_tol, grad_tol = TOL[dtype]
    assert ours[0].dtype == torch.float32 and ours[0].dim() == 0
    assert abs(float(ours[0]) - float(ref[0])) <= loss_tol * abs(float(ref[0]))
    for got, want in zip(ours[1:], ref[1:]):
        if want is None:
            continue
        assert _rel(got, want) <= grad_tol, _rel(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
def test_loss_and_grads_match_fp64(dtype):
    hidden, weight, labels, _ = _inputs(2, 97, 64, 1000, dtype)
    ours = _ours(hidden, weight, labels, chunk_size=32)
    _check(ours, _reference(hidden, weight, labels), dtype)
    assert ours[1].dtype == dtype and ours[2].dtype == dtype


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_bias_and_softcap(dtype):
    hidden, weight, labels, bias = _inputs(2, 50, 32, 700, dtype, bias=True)
    ours = _ours(hidden, weight, labels, bias=bias, softcap=3.0, chunk_size=16)
    _check(ours, _reference(hidden, weight, labels, bias=bias, softcap=3.0), dtype)


def test_ragged_last_chunk_and_chunk_size_do_not_change_result():
    hidden, weight, labels, _ = _inputs(3, 41, 16, 300, torch.float32, ignore_frac=0.0)
    n_valid = 3 * 40
    results = [_ours(hidden, weight, labels, chunk_size=c) for c in (7, 64, n_valid, 1000)]
    for other in results[1:]:
        for a, b in zip(results[0][:3], other[:3]):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    _check(results[0], _reference(hidden, weight, labels), torch.float32)


def test_fewer_tokens_than_one_chunk():
    hidden, weight, labels, _ = _inputs(1, 5, 16, 100, torch.bfloat16, ignore_frac=0.0)
    ours = _ours(hidden, weight, labels, chunk_size=4096)
    _check(ours, _reference(hidden, weight, labels), torch.bfloat16)


def test_all_tokens_ignored_gives_connected_zero():
    hidden, weight, labels, bias = _inputs(2, 8, 16, 50, torch.bfloat16, bias=True)
    labels.fill_(-100)
    loss, gh, gw, gb = _ours(hidden, weight, labels, bias=bias)
    assert float(loss) == 0.0
    for grad, like in ((gh, hidden), (gw, weight), (gb, bias)):
        assert grad is not None and grad.shape == like.shape and not grad.any()


def test_num_items_in_batch_divides_the_sum():
    hidden, weight, labels, _ = _inputs(2, 30, 16, 200, torch.float32)
    for num_items in (1000, torch.tensor(1000)):
        ours = _ours(hidden, weight, labels, num_items_in_batch=num_items, chunk_size=8)
        _check(ours, _reference(hidden, weight, labels, num_items=1000), torch.float32)
    with pytest.raises(ValueError):
        chunked_nll(hidden, weight, labels, num_items_in_batch=0)


def test_upstream_gradient_and_frozen_weight():
    hidden, weight, labels, _ = _inputs(2, 20, 16, 100, torch.float32)
    h = hidden.clone().requires_grad_()
    (chunked_nll(h, weight, labels) * 3.0).backward()  # weight is frozen
    _, ref_h, _, _ = _reference(hidden, weight, labels)
    torch.testing.assert_close(h.grad.double(), 3.0 * ref_h, rtol=1e-5, atol=1e-8)


def test_unshifted_2d_input_and_no_grad():
    hidden, weight, labels, _ = _inputs(1, 64, 16, 100, torch.float32)
    h2, y2 = hidden[0], labels[0]  # (N, H), (N,)
    ours = _ours(h2, weight, y2, shift=False, chunk_size=10)
    _check(ours, _reference(h2, weight, y2, shift=False), torch.float32)
    with torch.no_grad():
        assert torch.allclose(chunked_nll(h2, weight, y2, shift=False), ours[0])


def test_autocast_computes_in_bf16_and_returns_fp32_grads():
    hidden, weight, labels, _ = _inputs(2, 40, 32, 300, torch.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ours = _ours(hidden, weight, labels)
    ref = _reference(hidden.bfloat16(), weight.bfloat16(), labels)
    _check(ours, ref, torch.bfloat16)
    assert ours[1].dtype == torch.float32 and ours[2].dtype == torch.float32


@pytest.mark.parametrize("softcap", [None, 4.0])
def test_allocating_softmax_path_used_on_gpus(monkeypatch, softcap):
    """The GPU path (fresh fp32 buffers, whole-chunk blocks) gives the same answers on CPU."""
    from migrate.reference import loss as loss_mod

    monkeypatch.setattr(loss_mod, "_softmax_in_place", lambda device: False)
    hidden, weight, labels, bias = _inputs(2, 33, 16, 300, torch.float32, bias=softcap is not None)
    ours = _ours(hidden, weight, labels, bias=bias, softcap=softcap, chunk_size=20)
    _check(ours, _reference(hidden, weight, labels, bias=bias, softcap=softcap), torch.float32)


def test_bad_shapes_raise():
    with pytest.raises(ValueError):
        chunked_nll(torch.zeros(2, 3, 4), torch.zeros(5, 4), torch.zeros(2, 4, dtype=torch.long))


def test_auto_chunk_size():
    assert auto_chunk_size(32768) == 1024
    assert auto_chunk_size(151936) == 128
    assert auto_chunk_size(248320) == 128
    assert auto_chunk_size(10**7) == 64


def _trl_chunked():
    try:
        from trl.trainer.sft_trainer import _chunked_cross_entropy_loss
    except Exception:  # trl missing, or its internals moved
        return None
    return _chunked_cross_entropy_loss


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_parity_with_trl_1_13(dtype):
    trl_loss = _trl_chunked()
    if trl_loss is None:
        pytest.skip("TRL 1.13's chunked loss is not importable")
    hidden, weight, labels, _ = _inputs(2, 150, 32, 1000, dtype)
    h = hidden.clone().requires_grad_()
    w = weight.clone().requires_grad_()
    theirs = trl_loss(h, w, 256, labels=labels)[0]
    theirs.backward()
    theirs = theirs.detach()
    ours = _ours(hidden, weight, labels, chunk_size=256)
    loss_tol, grad_tol = TOL[dtype]
    assert abs(float(ours[0]) - float(theirs)) <= loss_tol * abs(float(theirs))
    assert _rel(ours[1], h.grad.double()) <= grad_tol
    assert _rel(ours[2], w.grad.double()) <= grad_tol


class _LargestOutput(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the element count of the largest tensor any aten op produces."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in torch.utils._pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, t.numel())
        return out


def test_never_allocates_full_logits():
    n, h, v = 4096, 16, 65536  # full logits: 268M elements (537 MB in bf16); weight: 1M
    hidden = torch.randn(n, h).bfloat16().requires_grad_()
    weight = (torch.randn(v, h) * 0.1).bfloat16().requires_grad_()
    labels = torch.randint(0, v, (n,))
    with _LargestOutput() as mode:
        chunked_nll(hidden, weight, labels, shift=False, chunk_size=256).backward()
    assert weight.grad is not None and hidden.grad is not None
    assert mode.largest <= 256 * v, mode.largest  # one chunk of logits at most
    assert mode.largest < n * v // 8


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@cuda
def test_cuda_matches_fp64():
    hidden, weight, labels, bias = _inputs(4, 257, 128, 5000, torch.bfloat16, bias=True)
    ours = _ours(hidden.cuda(), weight.cuda(), labels.cuda(), bias=bias.cuda(), softcap=10.0)
    ref = _reference(hidden, weight, labels, bias=bias, softcap=10.0)
    _check(tuple(t.cpu() for t in ours), ref, torch.bfloat16)


@cuda
def test_cuda_peak_memory_is_flat_in_n():
    peaks = []
    for n in (1024, 8192):
        hidden = torch.randn(n, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        weight = torch.randn(32768, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        labels = torch.randint(0, 32768, (n,), device="cuda")
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        chunked_nll(hidden, weight, labels, shift=False, chunk_size=256).backward()
        peaks.append(torch.cuda.max_memory_allocated() - base - hidden.grad.nbytes)
    assert peaks[1] <= 1.2 * peaks[0]

"""Which less common torch calls read the GPU on the host: each call runs once to warm up, then again
under `torch.cuda.set_sync_debug_mode("error")`; a call that synchronises raises. Prints `sync` / `no sync`
per call: the measurements behind SYN411 (pack_padded_sequence with device lengths), SYN412 (quantile with a
tensor q), the ReduceLROnPlateau and embedding max_norm notes in docs/rules.md, and the controls that must
stay silent. benchmarks/linalg_sync.py does the same for torch.linalg.

    python benchmarks/op_sync.py        # on a CUDA machine
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence


def calls(dev):
    x = torch.randn(8, 16, 32, device=dev)
    v = torch.randn(1000, device=dev)
    lengths = torch.randint(1, 16, (8,), device=dev)
    idx = torch.randint(0, 100, (8, 16), device=dev)
    w = torch.randn(100, 32, device=dev)
    enc = nn.TransformerEncoderLayer(32, 4, batch_first=True).to(dev).eval()
    mha = nn.MultiheadAttention(32, 4, batch_first=True).to(dev).eval()
    pad = torch.zeros(8, 16, dtype=torch.bool, device=dev)
    pad[:, 12:] = True
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(3, device=dev))], lr=0.1)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)
    emb = nn.Embedding(100, 32, max_norm=1.0).to(dev)
    m = torch.rand(1000, device=dev) > 0.5
    return {
        "pack_padded_sequence(lengths on the device)": lambda: pack_padded_sequence(x, lengths, batch_first=True,
                                                                                  enforce_sorted=False),
        "pack_padded_sequence(lengths.cpu() made earlier)": (lambda lc: lambda: pack_padded_sequence(
            x, lc, batch_first=True, enforce_sorted=False))(lengths.cpu()),
        "pack_padded_sequence(lengths a list)": (lambda ll: lambda: pack_padded_sequence(
            x, ll, batch_first=True, enforce_sorted=False))(lengths.tolist()),
        "torch.quantile(v, q a device tensor)": lambda: torch.quantile(v, torch.tensor([0.1, 0.9], device=dev)),
        "torch.quantile(v, 0.5)": lambda: torch.quantile(v, 0.5),
        "v.quantile(0.5)": lambda: v.quantile(0.5),
        "torch.nanquantile(v, 0.5)": lambda: torch.nanquantile(v, 0.5),
        "TransformerEncoderLayer.eval() no_grad with src_key_padding_mask": lambda: _no_grad(
            lambda: enc(x, src_key_padding_mask=pad)),
        "TransformerEncoderLayer.eval() no_grad, no mask": lambda: _no_grad(lambda: enc(x)),
        "MultiheadAttention.eval() no_grad with key_padding_mask": lambda: _no_grad(
            lambda: mha(x, x, x, key_padding_mask=pad)),
        "F.embedding(max_norm=1.0)": lambda: F.embedding(idx, w.clone(), max_norm=1.0),
        "nn.Embedding(max_norm=1.0)": lambda: emb(idx),
        "F.embedding()": lambda: F.embedding(idx, w),
        "ReduceLROnPlateau.step(a device scalar)": lambda: plateau.step(v.mean()),
        "ReduceLROnPlateau.step(a float)": lambda: plateau.step(0.5),
        "Tensor.to_sparse()": lambda: w.to_sparse(),
        "sparse coalesce()": (lambda s: lambda: s.coalesce())(torch.sparse_coo_tensor(
            torch.randint(0, 10, (2, 50), device=dev), torch.randn(50, device=dev), (10, 10))),
        "torch.combinations(v[:20])": lambda: torch.combinations(v[:20]),
        "torch.cartesian_prod(v[:5], v[:5])": lambda: torch.cartesian_prod(v[:5], v[:5]),
        "Tensor.masked_scatter_(mask, src)": lambda: v.clone().masked_scatter_(m, torch.randn(1000, device=dev)),
        "cuda.index_select(0, cpu index)": lambda: v.index_select(0, torch.arange(5)),
        "torch.segment_reduce(lengths on the device)": lambda: torch.segment_reduce(
            v[:30], "sum", lengths=torch.tensor([10, 10, 10], device=dev)),
        "pad_sequence(list of device tensors)": lambda: pad_sequence([v[:3], v[:5]], batch_first=True),
        "F.interpolate(scale_factor=2)": lambda: F.interpolate(x.unsqueeze(1), scale_factor=2.0),
        "index_put_(accumulate=True)": lambda: v.clone().index_put_((idx.flatten(),), torch.ones(128, device=dev),
                                                                   accumulate=True),
        "torch.isin": lambda: torch.isin(idx, idx[0]),
        "torch.topk(v, 5)": lambda: torch.topk(v, 5),
        "MultivariateNormal(scale_tril=)": lambda: torch.distributions.MultivariateNormal(
            torch.zeros(4, device=dev), scale_tril=torch.eye(4, device=dev), validate_args=False),
        "Categorical(logits).sample() validate_args=False": lambda: torch.distributions.Categorical(
            logits=w, validate_args=False).sample(),
        "x[0] = 5 (x on the device)": (lambda z: lambda: z.__setitem__(0, 5))(torch.zeros(4, dtype=torch.long, device=dev)),
        "x[0] = 0.5 (x on the device)": (lambda z: lambda: z.__setitem__(0, 0.5))(torch.zeros(4, device=dev)),
        "x[1:3] = 0.5 (x on the device)": (lambda z: lambda: z.__setitem__(slice(1, 3), 0.5))(torch.zeros(4, device=dev)),
        "x[:, 0] = 1.0 (x on the device)": (lambda z: lambda: z.__setitem__((slice(None), 0), 1.0))(
            torch.zeros(4, 4, device=dev)),
        "x[0] = t (t a device 0-dim)": (lambda z, t: lambda: z.__setitem__(0, t))(torch.zeros(4, device=dev),
                                                                                 torch.ones((), device=dev)),
        "x[2:4] = t (t on the device, x on the host)": (lambda z, t: lambda: z.__setitem__(slice(2, 4), t))(
            torch.zeros(8), torch.ones(2, device=dev)),
        "x.fill_(5) (x on the device)": (lambda z: lambda: z.fill_(5))(torch.zeros(4, device=dev)),
        # sparse COO construction (ptwt's wavelet matrices): the size inferred from the indices, or given
        "sparse_coo_tensor(device indices, values) without size": (lambda i, v: lambda: torch.sparse_coo_tensor(
            i, v))(torch.randint(0, 50, (2, 64), device=dev), torch.randn(64, device=dev)),
        "sparse_coo_tensor(device indices, values, size)": (lambda i, v: lambda: torch.sparse_coo_tensor(
            i, v, (50, 50)))(torch.randint(0, 50, (2, 64), device=dev), torch.randn(64, device=dev)),
        "sparse_coo_tensor(device indices, values, size, check_invariants=True)": (
            lambda i, v: lambda: torch.sparse_coo_tensor(i, v, (50, 50), check_invariants=True))(
            torch.randint(0, 50, (2, 64), device=dev), torch.randn(64, device=dev)),
        "sparse_coo_tensor(host indices, host values, size, device=cuda)": (
            lambda i, v: lambda: torch.sparse_coo_tensor(i, v, (50, 50), device=dev))(
            torch.randint(0, 50, (2, 64)), torch.randn(64)),
        "for row in sparse (unbind)": (lambda sp: lambda: [r for r in sp])(
            torch.sparse_coo_tensor(torch.randint(0, 50, (2, 64), device=dev), torch.randn(64, device=dev),
                                    (50, 50)).coalesce()),
        "torch.sparse.mm(sparse, dense)": (lambda sp, d: lambda: torch.sparse.mm(sp, d))(
            torch.sparse_coo_tensor(torch.randint(0, 50, (2, 64), device=dev), torch.randn(64, device=dev),
                                    (50, 50)).coalesce(), torch.randn(50, 8, device=dev)),
        "torch.allclose(a, b) (device)": (lambda a: lambda: torch.allclose(a, a))(torch.randn(8, device=dev)),
        "torch.zeros(n).to(t) (t on the device)": (lambda t: lambda: torch.zeros(8).to(t))(torch.randn(8, device=dev)),
        "GradScaler.unscale_ + update": (lambda s, o: lambda: (s.scale(o.param_groups[0]["params"][0].sum()).backward(),
                                                           s.unscale_(o), s.update()))(
            torch.amp.GradScaler("cuda"), torch.optim.SGD([nn.Parameter(torch.ones(3, device=dev))], lr=0.1)),
    }


def _no_grad(f):
    with torch.no_grad():
        return f()


def check(f, width: int = 100) -> str:
    """`sync` / `no sync` for one call of `f` after a warm-up (or the error it raised)."""
    try:
        f()
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            f()
            return "no sync"
        except RuntimeError as e:
            return "sync" if "synchroniz" in str(e) else f"error {str(e)[:width]}"
        finally:
            torch.cuda.set_sync_debug_mode(0)
    except Exception as e:  # noqa: BLE001 - a call this torch does not take
        return f"error {type(e).__name__}: {str(e)[:width]}"


def main() -> None:
    dev = torch.device("cuda")
    for name, f in calls(dev).items():
        print(f"{name:70} {check(f)}", flush=True)


if __name__ == "__main__":
    main()

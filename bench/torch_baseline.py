#!/usr/bin/env python3
# ===- torch_baseline.py - PyTorch eager baselines for la-bench --------------=== #
#
# Times PyTorch eager implementations of the four kernels la-bench measures, written the way the official
# code runs them (thuml/Flowformer `Flow_Attention.py` for Flow-Attention, causal form included with its
# cumsum of per-position einsum outer products; idiap/fast-transformers `linear_attention.py` for linear
# attention, and the same cumsum construction for causal linear attention), on [B, H, N, D] inputs.
#
# Prints one JSON line per (kernel, N): {"kernel", "N", "median_ms", "min_ms", "threads", "torch_version"},
# or {"kernel", "N", "skipped": "needs X GiB"} when the materialised [B,H,N,D,Dv] tensor of a causal form
# exceeds --limit-gib. Without torch it prints {"torch": null} and exits 0, so la-bench shows "n/a".
# `--check` instead compares each implementation with a naive quadratic float64 form at small N
# (SPEC.md section 7) and prints {"check": kernel, "rel_rms": ...}.
#
# ===----------------------------------------------------------------------------------------------=== #
import argparse
import json
import statistics
import sys
import time

EPS = 1e-6


def flow_attention(torch, queries, keys, values, eps=EPS):
    """Flow_Attention.forward after the projections (normal, N sinks and M sources)."""
    queries = torch.sigmoid(queries)
    keys = torch.sigmoid(keys)
    sink_incoming = 1.0 / torch.einsum("nhld,nhd->nhl", queries + eps, keys.sum(dim=2) + eps)
    source_outgoing = 1.0 / torch.einsum("nhld,nhd->nhl", keys + eps, queries.sum(dim=2) + eps)
    conserved_sink = torch.einsum("nhld,nhd->nhl", queries + eps,
                                  (keys * source_outgoing[:, :, :, None]).sum(dim=2) + eps)
    conserved_source = torch.einsum("nhld,nhd->nhl", keys + eps,
                                    (queries * sink_incoming[:, :, :, None]).sum(dim=2) + eps)
    conserved_source = torch.clamp(conserved_source, min=-1.0, max=1.0)
    sink_allocation = torch.sigmoid(conserved_sink * (float(queries.shape[2]) / float(keys.shape[2])))
    source_competition = torch.softmax(conserved_source, dim=-1) * float(keys.shape[2])
    kv = torch.einsum("nhld,nhlm->nhdm", keys, values * source_competition[:, :, :, None])
    qkv = torch.einsum("nhld,nhdm->nhlm", queries * sink_incoming[:, :, :, None], kv)
    return qkv * sink_allocation[:, :, :, None]


def flow_attention_causal(torch, queries, keys, values, eps=EPS):
    """Flow_Attention_Causal.forward after the projections."""
    queries = torch.sigmoid(queries)
    keys = torch.sigmoid(keys)
    sink_incoming = 1.0 / torch.einsum("nhld,nhld->nhl", queries + eps, keys.cumsum(dim=2) + eps)
    source_outgoing = 1.0 / torch.einsum("nhld,nhld->nhl", keys + eps, queries.cumsum(dim=2) + eps)
    normal = ((torch.arange(queries.shape[2])).float() + 1.0).to(queries.device)[None, None, :]
    sink_incoming = sink_incoming * normal
    source_outgoing = source_outgoing * normal
    conserved_sink = torch.einsum("nhld,nhld->nhl", queries + eps,
                                  (keys * source_outgoing[:, :, :, None]).cumsum(dim=2) + eps) / normal
    conserved_source = torch.einsum("nhld,nhld->nhl", keys + eps,
                                    (queries * sink_incoming[:, :, :, None]).cumsum(dim=2) + eps) / normal
    conserved_source = torch.clamp(conserved_source, min=-1.0, max=1.0)
    sink_allocation = torch.sigmoid(conserved_sink)
    conserved_source = torch.exp(conserved_source)
    source_competition = (conserved_source / conserved_source.cumsum(dim=-1)) * normal
    q = queries * (sink_incoming / normal)[:, :, :, None]
    v = values * source_competition[:, :, :, None]
    # causal_dot_product: every position's k ⊗ v, cumsum over positions, contract with q.
    kv = torch.einsum("nhld,nhlm->nhldm", keys, v)
    kv = torch.cumsum(kv, dim=2)
    qkv = torch.einsum("nhld,nhldm->nhlm", q, kv)
    return qkv * sink_allocation[:, :, :, None]


def linear_attention(torch, queries, keys, values, eps=EPS):
    """fast-transformers LinearAttention with elu_feature_map, head-major layout."""
    q = torch.nn.functional.elu(queries) + 1
    k = torch.nn.functional.elu(keys) + 1
    kv = torch.einsum("nhsd,nhsm->nhdm", k, values)
    z = 1 / (torch.einsum("nhld,nhd->nhl", q, k.sum(dim=2)) + eps)
    return torch.einsum("nhld,nhdm,nhl->nhlm", q, kv, z)


def linear_attention_causal(torch, queries, keys, values, eps=EPS):
    """Causal linear attention the eager way: cumsum of per-position outer products."""
    q = torch.nn.functional.elu(queries) + 1
    k = torch.nn.functional.elu(keys) + 1
    kv = torch.einsum("nhld,nhlm->nhldm", k, values)
    kv = torch.cumsum(kv, dim=2)
    num = torch.einsum("nhld,nhldm->nhlm", q, kv)
    den = torch.einsum("nhld,nhld->nhl", q, k.cumsum(dim=2)) + eps
    return num / den[:, :, :, None]


KERNELS = {
    "flow_attention": (flow_attention, False),
    "flow_attention_causal": (flow_attention_causal, True),
    "linear_attention": (linear_attention, False),
    "linear_attention_causal": (linear_attention_causal, True),
}


def naive(torch, name, q, k, v, eps=EPS):
    """Quadratic float64 oracle per SPEC.md section 7, written independently of the functions above."""
    q, k, v = q.double(), k.double(), v.double()
    n, m = q.shape[2], k.shape[2]
    causal = name.endswith("_causal")
    mask = torch.ones(n, m, dtype=torch.float64)
    if causal:
        mask = torch.tril(mask)
    if name.startswith("linear"):
        a = (torch.nn.functional.elu(q) + 1) @ (torch.nn.functional.elu(k) + 1).transpose(-1, -2) * mask
        return (a @ v) / (a.sum(-1, keepdim=True) + eps)
    qs, ks = torch.sigmoid(q), torch.sigmoid(k)
    if not causal:
        a = 1 / ((qs + eps) @ (ks.sum(2) + eps)[..., None])[..., 0]
        b = 1 / ((ks + eps) @ (qs.sum(2) + eps)[..., None])[..., 0]
        i_hat = ((qs + eps) @ ((ks * b[..., None]).sum(2) + eps)[..., None])[..., 0]
        o_hat = ((ks + eps) @ ((qs * a[..., None]).sum(2) + eps)[..., None])[..., 0]
        o_hat = o_hat.clamp(-1, 1)
        alloc = torch.sigmoid(i_hat * n / m)
        comp = torch.softmax(o_hat, -1) * m
    else:
        count = torch.arange(1, n + 1, dtype=torch.float64)
        a = count / ((qs + eps) * (ks.cumsum(2) + eps)).sum(-1)
        b = count / ((ks + eps) * (qs.cumsum(2) + eps)).sum(-1)
        i_hat = ((qs + eps) * ((ks * b[..., None]).cumsum(2) + eps)).sum(-1) / count
        o_hat = (((ks + eps) * ((qs * a[..., None]).cumsum(2) + eps)).sum(-1) / count).clamp(-1, 1)
        alloc = torch.sigmoid(i_hat)
        e = torch.exp(o_hat)
        comp = count * e / e.cumsum(-1)
        a = a / count
    attn = (qs @ ks.transpose(-1, -2)) * mask
    return alloc[..., None] * a[..., None] * (attn @ (v * comp[..., None]))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sizes", default="1024,4096,16384")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--dim-v", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--limit-gib", type=float, default=2.0,
                        help="skip a causal form whose [B,H,N,D,Dv] tensor exceeds this")
    parser.add_argument("--only", choices=["flow", "linear"])
    parser.add_argument("--check", action="store_true", help="compare with the naive fp64 oracle and exit")
    args = parser.parse_args()

    try:
        import torch
    except Exception:  # not installed, or broken: la-bench shows n/a
        print(json.dumps({"torch": None}), flush=True)
        return 0

    torch.set_num_threads(args.threads)
    names = [name for name in KERNELS if args.only is None or name.startswith(args.only)]
    b, h, d, dv = args.batch, args.heads, args.dim, args.dim_v

    if args.check:
        generator = torch.Generator().manual_seed(0)
        worst = 0.0
        for name in names:
            for n in (1, 7, 33):
                m = n if KERNELS[name][1] else n + 2
                q = torch.randn(2, 3, n, 5, generator=generator) * 3
                k = torch.randn(2, 3, m, 5, generator=generator) * 3
                v = torch.randn(2, 3, m, 4, generator=generator)
                with torch.inference_mode():
                    got = KERNELS[name][0](torch, q, k, v).double()
                want = naive(torch, name, q, k, v)
                rel = float((got - want).norm() / want.norm())
                worst = max(worst, rel)
                print(json.dumps({"check": name, "N": n, "M": m, "rel_rms": rel}), flush=True)
        return 0 if worst < 1e-5 else 1

    generator = torch.Generator().manual_seed(20240611)
    for n in [int(x) for x in args.sizes.split(",") if x]:
        q = torch.randn(b, h, n, d, generator=generator)
        k = torch.randn(b, h, n, d, generator=generator)
        v = torch.randn(b, h, n, dv, generator=generator)
        for name in names:
            fn, causal = KERNELS[name]
            # Flowformer's causal code also materialises a second tensor of this size (the cumsum).
            big = 4.0 * b * h * n * d * dv
            if causal and big > args.limit_gib * 2**30:
                print(json.dumps({"kernel": name, "N": n,
                                  "skipped": "needs %.1f GiB" % (2 * big / 2**30)}), flush=True)
                continue
            times = []
            with torch.inference_mode():
                fn(torch, q, k, v)  # warm-up: first-call allocations and dispatch caches
                for _ in range(max(1, args.repeat)):
                    start = time.perf_counter()
                    fn(torch, q, k, v)
                    times.append((time.perf_counter() - start) * 1e3)
            print(json.dumps({"kernel": name, "N": n, "median_ms": statistics.median(times),
                              "min_ms": min(times), "threads": torch.get_num_threads(),
                              "torch_version": torch.__version__}), flush=True)
            print("[torch] %s N=%d: median %.3f ms" % (name, n, statistics.median(times)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# ===- torch_baseline.py - PyTorch baselines (eager and torch.compile) for la-bench ---------------=== #
#
# Times PyTorch implementations of the kernels la-bench measures, eagerly and under torch.compile, written
# the way the official code runs them (thuml/Flowformer `Flow_Attention.py` for Flow-Attention, causal form
# included with its cumsum of per-position einsum outer products; idiap/fast-transformers
# `linear_attention.py` for linear attention, and the same cumsum construction for causal linear attention),
# on [B, H, N, D] inputs; and the AFT, GAU/FLASH and decay-scan kernels (SPEC.md sections 3-5): the AFT
# paper's equations (AFT-full as two matrix products), lucidrains/FLASH-pytorch's GAU and FLASH after the
# projections, and fla's chunked torch form of retention / simple GLA / GLA, at the shapes of LIBRARY below
# (which mirror `libraryCases` in la-bench.cpp; every row carries its shape, and la-bench ignores rows whose
# shape differs). scripts/setup-torch makes a virtual environment with torch that la-bench finds.
#
# Prints one JSON line per (kernel, N, mode): {"kernel", "N", "mode", "median_ms", "min_ms", "warmup_s",
# "threads", "torch_version"}, mode "eager" or "compile" (--modes), or {"kernel", "N", "skipped": "needs X
# GiB"} when the largest tensor the form materialises exceeds --limit-gib. Without torch it prints
# {"torch": null} and exits 0, so la-bench shows "n/a".
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


# ---------------------------------------------------------------------------------------------------------
# AFT (SPEC.md section 3): q, k, v [B, T, d]; w [T, T] (aft_conv: q, k, v [B, X, Y, h, c], X*Y = T; w [h, 7, 7])
# ---------------------------------------------------------------------------------------------------------

AFT_LOCAL_WINDOW = 64
FLASH_CHUNK = 256
DECAY_CHUNK = 64


def aft_causal(torch, q, k, v):
    ek = torch.exp(k - k.amax(dim=1, keepdim=True))
    return torch.sigmoid(q) * torch.cumsum(ek * v, dim=1) / torch.cumsum(ek, dim=1)


def aft_simple(torch, q, k, v):
    return torch.sigmoid(q) * (torch.softmax(k, dim=1) * v).sum(dim=1, keepdim=True)


def band_mask(torch, t, window=AFT_LOCAL_WINDOW):
    """The 0/1 band |t - t'| < window: a module buffer, built once outside the timed call."""
    idx = torch.arange(t)
    return ((idx[:, None] - idx[None, :]).abs() < window).float()


def aft_local(torch, q, k, v, w, band):
    """SPEC section 3: global sums plus the band of e^w - 1 as a dense matrix product."""
    ek = torch.exp(k - k.amax(dim=1, keepdim=True))
    ekv = ek * v
    wm1 = torch.expm1(w) * band
    num = wm1 @ ekv + ekv.sum(dim=1, keepdim=True)
    den = wm1 @ ek + ek.sum(dim=1, keepdim=True)
    return torch.sigmoid(q) * num / den


AFT_CONV_KERNEL = 7
AFT_CONV_MAX_X = 32


def aft_conv_image(t):
    """T positions as an X x Y image: X the largest divisor of T not above 32, Y = T / X (aftConvImage)."""
    x = max(1, min(t, AFT_CONV_MAX_X))
    while x > 1 and t % x:
        x -= 1
    return x, t // x


def aft_conv(torch, q, k, v, w):
    """SPEC section 3's conv form on [B, X, Y, h, c]: global sums plus two depthwise F.conv2d's (groups = h*c,
    padding 3, cross-correlation: w[i, p + dx, p + dy] weighs the key at offset (dx, dy)) with e^w - 1."""
    b, x, y, h, c = q.shape
    ek = torch.exp(k - k.amax(dim=(1, 2), keepdim=True))
    ekv = ek * v
    weight = torch.expm1(w).repeat_interleave(c, dim=0)[:, None]  # [h*c, 1, 7, 7]

    def conv(t):  # [B, X, Y, h, c] -> channels_last [B, h*c, X, Y] view, conv, and back
        nchw = t.reshape(b, x, y, h * c).permute(0, 3, 1, 2)
        out = torch.nn.functional.conv2d(nchw, weight, padding=AFT_CONV_KERNEL // 2, groups=h * c)
        return out.permute(0, 2, 3, 1).reshape(b, x, y, h, c)

    num = conv(ekv) + ekv.sum(dim=(1, 2), keepdim=True)
    den = conv(ek) + ek.sum(dim=(1, 2), keepdim=True)
    return torch.sigmoid(q) * num / den


def aft_full(torch, q, k, v, w):
    """The AFT paper's matrix form: e^(w + K) factored into e^(w - max w) e^(K - max K), two matrix products.
    (The joint [B, T, T, d] softmax of SPEC section 7 is 30x slower; this is what a PyTorch user writes. It
    loses rows whose factored normaliser underflows, which the timed inputs never reach.)"""
    ew = torch.exp(w - w.amax(dim=1, keepdim=True))
    ek = torch.exp(k - k.amax(dim=1, keepdim=True))
    return torch.sigmoid(q) * (ew @ (ek * v)) / (ew @ ek)


def causal_mask(torch, t):
    """True where t' > t, the positions aft_full_causal hides: a module buffer, built once outside the call."""
    idx = torch.arange(t)
    return idx[None, :] > idx[:, None]


def aft_full_causal(torch, q, k, v, w, hidden):
    """aft_full with w at -inf where t' > t: e^(w - max w) is 0 there, so the same two matrix products."""
    return aft_full(torch, q, k, v, w.masked_fill(hidden, float("-inf")))


# ---------------------------------------------------------------------------------------------------------
# GAU / FLASH (SPEC.md section 4): u, v [B, N, e]; q/k pairs [B, N, s]
# ---------------------------------------------------------------------------------------------------------

def gau(torch, u, v, q, k):
    n, s = q.shape[1], q.shape[2]
    attn = torch.relu(q @ k.transpose(-1, -2)) ** 2 / (n * s)
    return u * (attn @ v)


def flash_common(torch, u, v, qq, kq, ql, kl, causal, c=FLASH_CHUNK):
    """lucidrains FLASH after the projections: pad N to whole groups, quadratic part per group, linear part
    global (non-causal, / N) or as an exclusive cumsum of group states (causal, / tokens before the group)."""
    b, n, s = qq.shape
    e = v.shape[-1]
    pad = (-n) % c
    if pad:  # padded keys and values are zero: they add nothing to either part
        u, v, qq, kq, ql, kl = (torch.nn.functional.pad(x, (0, 0, 0, pad)) for x in (u, v, qq, kq, ql, kl))
    g = (n + pad) // c
    qg, kg, vg = qq.view(b, g, c, s), kq.view(b, g, c, s), v.view(b, g, c, e)
    attn = torch.relu(qg @ kg.transpose(-1, -2)) ** 2 / (c * s)
    if causal:
        attn = attn.masked_fill(~torch.ones(c, c, dtype=torch.bool).tril(), 0.0)
    quad = attn @ vg
    if not causal:
        lin_kv = torch.einsum("bnd,bne->bde", kl, v) / n
        lin = (ql @ lin_kv).view(b, g, c, e)
    else:
        lin_kv = torch.einsum("bgnd,bgne->bgde", kl.view(b, g, c, s), vg)
        lin_kv = torch.nn.functional.pad(lin_kv.cumsum(dim=1), (0, 0, 0, 0, 1, -1))
        count = (torch.arange(g) * c).clamp(min=1).to(qq.dtype)
        lin = (ql.view(b, g, c, s) @ lin_kv) / count[None, :, None, None]
    return (u.view(b, g, c, e) * (quad + lin)).reshape(b, g * c, e)[:, :n]


def flash(torch, u, v, qq, kq, ql, kl):
    return flash_common(torch, u, v, qq, kq, ql, kl, False)


def flash_causal(torch, u, v, qq, kq, ql, kl):
    return flash_common(torch, u, v, qq, kq, ql, kl, True)


# ---------------------------------------------------------------------------------------------------------
# Decay scans (SPEC.md section 5): q, k [B, H, T, K]; v [B, H, T, V]; g [B, H, T] or [B, H, T, K]
# ---------------------------------------------------------------------------------------------------------

def retention_gates(torch, b, h, t):
    """log(1 - 2^(-5-h)) per head, broadcast to [B, H, T] (fla's retention)."""
    heads = torch.arange(h, dtype=torch.float64)
    return torch.log1p(-torch.exp2(-5.0 - heads)).float()[None, :, None].expand(b, h, t)


def decay_chunked(torch, q, k, v, g, per_key, c=DECAY_CHUNK):
    """fla's chunked torch form: decay-masked score tiles per chunk, chunk states by a loop over chunks."""
    b, h, t, kd = q.shape
    vd = v.shape[-1]
    pad = (-t) % c
    if pad:  # padded positions have zero q, k, v and gate 0 (no decay)
        q, k, v = (torch.nn.functional.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
        g = torch.nn.functional.pad(g, (0, 0, 0, pad) if per_key else (0, pad))
    n = (t + pad) // c
    q = (q * kd ** -0.5).view(b, h, n, c, kd)
    k = k.view(b, h, n, c, kd)
    v = v.view(b, h, n, c, vd)
    mask = torch.ones(c, c, dtype=torch.bool).tril()
    if not per_key:
        bc = g.reshape(b, h, n, c).cumsum(-1)
        decay = (bc[..., :, None] - bc[..., None, :]).masked_fill(~mask, float("-inf")).exp()
        scores = (q @ k.transpose(-1, -2)) * decay
        qe = q * bc.exp()[..., None]
        kdec = k * (bc[..., -1:] - bc).exp()[..., None]
        chunk_decay = bc[..., -1].exp()[..., None, None]  # [B, H, n, 1, 1]
    else:
        bc = g.reshape(b, h, n, c, kd).cumsum(-2)
        qe = q * bc.exp()
        scores = (qe @ (k * (-bc).exp()).transpose(-1, -2)).masked_fill(~mask, 0.0)
        kdec = k * (bc[..., -1:, :] - bc).exp()
        chunk_decay = bc[..., -1, :].exp()[..., :, None]  # [B, H, n, K, 1]
    intra = scores @ v
    kv = kdec.transpose(-1, -2) @ v
    state = q.new_zeros(b, h, kd, vd)
    inter = []
    for i in range(n):
        inter.append(qe[:, :, i] @ state)
        state = state * chunk_decay[:, :, i] + kv[:, :, i]
    out = (intra + torch.stack(inter, dim=2)).reshape(b, h, n * c, vd)
    return out[:, :, :t]


def retention(torch, q, k, v):
    b, h, t, _ = q.shape
    return decay_chunked(torch, q, k, v, retention_gates(torch, b, h, t), False)


def simple_gla(torch, q, k, v, g):
    return decay_chunked(torch, q, k, v, g, False)


def gla(torch, q, k, v, g):
    return decay_chunked(torch, q, k, v, g, True)


# name: (function, family, shape dict, argument names, T cap or None). Mirrors la-bench.cpp's libraryCases.
LIBRARY = {
    "aft_causal": (aft_causal, "aft", dict(B=2, d=512), "q k v", None),
    "aft_simple": (aft_simple, "aft", dict(B=2, d=512), "q k v", None),
    "aft_local": (aft_local, "aft", dict(B=2, d=64), "q k v w", None),
    "aft_full": (aft_full, "aft", dict(B=2, d=64), "q k v w", None),
    "aft_full_causal": (aft_full_causal, "aft", dict(B=2, d=64), "q k v w", None),
    "aft_conv": (aft_conv, "aft", dict(B=2, h=8, c=64), "q k v w", None),
    "gau": (gau, "flash", dict(B=2, s=128, e=256), "u v q k", 4096),
    "flash": (flash, "flash", dict(B=2, s=128, e=256), "u v qq kq ql kl", None),
    "flash_causal": (flash_causal, "flash", dict(B=2, s=128, e=256), "u v qq kq ql kl", None),
    "retention": (retention, "decay", dict(B=2, H=8, K=64, V=64), "q k v", None),
    "simple_gla": (simple_gla, "decay", dict(B=2, H=8, K=64, V=64), "q k v g", None),
    "gla": (gla, "decay", dict(B=2, H=8, K=64, V=64), "q k v g", None),
}


def library_shape_text(name, dims, t):
    """The shape column of la-bench (describeLibraryShape)."""
    family = LIBRARY[name][1]
    if name == "aft_conv":
        x, y = aft_conv_image(t)
        return "B=%d h=%d c=%d X=%d Y=%d s=%d" % (dims["B"], dims["h"], dims["c"], x, y, AFT_CONV_KERNEL)
    if family == "aft":
        return "B=%d d=%d" % (dims["B"], dims["d"]) + (" s=%d" % AFT_LOCAL_WINDOW if name == "aft_local" else "")
    if family == "flash":
        return "B=%d s=%d e=%d" % (dims["B"], dims["s"], dims["e"]) + ("" if name == "gau" else " c=%d" % FLASH_CHUNK)
    return "B=%d H=%d K=%d V=%d" % (dims["B"], dims["H"], dims["K"], dims["V"])


def library_inputs(torch, name, t, dims, generator):
    """The arguments of `name` in signature order: torch.randn, log-gates F.logsigmoid(torch.randn)."""
    family = LIBRARY[name][1]
    shapes = {}
    if name == "aft_conv":
        b, h, c = dims["B"], dims["h"], dims["c"]
        x, y = aft_conv_image(t)
        shapes = dict(q=(b, x, y, h, c), k=(b, x, y, h, c), v=(b, x, y, h, c),
                      w=(h, AFT_CONV_KERNEL, AFT_CONV_KERNEL))
    elif family == "aft":
        b, d = dims["B"], dims["d"]
        shapes = dict(q=(b, t, d), k=(b, t, d), v=(b, t, d), w=(t, t))
    elif family == "flash":
        b, s, e = dims["B"], dims["s"], dims["e"]
        shapes = dict(u=(b, t, e), v=(b, t, e), q=(b, t, s), k=(b, t, s), qq=(b, t, s), kq=(b, t, s),
                      ql=(b, t, s), kl=(b, t, s))
    else:
        b, h, kd, vd = dims["B"], dims["H"], dims["K"], dims["V"]
        shapes = dict(q=(b, h, t, kd), k=(b, h, t, kd), v=(b, h, t, vd),
                      g=(b, h, t, kd) if name == "gla" else (b, h, t))
    args = []
    for arg in LIBRARY[name][3].split():
        x = torch.randn(*shapes[arg], generator=generator)
        args.append(torch.nn.functional.logsigmoid(x) if arg == "g" else x)
    if name == "aft_local":
        args.append(band_mask(torch, t))
    if name == "aft_full_causal":
        args.append(causal_mask(torch, t))
    return args


def library_largest_bytes(name, t, dims):
    """The largest tensor the eager form materialises (as la-bench's libraryReferenceLargestTensorBytes)."""
    if name in ("aft_full", "aft_full_causal", "aft_local"):
        return 4.0 * t * t
    if name == "aft_conv":
        return 4.0 * dims["B"] * t * dims["h"] * dims["c"]
    if name == "gau":
        return 4.0 * dims["B"] * t * t
    return 0.0


def naive_library(torch, name, args):
    """Quadratic float64 oracles per SPEC.md section 7, written from the formulas, not from the code above."""
    a = [x.double() for x in args]
    if name == "aft_conv":
        # Every (head, channel) image over all positions with the effective bias w_eff = w[i, p + dx, p + dy]
        # inside the kernel's reach and 0 (not -inf) outside.
        q, k, v, w = a
        b, x, y, h, c = q.shape
        p = AFT_CONV_KERNEL // 2
        xs = torch.arange(x)[:, None].expand(x, y).reshape(-1)
        ys = torch.arange(y)[None, :].expand(x, y).reshape(-1)
        dx = xs[None, :] - xs[:, None]  # [P, P']: offset of key P' from query P
        dy = ys[None, :] - ys[:, None]
        inside = (dx.abs() <= p) & (dy.abs() <= p)
        bias = torch.where(inside[None], w[:, (dx + p).clamp(0, 2 * p), (dy + p).clamp(0, 2 * p)],
                           torch.zeros(h, x * y, x * y, dtype=torch.float64))  # [h, P, P']
        kf, vf = k.reshape(b, x * y, h, c), v.reshape(b, x * y, h, c)
        logits = bias.permute(1, 2, 0)[None, :, :, :, None] + kf[:, None]  # [B, P, P', h, c]
        avg = (torch.softmax(logits, dim=2) * vf[:, None]).sum(2)
        return torch.sigmoid(q) * avg.reshape(b, x, y, h, c)
    if LIBRARY[name][1] == "aft":
        q, k, v = a[0], a[1], a[2]
        t = q.shape[1]
        idx = torch.arange(t)
        if name == "aft_causal":
            w = torch.zeros(t, t, dtype=torch.float64).masked_fill(idx[None, :] > idx[:, None], float("-inf"))
        elif name == "aft_simple":
            w = torch.zeros(t, t, dtype=torch.float64)
        elif name == "aft_local":
            w = torch.where((idx[:, None] - idx[None, :]).abs() < AFT_LOCAL_WINDOW, a[3], torch.zeros_like(a[3]))
        elif name == "aft_full_causal":
            w = a[3].masked_fill(idx[None, :] > idx[:, None], float("-inf"))
        else:
            w = a[3]
        weights = torch.softmax(w[None, :, :, None] + k[:, None, :, :], dim=2)
        return torch.sigmoid(q) * (weights * v[:, None]).sum(2)
    if LIBRARY[name][1] == "flash":
        u, v = a[0], a[1]
        n, s = a[2].shape[1], a[2].shape[2]
        relu2 = lambda x: torch.clamp(x, min=0) ** 2
        if name == "gau":
            return u * ((relu2(a[2] @ a[3].transpose(-1, -2)) / (n * s)) @ v)
        idx = torch.arange(n)
        group = idx // FLASH_CHUNK
        block = (group[:, None] == group[None, :]).double()
        prior = (idx[None, :] < (group * FLASH_CHUNK)[:, None]).double()
        if name == "flash_causal":
            block = block * (idx[None, :] <= idx[:, None]).double()
        quad = (relu2(a[2] @ a[3].transpose(-1, -2)) / (FLASH_CHUNK * s) * block) @ v
        scores = a[4] @ a[5].transpose(-1, -2)
        if name == "flash":
            lin = scores @ v / n
        else:
            lin = (scores * prior) @ v / (group * FLASH_CHUNK).clamp(min=1).double()[:, None]
        return u * (quad + lin)
    q, k, v = a[0], a[1], a[2]
    b, h, t, kd = q.shape
    g = retention_gates(torch, b, h, t).double() if name == "retention" else a[3]
    if g.dim() == 3:
        g = g[..., None].expand(b, h, t, kd)
    cum = g.cumsum(2)  # [B, H, T, K]; small T only, so the differences stay accurate
    idx = torch.arange(t)
    causal = (idx[None, :] <= idx[:, None]).double()[..., None]
    decay = torch.exp((cum[:, :, :, None, :] - cum[:, :, None, :, :]) * causal) * causal  # [B,H,T,T,K]
    scores = torch.einsum("bhtk,bhsk,bhtsk->bhts", q * kd ** -0.5, k, decay)
    return scores @ v


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


def measure(torch, fn, inputs, mode, repeat):
    """Median and minimum milliseconds of `repeat` calls after one warm-up, and the warm-up's seconds (for
    `compile`, the torch.compile of `fn` at these shapes: tracing, inductor's C++ and its g++ build)."""
    call = lambda *a: fn(torch, *a)
    if mode == "compile":
        # Every kernel's wrapper shares one code object, and Dynamo stops recompiling one after
        # cache_size_limit shapes (then runs it eagerly without a word): start each kernel afresh.
        torch._dynamo.reset()
        call = torch.compile(call, dynamic=False)
    times = []
    with torch.inference_mode():
        start = time.perf_counter()
        call(*inputs)  # warm-up: first-call allocations, dispatch caches, compilation
        warmup_s = time.perf_counter() - start
        for _ in range(max(1, repeat)):
            start = time.perf_counter()
            call(*inputs)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times), warmup_s


def report(torch, name, n, shape, mode, median_ms, min_ms, warmup_s):
    line = {"kernel": name, "N": n}
    if shape is not None:
        line["shape"] = shape
    line.update({"mode": mode, "median_ms": median_ms, "min_ms": min_ms, "warmup_s": round(warmup_s, 3),
                 "threads": torch.get_num_threads(), "torch_version": torch.__version__})
    print(json.dumps(line), flush=True)
    print("[torch] %s N=%d %s: median %.3f ms (warm-up %.1f s)" % (name, n, mode, median_ms, warmup_s),
          file=sys.stderr)


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
    parser.add_argument("--only", help="comma-separated families: flow, linear, aft, flash, decay")
    parser.add_argument("--modes", default="eager,compile",
                        help="comma-separated: eager (as written), compile (torch.compile of the same function)")
    parser.add_argument("--check", action="store_true", help="compare with the naive fp64 oracle and exit")
    args = parser.parse_args()

    try:
        import torch
    except Exception:  # not installed, or broken: la-bench shows n/a
        print(json.dumps({"torch": None}), flush=True)
        return 0

    torch.set_num_threads(args.threads)
    modes = [mode for mode in args.modes.split(",") if mode]
    if any(mode not in ("eager", "compile") for mode in modes):
        parser.error("--modes takes eager and/or compile, not %r" % args.modes)
    families = None if args.only is None else args.only.split(",")
    names = [name for name in KERNELS if families is None or name.split("_")[0] in families]
    library = [name for name in LIBRARY if families is None or LIBRARY[name][1] in families]
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
        # The library kernels at small, narrow shapes; T not a multiple of either chunk, and several chunks.
        small = dict(B=2, H=3, d=6, s=5, e=4, K=5, V=4, h=3, c=4)
        for name in library:
            for n in (1, 37, 300, 512):
                with torch.inference_mode():
                    inputs = library_inputs(torch, name, n, small, generator)
                    got = LIBRARY[name][0](torch, *inputs).double()
                want = naive_library(torch, name, inputs[:len(LIBRARY[name][3].split())])
                rel = float((got - want).norm() / want.norm())
                worst = max(worst, rel)
                print(json.dumps({"check": name, "N": n, "rel_rms": rel}), flush=True)
        return 0 if worst < 1e-5 else 1

    generator = torch.Generator().manual_seed(20240611)
    for n in [int(x) for x in args.sizes.split(",") if x]:
        if names:
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
            for mode in modes:
                report(torch, name, n, None, mode, *measure(torch, fn, (q, k, v), mode, args.repeat))
        for name in library:
            fn, _, dims, _, cap = LIBRARY[name]
            shape = library_shape_text(name, dims, n)
            if cap is not None and n > cap:
                print(json.dumps({"kernel": name, "N": n, "shape": shape,
                                  "skipped": "above T=%d (quadratic)" % cap}), flush=True)
                continue
            big = library_largest_bytes(name, n, dims)
            if big > args.limit_gib * 2**30:
                print(json.dumps({"kernel": name, "N": n, "shape": shape,
                                  "skipped": "needs %.1f GiB" % (2 * big / 2**30)}), flush=True)
                continue
            inputs = library_inputs(torch, name, n, dims, generator)
            for mode in modes:
                report(torch, name, n, shape, mode, *measure(torch, fn, inputs, mode, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())

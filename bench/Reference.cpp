//===- Reference.cpp - Unfused eager-style flow/linear baselines ----------===//
//
// The unfused reference mirrors the op sequence of the official code (thuml/Flowformer `Flow_Attention.py`,
// idiap/fast-transformers `linear_attention.py`) one tensor op at a time, including its redundancies (the
// official code computes `queries + eps` twice, so this does too): that is the cost an eager framework pays,
// and what a fused kernel is supposed to remove. Each op allocates its result uninitialised (like
// `torch.empty`) and first touches it inside the parallel loop, so page faults of large fresh tensors are
// part of the time, as they are in eager mode.
// The tensor ops themselves (and why exp is a polynomial) are in EagerOps.h.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "EagerOps.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

using namespace la::bench;

namespace {

using namespace la::bench::eager;

//===----------------------------------------------------------------------===//
// The four kernels, op for op as in the official code
//===----------------------------------------------------------------------===//

/// thuml/Flowformer Flow_Attention.forward after the projections.
void flowNormal(const Shape &sh, const float *q, const float *k, const float *v, float *out, ForkJoinPool &pool,
                const ReferenceParams &p) {
  const int64_t s = sh.slices(), n = sh.n, m = sh.m, d = sh.d, e = sh.dv;
  const float eps = p.eps;
  Tensor qs = map(pool, q, s, n * d, sigmoid); // queries = kernel_method(queries)
  Tensor ks = map(pool, k, s, m * d, sigmoid);
  // (1) sink_incoming = 1 / einsum("nhld,nhd->nhl", queries + eps, keys.sum(dim=2) + eps)
  Tensor kSum = sumSeq(pool, ks.data(), s, m, d);
  Tensor kSumE = map(pool, kSum.data(), s, d, addConst(eps));
  Tensor qE = map(pool, qs.data(), s, n * d, addConst(eps));
  Tensor inDot = dotVec(pool, qE.data(), kSumE.data(), s, n, d);
  Tensor sinkIncoming = map(pool, inDot.data(), s, n, reciprocal);
  //     source_outgoing = 1 / einsum("nhld,nhd->nhl", keys + eps, queries.sum(dim=2) + eps)
  Tensor qSum = sumSeq(pool, qs.data(), s, n, d);
  Tensor qSumE = map(pool, qSum.data(), s, d, addConst(eps));
  Tensor kE = map(pool, ks.data(), s, m * d, addConst(eps));
  Tensor outDot = dotVec(pool, kE.data(), qSumE.data(), s, m, d);
  Tensor sourceOutgoing = map(pool, outDot.data(), s, m, reciprocal);
  // (2) conserved_sink = einsum(queries + eps, (keys * source_outgoing[..., None]).sum(dim=2) + eps)
  Tensor kb = broadcastRows(pool, ks.data(), sourceOutgoing.data(), s, m, d, mul);
  Tensor kbSum = sumSeq(pool, kb.data(), s, m, d);
  Tensor kbSumE = map(pool, kbSum.data(), s, d, addConst(eps));
  Tensor qE2 = map(pool, qs.data(), s, n * d, addConst(eps)); // the official code forms queries + eps again
  Tensor conservedSink = dotVec(pool, qE2.data(), kbSumE.data(), s, n, d);
  //     conserved_source = einsum(keys + eps, (queries * sink_incoming[..., None]).sum(dim=2) + eps)
  Tensor qa = broadcastRows(pool, qs.data(), sinkIncoming.data(), s, n, d, mul);
  Tensor qaSum = sumSeq(pool, qa.data(), s, n, d);
  Tensor qaSumE = map(pool, qaSum.data(), s, d, addConst(eps));
  Tensor kE2 = map(pool, ks.data(), s, m * d, addConst(eps));
  Tensor conservedSource = dotVec(pool, kE2.data(), qaSumE.data(), s, m, d);
  float lo = p.clampLow, hi = p.clampHigh;
  Tensor clamped = map(pool, conservedSource.data(), s, m, [lo, hi](float x) { return std::min(std::max(x, lo), hi); });
  // (3) sink_allocation = sigmoid(conserved_sink * N / M); source_competition = softmax(.) * M
  Tensor sinkScaled = map(pool, conservedSink.data(), s, n, mulConst(float(n) / float(m)));
  Tensor sinkAllocation = map(pool, sinkScaled.data(), s, n, sigmoid);
  Tensor soft = softmaxLast(pool, clamped.data(), s, m);
  Tensor sourceCompetition = map(pool, soft.data(), s, m, mulConst(float(m)));
  // (4) dot_product(queries * sink_incoming, keys, values * source_competition) * sink_allocation
  Tensor qIn = broadcastRows(pool, qs.data(), sinkIncoming.data(), s, n, d, mul);
  Tensor vC = broadcastRows(pool, v, sourceCompetition.data(), s, m, e, mul);
  Tensor kv = contractSeq(pool, ks.data(), vC.data(), s, m, d, e);
  Tensor qkv = readOut(pool, qIn.data(), kv.data(), s, n, d, e);
  broadcastRows(pool, qkv.data(), sinkAllocation.data(), s, n, e, mul, out);
}

/// thuml/Flowformer Flow_Attention_Causal.forward after the projections.
void flowCausal(const Shape &sh, const float *q, const float *k, const float *v, float *out, ForkJoinPool &pool,
                const ReferenceParams &p) {
  const int64_t s = sh.slices(), n = sh.n, d = sh.d, e = sh.dv;
  const float eps = p.eps;
  Tensor qs = map(pool, q, s, n * d, sigmoid);
  Tensor ks = map(pool, k, s, n * d, sigmoid);
  // (1) sink_incoming = 1 / einsum("nhld,nhld->nhl", queries + eps, keys.cumsum(dim=2) + eps), and likewise
  Tensor kCum = cumsumSeq(pool, ks.data(), s, n, d);
  Tensor kCumE = map(pool, kCum.data(), s, n * d, addConst(eps));
  Tensor qE = map(pool, qs.data(), s, n * d, addConst(eps));
  Tensor inDot = dotRows(pool, qE.data(), kCumE.data(), s, n, d);
  Tensor sinkIncoming0 = map(pool, inDot.data(), s, n, reciprocal);
  Tensor qCum = cumsumSeq(pool, qs.data(), s, n, d);
  Tensor qCumE = map(pool, qCum.data(), s, n * d, addConst(eps));
  Tensor kE = map(pool, ks.data(), s, n * d, addConst(eps));
  Tensor outDot = dotRows(pool, kE.data(), qCumE.data(), s, n, d);
  Tensor sourceOutgoing0 = map(pool, outDot.data(), s, n, reciprocal);
  //     normal = arange(N) + 1; sink_incoming *= normal; source_outgoing *= normal
  std::vector<float> normal(n);
  for (int64_t t = 0; t < n; ++t)
    normal[t] = float(t) + 1.0f;
  Tensor sinkIncoming = broadcastSeq(pool, sinkIncoming0.data(), normal.data(), s, n, mul);
  Tensor sourceOutgoing = broadcastSeq(pool, sourceOutgoing0.data(), normal.data(), s, n, mul);
  // (2) conserved_sink = einsum(queries + eps, (keys * source_outgoing[..., None]).cumsum(2) + eps) / normal
  Tensor kb = broadcastRows(pool, ks.data(), sourceOutgoing.data(), s, n, d, mul);
  Tensor kbCum = cumsumSeq(pool, kb.data(), s, n, d);
  Tensor kbCumE = map(pool, kbCum.data(), s, n * d, addConst(eps));
  Tensor qE2 = map(pool, qs.data(), s, n * d, addConst(eps));
  Tensor sinkDot = dotRows(pool, qE2.data(), kbCumE.data(), s, n, d);
  Tensor conservedSink = broadcastSeq(pool, sinkDot.data(), normal.data(), s, n, divide);
  Tensor qa = broadcastRows(pool, qs.data(), sinkIncoming.data(), s, n, d, mul);
  Tensor qaCum = cumsumSeq(pool, qa.data(), s, n, d);
  Tensor qaCumE = map(pool, qaCum.data(), s, n * d, addConst(eps));
  Tensor kE2 = map(pool, ks.data(), s, n * d, addConst(eps));
  Tensor sourceDot = dotRows(pool, kE2.data(), qaCumE.data(), s, n, d);
  Tensor conservedSource = broadcastSeq(pool, sourceDot.data(), normal.data(), s, n, divide);
  float lo = p.clampLow, hi = p.clampHigh;
  Tensor clamped = map(pool, conservedSource.data(), s, n, [lo, hi](float x) { return std::min(std::max(x, lo), hi); });
  // (3) sink_allocation = sigmoid(conserved_sink); e = exp(conserved_source);
  //     source_competition = (e / e.cumsum(dim=-1)) * normal
  Tensor sinkAllocation = map(pool, conservedSink.data(), s, n, sigmoid);
  Tensor expSource = map(pool, clamped.data(), s, n, [](float x) { return expApprox(x); });
  Tensor expCum = cumsumSeq(pool, expSource.data(), s, n, 1);
  Tensor share = zip(pool, expSource.data(), expCum.data(), s, n, divide);
  Tensor sourceCompetition = broadcastSeq(pool, share.data(), normal.data(), s, n, mul);
  // (4) causal_dot_product(queries * (sink_incoming / normal)[..., None], keys,
  //                        values * source_competition[..., None]) * sink_allocation[..., None]
  Tensor incomingNorm = broadcastSeq(pool, sinkIncoming.data(), normal.data(), s, n, divide);
  Tensor qIn = broadcastRows(pool, qs.data(), incomingNorm.data(), s, n, d, mul);
  Tensor vC = broadcastRows(pool, v, sourceCompetition.data(), s, n, e, mul);
  //     kv = einsum("nhld,nhlm->nhldm", k, v); kv = cumsum(kv, dim=2); einsum("nhld,nhldm->nhlm", q, kv)
  Tensor kv = outerRows(pool, ks.data(), vC.data(), s, n, d, e);
  Tensor kvCum = cumsumSeq(pool, kv.data(), s, n, d * e);
  kv.reset(); // rebinding `kv` frees the outer products once their cumsum exists
  Tensor qkv = readOutRows(pool, qIn.data(), kvCum.data(), s, n, d, e);
  kvCum.reset();
  broadcastRows(pool, qkv.data(), sinkAllocation.data(), s, n, e, mul, out);
}

/// idiap/fast-transformers LinearAttention.forward with elu_feature_map (elu(x) + 1, two ops).
void linearNormal(const Shape &sh, const float *q, const float *k, const float *v, float *out, ForkJoinPool &pool,
                  const ReferenceParams &p) {
  const int64_t s = sh.slices(), n = sh.n, m = sh.m, d = sh.d, e = sh.dv;
  Tensor qElu = map(pool, q, s, n * d, elu);
  Tensor qf = map(pool, qElu.data(), s, n * d, addConst(1.0f));
  Tensor kElu = map(pool, k, s, m * d, elu);
  Tensor kf = map(pool, kElu.data(), s, m * d, addConst(1.0f));
  // KV = einsum("nshd,nshm->nhmd", K, values)
  Tensor kv = contractSeq(pool, kf.data(), v, s, m, d, e);
  // Z = 1 / (einsum("nlhd,nhd->nlh", Q, K.sum(dim=1)) + eps)
  Tensor kSum = sumSeq(pool, kf.data(), s, m, d);
  Tensor zDot = dotVec(pool, qf.data(), kSum.data(), s, n, d);
  Tensor zE = map(pool, zDot.data(), s, n, addConst(p.eps));
  Tensor z = map(pool, zE.data(), s, n, reciprocal);
  // V = einsum("nlhd,nhmd,nlh->nlhm", Q, KV, Z): contracted pairwise, Q KV first, then scaled by Z
  Tensor qkv = readOut(pool, qf.data(), kv.data(), s, n, d, e);
  broadcastRows(pool, qkv.data(), z.data(), s, n, e, mul, out);
}

/// Causal linear attention the eager way (as in Flowformer's causal_dot_product): cumsum of the
/// per-position outer products, cumsum of φ(K) for the normaliser.
void linearCausal(const Shape &sh, const float *q, const float *k, const float *v, float *out, ForkJoinPool &pool,
                  const ReferenceParams &p) {
  const int64_t s = sh.slices(), n = sh.n, d = sh.d, e = sh.dv;
  Tensor qElu = map(pool, q, s, n * d, elu);
  Tensor qf = map(pool, qElu.data(), s, n * d, addConst(1.0f));
  Tensor kElu = map(pool, k, s, n * d, elu);
  Tensor kf = map(pool, kElu.data(), s, n * d, addConst(1.0f));
  Tensor kv = outerRows(pool, kf.data(), v, s, n, d, e);
  Tensor kvCum = cumsumSeq(pool, kv.data(), s, n, d * e);
  kv.reset();
  Tensor num = readOutRows(pool, qf.data(), kvCum.data(), s, n, d, e);
  kvCum.reset();
  Tensor kCum = cumsumSeq(pool, kf.data(), s, n, d);
  Tensor den = dotRows(pool, qf.data(), kCum.data(), s, n, d);
  Tensor denE = map(pool, den.data(), s, n, addConst(p.eps));
  broadcastRows(pool, num.data(), denE.data(), s, n, e, divide, out);
}

} // namespace

double la::bench::referenceLargestTensorBytes(KernelKind kind, const Shape &sh) {
  if (isCausal(kind))
    return 4.0 * sh.slices() * sh.n * sh.d * sh.dv;
  return 4.0 * sh.slices() * std::max(sh.n, sh.m) * std::max(sh.d, sh.dv);
}

double la::bench::referencePeakBytes(KernelKind kind, const Shape &sh) {
  // About twenty [B,H,N,D]-sized intermediates stay alive until the end of the function (an eager framework
  // frees some earlier; this is an upper estimate), plus k ⊗ v and its cumsum for the causal forms.
  double rows = 4.0 * sh.slices() * std::max(sh.n, sh.m) * std::max(sh.d, sh.dv);
  double bytes = 20 * rows;
  if (isCausal(kind))
    bytes += 2 * referenceLargestTensorBytes(kind, sh);
  return bytes;
}

void la::bench::runReference(KernelKind kind, const Shape &shape, const float *q, const float *k, const float *v,
                             float *out, ForkJoinPool &pool, ReferenceMemory memory, const ReferenceParams &params) {
  eager::setMemory(memory);
  switch (kind) {
  case KernelKind::FlowNormal:
    return flowNormal(shape, q, k, v, out, pool, params);
  case KernelKind::FlowCausal:
    return flowCausal(shape, q, k, v, out, pool, params);
  case KernelKind::LinearNormal:
    return linearNormal(shape, q, k, v, out, pool, params);
  case KernelKind::LinearCausal:
    return linearCausal(shape, q, k, v, out, pool, params);
  }
}

double la::bench::relativeRms(const float *x, const float *y, size_t count) {
  double errSq = 0, refSq = 0;
  for (size_t i = 0; i < count; ++i) {
    double diff = double(x[i]) - double(y[i]);
    errSq += diff * diff;
    refSq += double(y[i]) * double(y[i]);
  }
  return std::sqrt(errSq) / std::sqrt(refSq);
}

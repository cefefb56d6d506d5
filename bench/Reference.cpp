//===- Reference.cpp - Unfused eager-style baselines and fp64 oracles -----===//
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

//===----------------------------------------------------------------------===//
// ThreadPool
//===----------------------------------------------------------------------===//

ThreadPool::ThreadPool(unsigned threads) : numThreads(std::max(1u, threads)) {
  for (unsigned i = 1; i < numThreads; ++i)
    workers.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &worker : workers)
    worker.join();
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &body) {
  if (numThreads == 1 || n <= 1) {
    body(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    task = &body;
    taskSize = n;
    pending = numThreads - 1;
    ++generation;
  }
  wake.notify_all();
  body(0, n / numThreads); // block 0 on the calling thread
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [this] { return pending == 0; });
  task = nullptr;
}

void ThreadPool::workerLoop(unsigned index) {
  uint64_t seen = 0;
  while (true) {
    const std::function<void(int64_t, int64_t)> *body;
    int64_t n;
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
      body = task;
      n = taskSize;
    }
    (*body)(n * index / numThreads, n * (index + 1) / numThreads);
    std::lock_guard<std::mutex> lock(mutex);
    if (--pending == 0)
      done.notify_one();
  }
}

namespace {

using namespace la::bench::eager;

//===----------------------------------------------------------------------===//
// The four kernels, op for op as in the official code
//===----------------------------------------------------------------------===//

/// thuml/Flowformer Flow_Attention.forward after the projections.
void flowNormal(const Shape &sh, const float *q, const float *k, const float *v, float *out, ThreadPool &pool,
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
  Tensor clamped =
      map(pool, conservedSource.data(), s, m, [lo, hi](float x) { return std::min(std::max(x, lo), hi); });
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
void flowCausal(const Shape &sh, const float *q, const float *k, const float *v, float *out, ThreadPool &pool,
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
  Tensor clamped =
      map(pool, conservedSource.data(), s, n, [lo, hi](float x) { return std::min(std::max(x, lo), hi); });
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
void linearNormal(const Shape &sh, const float *q, const float *k, const float *v, float *out,
                  ThreadPool &pool, const ReferenceParams &p) {
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
void linearCausal(const Shape &sh, const float *q, const float *k, const float *v, float *out,
                  ThreadPool &pool, const ReferenceParams &p) {
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

void la::bench::runReference(KernelKind kind, const Shape &shape, const float *q, const float *k,
                             const float *v, float *out, ThreadPool &pool, ReferenceMemory memory,
                             const ReferenceParams &params) {
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

//===----------------------------------------------------------------------===//
// fp64 linear-form oracles, one slice at a time, straight from SPEC.md §1-§2
//===----------------------------------------------------------------------===//

namespace {

double sigmoidD(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double elu1D(double x) { return x > 0 ? x + 1.0 : std::exp(x); }

void flowNormalOracle(const Shape &sh, const float *q, const float *k, const float *v, double *out,
                      const ReferenceParams &p) {
  const int64_t n = sh.n, m = sh.m, d = sh.d, e = sh.dv;
  const double eps = p.eps;
  std::vector<double> qs(n * d), ks(m * d), sq(d, 0.0), sk(d, 0.0);
  for (int64_t i = 0; i < n * d; ++i)
    sq[i % d] += qs[i] = sigmoidD(q[i]);
  for (int64_t j = 0; j < m * d; ++j)
    sk[j % d] += ks[j] = sigmoidD(k[j]);
  std::vector<double> a(n), b(m), kb(d, 0.0), qa(d, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    double dot = 0;
    for (int64_t c = 0; c < d; ++c)
      dot += (qs[i * d + c] + eps) * (sk[c] + eps);
    a[i] = 1.0 / dot;
    for (int64_t c = 0; c < d; ++c)
      qa[c] += qs[i * d + c] * a[i];
  }
  for (int64_t j = 0; j < m; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < d; ++c)
      dot += (ks[j * d + c] + eps) * (sq[c] + eps);
    b[j] = 1.0 / dot;
    for (int64_t c = 0; c < d; ++c)
      kb[c] += ks[j * d + c] * b[j];
  }
  std::vector<double> outflow(m);
  double maxOut = -1e300;
  for (int64_t j = 0; j < m; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < d; ++c)
      dot += (ks[j * d + c] + eps) * (qa[c] + eps);
    outflow[j] = std::min(std::max(dot, double(p.clampLow)), double(p.clampHigh));
    maxOut = std::max(maxOut, outflow[j]);
  }
  double expSum = 0;
  for (int64_t j = 0; j < m; ++j)
    expSum += std::exp(outflow[j] - maxOut);
  std::vector<double> state(d * e, 0.0);
  for (int64_t j = 0; j < m; ++j) {
    double comp = std::exp(outflow[j] - maxOut) / expSum * double(m);
    for (int64_t c = 0; c < d; ++c)
      for (int64_t x = 0; x < e; ++x)
        state[c * e + x] += ks[j * d + c] * v[j * e + x] * comp;
  }
  for (int64_t i = 0; i < n; ++i) {
    double inflow = 0;
    for (int64_t c = 0; c < d; ++c)
      inflow += (qs[i * d + c] + eps) * (kb[c] + eps);
    double w = sigmoidD(inflow * double(n) / double(m)) * a[i];
    for (int64_t x = 0; x < e; ++x) {
      double acc = 0;
      for (int64_t c = 0; c < d; ++c)
        acc += qs[i * d + c] * state[c * e + x];
      out[i * e + x] = w * acc;
    }
  }
}

/// One forward sweep: every quantity at t depends only on prefixes up to t.
void flowCausalOracle(const Shape &sh, const float *q, const float *k, const float *v, double *out,
                      const ReferenceParams &p) {
  const int64_t n = sh.n, d = sh.d, e = sh.dv;
  const double eps = p.eps;
  std::vector<double> cq(d, 0.0), ck(d, 0.0), cqa(d, 0.0), ckb(d, 0.0), qt(d), kt(d);
  std::vector<double> state(d * e, 0.0);
  double expPrefix = 0;
  for (int64_t t = 0; t < n; ++t) {
    double count = double(t + 1);
    for (int64_t c = 0; c < d; ++c) {
      qt[c] = sigmoidD(q[t * d + c]);
      kt[c] = sigmoidD(k[t * d + c]);
      cq[c] += qt[c];
      ck[c] += kt[c];
    }
    double in = 0, outDot = 0;
    for (int64_t c = 0; c < d; ++c) {
      in += (qt[c] + eps) * (ck[c] + eps);
      outDot += (kt[c] + eps) * (cq[c] + eps);
    }
    double a = count / in, b = count / outDot;
    for (int64_t c = 0; c < d; ++c) {
      ckb[c] += kt[c] * b;
      cqa[c] += qt[c] * a;
    }
    double inflow = 0, outflow = 0;
    for (int64_t c = 0; c < d; ++c) {
      inflow += (qt[c] + eps) * (ckb[c] + eps);
      outflow += (kt[c] + eps) * (cqa[c] + eps);
    }
    inflow /= count;
    outflow = std::min(std::max(outflow / count, double(p.clampLow)), double(p.clampHigh));
    double alloc = sigmoidD(inflow);
    double ex = std::exp(outflow);
    expPrefix += ex;
    double comp = count * ex / expPrefix;
    for (int64_t c = 0; c < d; ++c)
      for (int64_t x = 0; x < e; ++x)
        state[c * e + x] += kt[c] * v[t * e + x] * comp;
    double w = alloc * a / count;
    for (int64_t x = 0; x < e; ++x) {
      double acc = 0;
      for (int64_t c = 0; c < d; ++c)
        acc += qt[c] * state[c * e + x];
      out[t * e + x] = w * acc;
    }
  }
}

/// Non-causal: one sweep to build S and z, one to read out. Causal: S_t and z_t as prefix states.
void linearOracle(const Shape &sh, bool causal, const float *q, const float *k, const float *v, double *out,
                  const ReferenceParams &p) {
  const int64_t n = sh.n, m = causal ? sh.n : sh.m, d = sh.d, e = sh.dv;
  std::vector<double> state(d * e, 0.0), z(d, 0.0), kf(d), qf(d);
  auto addKey = [&](int64_t j) {
    for (int64_t c = 0; c < d; ++c) {
      kf[c] = elu1D(k[j * d + c]);
      z[c] += kf[c];
      for (int64_t x = 0; x < e; ++x)
        state[c * e + x] += kf[c] * v[j * e + x];
    }
  };
  auto readQuery = [&](int64_t i) {
    double den = 0;
    for (int64_t c = 0; c < d; ++c) {
      qf[c] = elu1D(q[i * d + c]);
      den += qf[c] * z[c];
    }
    den += p.eps;
    for (int64_t x = 0; x < e; ++x) {
      double acc = 0;
      for (int64_t c = 0; c < d; ++c)
        acc += qf[c] * state[c * e + x];
      out[i * e + x] = acc / den;
    }
  };
  if (causal) {
    for (int64_t t = 0; t < n; ++t) {
      addKey(t);
      readQuery(t);
    }
    return;
  }
  for (int64_t j = 0; j < m; ++j)
    addKey(j);
  for (int64_t i = 0; i < n; ++i)
    readQuery(i);
}

} // namespace

void la::bench::oracleSlice(KernelKind kind, const Shape &sh, int64_t slice, const float *q, const float *k,
                            const float *v, double *out, const ReferenceParams &params) {
  const int64_t m = isCausal(kind) ? sh.n : sh.m;
  const float *qs = q + slice * sh.n * sh.d;
  const float *ks = k + slice * m * sh.d;
  const float *vs = v + slice * m * sh.dv;
  switch (kind) {
  case KernelKind::FlowNormal:
    return flowNormalOracle(sh, qs, ks, vs, out, params);
  case KernelKind::FlowCausal:
    return flowCausalOracle(sh, qs, ks, vs, out, params);
  case KernelKind::LinearNormal:
    return linearOracle(sh, false, qs, ks, vs, out, params);
  case KernelKind::LinearCausal:
    return linearOracle(sh, true, qs, ks, vs, out, params);
  }
}

double la::bench::oracleRelativeRms(KernelKind kind, const Shape &sh, const float *q, const float *k,
                                    const float *v, const float *out, const std::vector<int64_t> &slices,
                                    const ReferenceParams &params) {
  const int64_t perSlice = sh.n * sh.dv;
  std::vector<double> expected(perSlice);
  double errSq = 0, refSq = 0;
  for (int64_t slice : slices) {
    oracleSlice(kind, sh, slice, q, k, v, expected.data(), params);
    const float *got = out + slice * perSlice;
    for (int64_t i = 0; i < perSlice; ++i) {
      double diff = double(got[i]) - expected[i];
      errSq += diff * diff;
      refSq += expected[i] * expected[i];
    }
  }
  return std::sqrt(errSq) / std::sqrt(refSq);
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

//===- Decoder.h - run a causal kernel position by position ------*- C++ -*-===//
//
// Serving a linear-attention model: the prompt goes through the entry's prefill variant, then each new token
// through its resume variant, carrying the state (SPEC §8; the variants are derived by the compiler from the
// one entry, docs/prefill-decode.md). A Decoder owns that state and keeps it between calls:
//
//   auto decoder = la::Decoder::create(*runtime, *program, "gla");        // declares and loads the variants
//   llvm::Error err = (*decoder)->prefill({q, k, v, g}, {out});             // [B, H, n, ...]: the prompt
//   for (...) err = (*decoder)->step({q1, k1, v1, g1}, {out1});             // [B, H, 1, ...]: one token
//
// Each call takes the entry's own arguments and results (any number of positions ≥ 1); the state never
// leaves the Decoder unless asked for. It is kept in two sets of buffers, allocated by `prefill`: a step reads
// one and writes the other, then they swap, so steps allocate and copy nothing (a kernel never writes its
// inputs, so the state cannot be updated in the buffer it is read from). A Decoder runs one sequence and is not
// thread-safe; several Decoders may share a Runtime.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_DECODER_H
#define LA_RUNTIME_DECODER_H

#include "la/runtime/Runtime.h"

namespace la {

class Decoder {
public:
  /// Declares the prefill and resume variants of the causal `entry` of `program` and loads them into
  /// `runtime`, which must outlive the Decoder. Fails with the compiler's message naming the op when `entry`
  /// is not causal.
  static llvm::Expected<std::unique_ptr<Decoder>> create(Runtime &runtime, const Program &program,
                                                         llvm::StringRef entry);

  /// Starts a sequence: runs prefill on the first positions (the entry's arguments, [B, H, n, ...] or AFT's
  /// [B, n, d]: n along the dimension the entry's scans run) and
  /// writes the entry's results for them into `outputs`. Any earlier state is dropped.
  llvm::Error prefill(llvm::ArrayRef<TensorRef> inputs, llvm::ArrayRef<TensorRef> outputs, CallStats *stats = nullptr);
  /// Continues the sequence with the next positions (n ≥ 1; one is a decode step): same arguments and
  /// results as the entry, whose batch and head sizes and other dimensions must match the prefill's.
  llvm::Error step(llvm::ArrayRef<TensorRef> inputs, llvm::ArrayRef<TensorRef> outputs, CallStats *stats = nullptr);

  /// Whether `prefill` has started a sequence.
  bool started() const { return !current.empty(); }
  /// Positions processed since `prefill`: the sum of the calls' sequence lengths (the sequence dimension of
  /// the first argument: 2 in SPEC's [B, H, N, ...] layout, 1 in AFT's [B, N, d]).
  int64_t positions() const { return processed; }
  /// The state after the last call, in the order `lac signature --variant resume` lists the state arguments.
  llvm::ArrayRef<HostTensor> state() const { return current; }
  /// The state arguments' names (`%st` for `%st = la.scan ...`), in the same order.
  llvm::ArrayRef<std::string> stateNames() const { return names; }
  /// The program with the variants declared, and the names of its entries (`<entry>.prefill`, `.resume`).
  const Program &program() const { return *variants; }
  const std::string &prefillEntry() const { return prefillName; }
  const std::string &resumeEntry() const { return resumeName; }

private:
  Decoder(Runtime &runtime, std::shared_ptr<Program> variants, std::string entry, size_t numArguments,
          size_t numResults, std::vector<std::string> names, int64_t sequenceDim);
  /// The sequence length of a call's `inputs` (0 without an argument that spans the sequence).
  int64_t lengthOf(llvm::ArrayRef<TensorRef> inputs) const;
  /// Calls `variant` on the entry's `inputs` and `outputs` plus `states` and `nextStates`.
  llvm::Error run(const std::string &variant, llvm::ArrayRef<TensorRef> inputs, llvm::ArrayRef<TensorRef> outputs,
                  llvm::MutableArrayRef<HostTensor> states, llvm::MutableArrayRef<HostTensor> nextStates,
                  CallStats *stats);

  Runtime &runtime;
  std::shared_ptr<Program> variants;
  std::string entry, prefillName, resumeName;
  size_t numArguments, numResults;
  std::vector<std::string> names;
  int64_t sequenceDim;
  /// The state the next step reads, and the buffers it writes.
  std::vector<HostTensor> current, next;
  int64_t processed = 0;
};

} // namespace la

#endif // LA_RUNTIME_DECODER_H

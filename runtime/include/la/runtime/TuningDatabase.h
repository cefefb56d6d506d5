//===- TuningDatabase.h - tuned configurations, shared between runs -*- C++ -*-===//
//
// What `lac tune` (la/runtime/Tuner.h) found, stored so that later runs and other processes use it without
// tuning again. A record says: for this kernel, entry, argument types (the sequence length bucketed), thread
// count, machine and compiler, this configuration ran fastest, with these statistics, found this way.
//
// The local backend is a JSON-lines file (`<cache dir>/tuning.jsonl` by default): one record per line,
// appended under an exclusive lock (llvm::sys::fs::lockFile) in a single write, so any number of processes
// may tune into one file at once. A line that does not parse as a record (a torn write of a crashed
// process, a hand edit) is skipped with a warning naming the file and line; it never stops a run. When one
// key has several records, a later one replaces an earlier one only if it is faster beyond noise.
//
// The Redis backend (`redis://host:port`, hiredis) keeps one hash per key family (the key without its
// sequence bucket: field = bucket, value = the record's JSON) and replaces a record only by a faster one
// beyond noise, in one server-side script. Leases (SET NX with an expiry) stop two machines tuning one key
// at once.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_TUNINGDATABASE_H
#define LA_RUNTIME_TUNINGDATABASE_H

#include "la/runtime/Tensor.h"

#include "Pipelines/PipelineConfig.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace la {

/// What a tuned configuration is valid for. Two calls with equal keys get the same configuration.
struct TuningKey {
  /// The program's content hash (Program::contentHash) and the entry.
  std::string kernel;
  std::string entry;
  /// Each argument as `dtype[d0xd1x...]`, every dimension equal to the sequence length written `N` (its
  /// value is the bucket's business).
  std::vector<std::string> arguments;
  /// The sequence length's bucket (the least power of two ≥ N; N itself with exact buckets), or 0 when the
  /// entry has none.
  int64_t sequenceBucket = 0;
  unsigned threads = 1;
  /// The machine the configuration was measured on (getTargetFingerprint) and the compiler that built it.
  std::string target;
  std::string compiler;

  /// Everything but the sequence bucket, as text: the keys of one family differ only in the bucket, and a
  /// lookup that misses the exact key takes the nearest bucket of its family.
  std::string family() const;
  /// The whole key as canonical text.
  std::string str() const;
};

/// How the sequence length enters a key.
enum class SequenceBuckets {
  PowersOfTwo, ///< N = 1000 and N = 1024 share the bucket ~1024
  Exact        ///< every N its own key
};

/// The sequence length of a call: dimension rank−2 of argument #0 (the N of [B, H, N, D] or [B, N, D]), or
/// nothing for an argument of rank < 2.
std::optional<int64_t> sequenceLength(llvm::ArrayRef<TensorSpec> arguments);

/// The problem sizes a tuning space of a call is cut to (TuningSpace::build): "N", the sequence length,
/// where the call has one.
llvm::StringMap<int64_t> tuningSizes(llvm::ArrayRef<TensorSpec> arguments);

/// The key of a call; `target` and `compiler` come from getTargetFingerprint and getCompilerVersion.
TuningKey makeTuningKey(llvm::StringRef kernelHash, llvm::StringRef entry, llvm::ArrayRef<TensorSpec> arguments,
                        unsigned threads, llvm::StringRef target, llvm::StringRef compiler,
                        SequenceBuckets buckets = SequenceBuckets::PowersOfTwo);

/// Timing statistics of one configuration, in milliseconds.
struct TimingStats {
  double medianMs = 0;
  /// Half the interquartile range over the median: the relative noise of the measurement.
  double relativeSpread = 0;
  double minMs = 0;
  unsigned runs = 0;

  static TimingStats of(std::vector<double> times);
  llvm::json::Value toJSON() const;
  /// Parses `object` (the value of `field`, for the message); the error names the field.
  static llvm::Expected<TimingStats> fromJSON(const llvm::json::Object *object, llvm::StringRef field);
};

/// One tuned configuration.
struct TuningRecord {
  TuningKey key;
  /// The configuration's canonical text (PipelineConfig::str for the key's target).
  std::string config;
  TimingStats best;
  /// The default configuration, measured in the same run.
  TimingStats baseline;
  /// "tuned" (the search ran to its end or budget), or "partial" (stopped early: time limit, interrupted).
  std::string status = "tuned";
  /// How it was found: strategy, seed, candidates evaluated, space size, tuning time, host, date, tool.
  llvm::json::Object provenance;

  llvm::json::Value toJSON() const;
  /// Parses a record; the error says which field is missing or malformed.
  static llvm::Expected<TuningRecord> fromJSON(const llvm::json::Value &value);
};

/// The right to tune one key, held by one process at a time; released when destroyed. A holder that dies
/// loses it (the file backend: with its lock; Redis: when it expires).
class TuningLease {
public:
  virtual ~TuningLease();
  /// Extends a lease with an expiry by `seconds` from now; tuners call it after every candidate.
  virtual llvm::Error renew(double seconds) = 0;
};

/// What `TuningDatabase::lease` got: the lease, or who holds it.
struct LeaseAttempt {
  std::unique_ptr<TuningLease> lease;
  /// The holder's description (host, process, start) when `lease` is null.
  std::string holder;
};

/// A store of tuning records.
class TuningDatabase {
public:
  virtual ~TuningDatabase();

  /// Opens `location`: a file path (the JSON-lines backend; created on the first store) or
  /// `redis://host:port` (one hash per key family on that server). An empty location means
  /// `<cache dir>/tuning.jsonl`, the cache directory being `cacheDirectory`, else `$LA_CACHE_DIR`, else
  /// `~/.cache/la`. A Redis server that cannot be reached, now or later, is warned about once and that local
  /// file serves instead.
  static llvm::Expected<std::unique_ptr<TuningDatabase>> open(llvm::StringRef location,
                                                              llvm::StringRef cacheDirectory = "");

  /// Stores `record` atomically (readers see all of it or none of it). Where the key already has a record,
  /// the new one replaces it only if it is faster beyond noise (the larger relative spread of the two, at
  /// least 1%); the file backend applies that rule when it reads.
  virtual llvm::Error store(const TuningRecord &record) = 0;
  /// The record for `key` itself, or failing that the one of the same family whose sequence bucket is
  /// nearest (by ratio; between two equally near, the larger), or nothing.
  virtual llvm::Expected<std::optional<TuningRecord>> lookup(const TuningKey &key) = 0;
  /// Every record (one per key), in the order their keys were first stored (the file backend) or by key
  /// (Redis).
  virtual llvm::Expected<std::vector<TuningRecord>> records() = 0;
  /// Tries to take the lease on tuning `key` for `seconds`, for `owner` (a description of this process).
  virtual llvm::Expected<LeaseAttempt> lease(const TuningKey &key, llvm::StringRef owner, double seconds) = 0;
  /// Where the records live, for messages.
  virtual std::string describe() const = 0;
};

/// Whether `candidate` replaces `current`, a record of the same key: faster beyond noise (the larger relative
/// spread of the two, at least 1%).
bool replacesRecord(const TuningRecord &candidate, const TuningRecord &current);

/// The machine a configuration is measured on: for the CPU the LLVM name of the host CPU, a hash of its
/// features and the hardware threads; for CUDA the architecture (`cuda:sm_80`).
std::string getTargetFingerprint(mlir::la::PipelineTarget target, const mlir::la::PipelineConfig &config);

} // namespace la

#endif // LA_RUNTIME_TUNINGDATABASE_H

//===- TuningBackends.h - the stores behind TuningDatabase -----*- C++ -*-===//
//
// Internal to the runtime: the JSON-lines file backend and the Redis backend of la/runtime/TuningDatabase.h,
// and the lookup rule they share.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_TUNINGBACKENDS_H
#define LA_RUNTIME_LIB_TUNINGBACKENDS_H

#include "la/runtime/TuningDatabase.h"

namespace la {

/// The JSON-lines file at `path`.
std::unique_ptr<TuningDatabase> openFileTuningDatabase(std::string path);

/// The Redis server at `url`; `fallback` serves (after one warning) whenever the server cannot be reached.
llvm::Expected<std::unique_ptr<TuningDatabase>> openRedisTuningDatabase(llvm::StringRef url,
                                                                        std::unique_ptr<TuningDatabase> fallback);

/// Of `records`, the one for `key`, else the one of its family with the nearest sequence bucket (by ratio;
/// between two equally near, the larger), else null.
const TuningRecord *findNearestRecord(llvm::ArrayRef<TuningRecord> records, const TuningKey &key);

/// A hash of `text` as 32 hex digits (names of Redis keys and lock files).
std::string hashName(llvm::StringRef text);

} // namespace la

#endif // LA_RUNTIME_LIB_TUNINGBACKENDS_H

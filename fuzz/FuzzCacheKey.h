//===- FuzzCacheKey.h - the cache key of the cache-entry seeds -*- C++ -*-===//
//
// Shared by the cache-entry fuzz target and the program that writes its seeds: a seed only reaches past
// the key check when it was written for the key the target looks up.
//
//===----------------------------------------------------------------------===//
#ifndef LA_FUZZ_FUZZCACHEKEY_H
#define LA_FUZZ_FUZZCACHEKEY_H

#include "llvm/ADT/StringRef.h"

namespace la {
constexpr llvm::StringLiteral kFuzzKey("la-fuzz key");
} // namespace la

#endif // LA_FUZZ_FUZZCACHEKEY_H

//===- Stats.h - summary statistics of repeated timings ---------*- C++ -*-===//

#ifndef LA_BENCH_STATS_H
#define LA_BENCH_STATS_H

#include <algorithm>
#include <cstddef>
#include <vector>

namespace la::bench {

/// The median of `values` (the mean of the two middle ones for an even count).
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

} // namespace la::bench

#endif // LA_BENCH_STATS_H

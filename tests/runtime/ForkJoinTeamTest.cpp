//===- ForkJoinTeamTest.cpp - the threads that run a call's slices --------===//
//
// runtime/lib/ForkJoinTeam.h: every part of a call runs exactly once, with workers that sleep at once
// (spin 0) or spin between calls, with fewer parts than threads, and a second caller is turned away while
// the team is busy (it then runs its slices itself).
//
//===----------------------------------------------------------------------===//

#include "ForkJoinTeam.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

TEST(RuntimeConcurrencyTeam, EveryPartRunsOncePerCall) {
  for (unsigned spinMicroseconds : {0u, 100u})
    for (unsigned workers : {1u, 3u}) {
      la::ForkJoinTeam team(workers, std::chrono::microseconds(spinMicroseconds));
      EXPECT_EQ(team.size(), workers);
      for (unsigned parts : {1u, workers + 1}) {
        std::vector<std::atomic<int>> runs(parts);
        const int calls = 300;
        for (int call = 0; call < calls; ++call)
          ASSERT_TRUE(team.tryRun(parts, [&](unsigned part) { runs[part].fetch_add(1); }));
        for (unsigned part = 0; part < parts; ++part)
          EXPECT_EQ(runs[part].load(), calls)
              << "spin " << spinMicroseconds << " µs, " << workers << " workers, " << parts << " parts, part " << part;
      }
    }
}

TEST(RuntimeConcurrencyTeam, BusyTeamTurnsASecondCallerAway) {
  la::ForkJoinTeam team(1, std::chrono::microseconds(100));
  std::atomic<bool> inside{false}, release{false};
  std::thread owner([&] {
    EXPECT_TRUE(team.tryRun(2, [&](unsigned part) {
      if (part != 0)
        return;
      inside.store(true);
      while (!release.load())
        std::this_thread::yield();
    }));
  });
  while (!inside.load())
    std::this_thread::yield();
  bool ran = false;
  EXPECT_FALSE(team.tryRun(2, [&](unsigned) { ran = true; }));
  EXPECT_FALSE(ran);
  release.store(true);
  owner.join();
  // Free again once the first call has joined.
  EXPECT_TRUE(team.tryRun(2, [](unsigned) {}));
}

} // namespace

//===- LaunchReport.cpp - Findings as text, JSON and llvm::Error ----------===//
#include "Findings.h"

#include "la/emulator/LaunchReport.h"

#include "llvm/Support/raw_ostream.h"

using namespace la::emu;
using llvm::json::Array;
using llvm::json::Object;

char EmulatorFinding::ID;

llvm::StringRef la::emu::kindName(FindingKind kind) {
  switch (kind) {
  case FindingKind::SharedRaceRAW:
    return "shared-memory race (RAW)";
  case FindingKind::SharedRaceWAR:
    return "shared-memory race (WAR)";
  case FindingKind::SharedRaceWAW:
    return "shared-memory race (WAW)";
  case FindingKind::OutOfBoundsGlobalLoad:
    return "out-of-bounds global load";
  case FindingKind::OutOfBoundsGlobalStore:
    return "out-of-bounds global store";
  case FindingKind::OutOfBoundsSharedLoad:
    return "out-of-bounds shared load";
  case FindingKind::OutOfBoundsSharedStore:
    return "out-of-bounds shared store";
  case FindingKind::UninitialisedSharedRead:
    return "uninitialised shared read";
  case FindingKind::CpAsyncReadBeforeWait:
    return "cp.async data read before its wait";
  case FindingKind::MisalignedCpAsync:
    return "misaligned cp.async";
  case FindingKind::DivergentBarrier:
    return "divergent barrier";
  case FindingKind::DivergentWarpCollective:
    return "divergent warp collective";
  case FindingKind::Deadlock:
    return "deadlock";
  }
  llvm_unreachable("unknown finding kind");
}

static std::string dim3(const Dim3 &d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

std::string Finding::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << kindName(kind);
  if (!detail.empty())
    os << " " << detail;
  os << ":";
  for (const ThreadSite &s : sites) {
    os << "\n  " << s.what;
    if (!s.loc.empty())
      os << " at " << s.loc;
    os << " by block " << dim3(s.block) << " thread " << dim3(s.thread);
  }
  if (occurrences > 1)
    os << "\n  (" << occurrences << " occurrences)";
  return text;
}

static llvm::json::Value dimJSON(const Dim3 &d) { return Array{d.x, d.y, d.z}; }

llvm::json::Value Finding::toJSON() const {
  Array siteList;
  for (const ThreadSite &s : sites)
    siteList.push_back(
        Object{{"what", s.what}, {"loc", s.loc}, {"block", dimJSON(s.block)}, {"thread", dimJSON(s.thread)}});
  return Object{
      {"kind", kindName(kind)}, {"detail", detail}, {"occurrences", occurrences}, {"sites", std::move(siteList)}};
}

Counters &Counters::operator+=(const Counters &o) {
  globalBytesLoaded += o.globalBytesLoaded;
  globalBytesStored += o.globalBytesStored;
  sharedBytesLoaded += o.sharedBytesLoaded;
  sharedBytesStored += o.sharedBytesStored;
  mmaSync += o.mmaSync;
  mmaFlops += o.mmaFlops;
  fma += o.fma;
  shuffles += o.shuffles;
  barriers += o.barriers;
  warpSyncs += o.warpSyncs;
  votes += o.votes;
  reductions += o.reductions;
  ldmatrix += o.ldmatrix;
  atomics += o.atomics;
  fences += o.fences;
  cpAsyncBytes += o.cpAsyncBytes;
  return *this;
}

llvm::json::Value Counters::toJSON() const {
  return Object{{"global_bytes_loaded", globalBytesLoaded},
                {"global_bytes_stored", globalBytesStored},
                {"shared_bytes_loaded", sharedBytesLoaded},
                {"shared_bytes_stored", sharedBytesStored},
                {"mma_sync", mmaSync},
                {"mma_flops", mmaFlops},
                {"fma", fma},
                {"shuffles", shuffles},
                {"barriers", barriers},
                {"warp_syncs", warpSyncs},
                {"votes", votes},
                {"reductions", reductions},
                {"ldmatrix", ldmatrix},
                {"atomics", atomics},
                {"fences", fences},
                {"cp_async_bytes", cpAsyncBytes}};
}

llvm::Error LaunchReport::takeError() const {
  llvm::Error all = llvm::Error::success();
  for (const Finding &f : findings)
    all = llvm::joinErrors(std::move(all), llvm::make_error<EmulatorFinding>(f));
  return all;
}

llvm::json::Value LaunchReport::toJSON() const {
  Array list;
  for (const Finding &f : findings)
    list.push_back(f.toJSON());
  return Object{{"seed", seed}, {"counters", counters.toJSON()}, {"findings", std::move(list)}};
}

void EmulatorFinding::log(llvm::raw_ostream &os) const { os << finding.str(); }

static std::string keyOf(const Finding &f) {
  std::string key = std::to_string(int(f.kind));
  for (const ThreadSite &s : f.sites)
    key += "|" + s.what + "@" + s.loc;
  return key;
}

void FindingSink::add(Finding finding) {
  auto [it, inserted] = index.try_emplace(keyOf(finding), findings.size());
  if (!inserted) {
    findings[it->second].occurrences += finding.occurrences;
    return;
  }
  findings.push_back(std::move(finding));
}

void FindingSink::merge(FindingSink &&other) {
  for (Finding &f : other.findings)
    add(std::move(f));
}

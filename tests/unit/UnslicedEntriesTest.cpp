//===- UnslicedEntriesTest.cpp - every library entry compiles and runs for a whole batch -===//
//
// The runtime compiles an entry that is independent over batch×head once per slice (leading dimensions of
// size 1). An ahead-of-time user (`lac compile --emit=obj`) compiles the whole batch instead, which takes
// paths the runtime never does: at B > 1 AFT-causal's scan writes [B, D] rows, and fusing its gate into the
// scan loop failed (issue 19 item 8). Here every public function of kernels/*.mlir and examples/*.mlir,
// enumerated with `la::inspectProgram` so that a new entry is covered without editing this file, is
// compiled to an object for a batch of 3 (and 2 heads where it has them), in f32 and bf16, and run unsliced
// in f32 against its fp64 reference (the numerics guard, la/runtime/NumericsCheck.h). Argument shapes are
// derived from the signature (deriveArgumentSpecs).
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Compiler.h"
#include "la/runtime/Runtime.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <iostream>
#include <random>

namespace {

//===----------------------------------------------------------------------===//
// Argument shapes from an entry's signature
//===----------------------------------------------------------------------===//

/// What a dimension means, and the size it gets here. The sizes all differ, so a dimension given the wrong
/// role is a shape mismatch that specialisation reports rather than a coincidence that passes; none is a
/// power of two or a multiple of a chunk size, so every chunked loop has a ragged last chunk.
struct Role {
  char name;
  int64_t size;
};
constexpr Role kBatch{'B', 3}, kHeads{'H', 2}, kSequence{'N', 100}, kFeatures{'D', 48}, kImageX{'X', 9},
    kImageY{'Y', 11};

/// The roles of the primary argument's dimensions (the first argument of the highest rank), by its rank:
/// the library's layouts [B, N, D] (AFT, GAU/FLASH), [B, H, N, D] (linear, Flow, retention) and
/// [B, X, Y, H, D] (AFT-conv's images).
std::optional<std::vector<Role>> primaryRoles(size_t rank) {
  switch (rank) {
  case 1:
    return std::vector<Role>{kSequence};
  case 2:
    return std::vector<Role>{kSequence, kFeatures};
  case 3:
    return std::vector<Role>{kBatch, kSequence, kFeatures};
  case 4:
    return std::vector<Role>{kBatch, kHeads, kSequence, kFeatures};
  case 5:
    return std::vector<Role>{kBatch, kImageX, kImageY, kHeads, kFeatures};
  default:
    return std::nullopt;
  }
}

using Shape = llvm::SmallVector<int64_t, 4>;

/// The shapes an argument declared as `declared` may take: each dynamic dimension takes one of `roles`
/// (static ones keep their size). The first is the primary's layout cut to the argument's rank (a gate
/// [B, H, N] beside [B, H, N, D] inputs); then every assignment that keeps the primary's order of roles
/// (AFT's position bias [N, N], a state [B, H, D, D], a per-head conv kernel [H, 7, 7]); then the others.
std::vector<Shape> candidateShapes(llvm::ArrayRef<int64_t> declared, llvm::ArrayRef<Role> roles) {
  size_t rank = declared.size();
  Shape prefix(declared.begin(), declared.end());
  for (size_t d = 0; d < rank; ++d)
    if (prefix[d] < 0)
      prefix[d] = roles[std::min(d, roles.size() - 1)].size;
  std::vector<Shape> inOrder{prefix}, others;
  std::vector<size_t> choice(rank, 0);
  while (true) {
    Shape shape(declared.begin(), declared.end());
    for (size_t d = 0; d < rank; ++d)
      if (shape[d] < 0)
        shape[d] = roles[choice[d]].size;
    bool ordered = true;
    for (size_t d = 1, last = 0; d < rank; ++d)
      if (declared[d] < 0) {
        ordered &= choice[d] >= choice[last];
        last = d;
      }
    if (shape != prefix)
      (ordered ? inOrder : others).push_back(shape);
    // The next assignment, the last dimension varying fastest.
    size_t d = rank;
    while (d > 0 && ++choice[d - 1] == roles.size())
      choice[--d] = 0;
    if (d == 0)
      break;
  }
  llvm::append_range(inOrder, others);
  return inOrder;
}

/// Argument specs for `info`, found by specialising the entry (which infers every result type and rejects
/// sizes that disagree): every argument at its first candidate; failing that, one argument varied at a
/// time, the last first (a bias or an initial state follows the inputs); then arguments declared alike (two
/// states) varied together.
llvm::Expected<std::vector<la::TensorSpec>> deriveArgumentSpecs(llvm::StringRef source, llvm::StringRef file,
                                                                const la::EntryInfo &info) {
  std::vector<la::TensorSpec> specs(info.signature.arguments.begin(), info.signature.arguments.end());
  if (specs.empty())
    return specs;
  size_t primary = 0;
  for (size_t i = 1; i < specs.size(); ++i)
    if (specs[i].shape.size() > specs[primary].shape.size())
      primary = i;
  std::optional<std::vector<Role>> roles = primaryRoles(specs[primary].shape.size());
  if (!roles)
    return llvm::createStringError("%s: no layout for a primary argument of rank %zu; add one to primaryRoles",
                                   info.name.c_str(), specs[primary].shape.size());

  std::vector<std::vector<Shape>> candidates;
  for (size_t i = 0; i < specs.size(); ++i) {
    std::vector<Shape> shapes = candidateShapes(specs[i].shape, *roles);
    if (i == primary)
      shapes.resize(1);
    candidates.push_back(std::move(shapes));
  }
  auto specialises = [&](llvm::ArrayRef<Shape> shapes) {
    std::vector<la::TensorSpec> trial = specs;
    for (auto [spec, shape] : llvm::zip_equal(trial, shapes))
      spec.shape = shape;
    auto specialised = la::emitStage(source, file, info.name, trial, la::CompileOptions(), la::Stage::LA);
    if (!specialised) {
      llvm::consumeError(specialised.takeError());
      return false;
    }
    specs = std::move(trial);
    return true;
  };

  std::vector<Shape> shapes;
  for (const std::vector<Shape> &options : candidates)
    shapes.push_back(options.front());
  if (specialises(shapes))
    return specs;
  for (size_t i = specs.size(); i-- > 0;)
    for (const Shape &candidate : llvm::drop_begin(candidates[i])) {
      std::vector<Shape> trial = shapes;
      trial[i] = candidate;
      if (specialises(trial))
        return specs;
    }
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i == primary)
      continue;
    auto alike = llvm::find_if(groups, [&](const std::vector<size_t> &group) {
      return info.signature.arguments[group.front()] == info.signature.arguments[i];
    });
    if (alike == groups.end())
      groups.push_back({i});
    else
      alike->push_back(i);
  }
  for (const std::vector<size_t> &group : groups) {
    if (group.size() == 1) // varied alone above
      continue;
    for (const Shape &candidate : llvm::drop_begin(candidates[group.front()])) {
      std::vector<Shape> trial = shapes;
      for (size_t i : group)
        trial[i] = candidate;
      if (specialises(trial))
        return specs;
    }
  }
  std::vector<std::string> declared;
  for (const la::TensorSpec &spec : info.signature.arguments)
    declared.push_back(spec.str());
  return llvm::createStringError("%s(%s): no argument shapes over the sizes of primaryRoles specialise",
                                 info.name.c_str(), llvm::join(declared, ", ").c_str());
}

//===----------------------------------------------------------------------===//
// The entries
//===----------------------------------------------------------------------===//

struct EntryCase {
  std::string path;
  la::EntryInfo info;
  /// Set when the file cannot be read or inspected (the case then fails with it).
  std::string error;
};

void PrintTo(const EntryCase &c, std::ostream *os) {
  *os << llvm::sys::path::filename(c.path).str() << ":" << c.info.name;
}

llvm::Expected<std::string> readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  return (*buffer)->getBuffer().str();
}

/// Every public function of every `.mlir` file in the kernel library and the examples, in file order.
std::vector<EntryCase> libraryEntries() {
  std::vector<std::string> paths;
  for (llvm::StringRef dir : {LA_KERNELS_DIR, LA_EXAMPLES_DIR}) {
    std::vector<std::string> inDir;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
      if (llvm::sys::path::extension(it->path()) == ".mlir")
        inDir.push_back(it->path());
    if (ec)
      return {EntryCase{dir.str(), {}, "cannot list " + dir.str() + ": " + ec.message()}};
    llvm::sort(inDir);
    llvm::append_range(paths, inDir);
  }
  std::vector<EntryCase> cases;
  for (const std::string &path : paths) {
    auto source = readFile(path);
    if (!source) {
      cases.push_back({path, {}, llvm::toString(source.takeError())});
      continue;
    }
    auto entries = la::inspectProgram(*source, path);
    if (!entries) {
      cases.push_back({path, {}, llvm::toString(entries.takeError())});
      continue;
    }
    for (la::EntryInfo &info : *entries)
      cases.push_back({path, std::move(info), ""});
  }
  if (cases.empty())
    cases.push_back({LA_KERNELS_DIR, {}, "no .mlir file in the kernel library"});
  return cases;
}

std::vector<la::TensorSpec> withDType(std::vector<la::TensorSpec> specs, la::DType dtype) {
  for (la::TensorSpec &spec : specs)
    if (spec.dtype == la::DType::F32)
      spec.dtype = dtype;
  return specs;
}

/// "gla_with_state(f32[3x2x100x48], ...)".
std::string describe(const la::EntryInfo &info, llvm::ArrayRef<la::TensorSpec> specs) {
  std::vector<std::string> arguments;
  for (const la::TensorSpec &spec : specs)
    arguments.push_back(spec.str());
  return info.name + "(" + llvm::join(arguments, ", ") + ")";
}

class UnslicedEntry : public testing::TestWithParam<EntryCase> {
protected:
  void SetUp() override {
    const EntryCase &c = GetParam();
    ASSERT_TRUE(c.error.empty()) << c.error;
    auto text = readFile(c.path);
    ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
    source = std::move(*text);
    auto derived = deriveArgumentSpecs(source, c.path, c.info);
    ASSERT_TRUE(static_cast<bool>(derived)) << llvm::toString(derived.takeError());
    specs = std::move(*derived);
    RecordProperty("arguments", describe(c.info, specs));
    // The dimensions the runtime would slice are all longer than 1 here: what it never compiles.
    for (const la::TensorSpec &spec : specs)
      for (int64_t d = 0; d < c.info.slicing.dims; ++d)
        ASSERT_GT(spec.shape[d], 1) << describe(c.info, specs) << ": sliced dimension " << d;
    RecordProperty("slicedDims", static_cast<int>(c.info.slicing.dims));
  }

  /// Runs the entry on `inputs` with a runtime that slices batch×head or not.
  llvm::Expected<llvm::SmallVector<la::HostTensor>> run(bool sliced, llvm::ArrayRef<la::TensorRef> inputs,
                                                        std::unique_ptr<la::Runtime> &runtime,
                                                        std::shared_ptr<la::Program> &program) {
    la::RuntimeOptions options;
    options.cacheDir = "none";
    options.numThreads = 1;
    options.compile.sliceBatchHeads = sliced;
    auto created = la::Runtime::create(options);
    if (!created)
      return created.takeError();
    runtime = std::move(*created);
    auto loaded = runtime->loadFile(GetParam().path);
    if (!loaded)
      return loaded.takeError();
    program = std::move(*loaded);
    return runtime->run(*program, GetParam().info.name, inputs);
  }

  std::string source;
  std::vector<la::TensorSpec> specs;
};

// What `lac compile --emit=obj` does for the whole batch, in f32 and in a half type.
TEST_P(UnslicedEntry, CompilesToObject) {
  SCOPED_TRACE(describe(GetParam().info, specs));
  for (la::DType dtype : {la::DType::F32, la::DType::BF16}) {
    auto object = la::emitStage(source, GetParam().path, GetParam().info.name, withDType(specs, dtype),
                                la::CompileOptions(), la::Stage::Object);
    ASSERT_TRUE(static_cast<bool>(object)) << la::dtypeName(dtype).str() << ": " << llvm::toString(object.takeError());
    EXPECT_TRUE(llvm::StringRef(*object).starts_with("\x7f"
                                                     "ELF"))
        << la::dtypeName(dtype).str() << ": not an ELF object";
  }
}

// The kernel compiled for the whole batch (no slices), run, against the fp64 reference of the numerics
// guard. Where the guard cannot build that reference, against the sliced run instead, which
// tests/numerics checks against SPEC's oracles.
TEST_P(UnslicedEntry, RunsWithinFp64Tolerance) {
  SCOPED_TRACE(describe(GetParam().info, specs));
  std::mt19937_64 generator(19);
  std::vector<la::HostTensor> inputs;
  for (auto [i, spec] : llvm::enumerate(specs)) {
    // Inside each argument's declared domain (log-gates ≤ 0), where the kernel's mathematics is defined.
    auto [low, high] = la::samplingInterval(GetParam().info.signature.argumentDomains[i]);
    std::uniform_real_distribution<double> uniform(low, high);
    la::HostTensor &tensor = inputs.emplace_back(spec);
    for (int64_t e = 0; e < tensor.numElements(); ++e)
      tensor.set(e, uniform(generator));
  }
  std::vector<la::TensorRef> inputRefs;
  for (la::HostTensor &tensor : inputs)
    inputRefs.push_back(tensor.ref());

  std::unique_ptr<la::Runtime> runtime;
  std::shared_ptr<la::Program> program;
  auto outputs = run(/*sliced=*/false, inputRefs, runtime, program);
  ASSERT_TRUE(static_cast<bool>(outputs)) << llvm::toString(outputs.takeError());
  std::vector<la::TensorRef> outputRefs;
  for (la::HostTensor &tensor : *outputs)
    outputRefs.push_back(tensor.ref());
  auto report = runtime->checkNumerics(*program, GetParam().info.name, inputRefs, outputRefs);
  if (report) {
    EXPECT_TRUE(report->passed()) << report->str();
    return;
  }
  std::string why = llvm::toString(report.takeError());
  std::cerr << "note: no fp64 reference (" << why << "); comparing with the sliced run\n";
  std::unique_ptr<la::Runtime> slicedRuntime;
  std::shared_ptr<la::Program> slicedProgram;
  auto expected = run(/*sliced=*/true, inputRefs, slicedRuntime, slicedProgram);
  ASSERT_TRUE(static_cast<bool>(expected)) << llvm::toString(expected.takeError());
  ASSERT_EQ(expected->size(), outputs->size());
  for (auto [i, got, want] : llvm::enumerate(*outputs, *expected)) {
    la::TensorSpec wideSpec = want.spec();
    wideSpec.dtype = la::DType::F64;
    la::HostTensor wide(wideSpec);
    for (int64_t e = 0; e < want.numElements(); ++e)
      wide.set(e, want.get(e));
    la::OutputCheck check = la::compareWithReference(i, got.ref(), wide.ref());
    EXPECT_TRUE(check.passed()) << check.str();
  }
}

INSTANTIATE_TEST_SUITE_P(Library, UnslicedEntry, testing::ValuesIn(libraryEntries()),
                         [](const testing::TestParamInfo<EntryCase> &info) {
                           std::string name = llvm::sys::path::stem(info.param.path).str() + "_" +
                                              (info.param.info.name.empty() ? "error" : info.param.info.name);
                           for (char &ch : name)
                             if (!llvm::isAlnum(ch))
                               ch = '_';
                           return name;
                         });

} // namespace

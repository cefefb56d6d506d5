#!/usr/bin/env bash
# The InstallPackage test: a host program built outside this tree, against the installed package only.
#   install-and-run.sh CMAKE BUILD_DIR SOURCE_DIR CXX_COMPILER GENERATOR MAKE_PROGRAM
# 1. `cmake --install BUILD_DIR` into a fresh temporary prefix outside the source and build trees;
# 2. the installed CMake package and headers must not name either tree;
# 3. tests/install/consumer/CMakeLists.txt and a copy of examples/host_program.cpp are configured (with the
#    build's compiler and generator, and nothing but CMAKE_PREFIX_PATH to find la), built and run: the program
#    loads the installed kernels, runs them and checks a C++-built kernel against the library's;
# 4. the installed lac and la-opt run (their RPATH finds libMLIR.so).
# LD_LIBRARY_PATH is cleared, so every program finds its libraries through its own RPATH.
set -euo pipefail
[ $# -eq 6 ] || { echo "usage: $0 CMAKE BUILD_DIR SOURCE_DIR CXX_COMPILER GENERATOR MAKE_PROGRAM" >&2; exit 2; }
cmake=$1 build=$2 src=$3 cxx=$4 generator=$5 make=$6
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
unset LD_LIBRARY_PATH

work=$(mktemp -d "${TMPDIR:-/tmp}/la-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix app=$work/app

fail() {
  echo "InstallPackage: $*" >&2
  exit 1
}
# step NAME COMMAND...: runs COMMAND with its output in NAME.log, shown only if it fails.
step() {
  local name=$1
  shift
  if ! "$@" >"$work/$name.log" 2>&1; then
    tail -n 60 "$work/$name.log" >&2
    fail "$name failed: $*"
  fi
}

case "$work/" in "$src"/* | "$build"/*) fail "the temporary directory $work is inside the source or build tree" ;; esac

step install "$cmake" --install "$build" --prefix "$prefix"
[ -f "$prefix/include/la/runtime/Runtime.h" ] && [ -f "$prefix/include/LA/IR/LAOps.h.inc" ] ||
  fail "the public headers were not installed under $prefix/include"
package_dir=$(dirname "$(find "$prefix" -name LAConfig.cmake -print -quit)")
[ -f "$package_dir/LAConfigVersion.cmake" ] || fail "no LAConfig.cmake with its version file under $prefix"
# A path into the trees the package was built from would work here and break on any other machine.
if leaks=$(grep -rlF -e "$src/" -e "$build/" "$package_dir" "$prefix/include"); then
  fail "installed files name the source or build tree: $leaks"
fi

mkdir "$app"
cp "$here/consumer/CMakeLists.txt" "$src/examples/host_program.cpp" "$app/"
step configure "$cmake" -S "$app" -B "$app/build" -G "$generator" -DCMAKE_MAKE_PROGRAM="$make" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix"
grep -qxF "LA_DIR:PATH=$package_dir" "$app/build/CMakeCache.txt" ||
  fail "the consumer did not find the package just installed ($package_dir): $(grep '^LA_DIR' "$app/build/CMakeCache.txt")"
step build "$cmake" --build "$app/build"
step run "$app/build/host_program"
tail -n 1 "$work/run.log" | grep -qx ok || fail "host_program did not end with 'ok': $(cat "$work/run.log")"

kernels=$(find "$prefix" -path '*/la/kernels/linear_attention.mlir' -print -quit)
[ -n "$kernels" ] || fail "the kernel library was not installed"
# A compile, a JIT run and the fp64 reference check, through the installed lac.
step lac "$prefix/bin/lac" run "$kernels" --entry linear_attention_causal --random 1,2,64,16 --check \
  --cache-dir none
step la-opt "$prefix/bin/la-opt" "$kernels"
grep -q 'la.scan' "$work/la-opt.log" || fail "la-opt did not print the kernel: $(head -n 20 "$work/la-opt.log")"
echo "InstallPackage: installed, built host_program against the package and ran it, lac and la-opt"

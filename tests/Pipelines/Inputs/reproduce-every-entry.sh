#!/usr/bin/env bash
# For every library entry (library-entries.txt beside this script): `lac compile --emit=pipeline` prints
# the pass pipeline, and `la-opt --pass-pipeline=<it>` on the kernel file must print exactly what
# `lac compile --emit=STAGE` prints. Prints "<entry>: same" or "<entry>: DIFFERENT" and the first lines of
# the difference (or of la-opt's error), and exits 1 if any differs.
#
#   reproduce-every-entry.sh BIN_DIR KERNELS_DIR WORK_DIR STAGE LAC_FLAGS...   (BIN_DIR holds lac and la-opt)
set -uo pipefail
bin=$1 kernels=$2 work=$3 stage=$4
shift 4
mkdir -p "$work"
status=0
while read -r file entry shapes; do
  [[ -z $file || $file == \#* ]] && continue
  # shellcheck disable=SC2086 # the shape flags are words
  pipeline=$("$bin/lac" compile "$kernels/$file.mlir" --entry "$entry" "$@" $shapes --emit=pipeline) || { status=1; continue; }
  # shellcheck disable=SC2086
  "$bin/lac" compile "$kernels/$file.mlir" --entry "$entry" "$@" $shapes --emit="$stage" -o "$work/$entry.lac.mlir" ||
    { status=1; continue; }
  "$bin/la-opt" "$kernels/$file.mlir" --pass-pipeline="$pipeline" -o "$work/$entry.opt.mlir" 2> "$work/$entry.err"
  if cmp -s "$work/$entry.lac.mlir" "$work/$entry.opt.mlir"; then
    echo "$entry: same"
  else
    echo "$entry: DIFFERENT"
    head -5 "$work/$entry.err"
    diff "$work/$entry.lac.mlir" "$work/$entry.opt.mlir" | head -10
    status=1
  fi
done < "$(dirname "${BASH_SOURCE[0]}")/library-entries.txt"
exit $status

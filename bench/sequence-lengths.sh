#!/bin/bash
# Causal calls of any length on pieces (RuntimeOptions::splitSequences, runtime/lib/SequencePieces.h) against the
# kernel compiled for the call's own length (--split-sequences=false), issue 23 item 6:
#   speed     interleaved rounds of `lac run --repeat` at N = 1000, 4096, 16384 (medians, ms; override with NS)
#   compiles  a fresh disk cache serving 16 prompt lengths, one process each: what each length compiled
# Run from the source tree after a build, on an idle machine: bench/sequence-lengths.sh speed|compiles
set -euo pipefail
cd "$(dirname "$0")/.."
LAC=${LAC:-build/bin/lac}
CACHE=$(mktemp -d)
trap 'rm -rf "$CACHE"' EXIT
median() { "$LAC" run "kernels/$1" --entry "$2" --random "$3" --threads 2 --repeat "$4" "${@:5}" 2>&1 |
  sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'; }
case "${1:-speed}" in
speed)
  for spec in "linear_attention.mlir linear_attention_causal 2,8,N,64" "flow_attention.mlir flow_attention_causal 2,8,N,64" \
    "retention.mlir simple_gla 1,32,N,128" "retention.mlir gla 1,32,N,128"; do
    set -- $spec
    for n in ${NS:-1000 4096 16384}; do
      shape=${3/N/$n}
      repeat=$((n > 5000 ? 10 : 30))
      export LA_CACHE_DIR=$CACHE
      median "$1" "$2" "$shape" 1 >/dev/null
      median "$1" "$2" "$shape" 1 --split-sequences=false >/dev/null
      pieces="" whole=""
      for round in 1 2 3; do
        pieces="$pieces $(median "$1" "$2" "$shape" $repeat)"
        whole="$whole $(median "$1" "$2" "$shape" $repeat --split-sequences=false)"
      done
      echo "$2 N=$n pieces:$pieces whole:$whole"
    done
  done
  ;;
compiles)
  for mode in pieces whole; do
    rm -rf "$CACHE"/*
    extra=()
    [ "$mode" = whole ] && extra=(--split-sequences=false)
    line=""
    for n in 1000 1733 2048 517 3001 1234 999 4000 2718 3333 1500 777 2222 1111 3900 600; do
      first=$(LA_CACHE_DIR=$CACHE "$LAC" run kernels/retention.mlir --entry simple_gla --random 1,32,$n,128 \
        --threads 2 --repeat 1 "${extra[@]}" 2>&1 | head -1)
      line="$line $n:$(echo "$first" | sed -n 's/.*kernel \([a-z]*\) (\([0-9.]*\) ms).*/\1 \2ms/p' | tr ' ' ':')"
    done
    echo "$mode:$line"
  done
  ;;
*)
  echo "usage: $0 speed|compiles" >&2
  exit 1
  ;;
esac

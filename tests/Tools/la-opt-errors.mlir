// Malformed input gives a diagnostic located at file:line:col and a non-zero exit, never a crash (`not`
// fails on a crash).

// RUN: not la-opt %S/Inputs/syntax_error.mlir 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: syntax_error.mlir:2:41: error: expected '->'

// RUN: not la-opt %S/Inputs/unknown_op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: unknown_op.mlir:2:8: error: custom op 'la.softplus' is unknown

// RUN: not la-opt %S/Inputs/wrong_rank.mlir 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: wrong_rank.mlir:2:8: error: 'la.contract' op input #1 has rank 3 but subscript 'bhde' names 4 dimensions

// RUN: not la-opt %S/Inputs/mismatched_dims.mlir 2>&1 | FileCheck %s --check-prefix=DIMS
// DIMS: mismatched_dims.mlir:2:8: error: 'la.contract' op dimension 'm' has size 128 in input #0 but 100 in input #1

// RUN: not la-opt %S/Inputs/does_not_exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: cannot open input file '{{.*}}does_not_exist.mlir'

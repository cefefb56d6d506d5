// RUN: la-opt %s -la-register-tile-contractions="max-rows=4" -canonicalize | FileCheck %s --check-prefix=ROWS
// RUN: la-opt %s -la-register-tile-contractions="vector-tile=16" -canonicalize | FileCheck %s --check-prefix=LANES
// RUN: not la-opt %s -la-register-tile-contractions="register-budget=0" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not la-opt %s -la-register-tile-contractions="reduction-panel=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: la-opt %s -split-input-file -la-register-tile-contractions="reduction-panel=16" -canonicalize | FileCheck %s --check-prefix=PANEL
// RUN: la-opt %s -split-input-file -la-register-tile-contractions="reduction-panel=0" -canonicalize | FileCheck %s --check-prefix=NOPANEL
// RUN: la-opt %s -split-input-file -la-register-tile-contractions -canonicalize | FileCheck %s --check-prefix=EPILOGUE
// RUN: la-opt %s -split-input-file -la-register-tile-contractions="fuse-epilogues=false" -canonicalize | FileCheck %s --check-prefix=NOEPILOGUE

// max-rows caps the block rows (8 would fit the budget for 2 registers per row); vector-tile caps the lanes
// (32 output lanes become two 16-lane blocks per row block).
// ROWS: scf.for {{.*}} step %c4
// ROWS: vector.fma {{.*}} : vector<4x32xf32>
// LANES: vector.fma {{.*}} : vector<8x16xf32>
// BAD: every option must be positive
#a = affine_map<(n, e, d) -> (n, d)>
#b = affine_map<(n, e, d) -> (d, e)>
#c = affine_map<(n, e, d) -> (n, e)>
func.func @matmul(%q: tensor<16x16xf32>, %s: tensor<16x32xf32>, %init: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<16x16xf32>, tensor<16x32xf32>) outs(%init : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// reduction-panel sets the panel length (48 = 3 panels of 16); 0 turns panels off (the reduction runs
// whole inside each row block).
// PANEL-LABEL: func.func @long_reduction
// PANEL: scf.for {{.*}} = %c0 to %c48 step %c16 iter_args({{.*}}) -> (tensor<16x32xf32>)
// PANEL:   scf.for {{.*}} = %c0 to %c16 step %c8
// PANEL:     scf.for {{.*}} = %c0 to %c16 step %c1 iter_args({{.*}}) -> (vector<8x32xf32>)
// NOPANEL-LABEL: func.func @long_reduction
// NOPANEL-NOT: step %c16
// NOPANEL: scf.for {{.*}} = %c0 to %c48 step %c1 iter_args({{.*}}) -> (vector<8x32xf32>)
#k = affine_map<(m, d, e) -> (m, d)>
#v = affine_map<(m, d, e) -> (m, e)>
#s = affine_map<(m, d, e) -> (d, e)>
func.func @long_reduction(%k: tensor<48x16xf32>, %v: tensor<48x32xf32>, %init: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.generic {indexing_maps = [#k, #v, #s], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%k, %v : tensor<48x16xf32>, tensor<48x32xf32>) outs(%init : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// fuse-epilogues (on by default) applies the gate to each register block; off, the product fills and
// writes a whole 16×32 accumulator and the gate stays a generic that reads it back.
// EPILOGUE-LABEL: func.func @gated
// EPILOGUE-NOT: linalg.fill
// EPILOGUE: arith.mulf {{.*}} : vector<8x32xf32>
// EPILOGUE-NOT: linalg.generic
// NOEPILOGUE-LABEL: func.func @gated
// NOEPILOGUE: linalg.fill
// NOEPILOGUE: vector.fma {{.*}} : vector<8x32xf32>
// NOEPILOGUE: linalg.generic
// NOEPILOGUE:   arith.mulf {{.*}} : f32
#q2 = affine_map<(n, e, d) -> (n, d)>
#s2 = affine_map<(n, e, d) -> (d, e)>
#r2 = affine_map<(n, e, d) -> (n, e)>
#row = affine_map<(n, e) -> (n)>
#id = affine_map<(n, e) -> (n, e)>
func.func @gated(%q: tensor<16x16xf32>, %s: tensor<16x32xf32>, %w: tensor<16xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
  %p = linalg.generic {indexing_maps = [#q2, #s2, #r2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<16x16xf32>, tensor<16x32xf32>) outs(%init : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %m fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<16x32xf32>
  %r = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %p : tensor<16xf32>, tensor<16x32xf32>) outs(%empty : tensor<16x32xf32>) {
  ^bb0(%ww: f32, %pp: f32, %out: f32):
    %g = arith.mulf %ww, %pp : f32
    linalg.yield %g : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

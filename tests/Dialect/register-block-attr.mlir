// RUN: la-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect | FileCheck %s

// #la.register_block, the register-tiling lowering config: printed with its optional keys only when set,
// parsed in any key order.

// CHECK-LABEL: func.func @configs
// CHECK: "test.block"() {la.register_block = #la.register_block<tile = [8, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>}
// CHECK: "test.block"() {la.register_block = #la.register_block<tile = [1, 6, 64], order = [1, 2, 0], vector = 2, rows = 1, transpose = [0, 2], panel_loop = 0, panel_size = 64>}
// CHECK: "test.block"() {la.register_block = #la.register_block<tile = [16], order = [0], vector = 0>}
func.func @configs() {
  "test.block"() {la.register_block = #la.register_block<tile = [8, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>} : () -> ()
  "test.block"() {la.register_block = #la.register_block<panel_size = 64, panel_loop = 0, transpose = [0, 2], rows = 1,
                                                           vector = 2, order = [1, 2, 0], tile = [1, 6, 64]>} : () -> ()
  "test.block"() {la.register_block = #la.register_block<tile = [16], order = [0], vector = 0>} : () -> ()
  return
}

// -----

// expected-error @+1 {{order must be a permutation of the 3 loops}}
"test.block"() {la.register_block = #la.register_block<tile = [8, 32, 1], order = [0, 1, 1], vector = 1>} : () -> ()

// -----

// expected-error @+1 {{every tile size must be positive}}
"test.block"() {la.register_block = #la.register_block<tile = [8, 0], order = [0, 1], vector = 1>} : () -> ()

// -----

// expected-error @+1 {{row loop 1 must be a loop other than the vector loop}}
"test.block"() {la.register_block = #la.register_block<tile = [8, 32], order = [0, 1], vector = 1, rows = 1>} : () -> ()

// -----

// expected-error @+1 {{vector loop 2 is not one of the 2 loops}}
"test.block"() {la.register_block = #la.register_block<tile = [8, 32], order = [0, 1], vector = 2>} : () -> ()

// -----

// expected-error @+1 {{panel_loop and a positive panel_size go together}}
"test.block"() {la.register_block = #la.register_block<tile = [1, 6, 64], order = [1, 2, 0], vector = 2, panel_loop = 0>} : () -> ()

// -----

// expected-error @+1 {{expected tile, order and vector}}
"test.block"() {la.register_block = #la.register_block<tile = [8, 32], vector = 1>} : () -> ()

// -----

// expected-error @+1 {{unknown key 'lanes'}}
"test.block"() {la.register_block = #la.register_block<tile = [8, 32], order = [0, 1], vector = 1, lanes = 16>} : () -> ()

// -----

// expected-error @+1 {{'la.register_block' must be a #la.register_block}}
"test.block"() {la.register_block = 3 : i64} : () -> ()

// RUN: la-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// #la.domain, the interval an entry argument may hold: either bound optional, both inclusive, printed
// with the shortest text that reads back exactly.

// CHECK-LABEL: func.func @domains
// CHECK-SAME: {la.domain = #la.domain<max = 0.0>}
// CHECK-SAME: {la.domain = #la.domain<min = -1.5, max = 2.25>}
// CHECK-SAME: {la.domain = #la.domain<min = 0.001>}
func.func @domains(%g: tensor<?xf32> {la.domain = #la.domain<max = 0.0>},
                   %h: tensor<?xf32> {la.domain = #la.domain<min = -1.5, max = 2.25>},
                   %i: tensor<?xf32> {la.domain = #la.domain<min = 1.0e-3>}) -> tensor<?xf32> {
  return %g : tensor<?xf32>
}

// -----

// expected-error @+1 {{#la.domain needs a min or a max bound}}
func.func @no_bound(%g: tensor<?xf32> {la.domain = #la.domain<>}) {
  return
}

// -----

// expected-error @+1 {{#la.domain is empty: min 1.0 > max 0.0}}
func.func @empty(%g: tensor<?xf32> {la.domain = #la.domain<min = 1.0, max = 0.0>}) {
  return
}

// -----

// expected-error @+1 {{expected `max = <number>` after the comma}}
func.func @dangling_comma(%g: tensor<?xf32> {la.domain = #la.domain<min = 1.0,>}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'la.domain' must be a #la.domain, not 1.000000e+00 : f64}}
func.func @not_a_domain(%g: tensor<?xf32> {la.domain = 1.0}) {
  return
}

// -----

// expected-error @+1 {{argument #1: 'la.domain' describes floating-point values, but the argument is 'tensor<?xi32>'}}
func.func @integer_argument(%a: tensor<?xf32>, %n: tensor<?xi32> {la.domain = #la.domain<min = 0.0>}) {
  return
}

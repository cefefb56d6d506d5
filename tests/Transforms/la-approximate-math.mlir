// RUN: la-opt %s -split-input-file -la-approximate-math | FileCheck %s

// f32 exp, scalar: clamp (NaN-preserving compare/select), the rounding add that yields k + 127 in the low
// bits of t, Cody-Waite reduction in two FMAs, a degree-6 polynomial (six FMAs), and 2^k from t's bits.
// CHECK-LABEL: func.func @exp_scalar
// CHECK-DAG: %[[LO:.*]] = arith.constant -8.800000e+01 : f32
// CHECK-DAG: %[[HI:.*]] = arith.constant 8.900000e+01 : f32
// CHECK-DAG: %[[MAGIC:.*]] = arith.constant 0x4B40007F : f32
// CHECK-DAG: %[[C23:.*]] = arith.constant 23 : i32
// CHECK:     %[[BELOW:.*]] = arith.cmpf olt, %arg0, %[[LO]]
// CHECK:     %[[X1:.*]] = arith.select %[[BELOW]], %[[LO]], %arg0
// CHECK:     %[[ABOVE:.*]] = arith.cmpf ogt, %[[X1]], %[[HI]]
// CHECK:     %[[X:.*]] = arith.select %[[ABOVE]], %[[HI]], %[[X1]]
// CHECK:     %[[T0:.*]] = math.fma %[[X]], {{.*}}, %[[MAGIC]]
// CHECK:     %[[T:.*]] = arith.select {{.*}}, {{.*}}, %[[T0]]
// CHECK:     %[[K:.*]] = arith.subf %[[T]], %[[MAGIC]]
// CHECK:     %[[R0:.*]] = math.fma %[[K]], {{.*}}, %[[X]]
// CHECK:     %[[R:.*]] = math.fma %[[K]], {{.*}}, %[[R0]]
// CHECK-COUNT-6: math.fma {{.*}}, %[[R]], {{.*}}
// CHECK:     %[[BITS:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK:     %[[SHIFTED:.*]] = arith.shli %[[BITS]], %[[C23]]
// CHECK:     %[[SCALE:.*]] = arith.bitcast %[[SHIFTED]] : i32 to f32
// CHECK:     arith.mulf {{.*}}, %[[SCALE]]
// CHECK-NOT: math.exp
func.func @exp_scalar(%x: f32) -> f32 {
  %y = math.exp %x : f32
  return %y : f32
}

// -----

// Vectors get the same expansion with splat constants.
// CHECK-LABEL: func.func @exp_vector
// CHECK-DAG: arith.constant dense<23> : vector<16xi32>
// CHECK:     arith.bitcast {{.*}} : vector<16xf32> to vector<16xi32>
// CHECK:     arith.shli {{.*}} : vector<16xi32>
// CHECK-NOT: math.exp
func.func @exp_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %y = math.exp %x : vector<16xf32>
  return %y : vector<16xf32>
}

// -----

// f32 expm1: exp's reduction (x = k·ln2 + r, scale = 2^k from the bits of t), its polynomial without the
// constant term times r (e^r − 1, no cancellation), then 2^k·(e^r − 1) + (2^k − 1) in one FMA. No log, no
// division, no select between two forms.
// CHECK-LABEL: func.func @expm1_scalar
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:     %[[K:.*]] = arith.subf
// CHECK:     %[[R0:.*]] = math.fma %[[K]], %{{.*}}, %{{.*}} : f32
// CHECK:     %[[R:.*]] = math.fma %[[K]], %{{.*}}, %[[R0]] : f32
// CHECK-COUNT-5: math.fma {{.*}}, %[[R]], {{.*}}
// CHECK:     %[[EM1R:.*]] = arith.mulf %{{.*}}, %[[R]] : f32
// CHECK:     %[[SCALE:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:     %[[SM1:.*]] = arith.subf %[[SCALE]], %[[ONE]] : f32
// CHECK:     math.fma %[[SCALE]], %[[EM1R]], %[[SM1]] : f32
// CHECK-NOT: math.expm1
// CHECK-NOT: math.log
// CHECK-NOT: arith.divf
// CHECK-NOT: arith.select
func.func @expm1_scalar(%x: f32) -> f32 {
  %y = math.expm1 %x : f32
  return %y : f32
}

// -----

// Other functions (and other types) keep MLIR's polynomial approximations.
// CHECK-LABEL: func.func @tanh_f32
// CHECK-NOT: math.tanh
// CHECK-NOT: 0x4B40007F
func.func @tanh_f32(%x: f32) -> f32 {
  %y = math.tanh %x : f32
  return %y : f32
}

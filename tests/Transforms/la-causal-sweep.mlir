// RUN: la-opt %s -split-input-file -la-chunk-scans="chunk-size=4 causal-sweep=true" | FileCheck %s

// Causal linear attention, N = 10 in chunks of 4: one loop carries both causal states (the [D, Dv] state
// of the numerator and the [D] running sum of the normaliser) and the output; the feature maps and the
// normalisation run on each chunk, and nothing of length N but the output is built. The tail of 2 follows.
// CHECK-LABEL: func.func @linear_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<1x10x2xf32>, %[[K:.*]]: tensor<1x10x2xf32>, %[[V:.*]]: tensor<1x10x3xf32>)
// CHECK: %[[LOOP:.*]]:3 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S:.*]] = %{{.*}}, %[[Z:.*]] = %{{.*}}, %[[OUT:.*]] = %{{.*}}) -> (tensor<1x2x3xf32>, tensor<1x2xf32>, tensor<1x10x3xf32>)
// CHECK:   %[[QC:.*]] = tensor.extract_slice %[[Q]][0, %[[I]], 0] [1, 4, 2]
// CHECK:   %[[QF:.*]] = la.map elu1 %[[QC]] : tensor<1x4x2xf32>
// CHECK:   %[[KC:.*]] = tensor.extract_slice %[[K]][0, %[[I]], 0] [1, 4, 2]
// CHECK:   %[[KF:.*]] = la.map elu1 %[[KC]] : tensor<1x4x2xf32>
// CHECK:   %[[VC:.*]] = tensor.extract_slice %[[V]][0, %[[I]], 0] [1, 4, 3]
// CHECK:   %[[INTER:.*]] = la.contract "bnd,bde->bne" %[[QF]], %[[S]]
// CHECK:   %[[SCORES:.*]] = la.contract "bnd,bmd->bnm" %[[QF]], %[[KF]] mask tril(n, m)
// CHECK:   %[[INTRA:.*]] = la.contract "bnm,bme->bne" %[[SCORES]], %[[VC]]
// CHECK:   %[[NUM:.*]] = la.map add %[[INTER]], %[[INTRA]]
// CHECK:   %[[DELTA:.*]] = la.contract "bmd,bme->bde" %[[KF]], %[[VC]]
// CHECK:   %[[NEXTS:.*]] = la.map add %[[S]], %[[DELTA]]
// CHECK:   %[[PREFIX:.*]] = la.scan add %[[KF]] init(%[[Z]] : tensor<1x2xf32>) along 1 inclusive
// CHECK:   %[[DEN:.*]] = la.contract "bnd,bnd->bn" %[[QF]], %[[PREFIX]]
// CHECK:   %[[SUMK:.*]] = la.reduce add %[[KF]] along [1]
// CHECK:   %[[NEXTZ:.*]] = la.map add %[[Z]], %[[SUMK]]
// CHECK:   %[[O:.*]] = la.normalize sum %[[NUM]] by %[[DEN]] along 2
// CHECK:   %[[W:.*]] = tensor.insert_slice %[[O]] into %[[OUT]][0, %[[I]], 0] [1, 4, 3]
// CHECK:   scf.yield %[[NEXTS]], %[[NEXTZ]], %[[W]]
// CHECK: la.map elu1 %{{.*}} : tensor<1x2x2xf32>
// CHECK: la.scan add %{{.*}} init(%[[LOOP]]#1 : tensor<1x2xf32>)
// CHECK: %[[LAST:.*]] = tensor.insert_slice %{{.*}} into %[[LOOP]]#2[0, %{{.*}}, 0] [1, 2, 3]
// CHECK-NOT: scf.for
// CHECK: return %[[LAST]]
func.func @linear_causal(%q: tensor<1x10x2xf32>, %k: tensor<1x10x2xf32>, %v: tensor<1x10x3xf32>) -> tensor<1x10x3xf32> {
  %qf = la.map elu1 %q : tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  %kf = la.map elu1 %k : tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  %kv = la.contract "bnd,bne->bnde" %kf, %v : tensor<1x10x2xf32>, tensor<1x10x3xf32> -> tensor<1x10x2x3xf32>
  %s = la.scan add %kv along 1 inclusive : tensor<1x10x2x3xf32> -> tensor<1x10x2x3xf32>
  %z = la.scan add %kf along 1 inclusive : tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  %num = la.contract "bnd,bnde->bne" %qf, %s : tensor<1x10x2xf32>, tensor<1x10x2x3xf32> -> tensor<1x10x3xf32>
  %den = la.contract "bnd,bnd->bn" %qf, %z : tensor<1x10x2xf32>, tensor<1x10x2xf32> -> tensor<1x10xf32>
  %o = la.normalize sum %num by %den along 2 eps(1.0e-6) : tensor<1x10x3xf32>, tensor<1x10xf32> -> tensor<1x10x3xf32>
  return %o : tensor<1x10x3xf32>
}

// -----

// Flow's prefix length n_t = t + 1 reads absolute positions: inside the loop it is the chunk's own index
// plus the chunk's start. A running sum read through a map is carried as its last row.
// CHECK-LABEL: func.func @prefix_mean
// CHECK: scf.for %[[I:.*]] = %{{.*}} iter_args(%[[SUMSOFAR:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x2xf32>, tensor<1x10x2xf32>)
// CHECK:   %[[PREFIX:.*]] = la.scan add %{{.*}} init(%[[SUMSOFAR]] : tensor<1x2xf32>) along 1 inclusive : tensor<1x4x2xf32>
// CHECK:   %[[LASTROW:.*]] = tensor.extract_slice %[[PREFIX]][0, 3, 0] [1, 1, 2]
// CHECK:   %[[CARRY:.*]] = linalg.copy ins(%[[LASTROW]] : tensor<1x2xf32>) outs(%[[SUMSOFAR]] : tensor<1x2xf32>)
// CHECK:   la.map "bnd->bnd" %[[PREFIX]]
// CHECK:     %[[T:.*]] = la.index 1 : index
// CHECK:     %[[POS:.*]] = arith.addi %[[T]], %[[I]] : index
// CHECK:     arith.uitofp %{{.*}} : i64 to f32
// CHECK:   scf.yield %[[CARRY]]
func.func @prefix_mean(%x: tensor<1x10x2xf32>) -> tensor<1x10x2xf32> {
  %c = la.scan add %x along 1 inclusive : tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  %mean = la.map "bnd->bnd" %c : tensor<1x10x2xf32> -> tensor<1x10x2xf32> {
  ^bb0(%sum: f32):
    %t = la.index 1 : f32
    %one = arith.constant 1.0 : f32
    %n = arith.addf %t, %one : f32
    %m = arith.divf %sum, %n : f32
    la.yield %m : f32
  }
  return %mean : tensor<1x10x2xf32>
}

// -----

// A reduction over the sequence makes the kernel non-causal: no sweep, the scan stays as it is.
// CHECK-LABEL: func.func @not_causal
// CHECK-NOT: scf.for
// CHECK: la.scan add %{{.*}} along 1 inclusive : tensor<1x10x2xf32>
// CHECK: la.reduce add %{{.*}} along [1]
func.func @not_causal(%x: tensor<1x10x2xf32>) -> tensor<1x10x2xf32> {
  %c = la.scan add %x along 1 inclusive : tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  %total = la.reduce add %x along [1] : tensor<1x10x2xf32> -> tensor<1x2xf32>
  %r = la.map div "bnd,bd->bnd" %c, %total : tensor<1x10x2xf32>, tensor<1x2xf32> -> tensor<1x10x2xf32>
  return %r : tensor<1x10x2xf32>
}

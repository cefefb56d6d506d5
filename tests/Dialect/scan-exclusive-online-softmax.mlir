// RUN: la-opt %s | la-opt | FileCheck %s
// RUN: lac run %s --entry before_each_piece --random 2,4,3 --shape y0=2x3 --shape m0=2x3 --shape z0=2x3 --check --cache-dir none | FileCheck %s --check-prefix=CPU
// RUN: lac run %s --entry before_each_piece --random 2,4,3 --shape y0=2x3 --shape m0=2x3 --shape z0=2x3 --target cuda-emu --check --cache-dir none | FileCheck %s --check-prefix=CPU
// CPU-COUNT-3: : ok

// An exclusive online softmax from an init (the state before the first position, which is then the first
// position's): how a GPU call in pieces finds the state before each piece (runtime/lib/GpuSequencePieces.h).
// Without an init it has no first value (invalid.mlir).
// CHECK-LABEL: func.func @before_each_piece
// CHECK: la.scan online_softmax %{{.*}}, %{{.*}} init(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) along 1 exclusive
func.func @before_each_piece(%logits: tensor<?x?x?xf32>, %values: tensor<?x?x?xf32>, %y0: tensor<?x?xf32>,
                             %m0: tensor<?x?xf32>, %z0: tensor<?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %y, %m, %z = la.scan online_softmax %logits, %values init(%y0, %m0, %z0 : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
      along 1 exclusive : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
  return %y, %m, %z : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

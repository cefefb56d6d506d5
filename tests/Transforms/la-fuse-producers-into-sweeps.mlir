// RUN: la-opt %s -split-input-file -la-fuse-producers-into-sweeps=min-result-bytes=0 | FileCheck %s
// RUN: la-opt %s -split-input-file -la-fuse-producers-into-sweeps | FileCheck %s --check-prefix=SMALL

// Flow-Attention's σ(q), then Σ_n σ(q)[n] as register tiling leaves it (a loop over the rows carrying a
// vector), then a later reader of σ(q) whole. The loop computes each row of σ(q), inserts it into the tensor
// it now carries, and the later reader takes that tensor; the whole-tensor generic is gone.
// CHECK-LABEL: func.func @feature_map_then_column_sum
// CHECK-SAME:    (%[[Q:.*]]: tensor<8x16xf32>
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         %[[LOOP:.*]]:2 = scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[SUM:.*]] = %{{.*}}, %[[CARRIED:.*]] = %[[EMPTY]])
// CHECK:           %[[ROW_IN:.*]] = tensor.extract_slice %[[Q]][%[[N]], 0] [1, 16] [1, 1]
// CHECK-NEXT:      %[[ROW_OUT:.*]] = tensor.extract_slice %[[CARRIED]][%[[N]], 0] [1, 16] [1, 1]
// CHECK:           %[[ROW:.*]] = linalg.generic {{.*}} ins(%[[ROW_IN]] : tensor<1x16xf32>) outs(%[[ROW_OUT]] : tensor<1x16xf32>)
// CHECK:             math.exp
// CHECK:           vector.transfer_read %[[ROW]]
// CHECK:           %[[INSERTED:.*]] = tensor.insert_slice %[[ROW]] into %[[CARRIED]][%[[N]], 0] [1, 16] [1, 1]
// CHECK:           scf.yield %{{.*}}, %[[INSERTED]]
// CHECK:         linalg.generic {{.*}} ins(%[[LOOP]]#1 : tensor<8x16xf32>)
// SMALL-LABEL: func.func @feature_map_then_column_sum
// SMALL:         linalg.generic
// SMALL:         scf.for {{.*}} -> (vector<16xf32>)
#map = affine_map<(n, d) -> (n, d)>
func.func @feature_map_then_column_sum(%q: tensor<8x16xf32>) -> (vector<16xf32>, tensor<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pad = ub.poison : f32
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  %empty = tensor.empty() : tensor<8x16xf32>
  %qs = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<8x16xf32>
  %sum = scf.for %n = %c0 to %c8 step %c1 iter_args(%acc = %zeros) -> (vector<16xf32>) {
    %row = tensor.extract_slice %qs[%n, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %v = vector.transfer_read %row[%c0, %c0], %pad {in_bounds = [true]} : tensor<1x16xf32>, vector<16xf32>
    %next = arith.addf %acc, %v : vector<16xf32>
    scf.yield %next : vector<16xf32>
  }
  %doubled = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%qs : tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  } -> tensor<8x16xf32>
  return %sum, %doubled : vector<16xf32>, tensor<8x16xf32>
}

// -----

// Another reader before the loop needs the whole result first: nothing moves.
// CHECK-LABEL: func.func @read_before_the_sweep
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK:         scf.for {{.*}} -> (vector<16xf32>)
#map = affine_map<(n, d) -> (n, d)>
func.func @read_before_the_sweep(%q: tensor<8x16xf32>) -> (vector<16xf32>, tensor<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pad = ub.poison : f32
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  %empty = tensor.empty() : tensor<8x16xf32>
  %qs = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<8x16xf32>
  %doubled = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%qs : tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  } -> tensor<8x16xf32>
  %sum = scf.for %n = %c0 to %c8 step %c1 iter_args(%acc = %zeros) -> (vector<16xf32>) {
    %row = tensor.extract_slice %qs[%n, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %v = vector.transfer_read %row[%c0, %c0], %pad {in_bounds = [true]} : tensor<1x16xf32>, vector<16xf32>
    %next = arith.addf %acc, %v : vector<16xf32>
    scf.yield %next : vector<16xf32>
  }
  return %sum, %doubled : vector<16xf32>, tensor<8x16xf32>
}

// -----

// A loop that reads one row in two would leave half the result uncomputed: nothing moves.
// CHECK-LABEL: func.func @every_other_row
// CHECK:         linalg.generic
// CHECK:         scf.for {{.*}} -> (vector<16xf32>)
#map = affine_map<(n, d) -> (n, d)>
func.func @every_other_row(%q: tensor<8x16xf32>) -> (vector<16xf32>, tensor<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %pad = ub.poison : f32
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  %empty = tensor.empty() : tensor<8x16xf32>
  %qs = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<8x16xf32>
  %sum = scf.for %n = %c0 to %c8 step %c2 iter_args(%acc = %zeros) -> (vector<16xf32>) {
    %row = tensor.extract_slice %qs[%n, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %v = vector.transfer_read %row[%c0, %c0], %pad {in_bounds = [true]} : tensor<1x16xf32>, vector<16xf32>
    %next = arith.addf %acc, %v : vector<16xf32>
    scf.yield %next : vector<16xf32>
  }
  return %sum, %qs : vector<16xf32>, tensor<8x16xf32>
}

// -----

// The sweep also reads another row of the result in every iteration (an earlier tile, as causal AFT-full's
// row-tile loop does): that row must exist before the loop runs, so nothing moves.
// CHECK-LABEL: func.func @another_row_inside_the_sweep
// CHECK:         linalg.generic
// CHECK:         scf.for {{.*}} -> (vector<16xf32>)
#map = affine_map<(n, d) -> (n, d)>
func.func @another_row_inside_the_sweep(%q: tensor<8x16xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %pad = ub.poison : f32
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  %empty = tensor.empty() : tensor<8x16xf32>
  %qs = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<8x16xf32>
  %sum = scf.for %n = %c0 to %c8 step %c1 iter_args(%acc = %zeros) -> (vector<16xf32>) {
    %row = tensor.extract_slice %qs[%n, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %first = tensor.extract_slice %qs[0, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %v = vector.transfer_read %row[%c0, %c0], %pad {in_bounds = [true]} : tensor<1x16xf32>, vector<16xf32>
    %w = vector.transfer_read %first[%c0, %c0], %pad {in_bounds = [true]} : tensor<1x16xf32>, vector<16xf32>
    %vw = arith.mulf %v, %w : vector<16xf32>
    %next = arith.addf %acc, %vw : vector<16xf32>
    scf.yield %next : vector<16xf32>
  }
  return %sum : vector<16xf32>
}

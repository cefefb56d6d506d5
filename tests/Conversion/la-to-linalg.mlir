// RUN: la-opt %s -split-input-file -la-to-linalg -verify-diagnostics | FileCheck %s

// A broadcasting map: the subscripts become the input indexing maps of an all-parallel generic.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @map_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK:   arith.mulf
func.func @map_broadcast(%x: tensor<2x5x7xf32>, %w: tensor<2x5xf32>) -> tensor<2x5x7xf32> {
  %y = la.map mul "bne,bn->bne" %x, %w : tensor<2x5x7xf32>, tensor<2x5xf32> -> tensor<2x5x7xf32>
  return %y : tensor<2x5x7xf32>
}

// -----

// la.index becomes linalg.index, cast to the requested float type.
// CHECK-LABEL: func.func @map_region_index
// CHECK: linalg.generic
// CHECK:   %[[I:.*]] = linalg.index 1 : index
// CHECK:   arith.index_castui %[[I]] : index to i64
// CHECK:   arith.uitofp
func.func @map_region_index(%x: tensor<3x9xf32>) -> tensor<3x9xf32> {
  %y = la.map "bn->bn" %x : tensor<3x9xf32> -> tensor<3x9xf32> {
  ^bb0(%v: f32):
    %t = la.index 1 : f32
    %r = arith.addf %v, %t : f32
    la.yield %r : f32
  }
  return %y : tensor<3x9xf32>
}

// -----

// A map that reads only positions (retention's per-head gate) runs over the dimensions it reads, once per
// head, and is broadcast to its result; a map that reads its input keeps the full iteration space (above).
// CHECK-DAG: #[[ONE:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[HEAD:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @map_index_only
// CHECK: %[[PERHEAD:.*]] = linalg.generic {indexing_maps = [#[[ONE]]], iterator_types = ["parallel"]} outs(%{{.*}} : tensor<4xf32>)
// CHECK:   linalg.index 0 : index
// CHECK:   math.exp2
// CHECK: linalg.generic {indexing_maps = [#[[HEAD]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[PERHEAD]] : tensor<4xf32>) outs(%{{.*}} : tensor<2x4x9xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   linalg.yield %[[IN]] : f32
func.func @map_index_only(%shape: tensor<2x4x9xf32>) -> tensor<2x4x9xf32> {
  %g = la.map "bht->bht" %shape : tensor<2x4x9xf32> -> tensor<2x4x9xf32> {
  ^bb0(%unused: f32):
    %h = la.index 1 : f32
    %e = math.exp2 %h : f32
    la.yield %e : f32
  }
  return %g : tensor<2x4x9xf32>
}

// A reduction fills its accumulator with the combiner's identity and reduces along the named dims.
// CHECK-LABEL: func.func @reduce_max
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:   arith.maximumf
func.func @reduce_max(%x: tensor<2x10x4xf32>) -> tensor<2x4xf32> {
  %m = la.reduce max %x along [1] : tensor<2x10x4xf32> -> tensor<2x4xf32>
  return %m : tensor<2x4xf32>
}

// -----

// A contraction is one generic; the long sequence letter is outermost, the contiguous one innermost,
// and the arithmetic may be reassociated (vectorised reductions, FMAs).
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[V:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @contract_state
// CHECK: linalg.generic {indexing_maps = [#[[K]], #[[V]], #[[S]]], iterator_types = ["parallel", "reduction", "parallel", "parallel"]}
// CHECK:   arith.mulf {{.*}} fastmath<reassoc,contract>
// CHECK:   arith.addf {{.*}} fastmath<reassoc,contract>
func.func @contract_state(%k: tensor<2x1000x48xf32>, %v: tensor<2x1000x40xf32>) -> tensor<2x48x40xf32> {
  %s = la.contract "bmd,bme->bde" %k, %v : tensor<2x1000x48xf32>, tensor<2x1000x40xf32> -> tensor<2x48x40xf32>
  return %s : tensor<2x48x40xf32>
}

// -----

// A tril mask compares the positions of its two letters and keeps or drops each product. Both letters are
// result letters here, so the product stays a plain multiply-accumulate and the mask zeroes the result in an
// elementwise generic after it. Static extents fit in 32 bits, so the positions are compared as i32 (64-bit
// compares would halve the f32 lanes LLVM vectorises the loop with).
// CHECK-LABEL: func.func @contract_tril
// CHECK: %[[PROD:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT: arith.select
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[PROD]]
// CHECK:   %[[N:.*]] = linalg.index 0 : index
// CHECK:   %[[M:.*]] = linalg.index 1 : index
// CHECK:   %[[N32:.*]] = arith.index_castui %[[N]] : index to i32
// CHECK:   %[[M32:.*]] = arith.index_castui %[[M]] : index to i32
// CHECK:   %[[KEEP:.*]] = arith.cmpi uge, %[[N32]], %[[M32]] : i32
// CHECK:   arith.select %[[KEEP]], %{{.*}}, %cst
func.func @contract_tril(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>) -> tensor<8x8xf32> {
  %a = la.contract "nd,md->nm" %q, %k mask tril(n, m) : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x8xf32>
  return %a : tensor<8x8xf32>
}

// -----

// With a dynamic extent the positions stay `index`: nothing bounds them to 32 bits.
// CHECK-LABEL: func.func @contract_tril_dynamic
// CHECK-NOT: arith.index_castui
// CHECK:   arith.cmpi uge, %{{.*}}, %{{.*}} : index
func.func @contract_tril_dynamic(%q: tensor<?x4xf32>, %k: tensor<?x4xf32>) -> tensor<?x?xf32> {
  %a = la.contract "nd,md->nm" %q, %k mask tril(n, m) : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x?xf32>
  return %a : tensor<?x?xf32>
}

// -----

// tril(S) v: the input S carries both mask letters and is reused for every e, so it is masked once by its
// own elementwise generic and the contraction stays a plain multiply-accumulate.
// CHECK-LABEL: func.func @contract_tril_on_input
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x8xf32>)
// CHECK:   %[[KEEP:.*]] = arith.cmpi uge
// CHECK:   arith.select %[[KEEP]], %in, %cst
// CHECK: linalg.generic {{.*}} ins(%[[MASKED]], %arg1 : tensor<8x8xf32>, tensor<8x4xf32>)
// CHECK-NOT: arith.select
// CHECK:   %[[P:.*]] = arith.mulf %in, %in_{{.*}}
// CHECK:   arith.addf %out, %[[P]]
// CHECK-NEXT: linalg.yield
func.func @contract_tril_on_input(%s: tensor<8x8xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %o = la.contract "nm,me->ne" %s, %v mask tril(n, m) : tensor<8x8xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}

// -----

// A shifted band (one row block of a chunked band contraction): the row position is moved by the offset and
// compared signed, since the shifted row may lie before the window's first column.
// CHECK-LABEL: func.func @contract_band_offset
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x8xf32>)
// CHECK:   %[[T:.*]] = linalg.index 0 : index
// CHECK:   %[[S:.*]] = linalg.index 1 : index
// CHECK:   %[[T32:.*]] = arith.index_castui %[[T]] : index to i32
// CHECK:   %[[S32:.*]] = arith.index_castui %[[S]] : index to i32
// CHECK:   %[[ROW:.*]] = arith.addi %[[T32]], %c3_i32 : i32
// CHECK:   %[[COLW:.*]] = arith.addi %[[S32]], %c2_i32 : i32
// CHECK:   %[[UPPER:.*]] = arith.cmpi slt, %[[ROW]], %[[COLW]] : i32
// CHECK:   %[[ROWW:.*]] = arith.addi %[[ROW]], %c2_i32 : i32
// CHECK:   %[[LOWER:.*]] = arith.cmpi slt, %[[S32]], %[[ROWW]] : i32
// CHECK:   %[[KEEP:.*]] = arith.andi %[[UPPER]], %[[LOWER]] : i1
// CHECK:   arith.select %[[KEEP]], %in, %cst
func.func @contract_band_offset(%w: tensor<4x8xf32>, %v: tensor<2x8x3xf32>) -> tensor<2x4x3xf32> {
  %o = la.contract "ts,bsd->btd" %w, %v mask band(t, s, 2, offset = 3) : tensor<4x8xf32>, tensor<2x8x3xf32> -> tensor<2x4x3xf32>
  return %o : tensor<2x4x3xf32>
}

// -----

// q·tril(k) summed over m: no operand carries both n and m, so each accumulation step is kept or dropped.
// CHECK-LABEL: func.func @contract_tril_on_accumulator
// CHECK: linalg.generic
// CHECK:   %[[SUM:.*]] = arith.addf %out
// CHECK:   %[[KEEP:.*]] = arith.cmpi uge
// CHECK:   arith.select %[[KEEP]], %[[SUM]], %out
func.func @contract_tril_on_accumulator(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>) -> tensor<8xf32> {
  %d = la.contract "nd,md->n" %q, %k mask tril(n, m) : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8xf32>
  return %d : tensor<8xf32>
}

// -----

// An inclusive scan is an scf.for along the scanned dimension carrying the running state.
// CHECK-LABEL: func.func @scan_add
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: scf.for %{{.*}} = %c0 to %c6 step %c1 iter_args(%[[STATE:.*]] = %[[INIT]], %[[OUT:.*]] = %{{.*}})
// CHECK:   tensor.extract_slice %{{.*}}[0, %{{.*}}, 0] [2, 1, 3] [1, 1, 1] : tensor<2x6x3xf32> to tensor<2x3xf32>
// CHECK:   linalg.generic
// CHECK:     arith.addf
// CHECK:   tensor.insert_slice
// CHECK:   scf.yield
func.func @scan_add(%x: tensor<2x6x3xf32>) -> tensor<2x6x3xf32> {
  %s = la.scan add %x along 1 inclusive : tensor<2x6x3xf32> -> tensor<2x6x3xf32>
  return %s : tensor<2x6x3xf32>
}

// -----

// softmax: max, then the sum of shifted exponentials, then the division.
// CHECK-LABEL: func.func @softmax
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %y = la.normalize softmax %x along 1 : tensor<2x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// A gate broadcasts along trailing dimensions: f(g) · (sum of branches).
// CHECK-LABEL: func.func @gate_sigmoid
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}]
// CHECK:   arith.addf
// CHECK:   math.exp
// CHECK:   arith.mulf
func.func @gate_sigmoid(%g: tensor<2x5xf32>, %a: tensor<2x5x3xf32>, %b: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %y = la.gate sigmoid %g, %a, %b : tensor<2x5xf32>, tensor<2x5x3xf32>, tensor<2x5x3xf32> -> tensor<2x5x3xf32>
  return %y : tensor<2x5x3xf32>
}

// -----

// la.size reads the dimension at run time.
// CHECK-LABEL: func.func @size_dynamic
// CHECK: %[[D:.*]] = tensor.dim %{{.*}}, %c1
// CHECK: arith.uitofp
// CHECK: tensor.from_elements
func.func @size_dynamic(%x: tensor<2x?xf32>) -> tensor<f32> {
  %n = la.size %x along 1 : tensor<2x?xf32> -> tensor<f32>
  return %n : tensor<f32>
}

// -----

// A decay mask with one gate per position weighs the finished scores by e^{G_n - G_m} (G the cumsum of the
// gate, a scan loop), the exponent masked to -inf above the diagonal before the exp.
// CHECK-LABEL: func.func @decay_per_position
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK: %[[DIFF:.*]] = arith.subf
// CHECK: %[[KEEP:.*]] = arith.cmpi uge
// CHECK: %[[EXP:.*]] = arith.select %[[KEEP]], %[[DIFF]], %cst
// CHECK: math.exp %[[EXP]]
func.func @decay_per_position(%q: tensor<4x2xf32>, %k: tensor<4x2xf32>, %g: tensor<4xf32>) -> tensor<4x4xf32> {
  %a = la.contract "nd,md->nm" %q, %k mask decay(n, m) gate(%g : tensor<4xf32>) : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x4xf32>
  return %a : tensor<4x4xf32>
}

// -----

// A gate per position and feature (GLA) reads G at (n, d) and (m, d) inside the contraction: the weight
// multiplies every product.
// CHECK-DAG: #[[GN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[GM:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @decay_per_feature
// CHECK: linalg.generic {indexing_maps = [{{.*}}, {{.*}}, #[[GN]], #[[GM]], {{.*}}]
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @decay_per_feature(%q: tensor<4x2xf32>, %k: tensor<4x2xf32>, %g: tensor<4x2xf32>) -> tensor<4x4xf32> {
  %a = la.contract "nd,md->nm" %q, %k mask decay(n, m) gate(%g : tensor<4x2xf32>) : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x4xf32>
  return %a : tensor<4x4xf32>
}


// -----

// The online-softmax scan (AFT-causal) carries the running max m, weighted sum n and normaliser z through
// one loop over the sequence; each step rescales by e^{m - m'} and weighs by e^{k - m'}, both exponents ≤ 0,
// and writes n'/z'. One of the two is e^0: a single exp of -|k - m| gives the other.
// CHECK-LABEL: func.func @online_softmax_scan
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for {{.*}} -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x6x3xf32>)
// CHECK:   linalg.generic
// CHECK:   ^bb0(%[[K:[^:]*]]: f32, %[[V:[^:]*]]: f32, %[[M:[^:]*]]: f32, %[[N:[^:]*]]: f32, %[[Z:[^:]*]]: f32, %{{.*}}: f32):
// CHECK:     %[[MAX:.*]] = arith.maximumf %[[M]], %[[K]]
// CHECK:     %[[GAP:.*]] = arith.subf %[[K]], %[[M]]
// CHECK:     %[[ABS:.*]] = math.absf %[[GAP]]
// CHECK:     %[[NEG:.*]] = arith.negf %[[ABS]]
// CHECK:     %[[E:.*]] = math.exp %[[NEG]]
// CHECK-NOT: math.exp
// CHECK:     %[[GREW:.*]] = arith.cmpf ogt, %[[GAP]], %{{.*}}
// CHECK:     %[[RESCALE:.*]] = arith.select %[[GREW]], %[[E]], %{{.*}}
// CHECK:     %[[W:.*]] = arith.select %[[GREW]], %{{.*}}, %[[E]]
// CHECK:     %[[WV:.*]] = arith.mulf %[[W]], %[[V]]
// CHECK:     %[[N2:.*]] = math.fma %[[N]], %[[RESCALE]], %[[WV]]
// CHECK:     %[[Z2:.*]] = math.fma %[[Z]], %[[RESCALE]], %[[W]]
// CHECK:     %[[Y:.*]] = arith.divf %[[N2]], %[[Z2]]
// CHECK:     linalg.yield %[[MAX]], %[[N2]], %[[Z2]], %[[Y]]
func.func @online_softmax_scan(%k: tensor<2x6x3xf32>, %v: tensor<2x6x3xf32>) -> tensor<2x6x3xf32> {
  %y = la.scan online_softmax %k, %v along 1 inclusive : tensor<2x6x3xf32>, tensor<2x6x3xf32> -> tensor<2x6x3xf32>
  return %y : tensor<2x6x3xf32>
}

// -----

// A resumed online softmax (a derived variant): the loop starts from m = m0, n = y0 z0, z = z0. Its value is
// read per position; its max and normaliser only at the last position, so the loop writes no position of
// them and the final states come out of the loop (the slices are gone).
// CHECK-LABEL: func.func @online_softmax_resumed
// CHECK-SAME: %[[Y0:[a-z0-9]+]]: tensor<2x3xf32>, %[[M0:[a-z0-9]+]]: tensor<2x3xf32>, %[[Z0:[a-z0-9]+]]: tensor<2x3xf32>)
// CHECK: %[[INIT:.*]]:3 = linalg.generic {{.*}} ins(%[[Y0]], %[[M0]], %[[Z0]] :
// CHECK: ^bb0(%[[Y:[^:]*]]: f32, %[[M:[^:]*]]: f32, %[[Z:[^:]*]]: f32,
// CHECK:   %[[N:.*]] = arith.mulf %[[Y]], %[[Z]]
// CHECK:   linalg.yield %[[M]], %[[N]], %[[Z]]
// CHECK: %[[LOOP:.*]]:4 = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]]#0, %{{.*}} = %[[INIT]]#1, %{{.*}} = %[[INIT]]#2, %{{.*}} = %{{.*}}) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x6x3xf32>)
// CHECK: linalg.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32, f32
// CHECK: %[[FINAL:.*]]:3 = linalg.generic {{.*}} ins(%[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2 :
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[LOOP]]#3, %[[FINAL]]#1, %[[FINAL]]#2
func.func @online_softmax_resumed(%k: tensor<2x6x3xf32>, %v: tensor<2x6x3xf32>, %y0: tensor<2x3xf32>, %m0: tensor<2x3xf32>, %z0: tensor<2x3xf32>) -> (tensor<2x6x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %s:3 = la.scan online_softmax %k, %v init(%y0, %m0, %z0 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) along 1 inclusive : tensor<2x6x3xf32>, tensor<2x6x3xf32> -> tensor<2x6x3xf32>, tensor<2x6x3xf32>, tensor<2x6x3xf32>
  %ml = tensor.extract_slice %s#1[0, 5, 0] [2, 1, 3] [1, 1, 1] : tensor<2x6x3xf32> to tensor<2x1x3xf32>
  %m = tensor.collapse_shape %ml [[0], [1, 2]] : tensor<2x1x3xf32> into tensor<2x3xf32>
  %zl = tensor.extract_slice %s#2[0, 5, 0] [2, 1, 3] [1, 1, 1] : tensor<2x6x3xf32> to tensor<2x1x3xf32>
  %z = tensor.collapse_shape %zl [[0], [1, 2]] : tensor<2x1x3xf32> into tensor<2x3xf32>
  return %s#0, %m, %z : tensor<2x6x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A scan read only at its last position (here a user's kernel that keeps the last average): the loop carries
// the states alone and writes no position; the value comes from the states it ends with.
// CHECK-LABEL: func.func @online_softmax_last_only
// CHECK: %[[LOOP:.*]]:3 = scf.for {{.*}} -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2 : {{.*}}) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: arith.divf
// CHECK: return %[[Y]]
func.func @online_softmax_last_only(%k: tensor<2x6x3xf32>, %v: tensor<2x6x3xf32>) -> tensor<2x3xf32> {
  %y = la.scan online_softmax %k, %v along 1 inclusive : tensor<2x6x3xf32>, tensor<2x6x3xf32> -> tensor<2x6x3xf32>
  %l = tensor.extract_slice %y[0, 5, 0] [2, 1, 3] [1, 1, 1] : tensor<2x6x3xf32> to tensor<2x1x3xf32>
  %c = tensor.collapse_shape %l [[0], [1, 2]] : tensor<2x1x3xf32> into tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}

// -----

// A 3×5 window over dimensions 1 and 2: a zero-padded copy, (1, 2) on each side (a tensor.pad, which
// la-expand-padded-copies later turns into writes of the interior and fills of the border alone), then a copy
// reading the padded input at (x + u, y + v), each offset loop right after its position's, which elementwise
// fusion later folds into the consumer.
// CHECK-DAG: #[[READ:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d2, d3 + d4)>
// CHECK-DAG: #[[WRITE:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @window
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 1, 2] high[0, 1, 2]
// CHECK:   tensor.yield %{{.*}} : f32
// CHECK: } : tensor<2x8x9xf32> to tensor<2x10x13xf32>
// CHECK: linalg.generic {indexing_maps = [#[[READ]], #[[WRITE]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[PAD]] : tensor<2x10x13xf32>) outs(%{{.*}} : tensor<2x8x3x9x5xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   linalg.yield %[[IN]] : f32
func.func @window(%x: tensor<2x8x9xf32>) -> tensor<2x8x3x9x5xf32> {
  %w = la.window %x along [1, 2] size [3, 5] : tensor<2x8x9xf32> -> tensor<2x8x3x9x5xf32>
  return %w : tensor<2x8x3x9x5xf32>
}

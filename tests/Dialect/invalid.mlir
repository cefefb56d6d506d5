// RUN: la-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Element types and parents (ODS-generated constraints)
//===----------------------------------------------------------------------===//

func.func @map_integer_element(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be variadic of ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = la.map exp %x : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @map_integer_result(%x: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{result #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = la.map exp %x : tensor<4xf32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @map_unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{operand #0 must be variadic of ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<*xf32>'}}
  %0 = "la.map"(%x) <{fn = 5 : i32}> ({}) : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reduce_integer(%x: tensor<4x8xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be variadic of ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = la.reduce add %x along [1] : tensor<4x8xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @contract_integer(%a: tensor<4x8xi32>, %b: tensor<8x2xi32>) -> tensor<4x2xi32> {
  // expected-error @+1 {{operand #0 must be variadic of ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = la.contract "nd,de->ne" %a, %b : tensor<4x8xi32>, tensor<8x2xi32> -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

func.func @normalize_integer(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = la.normalize sum %x along 1 : tensor<4x8xi32> -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

func.func @size_result_not_rank0(%x: tensor<4x8xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{result #0 must be 0D tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = la.size %x along 1 : tensor<4x8xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @index_outside_map() -> index {
  // expected-error @+1 {{'la.index' op expects parent op 'la.map'}}
  %0 = la.index 0 : index
  return %0 : index
}

// -----

func.func @index_result_not_index(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = la.map %x : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%a: f32):
    // expected-error @+1 {{result #0 must be index}}
    %t = la.index 0 : i64
    la.yield %a : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_outside_region() {
  // expected-error @+1 {{'la.yield' op expects parent op to be one of 'la.map, la.reduce, la.scan'}}
  la.yield
}

//===----------------------------------------------------------------------===//
// la.map
//===----------------------------------------------------------------------===//

// -----

func.func @map_unknown_fn(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown la.map function 'tanh'}}
  %0 = la.map tanh %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_no_inputs() -> tensor<4xf32> {
  // expected-error @+1 {{'la.map' op needs at least one input}}
  %0 = "la.map"() <{fn = 5 : i32}> ({}) : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_element_type_mismatch(%x: tensor<4xf32>, %y: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'la.map' op operand #1 has element type 'f16' but 'f32' is expected}}
  %0 = la.map add %x, %y : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_unary_arity(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{function 'sigmoid' takes 1 inputs but 2 are given}}
  %0 = la.map sigmoid %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_binary_arity(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{function 'mul' takes 2 inputs but 1 are given}}
  %0 = la.map mul %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_ternary_arity(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{function 'affine' takes 3 inputs but 2 are given}}
  %0 = la.map affine %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_clamp_missing_param(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{function 'clamp' takes 2 parameters but 1 are given}}
  %0 = la.map clamp(1.0) %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_mul_const_no_param(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{function 'mul_const' takes 1 parameters but 0 are given}}
  %0 = la.map mul_const %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_param_on_unparameterised(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{function 'exp' takes 0 parameters but 1 are given}}
  %0 = la.map exp(2.0) %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_param_infinite(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{parameters must be finite, got INF}}
  %0 = "la.map"(%x) <{fn = 11 : i32, params = array<f64: 0.0, 0x7FF0000000000000>}> ({}) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_param_nan(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{parameters must be finite, got nan}}
  %0 = "la.map"(%x) <{fn = 13 : i32, params = array<f64: 0x7FF8000000000000>}> ({}) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_clamp_reversed(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{clamp bounds are reversed: lower 1.000000e+00 > upper -1.000000e+00}}
  %0 = la.map clamp(1.0, -1.0) %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_params_without_fn(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{parameters are only meaningful with a named function}}
  %0 = "la.map"(%x) <{params = array<f64: 1.0>}> ({
  ^bb0(%a: f32):
    "la.yield"(%a) : (f32) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_rank_mismatch_without_subscripts(%x: tensor<4xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{input #0 has rank 1 (4) but the result (give a subscript string such as "bhn,bh->bhn" to broadcast) needs rank 2 (4x2)}}
  %0 = la.map exp %x : tensor<4xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_shape_mismatch_without_subscripts(%x: tensor<4x2xf32>, %y: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{input #1 dimension 1 has size 3 but the result (give a subscript string such as "bhn,bh->bhn" to broadcast) needs 2}}
  %0 = la.map add %x, %y : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_missing_body(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'la.map' op needs a named function or a body}}
  %0 = la.map %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_fn_and_body(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has both a named function and a body; give one of them}}
  %0 = la.map exp %x : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%a: f32):
    la.yield %a : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @map_body_two_blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body must have exactly one block}}
  %0 = la.map %x : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%a: f32):
    la.yield %a : f32
  ^bb1(%b: f32):
    la.yield %b : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @map_body_arg_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body takes 2 arguments but there are 1 inputs}}
  %0 = la.map %x : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    la.yield %a : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @map_body_arg_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body argument #0 has type 'f16' but the element type is 'f32'}}
  %0 = la.map %x : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%a: f16):
    %e = arith.extf %a : f16 to f32
    la.yield %e : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @map_yield_two_values(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body must end in la.yield of one 'f32' value}}
  %0 = la.map %x : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%a: f32):
    la.yield %a, %a : f32, f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @map_yield_wrong_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body must end in la.yield of one 'f32' value}}
  %0 = la.map %x : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%a: f32):
    %t = arith.truncf %a : f32 to f16
    la.yield %t : f16
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @map_index_out_of_range(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = la.map %x : tensor<4x2xf32> -> tensor<4x2xf32> {
  ^bb0(%a: f32):
    // expected-error @+1 {{'la.index' op dimension 2 is out of range for rank 2}}
    %t = la.index 2 : index
    la.yield %a : f32
  }
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_index_negative(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = la.map %x : tensor<4x2xf32> -> tensor<4x2xf32> {
  ^bb0(%a: f32):
    // expected-error @+1 {{'la.index' op dimension -1 is out of range for rank 2}}
    %t = la.index -1 : index
    la.yield %a : f32
  }
  return %0 : tensor<4x2xf32>
}

// -----

// Subscripts of la.map.

func.func @map_subscripts_no_arrow(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{subscripts 'nd' have no '->' before the result term}}
  %0 = la.map exp "nd" %x : tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_subscripts_two_arrows(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{subscripts 'nd->nd->nd' have more than one '->'}}
  %0 = la.map exp "nd->nd->nd" %x : tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_subscripts_bad_character(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{subscript of input #0 'nD' has 'D' at position 1; only letters a-z name dimensions}}
  %0 = la.map exp "nD->nd" %x : tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_subscripts_bad_character_result(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{subscript of the result 'n d' has ' ' at position 1}}
  %0 = la.map exp "nd->n d" %x : tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_subscripts_repeated_letter(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{subscript of input #0 'nn' repeats dimension 'n'}}
  %0 = la.map exp "nn->nm" %x : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @map_subscripts_repeated_result_letter(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{subscript of the result 'nn' repeats dimension 'n'}}
  %0 = la.map exp "nm->nn" %x : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @map_subscripts_term_count(%x: tensor<4x2xf32>, %y: tensor<4xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{subscripts name 1 inputs but 2 are given}}
  %0 = la.map mul "nd->nd" %x, %y : tensor<4x2xf32>, tensor<4xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_subscripts_result_rank(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{result subscript 'ndx' names 3 dimensions but the result has rank 2}}
  %0 = la.map exp "nd->ndx" %x : tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_subscripts_input_rank(%x: tensor<4x2xf32>, %y: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{input #1 has rank 2 but subscript 'n' names 1 dimensions}}
  %0 = la.map mul "nd,n->nd" %x, %y : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_subscripts_not_result_letter(%x: tensor<4x2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input #0 dimension 'd' is not a result dimension; la.map cannot sum over it (use la.reduce or la.contract)}}
  %0 = la.map exp "nd->n" %x : tensor<4x2xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @map_subscripts_size_conflict(%x: tensor<4x2xf32>, %y: tensor<3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{dimension 'n' has size 3 in input #1 but 4 in the result}}
  %0 = la.map mul "nd,n->nd" %x, %y : tensor<4x2xf32>, tensor<3xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @map_subscripts_result_letter_unspanned(%x: tensor<4xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{result dimension 'd' is spanned by no input, so its size is unknown}}
  %0 = la.map exp "n->nd" %x : tensor<4xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

//===----------------------------------------------------------------------===//
// la.reduce
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_unknown_combiner(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown combiner 'mul'; expected add, max, min, logaddexp, decay or online_softmax}}
  %0 = la.reduce mul %x along [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_no_inputs() {
  // expected-error @+1 {{'la.reduce' op needs at least one input}}
  "la.reduce"() <{combiner = 0 : i32, dims = array<i64: 0>}> ({}) : () -> ()
  return
}

// -----

func.func @reduce_result_count(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 1 inputs but 2 results; each input reduces to one result}}
  %0:2 = la.reduce add %x along [1] : tensor<4x8xf32> -> tensor<4xf32>, tensor<4xf32>
  return %0#0 : tensor<4xf32>
}

// -----

func.func @reduce_acc_not_float(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{accumulation type must be a float type, got 'i32'}}
  %0 = la.reduce add %x along [1] acc(i32) : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_dim_out_of_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduced dimension 2 is out of range for rank 2}}
  %0 = la.reduce add %x along [2] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_dim_negative(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduced dimension -1 is out of range for rank 2}}
  %0 = la.reduce add %x along [-1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_dims_not_increasing(%x: tensor<4x8x2xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{reduced dimensions must be strictly increasing, got 2 before 0}}
  %0 = la.reduce add %x along [2, 0] : tensor<4x8x2xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @reduce_dims_repeated(%x: tensor<4x8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{reduced dimensions must be strictly increasing, got 1 before 1}}
  %0 = la.reduce add %x along [1, 1] : tensor<4x8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @reduce_result_shape(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{result #0 dimension 0 has size 8 but reducing input #0 along the given dimensions needs 4}}
  %0 = la.reduce add %x along [1] : tensor<4x8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @reduce_result_rank(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{result #0 has rank 2 (4x8) but reducing input #0 along the given dimensions needs rank 1 (4)}}
  %0 = la.reduce add %x along [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @reduce_result_element_type(%x: tensor<4x8xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{result #0 has element type 'f16' but input #0 has 'f32'}}
  %0 = la.reduce add %x along [1] : tensor<4x8xf32> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @reduce_inputs_disagree(%x: tensor<4x8xf32>, %y: tensor<4x9xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{input #1 dimension 1 has size 9 but input #0 needs 8}}
  %0:2 = la.reduce %x, %y along [1] : tensor<4x8xf32>, tensor<4x9xf32> -> tensor<4xf32>, tensor<4xf32> {
  ^bb0(%a0: f32, %b0: f32, %a1: f32, %b1: f32):
    la.yield %a1, %b1 : f32, f32
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @reduce_decay(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combiner 'decay' depends on sequence order; use la.scan}}
  %0 = la.reduce decay %x along [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_online_softmax(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combiner 'online_softmax' depends on sequence order; use la.scan}}
  %0 = la.reduce online_softmax %x along [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_named_two_inputs(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{named combiner 'max' takes one input, got 2}}
  %0:2 = la.reduce max %x, %x along [1] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4xf32>, tensor<4xf32>
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @reduce_named_and_region(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has both a named combiner and a combiner region; give one of them}}
  %0 = la.reduce add %x along [1] : tensor<4x8xf32> -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    la.yield %s : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_no_combiner(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'la.reduce' op needs a named combiner or a combiner region}}
  %0 = la.reduce %x along [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_region_two_blocks(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combiner region must have exactly one block}}
  %0 = la.reduce %x along [1] : tensor<4x8xf32> -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    la.yield %a : f32
  ^bb1(%c: f32, %d: f32):
    la.yield %c : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_region_arg_count(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combiner must take 2 scalar arguments (1 accumulated, then 1 new) but takes 1}}
  %0 = la.reduce %x along [1] : tensor<4x8xf32> -> tensor<4xf32> {
  ^bb0(%a: f32):
    la.yield %a : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_region_arg_type(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combiner argument #1 has type 'f64' but the element type 'f32' is expected}}
  %0 = la.reduce %x along [1] : tensor<4x8xf32> -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f64):
    la.yield %a : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_region_yield_count(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combiner must yield 1 values (the combined state) but yields 2}}
  %0 = la.reduce %x along [1] : tensor<4x8xf32> -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    la.yield %a, %b : f32, f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_region_yield_type(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combiner yields 'f16' as value #0 but 'f32' is expected}}
  %0 = la.reduce %x along [1] : tensor<4x8xf32> -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.truncf %a : f32 to f16
    la.yield %t : f16
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_region_not_yield(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combiner must end in la.yield}}
  %0 = la.reduce %x along [1] : tensor<4x8xf32> -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    llvm.unreachable
  }
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// la.scan
//===----------------------------------------------------------------------===//

// -----

func.func @scan_unknown_kind(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [inclusive, exclusive]}}
  %0 = la.scan add %x along 1 prefix : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_unknown_combiner(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{unknown combiner 'sum'; expected add, max, min, logaddexp, decay or online_softmax}}
  %0 = la.scan sum %x along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_no_inputs() {
  // expected-error @+1 {{'la.scan' op needs at least one input}}
  "la.scan"() <{combiner = 0 : i32, dim = 0 : i64, kind = 0 : i32, operandSegmentSizes = array<i32: 0, 0>}> ({}) : () -> ()
  return
}

// -----

func.func @scan_acc_not_float(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{accumulation type must be a float type, got 'index'}}
  %0 = la.scan add %x along 1 inclusive acc(index) : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_dim_out_of_range(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{scan dimension 2 is out of range for rank 2}}
  %0 = la.scan add %x along 2 inclusive : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_add_two_inputs(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{combiner 'add' takes one input, got 2}}
  %0 = la.scan add %x, %x along 1 inclusive : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_decay_one_input(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{combiner 'decay' takes the values and their log-gate (2 inputs), got 1}}
  %0 = la.scan decay %x along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_decay_gate_misses_dim(%x: tensor<2x8x4xf32>, %g: tensor<2xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{decay log-gate of rank 1 must span the scan dimension 1}}
  %0 = la.scan decay %x, %g along 1 inclusive : tensor<2x8x4xf32>, tensor<2xf32> -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @scan_decay_gate_rank_too_high(%x: tensor<2x8xf32>, %g: tensor<2x8x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{decay log-gate has rank 3 (2x8x4), more than the 2 dimensions (2x8) it scales}}
  %0 = la.scan decay %x, %g along 1 inclusive : tensor<2x8xf32>, tensor<2x8x4xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @scan_decay_gate_not_prefix(%x: tensor<2x8x4xf32>, %g: tensor<2x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{decay log-gate dimension 1 has size 4 but prefix broadcasting into 2x8x4 needs 8}}
  %0 = la.scan decay %x, %g along 1 inclusive : tensor<2x8x4xf32>, tensor<2x4xf32> -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @scan_decay_gate_element_type(%x: tensor<2x8xf32>, %g: tensor<2x8xf16>) -> tensor<2x8xf32> {
  // expected-error @+1 {{inputs must share one element type, got 'f16' and 'f32'}}
  %0 = la.scan decay %x, %g along 1 inclusive : tensor<2x8xf32>, tensor<2x8xf16> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @scan_online_softmax_one_input(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{combiner 'online_softmax' takes logits and values (2 inputs), got 1}}
  %0 = la.scan online_softmax %x along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_online_softmax_shapes(%k: tensor<4x8xf32>, %v: tensor<4x9xf32>) -> tensor<4x9xf32> {
  // expected-error @+1 {{values dimension 1 has size 9 but the logits needs 8}}
  %0 = la.scan online_softmax %k, %v along 1 inclusive : tensor<4x8xf32>, tensor<4x9xf32> -> tensor<4x9xf32>
  return %0 : tensor<4x9xf32>
}

// -----

func.func @scan_online_softmax_exclusive(%k: tensor<4x8xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{exclusive online_softmax without init has no value at the first position (0/0)}}
  %0 = la.scan online_softmax %k, %v along 1 exclusive : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_named_two_results(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{named combiner 'max' has one result, got 2}}
  %0:2 = la.scan max %x along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>
  return %0#0 : tensor<4x8xf32>
}

// -----

func.func @scan_named_result_type(%x: tensor<4x8xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{result type 'tensor<4x8xf16>' must match the value type 'tensor<4x8xf32>'}}
  %0 = la.scan add %x along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func @scan_decay_result_is_values(%x: tensor<2x8x4xf32>, %g: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{result type 'tensor<2x8xf32>' must match the value type 'tensor<2x8x4xf32>'}}
  %0 = la.scan decay %x, %g along 1 inclusive : tensor<2x8x4xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @scan_region_result_count(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{a combiner region carries one state per input: 2 inputs but 1 results}}
  %0 = la.scan %x, %x along 1 inclusive : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32> {
  ^bb0(%a0: f32, %b0: f32, %a1: f32, %b1: f32):
    la.yield %a1, %b1 : f32, f32
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_region_input_shapes(%x: tensor<4x8xf32>, %y: tensor<4x9xf32>) -> (tensor<4x8xf32>, tensor<4x9xf32>) {
  // expected-error @+1 {{input #1 dimension 1 has size 9 but input #0 needs 8}}
  %0:2 = la.scan %x, %y along 1 inclusive : tensor<4x8xf32>, tensor<4x9xf32> -> tensor<4x8xf32>, tensor<4x9xf32> {
  ^bb0(%a0: f32, %b0: f32, %a1: f32, %b1: f32):
    la.yield %a1, %b1 : f32, f32
  }
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x9xf32>
}

// -----

func.func @scan_region_result_type(%x: tensor<4x8xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{result #0 has type 'tensor<4x?xf32>' but input #0 has 'tensor<4x8xf32>'}}
  %0 = la.scan %x along 1 inclusive : tensor<4x8xf32> -> tensor<4x?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    la.yield %s : f32
  }
  return %0 : tensor<4x?xf32>
}

// -----

func.func @scan_region_element_types(%x: tensor<4x8xf32>, %y: tensor<4x8xf16>) -> (tensor<4x8xf32>, tensor<4x8xf16>) {
  // expected-error @+1 {{inputs must share one element type, got 'f16' and 'f32'}}
  %0:2 = la.scan %x, %y along 1 inclusive : tensor<4x8xf32>, tensor<4x8xf16> -> tensor<4x8xf32>, tensor<4x8xf16> {
  ^bb0(%a0: f32, %a1: f16, %b0: f32, %b1: f16):
    la.yield %b0, %b1 : f32, f16
  }
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf16>
}

// -----

func.func @scan_init_count(%x: tensor<4x8xf32>, %h: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{init gives 2 states but the scan carries 1}}
  %0 = la.scan add %x init(%h, %h : tensor<4xf32>, tensor<4xf32>) along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_init_shape(%x: tensor<4x8xf32>, %h: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{init #0 (the function's argument #1) dimension 0 has size 8 but the result without the scan dimension needs 4}}
  %0 = la.scan add %x init(%h : tensor<8xf32>) along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_init_rank(%x: tensor<4x8xf32>, %h: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{init #0 (the function's argument #1) has rank 2 (4x8) but the result without the scan dimension needs rank 1 (4)}}
  %0 = la.scan add %x init(%h : tensor<4x8xf32>) along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_init_element_type(%x: tensor<4x8xf32>, %h: tensor<4xf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{init #0 (the function's argument #1) has element type 'f16' but the scan computes 'f32'}}
  %0 = la.scan add %x init(%h : tensor<4xf16>) along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_window_not_positive(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{window must be positive, got 0}}
  %0 = la.scan add %x along 1 inclusive window(0) : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_window_negative(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{window must be positive, got -2}}
  %0 = la.scan add %x along 1 inclusive window(-2) : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_online_softmax_init(%v: tensor<4x8xf32>, %h: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{online_softmax starts from its value, running max and normaliser (3 init states), got 1}}
  %0 = la.scan online_softmax %v, %v init(%h : tensor<8xf32>) along 0 inclusive : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_online_softmax_two_results(%v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{combiner 'online_softmax' returns its value, or its value, running max and normaliser (1 or 3 results), got 2}}
  %0:2 = la.scan online_softmax %v, %v along 0 inclusive : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>
  return %0#0 : tensor<4x8xf32>
}

// -----

func.func @scan_online_softmax_init_without_states(%v: tensor<4x8xf32>, %h: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{init gives 3 states but the scan carries 1}}
  %0 = la.scan online_softmax %v, %v init(%h, %h, %h : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) along 0 inclusive : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_window_max(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{window needs combiner 'add' (a sliding window subtracts what leaves it)}}
  %0 = la.scan max %x along 1 inclusive window(4) : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_window_region(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{window needs combiner 'add'}}
  %0 = la.scan %x along 1 inclusive window(4) : tensor<4x8xf32> -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    la.yield %s : f32
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_named_and_region(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{has both a named combiner and a combiner region; give one of them}}
  %0 = la.scan add %x along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    la.yield %s : f32
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_no_combiner(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'la.scan' op needs a named combiner or a combiner region}}
  %0 = la.scan %x along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_region_arg_count(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-error @+1 {{combiner must take 4 scalar arguments (2 accumulated, then 2 new) but takes 2}}
  %0:2 = la.scan %x, %y along 1 inclusive : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    la.yield %a, %b : f32, f32
  }
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

func.func @scan_region_arg_type(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{combiner argument #0 has type 'bf16' but the element type 'f32' is expected}}
  %0 = la.scan %x along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32> {
  ^bb0(%a: bf16, %b: f32):
    la.yield %b : f32
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_region_yield_count(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{combiner must yield 1 values (the combined state) but yields 0}}
  %0 = la.scan %x along 1 inclusive : tensor<4x8xf32> -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    la.yield
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scan_region_yield_type(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-error @+1 {{combiner yields 'f64' as value #1 but 'f32' is expected}}
  %0:2 = la.scan %x, %y along 1 inclusive : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xf32> {
  ^bb0(%a0: f32, %a1: f32, %b0: f32, %b1: f32):
    %e = arith.extf %b1 : f32 to f64
    la.yield %b0, %e : f32, f64
  }
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// la.normalize
//===----------------------------------------------------------------------===//

// -----

func.func @normalize_unknown_kind(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, softmax]}}
  %0 = la.normalize l2 %x along 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @normalize_dim_out_of_range(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{normalised dimension 2 is out of range for rank 2}}
  %0 = la.normalize sum %x along 2 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @normalize_acc_not_float(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{accumulation type must be a float type, got 'i1'}}
  %0 = la.normalize sum %x along 1 acc(i1) : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @normalize_result_type(%x: tensor<4x8xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{result type 'tensor<4x8xf16>' must equal the input type 'tensor<4x8xf32>'}}
  %0 = la.normalize softmax %x along 1 : tensor<4x8xf32> -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func @normalize_softmax_by(%x: tensor<4x8xf32>, %d: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{softmax computes its own denominator; 'by' is only for sum}}
  %0 = la.normalize softmax %x by %d along 1 : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @normalize_softmax_eps(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{softmax takes no eps}}
  %0 = la.normalize softmax %x along 1 eps(1.0e-6) : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @normalize_negative_eps(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{eps must be non-negative, got -5.000000e-01}}
  %0 = la.normalize sum %x along 1 eps(-0.5) : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @normalize_denominator_element_type(%x: tensor<4x8xf32>, %d: tensor<4xf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{denominator element type 'f16' differs from the input's 'f32'}}
  %0 = la.normalize sum %x by %d along 1 : tensor<4x8xf32>, tensor<4xf16> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @normalize_denominator_shape(%x: tensor<4x8xf32>, %d: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{denominator dimension 0 has size 8 but the input without dimension 1 needs 4}}
  %0 = la.normalize sum %x by %d along 1 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @normalize_denominator_rank(%x: tensor<4x8xf32>, %d: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{denominator has rank 2 (4x8) but the input without dimension 1 needs rank 1 (4)}}
  %0 = la.normalize sum %x by %d along 1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// la.contract
//===----------------------------------------------------------------------===//

// -----

func.func @contract_one_input(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{contracts 2 or 3 inputs, got 1 (use la.reduce to sum one tensor)}}
  %0 = la.contract "nd->n" %a : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @contract_four_inputs(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{contracts 2 or 3 inputs, got 4}}
  %0 = la.contract "nd,nd,nd,nd->n" %a, %a, %a, %a : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @contract_element_type(%a: tensor<4x8xf32>, %b: tensor<8x2xbf16>) -> tensor<4x2xf32> {
  // expected-error @+1 {{operand #1 has element type 'bf16' but 'f32' is expected}}
  %0 = la.contract "nd,de->ne" %a, %b : tensor<4x8xf32>, tensor<8x2xbf16> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @contract_acc_not_float(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{accumulation type must be a float type, got 'i32'}}
  %0 = la.contract "nd,de->ne" %a, %b acc(i32) : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @contract_subscripts_no_arrow(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{subscripts 'nd,de' have no '->' before the result term}}
  %0 = la.contract "nd,de" %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @contract_subscripts_bad_character(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{subscript of input #1 'd2' has '2' at position 1; only letters a-z name dimensions}}
  %0 = la.contract "nd,d2->ne" %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @contract_subscripts_repeated(%a: tensor<8x8xf32>, %b: tensor<8x2xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{subscript of input #0 'dd' repeats dimension 'd'}}
  %0 = la.contract "dd,de->de" %a, %b : tensor<8x8xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

func.func @contract_subscripts_term_count(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{subscripts name 3 inputs but 2 are given}}
  %0 = la.contract "nd,de,e->ne" %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @contract_input_rank(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{input #1 has rank 2 but subscript 'bde' names 3 dimensions}}
  %0 = la.contract "nd,bde->ne" %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @contract_size_conflict(%a: tensor<4x8xf32>, %b: tensor<7x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{dimension 'd' has size 8 in input #0 but 7 in input #1}}
  %0 = la.contract "nd,de->ne" %a, %b : tensor<4x8xf32>, tensor<7x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @contract_size_conflict_after_dynamic(%a: tensor<4x?xf32>, %b: tensor<8x2xf32>, %c: tensor<7x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{dimension 'd' has size 8 in input #1 but 7 in input #2}}
  %0 = la.contract "nd,de,de->ne" %a, %b, %c : tensor<4x?xf32>, tensor<8x2xf32>, tensor<7x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @contract_result_rank(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result subscript 'ne' names 2 dimensions but the result has rank 1}}
  %0 = la.contract "nd,de->ne" %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @contract_result_letter_missing(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{result dimension 'x' does not appear in any input}}
  %0 = la.contract "nd,de->nx" %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @contract_result_size(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{dimension 'e' has size 2 in input #1 but 3 in the result}}
  %0 = la.contract "nd,de->ne" %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @contract_unknown_mask(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{unknown mask 'triu'; expected tril, band, causal_band, block, causal_block}}
  %0 = la.contract "nd,md->nm" %a, %b mask triu(n, m) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_mask_letter_word(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask dimension must be one subscript letter, got 'nm'}}
  %0 = la.contract "nd,md->nm" %a, %b mask tril(nm, m) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_mask_letter_upper(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask dimension must be one subscript letter, got 'M'}}
  %0 = la.contract "nd,md->nm" %a, %b mask tril(n, M) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_mask_same_letter(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask tril needs two different dimensions, got 'n' twice}}
  %0 = la.contract "nd,md->nm" %a, %b mask tril(n, n) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_mask_offset_on_block(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask block takes no offset (only tril, band and causal_band do), got 2}}
  %0 = la.contract "nd,md->nm" %a, %b mask block(n, m, 2, offset = 2) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_mask_offset_without_keyword(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expected `offset = N` after the mask size}}
  %0 = la.contract "nd,md->nm" %a, %b mask band(n, m, 2, 3) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_mask_missing_size(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask band needs a positive size, got 0}}
  %0 = la.contract "nd,md->nm" %a, %b mask band(n, m) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_mask_negative_size(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask causal_block needs a positive size, got -2}}
  %0 = la.contract "nd,md->nm" %a, %b mask causal_block(n, m, -2) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_mask_unexpected_size(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask tril takes no size, got 2}}
  %0 = la.contract "nd,md->nm" %a, %b mask tril(n, m, 2) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_mask_attr_generic(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask decay takes no size, got 3}}
  %0 = "la.contract"(%a, %b) <{mask = #la.mask<decay(n, m, 3)>, operandSegmentSizes = array<i32: 2, 0>, subscripts = "nd,md->nm"}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_mask_letter_missing(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask dimension 't' does not appear in the subscripts 'nd,md->nm'}}
  %0 = la.contract "nd,md->nm" %a, %b mask tril(n, t) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_causal_unequal(%a: tensor<4x8xf32>, %b: tensor<6x8xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{causal mask tril needs equal lengths, but 'n' has size 4 and 'm' has 6}}
  %0 = la.contract "nd,md->nm" %a, %b mask tril(n, m) : tensor<4x8xf32>, tensor<6x8xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @contract_causal_block_unequal(%a: tensor<4x8xf32>, %b: tensor<6x8xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{causal mask causal_block needs equal lengths, but 'n' has size 4 and 'm' has 6}}
  %0 = la.contract "nd,md->nm" %a, %b mask causal_block(n, m, 2) : tensor<4x8xf32>, tensor<6x8xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @contract_prior_block_unequal(%a: tensor<4x8xf32>, %b: tensor<6x8xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{causal mask prior_block needs equal lengths, but 'n' has size 4 and 'm' has 6}}
  %0 = la.contract "nd,md->nm" %a, %b mask prior_block(n, m, 2) : tensor<4x8xf32>, tensor<6x8xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @contract_prior_block_missing_size(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask prior_block needs a positive size, got 0}}
  %0 = la.contract "nd,md->nm" %a, %b mask prior_block(n, m) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_gate_without_mask(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %g: tensor<4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{a gate is only meaningful with mask decay}}
  %0 = la.contract "nd,md->nm" %a, %b gate(%g : tensor<4xf32>) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_gate_with_tril(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %g: tensor<4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{a gate is only meaningful with mask decay}}
  %0 = la.contract "nd,md->nm" %a, %b mask tril(n, m) gate(%g : tensor<4xf32>) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_decay_without_gate(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{mask decay needs its log-gate: add gate(%g : tensor<...>)}}
  %0 = la.contract "nd,md->nm" %a, %b mask decay(n, m) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_decay_gate_element_type(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %g: tensor<4xf16>) -> tensor<4x4xf32> {
  // expected-error @+1 {{gate element type 'f16' differs from 'f32'}}
  %0 = la.contract "nd,md->nm" %a, %b mask decay(n, m) gate(%g : tensor<4xf16>) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @contract_decay_gate_rank(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x3xf32>, %g: tensor<4xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{gate has rank 1 (4) but indexing by the batch dimensions and the position ('hn'), optionally followed by the contracted letter needs rank 2 (2x4)}}
  %0 = la.contract "hnd,hmd,hme->hne" %q, %k, %v mask decay(n, m) gate(%g : tensor<4xf32>) : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

func.func @contract_decay_gate_two_contracted(%q: tensor<2x4x8x5xf32>, %k: tensor<2x4x8x5xf32>, %g: tensor<2x4x8xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{a decay gate with a feature dimension needs exactly one contracted letter, 'hndc,hmdc->hnm' has 2}}
  %0 = la.contract "hndc,hmdc->hnm" %q, %k mask decay(n, m) gate(%g : tensor<2x4x8xf32>) : tensor<2x4x8x5xf32>, tensor<2x4x8x5xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

func.func @contract_decay_gate_shape(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x3xf32>, %g: tensor<2x8xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{gate dimension 1 has size 8 but indexing by the batch dimensions and the position ('hn'), optionally followed by the contracted letter needs 4}}
  %0 = la.contract "hnd,hmd,hme->hne" %q, %k, %v mask decay(n, m) gate(%g : tensor<2x8xf32>) : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

//===----------------------------------------------------------------------===//
// la.gate
//===----------------------------------------------------------------------===//

// -----

func.func @gate_unknown_fn(%g: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'fn' [identity, sigmoid, silu]}}
  %0 = la.gate relu %g, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gate_no_branches(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'la.gate' op needs at least one branch to gate}}
  %0 = "la.gate"(%g) <{fn = 0 : i32}> : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gate_branch_type(%g: tensor<4x2xf32>, %x: tensor<4x2xf32>, %y: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{branch #1 has type 'tensor<4x3xf32>' but the result has 'tensor<4x2xf32>'}}
  %0 = la.gate sigmoid %g, %x, %y : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x3xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gate_element_type(%g: tensor<4x2xf16>, %x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{gate element type 'f16' differs from 'f32'}}
  %0 = la.gate silu %g, %x : tensor<4x2xf16>, tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gate_rank_too_high(%g: tensor<4x2x3xf32>, %x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{gate has rank 3 (4x2x3), more than the 2 dimensions (4x2) it scales}}
  %0 = la.gate identity %g, %x : tensor<4x2x3xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gate_not_prefix(%g: tensor<2xf32>, %x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{gate dimension 0 has size 2 but prefix broadcasting into 4x2 needs 4}}
  %0 = la.gate identity %g, %x : tensor<2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

//===----------------------------------------------------------------------===//
// la.size
//===----------------------------------------------------------------------===//

// -----

func.func @size_dim_out_of_range(%x: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error @+1 {{'la.size' op dimension 2 is out of range for rank 2}}
  %0 = la.size %x along 2 : tensor<4x8xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @size_dim_negative(%x: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error @+1 {{'la.size' op dimension -1 is out of range for rank 2}}
  %0 = la.size %x along -1 : tensor<4x8xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @window_even_size(%x: tensor<2x8xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{window size of dimension 1 must be odd and positive (a centred window), got 4}}
  %0 = la.window %x along [1] size [4] : tensor<2x8xf32> -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @window_unsorted_dims(%x: tensor<2x8xf32>) -> tensor<2x3x8x3xf32> {
  // expected-error @+1 {{windowed dimensions must be strictly increasing, got 1 then 0}}
  %0 = la.window %x along [1, 0] size [3, 3] : tensor<2x8xf32> -> tensor<2x3x8x3xf32>
  return %0 : tensor<2x3x8x3xf32>
}

// -----

func.func @window_dim_out_of_range(%x: tensor<2x8xf32>) -> tensor<2x8x3xf32> {
  // expected-error @+1 {{windowed dimension 2 is out of range for rank 2}}
  %0 = la.window %x along [2] size [3] : tensor<2x8xf32> -> tensor<2x8x3xf32>
  return %0 : tensor<2x8x3xf32>
}

// -----

func.func @window_size_count(%x: tensor<2x8xf32>) -> tensor<2x8x3xf32> {
  // expected-error @+1 {{has 1 windowed dimensions but 2 window sizes}}
  %0 = la.window %x along [1] size [3, 3] : tensor<2x8xf32> -> tensor<2x8x3xf32>
  return %0 : tensor<2x8x3xf32>
}

// -----

func.func @window_result_rank(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{result must have rank 3 (the input's 2 plus one per window), got 2}}
  %0 = la.window %x along [1] size [3] : tensor<2x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @window_result_window_size(%x: tensor<2x8xf32>) -> tensor<2x8x5xf32> {
  // expected-error @+1 {{result dimension 2 has size 5 but 3 is expected (each windowed dimension is followed by its window)}}
  %0 = la.window %x along [1] size [3] : tensor<2x8xf32> -> tensor<2x8x5xf32>
  return %0 : tensor<2x8x5xf32>
}

// -----

func.func @window_result_input_size(%x: tensor<2x8xf32>) -> tensor<2x7x3xf32> {
  // expected-error @+1 {{result dimension 1 has size 7 but 8 is expected (each windowed dimension is followed by its window)}}
  %0 = la.window %x along [1] size [3] : tensor<2x8xf32> -> tensor<2x7x3xf32>
  return %0 : tensor<2x7x3xf32>
}

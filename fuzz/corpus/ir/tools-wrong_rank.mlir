func.func @f(%q: tensor<2x3x8x16xf32>, %s: tensor<2x3x16xf32>) -> tensor<2x3x8x16xf32> {
  %o = la.contract "bhnd,bhde->bhne" %q, %s : tensor<2x3x8x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x8x16xf32>
  return %o : tensor<2x3x8x16xf32>
}

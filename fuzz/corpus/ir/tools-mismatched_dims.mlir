func.func @f(%k: tensor<2x3x128x64xf32>, %v: tensor<2x3x100x32xf32>) -> tensor<2x3x64x32xf32> {
  %s = la.contract "bhmd,bhme->bhde" %k, %v : tensor<2x3x128x64xf32>, tensor<2x3x100x32xf32> -> tensor<2x3x64x32xf32>
  return %s : tensor<2x3x64x32xf32>
}

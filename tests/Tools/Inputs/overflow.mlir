// exp(100·x) for x in (-1, 1) overflows f32 (above e^88.7) wherever x > 0.887, but never f64 (up to e^709).
// exp(100·x) − exp(100·x) is then inf − inf = NaN in f32 and 0 in f64. The numerics guard must flag both.
func.func @overflow(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %big = la.map %x : tensor<?x?xf32> -> tensor<?x?xf32> {
  ^bb0(%z: f32):
    %c = arith.constant 100.0 : f32
    %s = arith.mulf %z, %c : f32
    %e = math.exp %s : f32
    la.yield %e : f32
  }
  %nan = la.map %big : tensor<?x?xf32> -> tensor<?x?xf32> {
  ^bb0(%e: f32):
    %d = arith.subf %e, %e : f32
    la.yield %d : f32
  }
  return %big, %nan : tensor<?x?xf32>, tensor<?x?xf32>
}

// An explicit narrowing has no f64 counterpart: the reference cannot be built, and says so.
func.func @narrowing(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = la.map %x : tensor<?xf32> -> tensor<?xf32> {
  ^bb0(%z: f32):
    %h = arith.truncf %z : f32 to f16
    %w = arith.extf %h : f16 to f32
    la.yield %w : f32
  }
  return %r : tensor<?xf32>
}

#!/usr/bin/env python3
"""Writes and checks the .npy files of the gpu-run tests, without NumPy (the test machines have none).

    npy_tool.py random DTYPE SHAPE SEED OUT    seeded values in [-1, 1), rounded to DTYPE (f16 or f32)
    npy_tool.py fill DTYPE SHAPE VALUE OUT     every element VALUE
    npy_tool.py check-matmul-nt A B C TOL      C == A @ B^T (fp64 reference); prints the max error
    npy_tool.py check-sum X OUT TOL            OUT[0] == sum(X) (fp64 reference)
    npy_tool.py check-matmul-nn A B C TOL      C == A @ B (fp64 reference)
    npy_tool.py check-warp-scan X OUT TOL      OUT[t] == X[0] + ... + X[t], OUT[32 + t] == sum(X) (32 lanes)
    npy_tool.py check-exp-sqrt X OUT TOL       OUT == exp(X) * sqrt(|X|), relative to max(1, |reference|)
    npy_tool.py check-equal X Y                X == Y, element by element
    npy_tool.py check-rotated OUT              OUT[t] == (t + 1) % len(OUT)

A check exits 1 and says where when an element is off by more than TOL (absolute).
"""
import random
import struct
import sys

CODES = {"f16": ("<f2", "e", 2), "f32": ("<f4", "f", 4), "f64": ("<f8", "d", 8)}


def write(path, dtype, shape, values):
    descr, code, _ = CODES[dtype]
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    text += " " * (-(10 + len(text) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode())
        f.write(struct.pack("<%d%s" % (len(values), code), *values))


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    (length,) = struct.unpack("<H", blob[8:10])
    header = eval(blob[10 : 10 + length].decode())  # the dict literal numpy writes
    code = {v[0]: v[1] for v in CODES.values()}[header["descr"]]
    count = 1
    for d in header["shape"]:
        count *= d
    values = struct.unpack("<%d%s" % (count, code), blob[10 + length :])
    return list(header["shape"]), values


def count_of(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def check_matmul(a_path, b_path, c_path, tol, b_transposed):
    """C == A @ B^T (B stored N x K) or A @ B (B stored K x N), against an fp64 reference."""
    (m, k), a = read(a_path)
    b_shape, b = read(b_path)
    (m2, n), c = read(c_path)
    n_b, k_b = b_shape if b_transposed else b_shape[::-1]
    assert k == k_b and m == m2 and n == n_b, "shapes do not match"
    worst = 0.0
    for i in range(m):
        for j in range(n):
            ref = sum(a[i * k + p] * (b[j * k + p] if b_transposed else b[p * n + j]) for p in range(k))
            err = abs(c[i * n + j] - ref)
            worst = max(worst, err)
            if err > tol:
                sys.exit("C[%d][%d] = %g, expected %g" % (i, j, c[i * n + j], ref))
    print("max error %.3g" % worst)


def main():
    mode = sys.argv[1]
    if mode == "random":
        dtype, shape_text, seed, out = sys.argv[2:6]
        shape = [int(d) for d in shape_text.split("x")]
        rng = random.Random(int(seed))
        write(out, dtype, shape, [rng.uniform(-1, 1) for _ in range(count_of(shape))])
    elif mode == "fill":
        dtype, shape_text, value, out = sys.argv[2:6]
        shape = [int(d) for d in shape_text.split("x")]
        write(out, dtype, shape, [float(value)] * count_of(shape))
    elif mode in ("check-matmul-nt", "check-matmul-nn"):
        check_matmul(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), b_transposed=mode.endswith("nt"))
    elif mode == "check-warp-scan":
        _, x = read(sys.argv[2])
        _, out = read(sys.argv[3])
        tol = float(sys.argv[4])
        for t in range(32):
            if abs(out[t] - sum(x[: t + 1])) > tol or abs(out[32 + t] - sum(x)) > tol:
                sys.exit("lane %d: %g %g, expected %g %g" % (t, out[t], out[32 + t], sum(x[: t + 1]), sum(x)))
    elif mode == "check-exp-sqrt":
        import math

        _, x = read(sys.argv[2])
        _, out = read(sys.argv[3])
        tol = float(sys.argv[4])
        for i, v in enumerate(x):
            ref = math.exp(v) * math.sqrt(abs(v))
            if abs(out[i] - ref) > tol * max(1.0, abs(ref)):
                sys.exit("OUT[%d] = %g, expected %g" % (i, out[i], ref))
    elif mode == "check-sum":
        _, x = read(sys.argv[2])
        _, out = read(sys.argv[3])
        tol = float(sys.argv[4])
        ref = sum(x)
        print("sum %g, expected %g" % (out[0], ref))
        sys.exit(0 if abs(out[0] - ref) <= tol else 1)
    elif mode == "check-equal":
        _, x = read(sys.argv[2])
        _, y = read(sys.argv[3])
        bad = [i for i in range(len(x)) if x[i] != y[i]]
        if len(x) != len(y) or bad:
            sys.exit("differ at %s" % bad[:8])
    elif mode == "check-rotated":
        _, out = read(sys.argv[2])
        bad = [t for t in range(len(out)) if out[t] != (t + 1) % len(out)]
        if bad:
            sys.exit("wrong at %s" % bad[:8])
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()

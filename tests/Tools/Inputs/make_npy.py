#!/usr/bin/env python3
"""Writes one .npy file, well-formed or deliberately broken, for the lac bad-input tests.

    make_npy.py KIND SHAPE OUT      e.g. make_npy.py good 1x2x9x8 x.npy

Written by hand (no NumPy needed on the test machine). KIND is one of:
  good, truncated (data cut short), bad-magic, fortran (fortran_order True), f64 (descr '<f8'),
  big-endian ('>f4'), huge-header (a header length of 4 GiB in a version-2 prefix), bad-dict (not a dict
  literal), enormous (a shape of 2^40 elements with no data).
"""
import struct
import sys


def header(descr, fortran, shape):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, fortran, dims)
    # As numpy.save pads it: the 10-byte prefix, the dict and a newline end on a multiple of 64 bytes.
    text += " " * (-(10 + len(text) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode()


def main():
    kind, shape_text, out = sys.argv[1:4]
    shape = [int(d) for d in shape_text.split("x")] if shape_text else []
    count = 1
    for d in shape:
        count *= d
    data = struct.pack("<%df" % count, *[0.01 * (i % 97) - 0.3 for i in range(count)])
    if kind == "good":
        blob = header("<f4", False, shape) + data
    elif kind == "truncated":
        blob = header("<f4", False, shape) + data[: len(data) // 2]
    elif kind == "bad-magic":
        blob = b"\x93NUMPZ" + header("<f4", False, shape)[6:] + data
    elif kind == "fortran":
        blob = header("<f4", True, shape) + data
    elif kind == "f64":
        blob = header("<f8", False, shape) + struct.pack("<%dd" % count, *[0.5] * count)
    elif kind == "big-endian":
        blob = header(">f4", False, shape) + data
    elif kind == "huge-header":
        blob = b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFFF) + b"{"
    elif kind == "bad-dict":
        text = b"[1, 2, 3]" + b" " * 107 + b"\n"
        blob = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text
    elif kind == "enormous":
        blob = header("<f4", False, [1, 1, 1 << 20, 1 << 20])
    else:
        sys.exit("unknown kind " + kind)
    with open(out, "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Regenerates the .npy fixtures with numpy (an independent writer).

Run from this directory: /usr/bin/python3 gen_fixtures.py
Matrix fixtures hold M[i, j] = 10*i + j - 7 (unsigned: 10*i + j) for a 3×4
shape; the tests rebuild the expected values from the same formula.
"""
import numpy as np

i, j = np.meshgrid(np.arange(3), np.arange(4), indexing="ij")
signed = 10 * i + j - 7
unsigned = 10 * i + j

for kind in ["f8", "f4", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]:
    for bo in ["<", ">"]:
        dt = np.dtype(bo + kind)
        if dt.itemsize == 1 and bo == ">":
            continue
        base = unsigned if kind[0] == "u" else signed
        for order in ["C", "F"]:
            a = np.array(base, dtype=dt, order=order)
            name = "m_%s%s_%s.npy" % ("le" if bo == "<" else "be", kind, order)
            np.save(name, a)

# Format versions 2.0 and 3.0 of the same float64 matrix.
a = np.array(signed, dtype="<f8")
for v in [(2, 0), (3, 0)]:
    with open("m_v%d.npy" % v[0], "wb") as f:
        np.lib.format.write_array(f, a, version=v)

# Vectors: 1-D, n×1, 1×n; and integer extremes.
v = np.array([1.5, -2.25, 3.0, 0.0, 1e-300], dtype="<f8")
np.save("v_1d.npy", v)
np.save("v_col.npy", v.reshape(5, 1))
np.save("v_row.npy", v.reshape(1, 5))
np.save("v_i8_extremes.npy", np.array([np.iinfo(np.int64).min, -1, 0, np.iinfo(np.int64).max], dtype="<i8"))
np.save("v_u8_extremes.npy", np.array([0, 1, np.iinfo(np.uint64).max], dtype="<u8"))
np.save("v_f4_values.npy", np.array([0.1, -3.5, 1e30], dtype="<f4"))

# Things ReadMatrix/ReadVector must reject with a clear error.
np.save("bad_3d.npy", np.zeros((2, 2, 2)))
np.save("bad_scalar.npy", np.float64(3.0))
np.save("bad_empty.npy", np.zeros((0, 3)))
np.save("bad_bool.npy", np.array([[True, False]]))
np.save("bad_complex.npy", np.array([[1 + 2j]]))
np.save("bad_f2.npy", np.array([[1.0]], dtype="<f2"))
np.save("bad_str.npy", np.array(["ab", "c"]))
np.save("bad_record.npy", np.zeros(2, dtype=[("x", "<f8"), ("y", "<i4")]))
np.save("bad_nan.npy", np.array([[1.0, 2.0], [3.0, np.nan]]))
np.save("bad_inf_f4.npy", np.array([[1.0, -np.inf]], dtype="<f4"))
with open("bad_truncated.npy", "wb") as f:
    buf = open("m_lef8_C.npy", "rb").read()
    f.write(buf[:-5])

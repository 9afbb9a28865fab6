package matio

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio/npy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// fixtureValue is the formula testdata/gen_fixtures.py used (numpy wrote the
// files, so these tests check our reader against an independent writer).
func fixtureValue(i, j int, unsigned bool) float64 {
	if unsigned {
		return float64(10*i + j)
	}
	return float64(10*i + j - 7)
}

func TestReadNumpyFixturesAllDTypesAndOrders(t *testing.T) {
	kinds := []string{"f8", "f4", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"}
	count := 0
	for _, kind := range kinds {
		for _, bo := range []string{"le", "be"} {
			for _, order := range []string{"C", "F"} {
				name := fmt.Sprintf("m_%s%s_%s.npy", bo, kind, order)
				path := filepath.Join("testdata", name)
				if kind[1] == '1' && bo == "be" {
					continue // one-byte types have no byte order
				}
				count++
				t.Run(name, func(t *testing.T) {
					m, err := ReadMatrix(path)
					require.NoError(t, err)
					r, c := m.Dims()
					require.Equal(t, 3, r)
					require.Equal(t, 4, c)
					for i := 0; i < r; i++ {
						for j := 0; j < c; j++ {
							assert.Equal(t, fixtureValue(i, j, kind[0] == 'u'), m.At(i, j), "entry (%d,%d)", i, j)
						}
					}
				})
			}
		}
	}
	require.Equal(t, 36, count)
}

func TestReadNumpyVersions(t *testing.T) {
	for _, name := range []string{"m_v2.npy", "m_v3.npy"} {
		m, err := ReadMatrix(filepath.Join("testdata", name))
		require.NoError(t, err, name)
		want, err := ReadMatrix(filepath.Join("testdata", "m_lef8_C.npy"))
		require.NoError(t, err)
		assert.True(t, mat.Equal(want, m), name)
	}
}

func TestReadVectorShapes(t *testing.T) {
	want := []float64{1.5, -2.25, 3.0, 0.0, 1e-300}
	for _, name := range []string{"v_1d.npy", "v_col.npy", "v_row.npy"} {
		v, err := ReadVector(filepath.Join("testdata", name))
		require.NoError(t, err, name)
		assert.Equal(t, want, v, name)
	}
	v, err := ReadVector(filepath.Join("testdata", "v_i8_extremes.npy"))
	require.NoError(t, err)
	assert.Equal(t, []float64{float64(math.MinInt64), -1, 0, float64(math.MaxInt64)}, v)
	v, err = ReadVector(filepath.Join("testdata", "v_u8_extremes.npy"))
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1, float64(uint64(math.MaxUint64))}, v)
	v, err = ReadVector(filepath.Join("testdata", "v_f4_values.npy"))
	require.NoError(t, err)
	// float32 widens exactly: compare with Go's own float32 rounding.
	assert.Equal(t, []float64{float64(float32(0.1)), -3.5, float64(float32(1e30))}, v)

	// A column matrix and a row matrix are both vectors; a real matrix is not.
	m, err := ReadMatrix(filepath.Join("testdata", "v_col.npy"))
	require.NoError(t, err)
	r, c := m.Dims()
	assert.Equal(t, []int{5, 1}, []int{r, c})
	_, err = ReadVector(filepath.Join("testdata", "m_lef8_C.npy"))
	require.ErrorIs(t, err, ErrDims)
	assert.Contains(t, err.Error(), "m_lef8_C.npy")
}

func TestReadErrors(t *testing.T) {
	cases := []struct {
		file string
		want error
		msg  string
	}{
		{"bad_3d.npy", ErrDims, "3-D"},
		{"bad_scalar.npy", ErrDims, "0-D"},
		{"bad_empty.npy", ErrEmpty, "(0, 3)"},
		{"bad_bool.npy", ErrDType, "b1"},
		{"bad_complex.npy", ErrDType, "c16"},
		{"bad_f2.npy", ErrDType, "f2"},
		{"bad_str.npy", ErrDType, "U"},
		{"bad_record.npy", ErrDType, "structured"},
		{"bad_nan.npy", ErrNonFinite, "row 1, column 1"},
		{"bad_inf_f4.npy", ErrNonFinite, "row 0, column 1"},
		{"bad_truncated.npy", ErrTruncated, "needs 96 data bytes, file has 91"},
		{"v_1d.npy", ErrDims, "1-D"}, // a vector is not a matrix
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			_, err := ReadMatrix(path)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), path, "error must name the file")
		})
	}
}

func TestReadMissingFileAndExtension(t *testing.T) {
	_, err := ReadMatrix(filepath.Join(t.TempDir(), "nope.npy"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "nope.npy")
	_, err = ReadMatrix("x.mat")
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), `".mat"`)
	_, err = ReadVector("x")
	require.ErrorIs(t, err, ErrFormat)
	require.ErrorIs(t, WriteMatrix("x.json", mat.NewDense(1, 1, nil)), ErrFormat)
	require.ErrorIs(t, WriteVector("x.bin", []float64{1}), ErrFormat)
}

// npyBytes builds an npy stream with the given header dict and data.
func npyBytes(major byte, dict string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString(npyMagic)
	b.WriteByte(major)
	b.WriteByte(0)
	dict += "\n"
	if major == 1 {
		b.WriteByte(byte(len(dict)))
		b.WriteByte(byte(len(dict) >> 8))
	} else {
		b.Write([]byte{byte(len(dict)), byte(len(dict) >> 8), 0, 0})
	}
	b.WriteString(dict)
	b.Write(data)
	return b.Bytes()
}

func TestReadNPYMalformed(t *testing.T) {
	eight := make([]byte, 8)
	cases := []struct {
		name string
		in   []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrEmpty, "empty"},
		{"bad magic", []byte("PK\x03\x04 this is a zip"), ErrFormat, "bad magic"},
		{"short magic", []byte("\x93NUM"), ErrTruncated, "preamble"},
		{"version 4", npyBytes(4, "{}", nil), ErrFormat, "version 4.0"},
		{"no header len", []byte(npyMagic + "\x01\x00\x10"), ErrTruncated, "header length"},
		{"short header", append([]byte(npyMagic+"\x01\x00\x40\x00"), "{'descr'"...), ErrTruncated, "64-byte header"},
		{"huge header v2", []byte(npyMagic + "\x02\x00\xff\xff\xff\x7f"), ErrFormat, "exceeds"},
		{"not a dict", npyBytes(1, "['descr']", nil), ErrFormat, "expected '{'"},
		{"missing shape", npyBytes(1, "{'descr': '<f8', 'fortran_order': False}", eight), ErrFormat, `no "shape"`},
		{"extra key", npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': True}", eight), ErrFormat, `unexpected key "x"`},
		{"dup key", npyBytes(1, "{'descr': '<f8', 'descr': '<f8'}", eight), ErrFormat, "duplicate"},
		{"order not bool", npyBytes(1, "{'descr': '<f8', 'fortran_order': 'no', 'shape': (1,)}", eight), ErrFormat, "fortran_order"},
		{"shape not tuple", npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1)}", eight), ErrFormat, "not a tuple"},
		{"negative dim", npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}", eight), ErrFormat, "non-negative"},
		{"huge dim", npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}", eight), ErrFormat, "out of range"},
		{"huge shape", npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4000000000, 4000000000)}", eight), ErrShape, "too large"},
		{"native order", npyBytes(1, "{'descr': '=f8', 'fortran_order': False, 'shape': (1,)}", eight), ErrDType, "byte order"},
		{"unordered", npyBytes(1, "{'descr': 'f8', 'fortran_order': False, 'shape': (1,)}", eight), ErrDType, "byte order"},
		{"i3", npyBytes(1, "{'descr': '<i3', 'fortran_order': False, 'shape': (1,)}", eight), ErrDType, "do not exist"},
		{"object", npyBytes(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", eight), ErrDType, "not a dtype"},
		{"trailing garbage", npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} x", eight), ErrFormat, "after the dictionary"},
		{"extra data", npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}", make([]byte, 9)), ErrShape, "extra bytes"},
		{"truncated data", npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", eight), ErrTruncated, "needs 16 data bytes, file has 8"},
		{"no data", npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", nil), ErrTruncated, "file has 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadVectorFrom(bytes.NewReader(tc.in), NPY)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	// Python-2 long literals and double quotes are valid headers.
	v, err := ReadVectorFrom(bytes.NewReader(npyBytes(1, `{"descr": "<f8", "fortran_order": False, "shape": (1L,), }`, eight)), NPY)
	require.NoError(t, err)
	assert.Equal(t, []float64{0}, v)
}

func TestNPYRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for _, dims := range [][2]int{{1, 1}, {3, 5}, {7, 2}, {40, 40}} {
		m := mat.NewDense(dims[0], dims[1], nil)
		for i := 0; i < dims[0]; i++ {
			for j := 0; j < dims[1]; j++ {
				m.Set(i, j, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
			}
		}
		m.Set(0, 0, math.SmallestNonzeroFloat64) // subnormal survives
		for _, ext := range []string{".npy", ".csv", ".txt"} {
			path := filepath.Join(dir, fmt.Sprintf("m%dx%d%s", dims[0], dims[1], ext))
			require.NoError(t, WriteMatrix(path, m))
			got, err := ReadMatrix(path)
			require.NoError(t, err)
			assert.True(t, mat.Equal(m, got), "%s: bit-exact round trip", path)
		}
		// A transposed view (not a *mat.Dense) is written in its logical order.
		path := filepath.Join(dir, "t.npy")
		require.NoError(t, WriteMatrix(path, m.T()))
		got, err := ReadMatrix(path)
		require.NoError(t, err)
		assert.True(t, mat.Equal(m.T(), got))
	}
	v := []float64{0.1, -0, 1e308, -5e-324, 3}
	for _, ext := range []string{".npy", ".csv"} {
		path := filepath.Join(dir, "v"+ext)
		require.NoError(t, WriteVector(path, v))
		got, err := ReadVector(path)
		require.NoError(t, err)
		assert.Equal(t, v, got)
	}
}

// Our writer checked by an independent reader: npyio decodes the file on its
// own (its header parser, its element decoding), and the header is padded so
// the data starts at a multiple of 64 bytes as the npy specification asks.
func TestWriteNPYReadByNpyio(t *testing.T) {
	m := mat.NewDense(3, 2, []float64{1, -2, 3.5, 1e-9, 5, 6})
	var buf bytes.Buffer
	require.NoError(t, WriteMatrixTo(&buf, m, NPY))
	raw := buf.Bytes()
	hlen := int(raw[8]) | int(raw[9])<<8
	assert.Equal(t, 0, (10+hlen)%64, "data offset must be 64-byte aligned")
	assert.Equal(t, byte('\n'), raw[10+hlen-1])
	assert.Equal(t, 10+hlen+6*8, len(raw))
	var got mat.Dense
	require.NoError(t, npy.Read(bytes.NewReader(raw), &got))
	assert.True(t, mat.Equal(m, &got))

	buf.Reset()
	require.NoError(t, WriteVectorTo(&buf, []float64{4, 5}, NPY))
	var vec []float64
	r, err := npy.NewReader(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, []int{2}, r.Header.Descr.Shape)
	require.NoError(t, r.Read(&vec))
	assert.Equal(t, []float64{4, 5}, vec)
}

// And by numpy itself, when it is installed (CI installs python3-numpy via
// scripts/install-deps.sh).
func TestWriteNPYReadByNumpy(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("numpy not available (%v): writer still checked by npyio in TestWriteNPYReadByNpyio", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "w.npy")
	require.NoError(t, WriteMatrix(path, mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 0.1})))
	out, err := exec.Command(py, "-c",
		"import numpy as np,sys; a=np.load(sys.argv[1]); print(a.dtype, a.shape, a.flags['C_CONTIGUOUS'], repr(a[1,2]), a.sum())", path).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "float64 (2, 3) True 0.1 15.1", strings.TrimSpace(string(out)))
}

func TestReadCSV(t *testing.T) {
	in := "\uFEFF# a comment line\n1, 2 ,3\n\n  4,5,6   # trailing comment\r\n7,8,9e-3"
	m, err := ReadMatrixFrom(strings.NewReader(in), CSV)
	require.NoError(t, err)
	assert.True(t, mat.Equal(mat.NewDense(3, 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 0.009}), m))

	m, err = ReadMatrixFrom(strings.NewReader("1 2\n3\t4\n"), CSV)
	require.NoError(t, err)
	assert.True(t, mat.Equal(mat.NewDense(2, 2, []float64{1, 2, 3, 4}), m))

	v, err := ReadVectorFrom(strings.NewReader("1\n2\n3\n"), CSV)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3}, v)
	v, err = ReadVectorFrom(strings.NewReader("1,2,3\n"), CSV)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3}, v)
}

func TestReadCSVErrors(t *testing.T) {
	cases := []struct {
		name, in string
		want     error
		msg      string
	}{
		{"empty", "", ErrEmpty, "no numbers"},
		{"only comments", "# x\n\n   \n#y", ErrEmpty, "no numbers"},
		{"ragged", "1,2,3\n4,5\n", ErrShape, "line 2 has 2 values but line 1 has 3"},
		{"ragged ws", "# c\n1 2\n3 4 5\n", ErrShape, "line 3 has 3 values but line 2 has 2"},
		{"empty field", "1,,3\n", ErrFormat, "line 1, column 2: empty field"},
		{"trailing comma", "1,2,\n", ErrFormat, "line 1, column 3: empty field"},
		{"header row", "a,b\n1,2\n", ErrFormat, `line 1, column 1: "a" is not a number`},
		{"nan", "1,2\n3,nan\n", ErrNonFinite, "NaN at line 2, column 2 (matrix row 1, column 1, 0-based)"},
		{"inf", "# x\n-Inf 1\n", ErrNonFinite, "-Inf at line 2, column 1 (matrix row 0, column 0"},
		{"overflow", "1e999\n", ErrNonFinite, "out of float64 range"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadMatrixFrom(strings.NewReader(tc.in), CSV)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	_, err := ReadVectorFrom(strings.NewReader("1,2\n3,4\n"), CSV)
	require.ErrorIs(t, err, ErrDims)
	assert.Contains(t, err.Error(), "[2 2]")

	path := filepath.Join(t.TempDir(), "r.csv")
	require.NoError(t, os.WriteFile(path, []byte("1,2\n3\n"), 0o644))
	_, err = ReadMatrix(path)
	require.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), path)
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	m := mat.NewDense(2, 2, []float64{1, 2, math.Inf(1), 4})
	path := filepath.Join(dir, "m.npy")
	err := WriteMatrix(path, m)
	require.ErrorIs(t, err, ErrNonFinite)
	assert.Contains(t, err.Error(), "row 1, column 0")
	assert.Contains(t, err.Error(), path)
	_, statErr := os.Stat(path)
	assert.ErrorIs(t, statErr, os.ErrNotExist, "failed write must not leave a file")
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "failed write must not leave a temp file")

	err = WriteVector(filepath.Join(dir, "v.csv"), []float64{1, math.NaN()})
	require.ErrorIs(t, err, ErrNonFinite)
	assert.Contains(t, err.Error(), "index 1")
	require.ErrorIs(t, WriteVector(filepath.Join(dir, "v.csv"), nil), ErrEmpty)
	require.ErrorIs(t, WriteMatrixTo(&bytes.Buffer{}, nil, NPY), ErrEmpty)
	require.Error(t, WriteMatrix(filepath.Join(dir, "no-such-dir", "m.npy"), mat.NewDense(1, 1, nil)))
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]Format{"a.npy": NPY, "A.NPY": NPY, "x/b.csv": CSV, "c.TXT": CSV} {
		f, err := FormatOf(path)
		require.NoError(t, err)
		assert.Equal(t, want, f, path)
	}
	assert.Equal(t, "npy", NPY.String())
	assert.Equal(t, "csv", CSV.String())
	_, err := ReadMatrixFrom(strings.NewReader("1"), Format(9))
	require.ErrorIs(t, err, ErrFormat)
}

// sentinels lists every error category; each error must wrap one of them.
var sentinels = []error{ErrFormat, ErrTruncated, ErrEmpty, ErrDType, ErrShape, ErrDims, ErrNonFinite}

func categorized(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// Valid but unusual headers: keys in any order, big-endian Fortran-order
// int16. (Text after the dictionary, even in a version-3 header, is invalid
// Python and rejected; see TestReadNPYMalformed.)
func TestReadNPYUnusualValidHeaders(t *testing.T) {
	in := npyBytes(1, "{'shape': (2, 2), 'fortran_order': True, 'descr': '>i2'}", []byte{0, 1, 0xff, 0xfe, 0, 3, 0, 4})
	m, err := ReadMatrixFrom(bytes.NewReader(in), NPY)
	require.NoError(t, err)
	// Column-major data 1, -2, 3, 4 is the matrix [[1 3] [-2 4]].
	assert.True(t, mat.Equal(mat.NewDense(2, 2, []float64{1, 3, -2, 4}), m))

	in = npyBytes(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f})
	m, err = ReadMatrixFrom(bytes.NewReader(in), NPY)
	require.NoError(t, err)
	assert.Equal(t, 1.0, m.At(0, 0))
}

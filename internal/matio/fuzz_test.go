package matio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// checkDecoded is the property both fuzzers assert on every input: reading
// never panics; an error always carries one of the documented categories; a
// success is a non-empty, all-finite array that writes back and re-reads to
// the identical values in both formats.
func checkDecoded(t *testing.T, data []byte, f Format) {
	m, err := ReadMatrixFrom(bytes.NewReader(data), f)
	if err != nil {
		if !categorized(err) {
			t.Fatalf("ReadMatrixFrom: uncategorized error %v", err)
		}
	} else {
		r, c := m.Dims()
		if r <= 0 || c <= 0 {
			t.Fatalf("ReadMatrixFrom: empty %d×%d result without error", r, c)
		}
		for _, out := range []Format{NPY, CSV} {
			var buf bytes.Buffer
			if err := WriteMatrixTo(&buf, m, out); err != nil {
				t.Fatalf("write %v of a successfully read matrix: %v", out, err)
			}
			back, err := ReadMatrixFrom(&buf, out)
			if err != nil {
				t.Fatalf("re-read %v: %v", out, err)
			}
			if !mat.Equal(m, back) {
				t.Fatalf("%v round trip changed the matrix", out)
			}
		}
	}

	v, err := ReadVectorFrom(bytes.NewReader(data), f)
	if err != nil {
		if !categorized(err) {
			t.Fatalf("ReadVectorFrom: uncategorized error %v", err)
		}
		return
	}
	if len(v) == 0 {
		t.Fatal("ReadVectorFrom: empty vector without error")
	}
	for _, out := range []Format{NPY, CSV} {
		var buf bytes.Buffer
		if err := WriteVectorTo(&buf, v, out); err != nil {
			t.Fatalf("write %v of a successfully read vector: %v", out, err)
		}
		back, err := ReadVectorFrom(&buf, out)
		if err != nil {
			t.Fatalf("re-read vector %v: %v", out, err)
		}
		if len(back) != len(v) {
			t.Fatalf("vector %v round trip: length %d → %d", out, len(v), len(back))
		}
		for i := range v {
			if back[i] != v[i] {
				t.Fatalf("vector %v round trip: v[%d] %v → %v", out, i, v[i], back[i])
			}
		}
	}
}

// FuzzReadNPY feeds arbitrary bytes to the npy reader. Its seed corpus is the
// numpy-written fixtures plus testdata/fuzz/FuzzReadNPY (findings of earlier
// fuzzing runs), which plain `go test` replays.
func FuzzReadNPY(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.npy"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no npy fixtures: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecoded(t, data, NPY) })
}

// FuzzReadCSV feeds arbitrary text to the CSV reader.
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"1,2,3\n4,5,6\n",
		"# c\n1 2\n3 4 # x\n",
		"1\n2\n3",
		"1,2\n3\n",
		"nan,1\n",
		"0x1p-3, -0, 1e308, 5e-324\n",
		"\uFEFF1;2\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecoded(t, data, CSV) })
}

package records

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/progress"
)

var small = []domain.Attribute{{Name: "a", Size: 2}, {Name: "b", Size: 3}, {Name: "c", Size: 4}}

func TestReadHistogramSmall(t *testing.T) {
	csv := "id,c,b,a,extra\n7,3,2,1,x\n8,0,0,0,y\n9,3,2,1,z\n10,1,0,1,w\n"
	var reports []progress.Event
	opt := &Options{ProgressEvery: 2, Total: int64(len(csv)), Progress: func(e progress.Event) { reports = append(reports, e) }}
	h, st, err := ReadHistogram(strings.NewReader(csv), small, opt)
	require.NoError(t, err)
	require.Len(t, h, 24)
	want := make([]float64, 24)
	// Cell (a,b,c) is a·12 + b·4 + c (first attribute slowest).
	want[1*12+2*4+3] = 2
	want[0] = 1
	want[1*12+0*4+1] = 1
	assert.Equal(t, want, h)
	assert.Equal(t, int64(4), st.Records)
	assert.Equal(t, int64(len(csv)), st.Bytes)
	require.Len(t, reports, 3) // after records 2 and 4, then Done
	assert.Equal(t, int64(2), reports[0].Count)
	assert.Equal(t, "records", reports[0].Stage)
	assert.True(t, reports[2].Done)
	assert.Equal(t, int64(4), reports[2].Count)
	assert.Equal(t, 1.0, reports[2].Fraction, "the whole input was read")
}

func TestReadMarginalsMatchesHistogram(t *testing.T) {
	// A marginal read directly from the records must equal the full
	// histogram summed over the other attributes (an independent route).
	csv := "a,b,c\n1,2,3\n0,0,0\n1,2,3\n1,0,1\n0,2,1\n0,1,3\n"
	h, _, err := ReadHistogram(strings.NewReader(csv), small, nil)
	require.NoError(t, err)
	sets := [][]int{{2, 0}, {1}, {}, {0, 1, 2}}
	tabs, st, err := ReadMarginals(strings.NewReader(csv), small, sets, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(6), st.Records)
	for s, tb := range tabs {
		want := make([]float64, len(tb.Counts))
		for a := 0; a < 2; a++ {
			for b := 0; b < 3; b++ {
				for c := 0; c < 4; c++ {
					codes := []int{a, b, c}
					idx := 0
					for k, at := range tb.Attrs {
						idx = idx*tb.Sizes[k] + codes[at]
					}
					want[idx] += h[Index(small, codes)]
				}
			}
		}
		assert.Equal(t, want, tb.Counts, "set %v", sets[s])
	}
	assert.Equal(t, []int{0, 2}, tabs[0].Attrs, "positions sorted into domain order")
	assert.Equal(t, []float64{6}, tabs[2].Counts, "the empty set is the total")
}

func TestReadErrors(t *testing.T) {
	cases := []struct{ name, csv, want string }{
		{"empty", "", "empty"},
		{"header only", "a,b,c\n", "no records"},
		{"missing attribute", "a,c\n1,2\n", `lacks the attribute(s) "b"`},
		{"duplicate column", "a,b,c,a\n0,0,0,0\n", "twice"},
		{"out of range", "a,b,c\n0,0,0\n1,3,0\n", `record 2 (line 3), column "b": value "3"`},
		{"negative", "a,b,c\n0,-1,0\n", `value "-1"`},
		{"non-integer", "a,b,c\n0,1.0,0\n", `value "1.0"`},
		{"empty field", "a,b,c\n0,,0\n", `value ""`},
		{"text", "a,b,c\n0,x,0\n", `value "x"`},
		{"trailing junk", "a,b,c\n0,1,0\njunk\n", "line 3"},
		{"extra field", "a,b,c\n0,1,0,5\n", "different number of fields"},
		{"bare quote", "a,b,c\n0,1\"x,0\n", "line 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ReadHistogram(strings.NewReader(c.csv), small, nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInput)
			assert.Contains(t, err.Error(), c.want)
			_, _, err = ReadMarginals(strings.NewReader(c.csv), small, [][]int{{0}}, nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInput)
		})
	}
}

func TestSpacesAndBOMAccepted(t *testing.T) {
	h, _, err := ReadHistogram(strings.NewReader("\ufeff a , b ,c\r\n 1 , 2 ,3\r\n\r\n"), small, nil)
	require.NoError(t, err)
	assert.Equal(t, 1.0, h[23])
}

func TestDomainErrors(t *testing.T) {
	for _, attrs := range [][]domain.Attribute{nil, {{Name: "a", Size: 0}}, {{Name: "", Size: 2}}, {{Name: "a", Size: 2}, {Name: "a", Size: 3}}} {
		_, err := Cells(attrs)
		assert.ErrorIs(t, err, ErrInput, "%v", attrs)
	}
	_, err := Cells([]domain.Attribute{{Name: "a", Size: 1 << 40}, {Name: "b", Size: 1 << 40}})
	assert.ErrorIs(t, err, ErrInput)
	_, err = SetsByName(small, [][]string{{"a", "zz"}})
	assert.ErrorContains(t, err, `"zz"`)
	_, _, err = ReadMarginals(strings.NewReader("a,b,c\n0,0,0\n"), small, [][]int{{0, 0}}, nil)
	assert.ErrorContains(t, err, `"a" twice`)
	_, _, err = ReadMarginals(strings.NewReader("a,b,c\n0,0,0\n"), small, [][]int{{5}}, nil)
	assert.ErrorIs(t, err, ErrInput)
}

func TestMemoryRefusal(t *testing.T) {
	// 24 cells need 192 bytes: a 100-byte limit refuses before reading,
	// naming both figures.
	_, _, err := ReadHistogram(strings.NewReader("a,b,c\n0,0,0\n"), small, &Options{MemoryLimit: 100})
	require.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "needs about 192 B of memory, but only 100 B is available to it: the 100 B limit set by Options.MemoryLimit; use a plan that needs only marginal tables, or fewer attributes; to allow more raise Options.MemoryLimit (this needs 192 bytes or more)")
	// A domain far beyond any memory is refused by the real limit too.
	huge := []domain.Attribute{{Name: "a", Size: 1 << 20}, {Name: "b", Size: 1 << 20}, {Name: "c", Size: 1 << 20}}
	_, _, err = ReadHistogram(strings.NewReader("a,b,c\n0,0,0\n"), huge, nil)
	if _, ok := AvailableMemory(); ok {
		require.ErrorIs(t, err, ErrInput)
		assert.Contains(t, err.Error(), "only")
	}
}

func TestReadHistogramNPY(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "h.csv")
	require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("1\n", 24)), 0o600))
	x, err := ReadHistogramNPY(p, small)
	require.NoError(t, err)
	assert.Len(t, x, 24)
	_, err = ReadHistogramNPY(p, small[:2])
	require.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "has 24 cells but the domain (a,b) has 6")
	require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("1\n", 23)+"-1\n"), 0o600))
	_, err = ReadHistogramNPY(p, small)
	assert.ErrorIs(t, err, ErrInput)
}

// adultPath returns examples/adult/data/coded, the integer-coded Adult
// records shipped in the repository; a missing file fails the test.
func adultPath(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", "adult", "data", "coded")
	if _, err := os.Stat(filepath.Join(dir, "adult.csv")); err != nil {
		t.Fatalf("the Adult data shipped in the repository is missing: %v", err)
	}
	return dir
}

// adultDomain reads domain.json.
func adultDomain(t testing.TB, dir string) []domain.Attribute {
	b, err := os.ReadFile(filepath.Join(dir, "domain.json"))
	require.NoError(t, err)
	var d struct {
		Domain []domain.Attribute `json:"domain"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	return d.Domain
}

func TestAdultMarginalsAgainstNumpy(t *testing.T) {
	dir := adultPath(t)
	attrs := adultDomain(t, dir)
	require.Len(t, attrs, 14)
	f, err := os.Open(filepath.Join(dir, "adult.csv"))
	require.NoError(t, err)
	defer f.Close()
	sets := [][]string{{"age", "sex"}, {"race", "income>50K", "workclass"}, {"native-country"}}
	pos, err := SetsByName(attrs, sets)
	require.NoError(t, err)
	tabs, st, err := ReadMarginals(f, attrs, pos, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(48842), st.Records, "the record count docs/releasing.md states")
	// The full domain (6.4e17 cells) cannot be a histogram: refused, with
	// the figure, before any allocation.
	_, _, err = ReadHistogram(strings.NewReader(""), attrs, nil)
	assert.ErrorIs(t, err, ErrInput)
	// Independent reference: numpy's histogramdd over the same columns.
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 missing under CI")
		}
		t.Skip("python3 not available")
	}
	script := `
import sys, json, numpy as np
d = json.load(open(sys.argv[1] + "/domain.json"))["domain"]
names = [a["name"] for a in d]; sizes = {a["name"]: a["size"] for a in d}
x = np.loadtxt(sys.argv[1] + "/adult.csv", delimiter=",", skiprows=1, dtype=np.int64)
out = []
for s in json.loads(sys.argv[2]):
    s = sorted(s, key=names.index)
    cols = [x[:, names.index(a)] for a in s]
    h, _ = np.histogramdd(np.stack(cols, 1), bins=[sizes[a] for a in s], range=[(0, sizes[a]) for a in s])
    out.append(h.ravel().tolist())
print(json.dumps(out))
`
	setsJSON, _ := json.Marshal(sets)
	cmd := exec.Command(py, "-c", script, dir, string(setsJSON))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var want [][]float64
	require.NoError(t, json.Unmarshal(outb, &want))
	for s := range tabs {
		assert.Equal(t, want[s], tabs[s].Counts, "set %v", sets[s])
	}
}

func TestErrorsAreInputErrors(t *testing.T) {
	_, _, err := ReadHistogram(errReader{}, small, nil)
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrInput), "a failing reader is not bad input")
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

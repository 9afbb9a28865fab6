package records

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/progress"
)

// rawAdult returns the raw Adult records shipped in the repository and the
// attributes of their codebook spec (examples/adult/raw.json).
func rawAdult(t testing.TB) (string, []domain.Attribute) {
	t.Helper()
	path := filepath.Join("..", "..", "examples", "adult", "data", "adult.csv.gz")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the Adult data shipped in the repository is missing: %v", err)
	}
	k, err := domain.LoadSpec(filepath.Join("..", "..", "examples", "adult", "raw.json"), workload.Blocks)
	require.NoError(t, err)
	return path, k.Attributes()
}

// The raw Adult records read through the codebook spec give the marginals
// an independent coding computes: Python reads the same gzip file with its
// own CSV parser and bins with numpy.digitize (no dpsolve code involved).
func TestRawAdultCodebookAgainstPython(t *testing.T) {
	path, attrs := rawAdult(t)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sets := [][]string{{"age", "sex"}, {"native-country"}, {"hours-per-week", "income"}, {"education", "race"}}
	pos, err := SetsByName(attrs, sets)
	require.NoError(t, err)
	tabs, st, err := ReadMarginals(f, attrs, pos, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(48842), st.Records)
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Skip("python3 not available")
	}
	spec, err := os.ReadFile(filepath.Join("..", "..", "examples", "adult", "raw.json"))
	require.NoError(t, err)
	script := `
import sys, json, gzip, csv, numpy as np
spec = json.loads(sys.argv[2])
dom = {a["name"]: a for a in spec["domain"]}
names = [a["name"] for a in spec["domain"]]
rows = list(csv.reader(gzip.open(sys.argv[1], "rt", newline=""), skipinitialspace=True))
head = rows[0]; rows = rows[1:]
def code(a, v):
    d = dom[a]
    if "edges" in d:
        return int(np.digitize(float(v), d["edges"])) - 1
    v = d.get("aliases", {}).get(v, v)
    return d["values"].index(v) if v in d["values"] else d["values"].index(d["other"])
out = []
for s in json.loads(sys.argv[3]):
    s = sorted(s, key=names.index)
    sizes = [len(dom[a]["edges"]) - 1 if "edges" in dom[a] else len(dom[a]["values"]) for a in s]
    t = np.zeros(sizes)
    for r in rows:
        t[tuple(code(a, r[head.index(a)]) for a in s)] += 1
    out.append(t.ravel().tolist())
print(json.dumps(out))
`
	sj, _ := json.Marshal(sets)
	outp, err := exec.Command(py, "-c", script, path, string(spec), string(sj)).Output()
	require.NoError(t, err)
	var want [][]float64
	require.NoError(t, json.Unmarshal(outp, &want))
	for i := range sets {
		assert.Equal(t, want[i], tabs[i].Counts, "marginal %v", sets[i]) // exact: counts are integers
	}
}

// A value the codebook does not list, a number outside the bins and a
// non-number are errors naming the record, the line, the column and the
// value; clamp and other take them in; the same through gzip.
func TestCodebookReadErrors(t *testing.T) {
	attrs := []domain.Attribute{
		{Name: "sex", Size: 2, Codebook: must(domain.NewValueCodebook([]string{"F", "M"}, "", nil))},
		{Name: "age", Size: 3, Codebook: must(domain.NewBinCodebook([]float64{0, 18, 65, 120}, false))},
	}
	read := func(data string) ([]float64, error) {
		h, _, err := ReadHistogram(strings.NewReader(data), attrs, nil)
		return h, err
	}
	h, err := read("sex,age\nF, 17.5\nM,18\n M ,119.9\n")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 0, 0, 0, 1, 1}, h)
	for data, want := range map[string]string{
		"sex,age\nF,1\nX,2\n": `record 2 (line 3), column "sex": value "X" is not one of the values "F", "M"`,
		"sex,age\nF,120\n":    `record 1 (line 2), column "age": value "120" is at or above the last edge 120`,
		"sex,age\nF,-1\n":     `value "-1" is below the first edge 0`,
		"sex,age\nF,twelve\n": `value "twelve" is not a number`,
		"sex,age\nF,NaN\n":    `value "NaN" is not a number`,
		"sex,age\nF,\n":       `value "" is not a number`,
		"sex,age\n=cmd(),1\n": `value "=cmd()" is not one of the values`,
	} {
		_, err := read(data)
		require.Error(t, err, data)
		assert.ErrorIs(t, err, ErrInput)
		assert.Contains(t, err.Error(), want, data)
	}
	attrs[1].Codebook = must(domain.NewBinCodebook([]float64{0, 18, 65, 120}, true))
	attrs[0].Codebook = must(domain.NewValueCodebook([]string{"F", "M", "other"}, "other", nil))
	attrs[0].Size = 3
	h, err = read("sex,age\nX,-1\nF,500\n")
	require.NoError(t, err)
	assert.Equal(t, 1.0, h[2*3+0], "X → other, -1 clamped to the first bin")
	assert.Equal(t, 1.0, h[0*3+2], "500 clamped to the last bin")
	// gzip: the same records compressed read the same; a corrupt stream is bad input.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("sex,age\nX,-1\nF,500\n"))
	require.NoError(t, zw.Close())
	h2, _, err := ReadHistogram(bytes.NewReader(gz.Bytes()), attrs, nil)
	require.NoError(t, err)
	assert.Equal(t, h, h2)
	bad := append([]byte(nil), gz.Bytes()...)
	bad[len(bad)-6] ^= 0xff // the CRC
	_, _, err = ReadHistogram(bytes.NewReader(bad), attrs, nil)
	assert.ErrorIs(t, err, ErrInput)
	_, _, err = ReadHistogram(bytes.NewReader(gz.Bytes()[:len(gz.Bytes())/2]), attrs, nil)
	assert.ErrorIs(t, err, ErrInput)
	// A codebook whose size disagrees with the attribute's is refused.
	attrs[0].Size = 2
	_, err = read("sex,age\nF,1\n")
	assert.ErrorContains(t, err, "codebook has 3 codes")
}

func must(c *domain.Codebook, err error) *domain.Codebook {
	if err != nil {
		panic(err)
	}
	return c
}

// adultRow is a raw Adult record in a Parquet file: strings for the
// categories, integers for the numbers.
type adultRow struct {
	Age           int64   `parquet:"age"`
	Workclass     string  `parquet:"workclass"`
	Fnlwgt        int64   `parquet:"fnlwgt"`
	Education     string  `parquet:"education"`
	EducationNum  int64   `parquet:"education-num"`
	MaritalStatus string  `parquet:"marital-status"`
	Occupation    string  `parquet:"occupation"`
	Relationship  string  `parquet:"relationship"`
	Race          string  `parquet:"race"`
	Sex           string  `parquet:"sex"`
	CapitalGain   int64   `parquet:"capital-gain"`
	CapitalLoss   int64   `parquet:"capital-loss"`
	HoursPerWeek  float64 `parquet:"hours-per-week"`
	NativeCountry string  `parquet:"native-country"`
	Income        string  `parquet:"income"`
}

// writeAdultParquet writes the raw Adult CSV (gzip) at src as a Parquet file
// at dst with parquet-go's own writer, in row groups of 5,000 records so a
// read crosses several of them.
func writeAdultParquet(t testing.TB, src, dst string) {
	f, err := os.Open(src)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	rd := csv.NewReader(zr)
	rd.TrimLeadingSpace = true
	_, err = rd.Read() // header
	require.NoError(t, err)
	out, err := os.Create(dst)
	require.NoError(t, err)
	w := parquet.NewGenericWriter[adultRow](out, parquet.MaxRowsPerRowGroup(5000))
	num := func(s string) int64 { v, err := strconv.ParseInt(s, 10, 64); require.NoError(t, err); return v }
	for {
		r, err := rd.Read()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		_, err = w.Write([]adultRow{{num(r[0]), r[1], num(r[2]), r[3], num(r[4]), r[5], r[6], r[7], r[8], r[9], num(r[10]), num(r[11]), float64(num(r[12])), r[13], r[14]}})
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	require.NoError(t, out.Close())
}

// Parquet and CSV inputs of the same records give identical tables; a
// Parquet file is found by its magic bytes; a truncated one, a missing
// column and a stream without random access are bad input.
func TestParquetMatchesCSV(t *testing.T) {
	path, attrs := rawAdult(t)
	pq := filepath.Join(t.TempDir(), "adult.parquet")
	writeAdultParquet(t, path, pq)
	sets := [][]int{{0, 7}, {2, 10}, {8, 10}, {9}, {1, 3, 4}}
	read := func(p string) ([]Table, Stats) {
		f, err := os.Open(p)
		require.NoError(t, err)
		defer f.Close()
		tabs, st, err := ReadMarginals(f, attrs, sets, nil)
		require.NoError(t, err, p)
		return tabs, st
	}
	want, st := read(path)
	got, st2 := read(pq)
	assert.Equal(t, st.Records, st2.Records)
	assert.Equal(t, want, got)
	// Integer codes in Parquet: a one-column file of codes 0…4.
	p2 := filepath.Join(t.TempDir(), "codes.parquet")
	type row struct {
		C int32 `parquet:"c"`
	}
	fo, err := os.Create(p2)
	require.NoError(t, err)
	w := parquet.NewGenericWriter[row](fo)
	_, err = w.Write([]row{{0}, {4}, {4}, {2}})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, fo.Close())
	ff, err := os.Open(p2)
	require.NoError(t, err)
	h, _, err := ReadHistogram(ff, []domain.Attribute{{Name: "c", Size: 5}}, nil)
	ff.Close()
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 0, 1, 0, 2}, h)
	ff, _ = os.Open(p2)
	_, _, err = ReadHistogram(ff, []domain.Attribute{{Name: "c", Size: 4}}, nil)
	ff.Close()
	assert.ErrorContains(t, err, `record 2, column "c": value "4" is not an integer code in [0, 4)`)
	ff, _ = os.Open(p2)
	_, _, err = ReadHistogram(ff, []domain.Attribute{{Name: "d", Size: 4}}, nil)
	ff.Close()
	assert.ErrorIs(t, err, ErrInput)
	assert.ErrorContains(t, err, `lacks the column(s) "d"`)
	b, err := os.ReadFile(p2)
	require.NoError(t, err)
	_, _, err = ReadHistogram(bytes.NewReader(b[:len(b)/2]), []domain.Attribute{{Name: "c", Size: 5}}, nil)
	assert.ErrorIs(t, err, ErrInput)
	_, _, err = ReadHistogram(io.MultiReader(bytes.NewReader(b)), []domain.Attribute{{Name: "c", Size: 5}}, nil)
	assert.ErrorIs(t, err, ErrInput)
	assert.ErrorContains(t, err, "needs random access")
	for _, n := range []int{8, 12, len(b) - 8} { // damaged footers and bodies never panic
		c := append([]byte(nil), b...)
		c[n] ^= 0x5a
		_, _, err = ReadHistogram(bytes.NewReader(c), []domain.Attribute{{Name: "c", Size: 5}}, &Options{Total: int64(len(c))})
		_ = err // either read (a byte that does not matter) or refused, never a panic
	}
}

// slowReader returns one line a call, sleeping first: a slow disk.
type slowReader struct {
	lines []string
	delay time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	if len(s.lines) == 0 {
		return 0, io.EOF
	}
	time.Sleep(s.delay)
	n := copy(p, s.lines[0])
	s.lines[0] = s.lines[0][n:]
	if s.lines[0] == "" {
		s.lines = s.lines[1:]
	}
	return n, nil
}

// A slow read reports progress well before ProgressEvery records: the first
// event comes within a second (here: 400 records at 5 ms each, 2 s in all,
// with ProgressEvery far above the record count).
func TestSlowReadReportsWithinASecond(t *testing.T) {
	lines := []string{"a\n"}
	for i := 0; i < 400; i++ {
		lines = append(lines, "1\n")
	}
	start := time.Now()
	var first time.Duration
	var events int
	opt := &Options{ProgressEvery: 1 << 40, Progress: func(e progress.Event) {
		if events == 0 {
			first = time.Since(start)
		}
		events++
	}}
	_, st, err := ReadHistogram(bufio.NewReaderSize(&slowReader{lines: lines, delay: 5 * time.Millisecond}, 16), []domain.Attribute{{Name: "a", Size: 2}}, opt)
	require.NoError(t, err)
	assert.Equal(t, int64(400), st.Records)
	assert.Greater(t, events, 2, "in-progress events and the final one")
	// By design the first event comes after 0.5 s plus at most 64 records
	// (0.32 s here), within the promised second; the bound checked is 1.5 s
	// so that a loaded machine's late wake-ups do not fail the test.
	assert.Less(t, first, 1500*time.Millisecond)
}

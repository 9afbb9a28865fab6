package tables

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

// Every row of answers.csv names its query: a product term
// {"age": "prefix", "sex": "identity"} has age slowest, sex fastest, prefix
// row i as 0..i; an upto marginal's grand total says total; a ranges block
// its ranges; a matrix block its file's rows, where a row is not a run of
// ones; summed-over attributes stay empty.
func TestAnswersCSVNamesEveryQuery(t *testing.T) {
	dir := t.TempDir()
	// Rows: a run of ones (named as a range), and a ±1 row.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.csv"), []byte("0,1,1\n1,-1,0\n"), 0o644))
	spec := `{"domain": [{"name": "age", "size": 4}, {"name": "sex", "size": 2}, {"name": "r", "size": 3}],
	 "workload": [{"name": "cum", "product": {"age": "prefix", "sex": "identity"}},
	              {"name": "u", "marginals": {"upto": 1}},
	              {"name": "g", "product": {"age": {"ranges": [[0, 1], [2, 2]]}, "r": {"matrix": "m.csv"}}}]}`
	k, err := domain.ParseSpec(strings.NewReader(spec), dir, workload.Blocks)
	require.NoError(t, err)
	w, err := explicitOf(k)
	require.NoError(t, err)
	res := &Result{Private: true}
	for ti := range w.Terms {
		q := w.Terms[ti].Queries()
		res.Answers = append(res.Answers, make([]float64, q))
		res.Std = append(res.Std, make([]float64, q))
	}
	var buf bytes.Buffer
	require.NoError(t, writeAnswersCSV(&buf, w, res))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"term", "query", "answer", "stddev", "age", "sex", "r", "table"}, rows[0])
	sel := func(r []string) []string { return append([]string{r[0], r[1]}, r[4:7]...) }
	// The table column: the term and the attributes its product restricts.
	assert.Equal(t, "cum (age, sex)", rows[1][7])
	assert.Equal(t, "u (total)", rows[9][7])
	assert.Equal(t, "u (age)", rows[10][7])
	// cum: 8 rows, age slowest (prefix row i = 0..i), sex fastest.
	want := [][]string{
		{"cum", "0", "0..0", "0", ""}, {"cum", "1", "0..0", "1", ""},
		{"cum", "2", "0..1", "0", ""}, {"cum", "3", "0..1", "1", ""},
		{"cum", "4", "0..2", "0", ""}, {"cum", "5", "0..2", "1", ""},
		{"cum", "6", "0..3", "0", ""}, {"cum", "7", "0..3", "1", ""},
	}
	for i, wr := range want {
		assert.Equal(t, wr, sel(rows[1+i]))
	}
	// u: the grand total first (upto lists smaller sets first), then the
	// one-way marginals.
	assert.Equal(t, []string{"u", "0", "total", "total", "total"}, sel(rows[9]))
	assert.Equal(t, []string{"u", "1", "0", "", ""}, sel(rows[10]))
	assert.Equal(t, []string{"u", "6", "", "1", ""}, sel(rows[15]))
	assert.Equal(t, []string{"u", "9", "", "", "2"}, sel(rows[18]))
	// g: ranges × matrix rows (r fastest): row 0 of m.csv is values 1..2,
	// row 1 is not a run of ones.
	assert.Equal(t, []string{"g", "0", "0..1", "", "1..2"}, sel(rows[19]))
	assert.Equal(t, []string{"g", "1", "0..1", "", "row 1 of m.csv"}, sel(rows[20]))
	assert.Equal(t, []string{"g", "2", "2..2", "", "1..2"}, sel(rows[21]))
	assert.Equal(t, []string{"g", "3", "2..2", "", "row 1 of m.csv"}, sel(rows[22]))
	assert.Len(t, rows, 1+8+10+4)
}

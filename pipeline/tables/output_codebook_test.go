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

// codebookFixture is a workload over a codebook domain with answers
// 1, 2, 3, … (term by term) and stddev 0.5.
func codebookFixture(t *testing.T, spec string, private bool) (*domain.Kron, *Result) {
	t.Helper()
	k, err := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
	require.NoError(t, err)
	w, err := explicitOf(k)
	require.NoError(t, err)
	res := &Result{Private: private}
	v := 0.0
	for ti := range w.Terms {
		q := w.Terms[ti].Queries()
		a, s := make([]float64, q), make([]float64, q)
		for i := range a {
			v++
			a[i], s[i] = v, 0.5
		}
		res.Answers, res.Std = append(res.Answers, a), append(res.Std, s)
	}
	return k, res
}

const codebookSpec = `{"domain": [{"name": "sex", "values": ["Female", "Male"]}, {"name": "age", "edges": [17, 18, 30, 91]}, {"name": "n", "size": 2}],
 "workload": [{"name": "m", "marginals": {"sets": [["sex", "age"], ["age"]]}},
              {"name": "cum", "product": {"age": "prefix", "n": "identity"}},
              {"name": "g", "marginals": {"upto": 0}}]}`

// answers.csv carries the table of every row and, for the codebook
// attributes, their labels and bins beside the codes.
func TestAnswersCSVCodebookLabels(t *testing.T) {
	k, res := codebookFixture(t, codebookSpec, false)
	var buf bytes.Buffer
	require.NoError(t, WriteAnswersCSV(&buf, k, res))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"term", "query", "answer", "stddev", "sex", "age", "n", "table", "sex label", "age label", "private"}, rows[0])
	// m (sex, age): sex slowest.
	assert.Equal(t, []string{"m", "0", "1", "0.5", "0", "0", "", "m (sex, age)", "Female", "[17, 18)", "false"}, rows[1])
	assert.Equal(t, []string{"m", "5", "6", "0.5", "1", "2", "", "m (sex, age)", "Male", "[30, 91)", "false"}, rows[6])
	assert.Equal(t, []string{"m", "6", "7", "0.5", "", "0", "", "m (age)", "", "[17, 18)", "false"}, rows[7])
	// cum: prefix rows are runs of bins.
	assert.Equal(t, []string{"cum", "5", "15", "0.5", "", "0..2", "1", "cum (age, n)", "", "[17, 91)", "false"}, rows[15])
	assert.Equal(t, []string{"g", "0", "16", "0.5", "total", "total", "total", "g (total)", "total", "total", "false"}, rows[16])
}

// Term names, attribute names and labels that a spreadsheet would evaluate
// get a leading apostrophe; negative numbers stay numbers.
func TestAnswersCSVFormulaGuard(t *testing.T) {
	spec := `{"domain": [{"name": "@a", "values": ["=1+1", "-3", "+x", "ok"]}],
	 "workload": [{"name": "=HYPERLINK(\"x\")", "marginals": {"k": 1}}, {"name": "-2", "marginals": {"k": 1}}]}`
	k, res := codebookFixture(t, spec, true)
	var buf bytes.Buffer
	require.NoError(t, WriteAnswersCSV(&buf, k, res))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"term", "query", "answer", "stddev", "'@a", "table", "'@a label"}, rows[0])
	assert.Equal(t, `'=HYPERLINK("x")`, rows[1][0])
	assert.Equal(t, []string{"'=1+1", "-3", "'+x", "ok"}, []string{rows[1][6], rows[2][6], rows[3][6], rows[4][6]})
	assert.Equal(t, "-2", rows[5][0], "a negative number stays a number")
	assert.Equal(t, "'=HYPERLINK(\"x\") (@a)", rows[1][5])
	for in, want := range map[string]string{"-1.5e3": "-1.5e3", "+7": "+7", "-": "'-", "\tx": "'\tx", "a=b": "a=b", "": ""} {
		assert.Equal(t, want, FormulaSafe(in), in)
	}
}

// Attribute names that would repeat a column are refused, by the writer as
// by the spec parser (a Go program can build the domain by hand).
func TestAnswersCSVRefusesCollidingNames(t *testing.T) {
	for _, name := range []string{"answer", "term", "query", "stddev", "private", "table"} {
		k, err := domain.NewKron([]domain.Attribute{{Name: name, Size: 2}}, []*domain.Term{mustMarginals(t, name)})
		require.NoError(t, err)
		res := &Result{Answers: [][]float64{{1, 2}}, Std: [][]float64{{1, 1}}, Private: true}
		err = WriteAnswersCSV(&bytes.Buffer{}, k, res)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "reserved")
	}
}

func mustMarginals(t *testing.T, name string) *domain.Term {
	tm, err := domain.NewMarginalsTerm("m", 1, []domain.Attribute{{Name: name, Size: 2}}, [][]int{{0}})
	require.NoError(t, err)
	return tm
}

// One file per table: a two-attribute table is a crosstab whose cells are
// the answers.csv rows of that table (read back by table and labels, an
// independent route from the writer's index arithmetic); other tables are
// lists.
func TestWriteTableFiles(t *testing.T) {
	k, res := codebookFixture(t, codebookSpec, true)
	dir := t.TempDir()
	names, err := WriteTableFiles(dir, k, res)
	require.NoError(t, err)
	assert.Equal(t, []string{"m_sex_age.csv", "m_sex_age.stddev.csv", "m_age.csv", "cum_age_n.csv", "cum_age_n.stddev.csv", "g_total.csv"}, names)
	var buf bytes.Buffer
	require.NoError(t, WriteAnswersCSV(&buf, k, res))
	ans, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	read := func(name string) [][]string {
		f, err := os.Open(filepath.Join(dir, name))
		require.NoError(t, err)
		defer f.Close()
		r, err := csv.NewReader(f).ReadAll()
		require.NoError(t, err)
		return r
	}
	// The crosstab of m (sex, age): every cell equals the answers.csv row
	// with that table, sex label and age label.
	ct := read("m_sex_age.csv")
	assert.Equal(t, []string{`sex \ age`, "[17, 18)", "[18, 30)", "[30, 91)"}, ct[0])
	require.Len(t, ct, 3)
	cells := 0
	for _, r := range ans[1:] {
		if r[7] != "m (sex, age)" {
			continue
		}
		for i, lab := range ct[0][1:] {
			for _, row := range ct[1:] {
				if row[0] == r[8] && lab == r[9] {
					assert.Equal(t, r[2], row[i+1])
					cells++
				}
			}
		}
	}
	assert.Equal(t, 6, cells)
	sd := read("m_sex_age.stddev.csv")
	assert.Equal(t, "0.5", sd[2][3])
	// cum (age, n): a crosstab of prefix runs by n's codes.
	cum := read("cum_age_n.csv")
	assert.Equal(t, []string{`age \ n`, "0", "1"}, cum[0])
	assert.Equal(t, []string{"[17, 30)", "12", "13"}, cum[2])
	lst := read("m_age.csv")
	assert.Equal(t, [][]string{{"age", "age label", "answer", "stddev"}, {"0", "[17, 18)", "7", "0.5"}, {"1", "[18, 30)", "8", "0.5"}, {"2", "[30, 91)", "9", "0.5"}}, lst)
	assert.Equal(t, [][]string{{"answer", "stddev"}, {"16", "0.5"}}, read("g_total.csv"))
	// A second write into the same directory refuses to overwrite.
	_, err = WriteTableFiles(dir, k, res)
	assert.Error(t, err)
	// Simulated: the corner and the list say so.
	k, res = codebookFixture(t, codebookSpec, false)
	dir2 := t.TempDir()
	_, err = WriteTableFiles(dir2, k, res)
	require.NoError(t, err)
	b, _ := os.ReadFile(filepath.Join(dir2, "m_sex_age.csv"))
	assert.Contains(t, string(b), "NOT PRIVATE")
	b, _ = os.ReadFile(filepath.Join(dir2, "m_age.csv"))
	assert.True(t, strings.HasPrefix(string(b), "age,age label,answer,stddev,private\n"), string(b))
}

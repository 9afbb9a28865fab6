package main

import (
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawAdultRecords reads the raw Adult records shipped in the repository
// (examples/adult/data/adult.csv.gz): the header and the trimmed fields.
func rawAdultRecords(t *testing.T) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "examples", "adult", "data", "adult.csv.gz"))
	require.NoError(t, err, "the Adult data shipped in the repository")
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	rd := csv.NewReader(zr)
	rd.TrimLeadingSpace = true
	rows, err := rd.ReadAll()
	require.NoError(t, err)
	return rows[0], rows[1:]
}

// specAttr is a domain entry of examples/adult/raw.json as this test reads
// it, with its own JSON decoding (not dpsolve's).
type specAttr struct {
	Name    string            `json:"name"`
	Values  []string          `json:"values"`
	Other   string            `json:"other"`
	Aliases map[string]string `json:"aliases"`
	Edges   []float64         `json:"edges"`
}

// code is this test's own coding of a raw value: the position in the list
// (after the alias; unlisted → other), or the bin found by a linear scan.
func (a specAttr) code(t *testing.T, v string) int {
	if a.Edges != nil {
		x, err := strconv.ParseFloat(v, 64)
		require.NoError(t, err)
		for i := 0; i+1 < len(a.Edges); i++ {
			if a.Edges[i] <= x && x < a.Edges[i+1] {
				return i
			}
		}
		t.Fatalf("%s: %v outside the bins", a.Name, x)
	}
	if to, ok := a.Aliases[v]; ok {
		v = to
	}
	for i, l := range a.Values {
		if l == v {
			return i
		}
	}
	require.NotEmpty(t, a.Other, "%s: %q unlisted", a.Name, v)
	for i, l := range a.Values {
		if l == a.Other {
			return i
		}
	}
	t.Fatal("unreachable")
	return 0
}

// The done-when test of the codebook: on the raw Adult records with the
// codebook spec, release --insecure-seed publishes the same numbers as the
// same records coded to integers by this test (outside dpsolve) with the
// integer spec and the same seed, with labels in the output; the same
// records as Parquet (written here with parquet-go's writer) give a
// byte-identical answers.csv.
func TestReleaseCodebookMatchesIntegerCoding(t *testing.T) {
	specPath, err := filepath.Abs(filepath.Join("..", "..", "examples", "adult", "raw.json"))
	require.NoError(t, err)
	rawPath, err := filepath.Abs(filepath.Join("..", "..", "examples", "adult", "data", "adult.csv.gz"))
	require.NoError(t, err)
	b, err := os.ReadFile(specPath)
	require.NoError(t, err)
	var spec struct {
		Domain   []specAttr        `json:"domain"`
		Workload []json.RawMessage `json:"workload"`
	}
	require.NoError(t, json.Unmarshal(b, &spec))
	header, rows := rawAdultRecords(t)
	require.Len(t, rows, 48842)
	dir := t.TempDir()
	// The integer spec and the coded records.
	type sized struct {
		Name string `json:"name"`
		Size int    `json:"size"`
	}
	var intDomain []sized
	var names []string
	for _, a := range spec.Domain {
		n := len(a.Values)
		if a.Edges != nil {
			n = len(a.Edges) - 1
		}
		intDomain = append(intDomain, sized{a.Name, n})
		names = append(names, a.Name)
	}
	ib, err := json.Marshal(map[string]any{"domain": intDomain, "workload": spec.Workload})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "int.json"), ib, 0o644))
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	var sb strings.Builder
	sb.WriteString(strings.Join(names, ",") + "\n")
	for _, r := range rows {
		for i, a := range spec.Domain {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(a.code(t, r[col[a.Name]])))
		}
		sb.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "coded.csv"), []byte(sb.String()), 0o644))
	writeRawParquet(t, header, rows, filepath.Join(dir, "adult.parquet"))

	release := func(spec, data, out string, extra ...string) [][]string {
		args := append([]string{"release", "--spec", spec, "--data", data, "--template", "marginals", "--rho", "0.5",
			"--insecure-seed", "11", "--quiet", "--out", filepath.Join(dir, out)}, extra...)
		code, _, stderr := releaseCLI(t, args...)
		require.Equal(t, 0, code, stderr)
		return readAnswers(t, filepath.Join(dir, out, "answers.csv"))
	}
	lab := release(specPath, rawPath, "raw", "--tables", filepath.Join(dir, "tables"))
	num := release(filepath.Join(dir, "int.json"), filepath.Join(dir, "coded.csv"), "int")
	k := len(names)
	require.Len(t, lab, len(num))
	// term, query, answer, stddev, the code columns and table agree row by row.
	for i := range num {
		assert.Equal(t, num[i][:4+k+1], lab[i][:4+k+1], "row %d", i)
	}
	// The labelled release has a label column per attribute, with labels.
	assert.Equal(t, "age label", lab[0][4+k+1])
	assert.Equal(t, "income label", lab[0][4+2*k])
	assert.Equal(t, []string{"[17, 18)", "Female"}, []string{lab[1][4+k+1], lab[1][4+k+1+7]})
	assert.NotContains(t, num[0], "age label")
	// Parquet: the same records give the same bytes.
	release(specPath, filepath.Join(dir, "adult.parquet"), "pq")
	a1, err := os.ReadFile(filepath.Join(dir, "raw", "answers.csv"))
	require.NoError(t, err)
	a2, err := os.ReadFile(filepath.Join(dir, "pq", "answers.csv"))
	require.NoError(t, err)
	assert.Equal(t, string(a1), string(a2))
	// --tables wrote one file per table, labelled.
	ct, err := os.ReadFile(filepath.Join(dir, "tables", "age-sex_age_sex.csv"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(ct), "age \\ sex (NOT PRIVATE: seeded simulation),Female,Male\n\"[17, 18)\","), string(ct[:80]))
	// --tables refuses a non-empty directory before anything is read or spent.
	code, _, stderr := releaseCLI(t, "release", "--spec", specPath, "--data", rawPath, "--template", "marginals", "--rho", "0.5",
		"--insecure-seed", "11", "--out", filepath.Join(dir, "o4"), "--tables", filepath.Join(dir, "tables"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "is not empty")
	_, err = os.Stat(filepath.Join(dir, "o4"))
	assert.True(t, os.IsNotExist(err))
}

// writeRawParquet writes the raw records as Parquet: the numbers as
// integers, the categories as strings.
func writeRawParquet(t *testing.T, header []string, rows [][]string, path string) {
	t.Helper()
	numeric := map[string]bool{"age": true, "fnlwgt": true, "education-num": true, "capital-gain": true, "capital-loss": true, "hours-per-week": true}
	g := parquet.Group{}
	for _, h := range header {
		if numeric[h] {
			g[h] = parquet.Int(64)
		} else {
			g[h] = parquet.String()
		}
	}
	schema := parquet.NewSchema("adult", g)
	f, err := os.Create(path)
	require.NoError(t, err)
	w := parquet.NewWriter(f, schema, parquet.MaxRowsPerRowGroup(10000))
	for _, r := range rows {
		m := map[string]any{}
		for i, h := range header {
			if numeric[h] {
				v, err := strconv.ParseInt(r[i], 10, 64)
				require.NoError(t, err)
				m[h] = v
			} else {
				m[h] = r[i]
			}
		}
		require.NoError(t, w.Write(m))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

package main

// The fuzzers' seed corpora, replayed through the CLI: every entry either
// parses or fails with an ErrInput error in-process, and the command that
// reads that kind of input (plan for spec files, release for records, run
// for histograms, solve for workload strings) exits 0 with a complete
// output, or 1/2 with the same message and no output — never a panic,
// stack dump or runtime error. The corpora are read from the fuzzers'
// own source (go/ast: the string literals of the seed lists and f.Add
// calls) and testdata, so a seed added there is replayed here too.

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/sdp"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/records"
)

// fuzzSeeds returns the string literals in fuzz function fn of file: those
// in []string{…} composite literals and those passed to f.Add directly.
func fuzzSeeds(t *testing.T, file, fn string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	require.NoError(t, err)
	var out []string
	lit := func(e ast.Expr) {
		if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
			s, err := strconv.Unquote(b.Value)
			require.NoError(t, err)
			out = append(out, s)
		}
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if at, ok := n.Type.(*ast.ArrayType); ok {
					if id, ok := at.Elt.(*ast.Ident); ok && id.Name == "string" {
						for _, e := range n.Elts {
							lit(e)
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Add" {
					for _, a := range n.Args {
						lit(a)
					}
				}
			}
			return true
		})
	}
	require.NotEmpty(t, out, "no seeds found in %s %s", file, fn)
	return out
}

// corpusFiles returns the entries of a go fuzz corpus directory (files
// "go test fuzz v1" followed by one string(…) or []byte(…) line).
func corpusFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)
		require.Len(t, lines, 2, e.Name())
		require.Equal(t, "go test fuzz v1", lines[0], e.Name())
		v := lines[1]
		v = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(v, "[]byte("), "string("), ")")
		s, err := strconv.Unquote(v)
		require.NoError(t, err, e.Name())
		out[e.Name()] = []byte(s)
	}
	return out
}

// cliAgrees asserts the CLI's outcome matches the in-process parse: no
// runtime text; on a parse error, a failing exit, the parser's message on
// stderr and no output; on success, exit 0 and the output present, or a
// failure that is not the parser's (the command's own checks, e.g. a
// budget too large for the data) with no output.
func cliAgrees(t *testing.T, tally *[2]int, name string, parseErr error, code int, stderr string, outExists bool) {
	t.Helper()
	if parseErr == nil {
		tally[0]++
	} else {
		tally[1]++
	}
	for _, r := range runtimeNoise {
		assert.NotContains(t, stderr, r, name)
	}
	if parseErr != nil {
		assert.True(t, errors.Is(parseErr, inputerr.ErrInput), "%s: not an ErrInput error: %v", name, parseErr)
		assert.Contains(t, []int{1, 2}, code, "%s: %s", name, stderr)
		assert.Contains(t, stderr, lastClause(parseErr), name)
		assert.False(t, outExists, "%s: output written for bad input", name)
		return
	}
	if code != 0 {
		assert.Contains(t, []int{1, 2}, code, "%s: %s", name, stderr)
		assert.False(t, outExists, "%s: output written by a failing command", name)
		return
	}
	assert.True(t, outExists, "%s: exit 0 without output: %s", name, stderr)
}

// lastClause is the part of an error message after its last "invalid
// input: ": the CLI may add its own prefixes (the file name, the command).
func lastClause(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "invalid input: "); i >= 0 {
		return s[i+len("invalid input: "):]
	}
	return s
}

// TestCorpusSpecs: FuzzParseSpec's seeds through dpsolve plan.
func TestCorpusSpecs(t *testing.T) {
	var tally [2]int // entries that parse, entries refused
	defer checkTally(t, &tally)
	dir := t.TempDir()
	for i, s := range fuzzSeeds(t, "../../model/domain/spec_fuzz_test.go", "FuzzParseSpec") {
		name := fmt.Sprintf("spec seed %d", i)
		path := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
		_, perr := domain.ParseSpec(strings.NewReader(s), dir, workload.Blocks)
		out := filepath.Join(dir, fmt.Sprintf("p%d", i))
		code, _, stderr, _ := runBin(t, dir, nil, "plan", "--spec", path, "--template", "kron", "--quiet", "--out", out)
		_, serr := os.Stat(filepath.Join(out, "strategy.json"))
		cliAgrees(t, &tally, name, perr, code, stderr, serr == nil)
	}
}

// TestCorpusRecords: FuzzReadMarginals' seeds through dpsolve release, on
// the fuzzer's domain (a: 2, b: 3, c: 4).
func TestCorpusRecords(t *testing.T) {
	var tally [2]int // entries that parse, entries refused
	defer checkTally(t, &tally)
	dir := t.TempDir()
	spec := filepath.Join(dir, "abc.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 3}, {"name": "c", "size": 4}],
	  "workload": [{"name": "ac", "product": {"a": "identity", "c": "identity"}}]}`), 0o644))
	dom := []domain.Attribute{{Name: "a", Size: 2}, {Name: "b", Size: 3}, {Name: "c", Size: 4}}
	for i, s := range fuzzSeeds(t, "../../pipeline/records/fuzz_test.go", "FuzzReadMarginals") {
		name := fmt.Sprintf("records seed %d %q", i, s)
		data := filepath.Join(dir, fmt.Sprintf("r%d.csv", i))
		require.NoError(t, os.WriteFile(data, []byte(s), 0o644))
		_, _, perr := records.ReadMarginals(strings.NewReader(s), dom, [][]int{{0, 2}}, nil)
		out := filepath.Join(dir, fmt.Sprintf("o%d", i))
		code, _, stderr, _ := runBin(t, dir, nil, "release", "--spec", spec, "--data", data, "--template", "kron",
			"--eps", "1", "--insecure-seed", "1", "--out", out)
		_, serr := os.Stat(filepath.Join(out, "answers.csv"))
		cliAgrees(t, &tally, name, perr, code, stderr, serr == nil)
	}
}

// TestCorpusHistograms: FuzzReadNPY's corpus (the numpy fixtures and the
// findings in testdata/fuzz) and FuzzReadCSV's seeds through dpsolve run.
func TestCorpusHistograms(t *testing.T) {
	if testing.Short() {
		t.Skip("about a hundred runs of the binary")
	}
	var tally [2]int // entries that parse, entries refused
	defer checkTally(t, &tally)
	dir := t.TempDir()
	inputs := map[string][]byte{}
	npys, err := filepath.Glob("../../internal/matio/testdata/*.npy")
	require.NoError(t, err)
	require.NotEmpty(t, npys)
	for _, p := range npys {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		inputs[filepath.Base(p)] = b
	}
	for k, v := range corpusFiles(t, "../../internal/matio/testdata/fuzz/FuzzReadNPY") {
		inputs["fuzz-"+k+".npy"] = v
	}
	for i, s := range fuzzSeeds(t, "../../internal/matio/fuzz_test.go", "FuzzReadCSV") {
		inputs[fmt.Sprintf("seed%d.csv", i)] = []byte(s)
	}
	for name, b := range inputs {
		f := matio.NPY
		if strings.HasSuffix(name, ".csv") {
			f = matio.CSV
		}
		_, perr := matio.ReadVectorFrom(bytes.NewReader(b), f)
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, b, 0o644))
		out := filepath.Join(dir, "o.npy")
		os.Remove(out)
		code, _, stderr, _ := runBin(t, dir, nil, "run", "--data", path, "--workload", "prefix", "--eps", "1", "--delta", "1e-6",
			"--insecure-seed", "1", "--quiet", "--allow-fractional", "--allow-unconverged", "--out", out)
		_, serr := os.Stat(out)
		cliAgrees(t, &tally, name, perr, code, stderr, serr == nil)
		if code == 0 {
			v, err := matio.ReadVector(out)
			if assert.NoError(t, err, name) {
				x, _ := matio.ReadVectorFrom(bytes.NewReader(b), f)
				assert.Len(t, v, len(x), "%s: one answer per prefix", name)
			}
		}
	}
}

// TestCorpusSDPA: FuzzReadSDPA's literal seeds parse or fail with ErrInput
// (no command reads SDPA files; in-process only).
func TestCorpusSDPA(t *testing.T) {
	for i, s := range fuzzSeeds(t, "../../mechanism/sdp/fuzz_test.go", "FuzzReadSDPA") {
		if _, err := sdp.ReadSDPA(strings.NewReader(s)); err != nil {
			assert.ErrorIs(t, err, inputerr.ErrInput, "seed %d", i)
		}
	}
}

// TestCorpusWorkloadStrings: the workload strings and dims of the bad-input
// suite (badinput_test.go) and their neighbours through dpsolve solve. In-process, ParseShape
// (which builds nothing) and, where the workload is small, Parse must
// accept or fail with ErrInput; the CLI must agree.
func TestCorpusWorkloadStrings(t *testing.T) {
	var tally [2]int // entries that parse, entries refused
	defer checkTally(t, &tally)
	dir := t.TempDir()
	specs := []string{
		"prefix", "allrange", "identity", "total", "width:k=2", "wrange:m=7,seed=2", "wdiscrete:m=20", "wrelated:m=12,s=3",
		"marginals:dims=2x3", "marginals:dims=2x3x2,k=1", "marginals:dims=8xx8", "marginals:dims=8x", "marginals:dims=x8",
		"marginals:dims=0x4", "marginals:dims=-2x4", "marginals:dims=99999999999x99999999999", "marginals:dims=2x3,k=9",
		"wrange:m=10,", "wrange:m=10x", "wrange:m=", "wrange:=3", "wrange:m=1e3", "wrange:m=-1", "wrange:m=3,m=4",
		"wrange:m=100000000000", "wdiscrete:m=0", "prefix:", "prefix:k=1", ":", "nosuch", "PREFIX", " prefix",
		"width:k=0", "width:k=99", "wrange:seed=-1,m=5", "wrange:m=5,seed=18446744073709551616",
	}
	for i, s := range specs {
		name := fmt.Sprintf("workload %q", s)
		n := 8
		if strings.HasPrefix(s, "marginals") {
			n = 0 // the dims give n; solve is run without --n
		}
		var perr error
		sh, err := workload.ParseShape(s, n)
		switch {
		case err != nil:
			perr = err
		case sh.GenBytes+8*sh.M*sh.N < 1<<26: // small: build it too
			_, perr = workload.Parse(s, n)
		}
		out := filepath.Join(dir, fmt.Sprintf("A%d.npy", i))
		args := []string{"solve", "--workload", s, "--quiet", "--max-iter", "1", "--out-a", out}
		if n > 0 {
			args = append(args, "--n", strconv.Itoa(n))
		}
		code, _, stderr, _ := runBin(t, dir, nil, args...)
		_, serr := os.Stat(out)
		if perr == nil && code != 0 {
			// A size the parser accepts may still not fit: refused by the
			// memory check, before building it.
			assert.Contains(t, stderr, "needs about", name)
		}
		cliAgrees(t, &tally, name, perr, code, stderr, serr == nil)
	}
}

// checkTally: a corpus replay must exercise both outcomes, or it proves
// nothing about one of them.
func checkTally(t *testing.T, tally *[2]int) {
	t.Logf("%d entries parse, %d are refused", tally[0], tally[1])
	assert.Positive(t, tally[0], "no entry parses")
	assert.Positive(t, tally[1], "no entry is refused")
}

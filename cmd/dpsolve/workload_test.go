package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/internal/resources"
)

// loadFixtures returns a temporary directory, a function writing a file
// into it, and the 4-cell histogram x.npy and identity strategy a.npy that
// the commands run below need besides their workload.
func loadFixtures(t *testing.T) (dir string, write func(name, body string) string, xPath, aPath string) {
	t.Helper()
	dir = t.TempDir()
	write = func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	xPath = filepath.Join(dir, "x.npy")
	require.NoError(t, matio.WriteVector(xPath, []float64{3, 1, 4, 1}))
	aPath = filepath.Join(dir, "a.npy")
	require.NoError(t, matio.WriteMatrix(aPath, mat.NewDense(4, 4, []float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})))
	return dir, write, xPath, aPath
}

// Every command that takes a workload accepts and rejects the same workload
// strings and files identically: the same exit status and, for a rejection,
// the same message (after "dpsolve <command>: "), because they all go
// through workload.Load. Run on n = 4 so every command is quick.
func TestEveryCommandLoadsWorkloadsIdentically(t *testing.T) {
	dir, write, xPath, aPath := loadFixtures(t)
	goodW := write("w.csv", "1,1,0,0\n0,1,1,0\n0,0,1,1\n")
	raggedW := write("ragged.csv", "1,1,0,0\n0,1\n")
	nanW := write("nan.csv", "1,nan,0,0\n0,1,1,0\n")
	missing := filepath.Join(dir, "missing.npy")
	// Spec files (--spec) on the same 4 cells, and one whose dense Gram
	// cannot fit under the 1 GiB limit set below (10⁵ cells: 80 GB).
	goodSpec := write("good.json", `{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 2}],
	  "workload": [{"name": "t", "weight": 2, "product": {"a": "identity", "b": "prefix"}}, {"name": "m", "marginals": {"k": 1}}]}`)
	oneAttr := write("one.json", `{"domain": [{"name": "x", "size": 4}], "workload": [{"product": {"x": "allrange"}}]}`)
	badAttr := write("badattr.json", `{"domain": [{"name": "x", "size": 4}], "workload": [{"product": {"y": "prefix"}}]}`)
	truncated := write("short.json", `{"domain": [{"name": "x", "size": 4}], "workl`)
	bigSpec := write("big.json", `{"domain": [{"name": "x", "size": 1000}, {"name": "y", "size": 100}], "workload": [{"product": {"x": "identity"}}, {"product": {"y": "identity"}}]}`)
	missingSpec := filepath.Join(dir, "missing.json")
	t.Setenv(resources.EnvLimit, "1GiB")

	// Each command with the arguments it needs besides the workload; n = 4
	// comes from --n or from the 4-cell data.
	type cmd struct {
		name string
		args func(out string) []string
		spec func(s string) []string
	}
	withN := func(s string) []string { return []string{"--workload", s, "--n", "4"} }
	noN := func(s string) []string { return []string{"--workload", s} }
	cmds := []cmd{
		{"solve", func(string) []string { return []string{"--quiet"} }, withN},
		{"compare", func(string) []string { return []string{"--quiet", "--strategies", "identity,h2"} }, withN},
		{"lrm", func(string) []string { return []string{"--quiet", "--eps", "1"} }, withN},
		{"sdp", func(out string) []string { return []string{"--quiet", "--export", out + ".dat-s"} }, withN},
		{"answer", func(out string) []string {
			return []string{"--strategy", aPath, "--data", xPath, "--eps", "1", "--delta", "1e-6", "--insecure-seed", "1", "--out", out + ".npy"}
		}, noN},
		{"run", func(out string) []string {
			return []string{"--quiet", "--data", xPath, "--eps", "1", "--delta", "1e-6", "--insecure-seed", "1", "--out", out + ".npy"}
		}, noN},
	}
	type tc struct {
		label string
		flags func(c cmd) []string
		code  int
	}
	spec := func(s string, code int) tc {
		return tc{"--workload " + s, func(c cmd) []string { return c.spec(s) }, code}
	}
	file := func(p string, code int) tc {
		return tc{"--w " + filepath.Base(p), func(cmd) []string { return []string{"--w", p} }, code}
	}
	specFile := func(p string, code int) tc {
		return tc{"--spec " + filepath.Base(p), func(cmd) []string { return []string{"--spec", p} }, code}
	}
	cases := []tc{
		spec("prefix", 0), spec("PREFIX", 0), spec(" AllRange ", 0), spec("Marginals:dims=2x2", 0),
		spec("wrange:m=40,seed=2", 0), spec("WRange:M=40", 0), spec("width:k=2", 0),
		spec("prefix:", 2), spec("prefix:k=1", 2), spec("nosuch", 2), spec("wrange:m=3,", 2),
		spec("wrange:m=3x", 2), spec("wrange:m=", 2), spec("wrange:m=3,m=4", 2),
		spec("marginals:dims=2xx2", 2), spec("marginals:dims=3x3", 2), // 9 cells, not 4
		file(goodW, 0), file(raggedW, 1), file(nanW, 1), file(missing, 1),
		specFile(goodSpec, 0), specFile(oneAttr, 0), specFile(badAttr, 1), specFile(truncated, 1),
		specFile(missingSpec, 1), specFile(bigSpec, 1),
	}
	for _, c := range cases {
		var first, firstMsg string
		for i, cm := range cmds {
			var o, e bytes.Buffer
			args := append([]string{cm.name}, cm.args(filepath.Join(dir, cm.name+"-out"))...)
			args = append(args, c.flags(cm)...)
			code := run(args, &o, &e)
			msg := strings.TrimPrefix(e.String(), "dpsolve "+cm.name+": ")
			if !assert.Equal(t, c.code, code, "%s: %s exit status (stderr %q)", c.label, cm.name, e.String()) {
				continue
			}
			if c.code == 0 {
				continue
			}
			// The message must be the loader's, identical in every command
			// (file paths included).
			if i == 0 {
				first, firstMsg = cm.name, msg
				continue
			}
			assert.Equal(t, firstMsg, msg, "%s: %s and %s disagree", c.label, first, cm.name)
		}
	}
}

// A spec file is read the same way by every command that takes one — the
// single-histogram commands through workload.Load (--spec) and plan and
// release, which plan it structurally, through the same spec reader:
// the same files are accepted, and the same files are rejected with the
// same exit status and message. (The one documented difference: a domain
// too large for a dense Gram is refused by the former and planned by the
// latter; TestEveryCommandLoadsWorkloadsIdentically covers that refusal.)
func TestEveryCommandReadsSpecFilesIdentically(t *testing.T) {
	dir, write, xPath, aPath := loadFixtures(t)
	// Gram [[1,1],[1,2]]: this file found the planner's unchecked diagonal
	// (plan's groupClasses), which made release refuse its own plan.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.csv"), []byte("1,1\n0,1\n"), 0o600))
	files := []struct {
		name, body string
		code       int
	}{
		{"good.json", `{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 2}],
		  "workload": [{"name": "t", "weight": 2, "product": {"a": "identity", "b": "prefix"}}, {"name": "m", "marginals": {"k": 1}}]}`, 0},
		{"matrix.json", `{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 2}],
		  "workload": [{"product": {"a": {"matrix": "m.csv"}, "b": "identity"}}, {"product": {"b": {"ranges": [[0, 1]]}}}]}`, 0},
		{"badattr.json", `{"domain": [{"name": "x", "size": 4}], "workload": [{"product": {"y": "prefix"}}]}`, 1},
		{"badblock.json", `{"domain": [{"name": "x", "size": 4}], "workload": [{"product": {"x": "nosuch"}}]}`, 1},
		{"badrange.json", `{"domain": [{"name": "x", "size": 4}], "workload": [{"product": {"x": {"ranges": [[2, 7]]}}}]}`, 1},
		{"nomatrix.json", `{"domain": [{"name": "x", "size": 4}], "workload": [{"product": {"x": {"matrix": "none.csv"}}}]}`, 1},
		{"short.json", `{"domain": [{"name": "x", "size": 4}], "workl`, 1},
		{"junk.json", `{"domain": [{"name": "x", "size": 4}], "workload": [{"product": {"x": "prefix"}}]} trailing`, 1},
		{"empty.json", ``, 1},
	}
	cmds := []struct {
		name string
		args func(out string) []string
	}{
		{"solve", func(string) []string { return []string{"--quiet"} }},
		{"compare", func(string) []string { return []string{"--quiet", "--strategies", "identity,h2"} }},
		{"lrm", func(string) []string { return []string{"--quiet", "--eps", "1"} }},
		{"sdp", func(out string) []string { return []string{"--quiet", "--export", out + ".dat-s"} }},
		{"answer", func(out string) []string {
			return []string{"--strategy", aPath, "--data", xPath, "--eps", "1", "--delta", "1e-6", "--insecure-seed", "1", "--out", out + ".npy"}
		}},
		{"run", func(out string) []string {
			return []string{"--quiet", "--data", xPath, "--eps", "1", "--delta", "1e-6", "--insecure-seed", "1", "--out", out + ".npy"}
		}},
		{"plan", func(string) []string { return []string{"--quiet"} }},
		{"release", func(out string) []string {
			return []string{"--data", xPath, "--eps", "1", "--delta", "1e-6", "--insecure-seed", "1", "--out", out}
		}},
	}
	for _, f := range append(files, struct {
		name, body string
		code       int
	}{"missing.json", "", 1}) {
		p := filepath.Join(dir, f.name)
		if f.name != "missing.json" {
			p = write(f.name, f.body)
		}
		var first, firstMsg string
		for i, c := range cmds {
			var o, e bytes.Buffer
			args := append([]string{c.name, "--spec", p}, c.args(filepath.Join(dir, f.name+"-"+c.name))...)
			code := run(args, &o, &e)
			if !assert.Equal(t, f.code, code, "%s: %s exit status (stderr %q)", f.name, c.name, e.String()) || code == 0 {
				continue
			}
			msg := strings.TrimPrefix(strings.TrimSpace(e.String()), "dpsolve "+c.name+": ")
			if i == 0 {
				first, firstMsg = c.name, msg
				continue
			}
			assert.Equal(t, firstMsg, msg, "%s: %s and %s disagree", f.name, first, c.name)
		}
	}
}

package main

// Checks that run before a command does any work: its output paths and the
// memory its problem size needs. Both exist so that a mistake costs nothing:
// a missing directory or an output that would overwrite an input is
// reported before a long solve (or before a privacy budget is spent), and a
// size that cannot fit is refused in milliseconds with the figures, instead
// of ending in the Go runtime's fatal out-of-memory stack dump.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/internal/resources"
	"github.com/dpsolve/dpsolve/model/workload"
)

// outPath is one output flag and its value ("" when not requested). matrix
// outputs must also have a .npy or .csv extension.
type outPath struct {
	flag, path string
	matrix     bool
}

// matOut and fileOut build outPaths for matrix and other files.
func matOut(flag, path string) outPath  { return outPath{flag: flag, path: path, matrix: true} }
func fileOut(flag, path string) outPath { return outPath{flag: flag, path: path} }

// checkOutputs validates every requested output before any work starts:
// its directory exists and is writable, it is not a directory, it has a
// known format, and it is distinct from every input and from every other
// output (an output that names an input would destroy it — for dpsolve run
// that input is the private histogram). Errors are usage errors (exit 2).
func checkOutputs(inputs []string, outs ...outPath) error {
	type seen struct {
		flag string
		key  string
		info os.FileInfo
	}
	var known []seen
	for _, in := range inputs {
		if in == "" {
			continue
		}
		info, _ := os.Stat(in)
		known = append(known, seen{flag: "input " + in, key: canonicalPath(in), info: info})
	}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if o.matrix {
			if _, err := matio.FormatOf(o.path); err != nil {
				return usageErrorf("%s %s: %v", o.flag, o.path, err)
			}
		}
		dir := filepath.Dir(o.path)
		st, err := os.Stat(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return usageErrorf("%s %s: directory %s does not exist", o.flag, o.path, dir)
		case err != nil:
			return usageErrorf("%s %s: %v", o.flag, o.path, err)
		case !st.IsDir():
			return usageErrorf("%s %s: %s is not a directory", o.flag, o.path, dir)
		}
		info, err := os.Stat(o.path)
		if err == nil && info.IsDir() {
			return usageErrorf("%s %s is a directory", o.flag, o.path)
		}
		if err := probeWritable(dir); err != nil {
			return usageErrorf("%s %s: cannot write in %s (%v)", o.flag, o.path, dir, err)
		}
		key := canonicalPath(o.path)
		for _, k := range known {
			same := k.key == key
			if !same && k.info != nil && info != nil {
				same = os.SameFile(k.info, info) // hard links, bind mounts
			}
			if same {
				if strings.HasPrefix(k.flag, "input ") {
					return usageErrorf("%s %s is also an input (%s): writing it would destroy the input; choose another path", o.flag, o.path, strings.TrimPrefix(k.flag, "input "))
				}
				return usageErrorf("%s and %s name the same file %s", k.flag, o.flag, o.path)
			}
		}
		known = append(known, seen{flag: o.flag, key: key, info: info})
	}
	return nil
}

// canonicalPath resolves symbolic links in the directory part (the file
// itself may not exist yet) and makes the path absolute, so that ./a.npy,
// a.npy and dir/../a.npy compare equal.
func canonicalPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	dir, base := filepath.Split(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(real, base)
	}
	return abs
}

// probeWritable creates and removes a temporary file in dir: the same
// operation the atomic writers perform, so its success is the real test
// (permission bits alone miss read-only mounts and ACLs).
func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".dpsolve-probe-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Peak-memory models of the commands, in float64s per n² (n the domain
// size), measured with /usr/bin/time on prefix workloads (n = 512 … 2048:
// solve ≈ 7, run ≈ 13, compare ≈ 19 with the LRM row, lrm ≈ 18) and
// rounded up for the other workloads' temporaries.
const (
	memSolve   = 10
	memRun     = 16
	memAnswer  = 8
	memCompare = 24
	memLRM     = 24
	memSDP     = 16
	// memBase is the runtime, the kernel library and the binary.
	memBase = 64 << 20
)

// memNeed is a command's estimated peak for domain n, m queries, the
// workload generator's own bytes, and (needW) the explicit m×n W.
func memNeed(perN2, n, m, gen float64, needW bool) float64 {
	b := memBase + gen + 8*perN2*n*n
	if needW {
		b += 8 * m * n
	}
	return b
}

// checkSpecMemory refuses a built-in workload whose command would not fit,
// before the workload is built (building it may be what does not fit). n
// is the domain size (for marginals, 0: the spec knows it). perN2 is the
// command's model above; needW says whether it forms W explicitly even for
// closed-form workloads; answers says it answers the queries (forming W
// unless the workload has closed-form answers).
//
// A spec file (src.SpecFile) is loaded here through the shared loader (so
// its errors are the same in every command; Load itself refuses a domain
// whose dense Gram does not fit) and checked with its cells and queries;
// its answers are closed-form (Kronecker products, no W).
func checkSpecMemory(cmd string, src workload.Source, perN2 float64, needW, answers bool) error {
	if src.SpecFile != "" {
		w, err := loadWorkload(src)
		if err != nil {
			return err
		}
		sh := workload.Shape{N: float64(w.Domain()), M: float64(w.Queries()), ClosedForm: true}
		return checkMemory(cmd, sh, perN2, needW)
	}
	if src.Spec == "" {
		return nil
	}
	sh, err := workload.ParseShape(src.Spec, src.N)
	if err != nil {
		return usageErrorf("%v", err)
	}
	return checkMemory(cmd, sh, perN2, needW || (answers && !sh.ClosedForm))
}

// checkSizeMemory is checkSpecMemory for a workload read from a file,
// called once its sizes are known and before the command's own work.
func checkSizeMemory(cmd string, n, m int, perN2 float64, needW bool) error {
	return checkMemory(cmd, workload.Shape{N: float64(n), M: float64(m)}, perN2, needW)
}

func checkMemory(cmd string, sh workload.Shape, perN2 float64, needW bool) error {
	avail := resources.Available()
	need := memNeed(perN2, sh.N, sh.M, sh.GenBytes, needW)
	what := fmt.Sprintf("dpsolve %s at n = %.0f", cmd, sh.N)
	if needW || sh.GenBytes > 0 {
		what = fmt.Sprintf("dpsolve %s at n = %.0f with m = %.0f queries", cmd, sh.N, sh.M)
	}
	err := resources.Check(need, avail, what)
	if err == nil {
		return nil
	}
	if memBase+sh.GenBytes > resources.Usable*avail.Bytes {
		return resources.WithHint(err, fmt.Sprintf("building its %.0f queries alone needs %s: use a smaller m", sh.M, resources.FormatBytes(memBase+sh.GenBytes)))
	}
	// Say what would fit: the largest n at this query density (m/n held
	// fixed, so m grows with n as it does for the built-in families).
	ratio := sh.M / math.Max(sh.N, 1)
	genPerM := 0.0
	if sh.M > 0 {
		genPerM = sh.GenBytes / sh.M
	}
	largest := resources.LargestN(func(x float64) float64 {
		return memNeed(perN2, x, ratio*x, genPerM*ratio*x, needW)
	}, avail)
	if largest < 1 {
		return resources.WithHint(err, "no size fits")
	}
	return resources.WithHint(err, fmt.Sprintf("the largest n that fits is about %d", largest))
}

// preflight runs the checks every command makes before its work: the
// outputs (checkOutputs) and, for a built-in workload, the memory
// (checkSpecMemory).
func preflight(cmd string, inputs []string, src workload.Source, perN2 float64, needW, answers bool, outs ...outPath) error {
	if err := checkOutputs(inputs, outs...); err != nil {
		return err
	}
	return checkSpecMemory(cmd, src, perN2, needW, answers)
}

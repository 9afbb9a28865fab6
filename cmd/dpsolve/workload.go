package main

import (
	"errors"

	"github.com/dpsolve/dpsolve/model/workload"
)

// loadWorkload is the one way every command turns its workload flags into a
// workload: workload.Load parses, reads and validates, so a string or file is
// accepted or rejected identically by solve, compare, answer, run, lrm and
// sdp; a spec file (--spec) too. A bad built-in string or a bad combination of flags is a command-line
// error (exit 2); a bad file is bad input (exit 1).
func loadWorkload(src workload.Source) (workload.Workload, error) {
	w, err := workload.Load(src)
	if err != nil {
		if errors.Is(err, workload.ErrSource) || (src.Spec != "" && src.WFile == "" && src.GramFile == "") {
			return nil, usageErrorf("%v", err)
		}
		return nil, err
	}
	return w, nil
}

// source is the workload the shared flags describe.
func (f *workloadFlags) source() workload.Source {
	return workload.Source{Spec: f.spec, N: f.n, WFile: f.wfile, GramFile: f.gram, SpecFile: f.specFile}
}

// registerSpecFile adds --spec, the multi-attribute spec file, to a command
// that takes a workload: every such command reads it through workload.Load.
func registerSpecFile(fs interface {
	StringVar(*string, string, string, string)
}, p *string) {
	fs.StringVar(p, "spec", "", "read a multi-attribute workload spec (JSON, as dpsolve plan) whose dense Gram fits in memory (larger domains: dpsolve plan)")
}

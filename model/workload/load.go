package workload

import (
	"errors"
	"fmt"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/model/domain"
)

// Source names a workload the way a user gives it: exactly one of a built-in
// specification (Spec, with the domain size N), a query-matrix file (WFile)
// or a Gram-matrix file (GramFile). It is the one description every dpsolve
// command and Load accept, so a workload string or file is accepted or
// rejected identically everywhere.
type Source struct {
	// Spec is a built-in workload, e.g. "prefix" or "wrange:m=500,seed=2"
	// (see Parse; names and keys are case-insensitive).
	Spec string
	// N is the domain size for Spec; 0 is allowed only where Spec implies n
	// (marginals:dims=…).
	N int
	// WFile is a .npy or .csv file holding W (m×n).
	WFile string
	// GramFile is a .npy or .csv file holding V = WᵀW (n×n).
	GramFile string
	// SpecFile is a JSON multi-attribute workload spec (see
	// domain.ParseSpec; its built-in blocks are Blocks'),
	// loaded as a *DenseKron: its domain must be small enough for a dense
	// Gram matrix (larger ones are planned by package plan).
	SpecFile string
	// Queries is m for a GramFile workload (0: unknown — per-query error
	// accounting then refuses it). It must be 0 for Spec and WFile, whose
	// workloads know their m.
	Queries int
}

// given counts the workload descriptions set in s.
func (s Source) given() int {
	k := 0
	for _, v := range []string{s.Spec, s.WFile, s.GramFile, s.SpecFile} {
		if v != "" {
			k++
		}
	}
	return k
}

// ErrSource is wrapped (with ErrInput) by Load's errors about the Source
// itself rather than its content: no or several descriptions, or a field
// given for the wrong kind. A command line reports these as usage errors.
var ErrSource = errors.New("workload source")

// Load builds the workload s describes. Files are read with package matio
// (.npy or .csv, format by extension) and validated once, here: a W file by
// FromMatrix, a Gram file by FromGramDense (symmetric to a relative 1e-9 of
// its ∞-norm, finite, non-negative diagonal, |V_ij| ≤ √(V_ii V_jj)); a spec
// file by domain.LoadSpec with Blocks, returned as a *DenseKron (FromKron:
// refused when its dense Gram would not fit in memory). Every error wraps ErrInput; a file's
// errors name the file.
func Load(s Source) (Workload, error) {
	switch {
	case s.given() != 1:
		return nil, inputerr.Errorf("workload", "%w: give exactly one of a built-in workload, a W file, a Gram file and a spec file", ErrSource)
	case s.Queries != 0 && s.GramFile == "":
		return nil, inputerr.Errorf("workload", "%w: the number of queries is only for a Gram file (other workloads know it)", ErrSource)
	case s.N != 0 && s.Spec == "":
		return nil, inputerr.Errorf("workload", "%w: the domain size is only for a built-in workload (a file gives it)", ErrSource)
	case s.Queries < 0:
		return nil, inputerr.Errorf("workload", "number of queries must be positive, got %d", s.Queries)
	}
	switch {
	case s.Spec != "":
		return Parse(s.Spec, s.N)
	case s.SpecFile != "":
		k, err := domain.LoadSpec(s.SpecFile, Blocks) // its errors name the file
		if err != nil {
			return nil, err
		}
		d, err := FromKron("spec:"+s.SpecFile, k)
		if err != nil {
			return nil, err // a nil Workload, not a nil *DenseKron in one
		}
		return d, nil
	case s.WFile != "":
		d, err := matio.ReadMatrix(s.WFile)
		if err != nil {
			return nil, err
		}
		w, err := FromMatrix("w:"+s.WFile, d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.WFile, err) // err wraps ErrInput
		}
		return w, nil
	default:
		d, err := matio.ReadMatrix(s.GramFile)
		if err != nil {
			return nil, err
		}
		w, err := FromGramDense("gram:"+s.GramFile, d, s.Queries)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.GramFile, err)
		}
		return w, nil
	}
}

// Blocks resolves the built-in block names of a multi-attribute spec
// (domain.Builtins): every 1-D workload Parse accepts, on an attribute of
// the given size. Each is Explicit, so every block has its query matrix.
func Blocks(name string, size int) (domain.QuerySet, error) {
	w, err := Parse(name, size)
	if err != nil {
		return nil, err
	}
	e, ok := w.(Explicit)
	if !ok {
		return nil, inputerr.Errorf("workload", "%s has no explicit query matrix", w.Name())
	}
	return e, nil
}

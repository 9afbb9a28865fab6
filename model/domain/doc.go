// Package domain is dpsolve's multi-attribute domain: a table over several
// attributes (d₁×…×d_k cells, flattened row-major: the first attribute
// varies slowest) and a workload on it, a union of weighted Kronecker
// products of small per-attribute query matrices,
//
//	W = [w₁·(W₁₁ ⊗ … ⊗ W₁ₖ); w₂·(W₂₁ ⊗ … ⊗ W₂ₖ); …].
//
// An Attribute is one dimension; a Block the 1-D query matrix of one
// attribute in one product; a Term a named, weighted product or list of
// marginals; a Kron the validated domain and terms. ParseSpec and LoadSpec
// read the JSON workload spec every multi-attribute command reads.
//
// The Gram V = Σⱼ wⱼ²·⊗ᵢ Vᵢⱼ is never formed for large domains: everything
// a planner needs — per-attribute Grams, query counts, and the expected
// error of a Kronecker or union-of-Kronecker strategy (Kron.KronError,
// Kron.UnionError), Σⱼ wⱼ²·Πᵢ tr(Vᵢⱼ Xᵢ⁺) — is computed factor by factor,
// in O(Σ dᵢ³) work and memory independent of the cell count (McKenna et
// al., "Optimizing error of high-dimensional statistical queries under
// differential privacy", VLDB 2018).
//
// The package sits below package workload: it builds the blocks of
// marginals (identity, total, identitytotal), ranges and matrices itself,
// and resolves every other built-in block name through the Builtins it is
// given — workload.Blocks, which knows every 1-D workload workload.Parse
// does. workload.Load reads a spec file through LoadSpec and returns it as
// a dense workload (workload.FromKron) when its domain is small.
//
// Errors about bad input wrap ErrInput and read "domain: invalid input:
// …": they are about the workload a spec describes.
package domain

import "github.com/dpsolve/dpsolve/internal/inputerr"

// ErrInput is wrapped by every error this package returns for input the
// caller can fix; it is the one dpsolve-wide sentinel (internal/inputerr).
var ErrInput = inputerr.ErrInput

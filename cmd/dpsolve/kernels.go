package main

import "github.com/dpsolve/dpsolve/blas"

// The dpsolve command owns its process, so it asks explicitly for gonum/mat
// (used by the mechanisms around the kernels) to run on the same backend as
// dpsolve's kernels; a library importing dpsolve keeps its own gonum
// settings (see package blas).
func init() { blas.UseForGonum() }

package main

import "github.com/dpsolve/dpsolve/blas"

// gonum/mat (used by the mechanisms around the kernels) runs on the same
// backend as dpsolve's kernels: importing package blas installs it; the
// command restates it here, before anything runs.
func init() { blas.UseForGonum() }

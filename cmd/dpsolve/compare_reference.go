package main

import "github.com/dpsolve/dpsolve/privacy/calibrate"

// compareReferenceHeader names the ratio column: the reference is the
// optimized row under Gaussian noise and the best ε-DP row under Laplace
// noise (see mechanism/compare).
func compareReferenceHeader(mech calibrate.NoiseKind) string {
	if mech == calibrate.Laplace {
		return "× best ε-DP"
	}
	return "× optimized"
}

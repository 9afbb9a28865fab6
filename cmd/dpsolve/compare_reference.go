package main

import "github.com/dpsolve/dpsolve/privacy/accounting"

// compareReferenceHeader names the ratio column: the reference is the
// optimized row under Gaussian noise and the best ε-DP row under Laplace
// noise (see mechanism/compare).
func compareReferenceHeader(mech accounting.Mechanism) string {
	if mech == accounting.Laplace {
		return "× best ε-DP"
	}
	return "× optimized"
}

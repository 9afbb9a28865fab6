//go:build !unix

package bench

import "math"

// processCPUSeconds is unavailable here.
func processCPUSeconds() float64 { return math.NaN() }

// childrenCPUSeconds is unavailable here.
func childrenCPUSeconds() float64 { return math.NaN() }

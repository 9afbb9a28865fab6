//go:build !unix

package testkit

import "time"

// CPUTime is not measured on this platform: it returns zeros.
func CPUTime() (user, sys time.Duration) { return 0, 0 }

// ChildrenCPU is unavailable here: zero.
func ChildrenCPU() time.Duration { return 0 }

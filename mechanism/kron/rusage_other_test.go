//go:build !unix

package kron

func cpuSeconds() float64 { return 0 }

//go:build !cgo || purego

package blas

// Default returns the backend chosen at build time: pure Go in this build
// (tag purego or cgo disabled).
func Default() Backend { return Gonum }

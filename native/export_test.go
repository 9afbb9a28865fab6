//go:build cgo && !purego

package native

// Config exports config to the external tests (blas, the only importer,
// does not use it, so it is not part of the package's surface).
var Config = config

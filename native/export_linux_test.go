//go:build cgo && !purego && linux

package native

// SymbolFile exports symbolFile to the external tests.
var SymbolFile = symbolFile

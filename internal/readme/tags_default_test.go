//go:build !purego

package readme

// dpsolveTags are the build tags the docs test builds dpsolve with: the
// test's own (none: the default cgo build).
const dpsolveTags = ""

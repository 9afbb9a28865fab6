//go:build purego

package readme

// dpsolveTags are the build tags the docs test builds dpsolve with: the
// test's own, so the purego run checks the pure-Go binary.
const dpsolveTags = "purego"

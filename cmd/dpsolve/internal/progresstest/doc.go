// Package progresstest holds no code, only the test that every long-running
// routine of the module reports through the one progress.Func (at least one
// event while it runs, then one final event carrying the result's numbers).
// It sits under cmd/dpsolve because it exercises the batch runner, which
// only the command may import.
package progresstest

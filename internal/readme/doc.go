// Package readme holds no code, only the tests that keep README.md honest:
// every ```go snippet in it must be a verbatim excerpt of the body of some
// Example test in the module (so it compiles and runs with `go test`), and
// the packages table of its "Library" section must list every package of
// the module.
package readme

// Package readme holds no code, only the tests that keep the user
// documentation honest — README.md and the pages under docs/:
//
//   - every ```go snippet in them must be a verbatim excerpt of the body of
//     some Example test in the module (so it compiles and runs with
//     `go test`);
//   - the packages table of README.md's "Library" section must list every
//     package of the module;
//   - every relative link and image of README.md, docs/*.md,
//     bench/README.md and bench/results/README.md must resolve, #anchors
//     into Markdown pages included, and README.md must link every docs/
//     page.
package readme

// Package readme holds no code, only the tests that keep the user
// documentation honest — README.md and the pages under docs/:
//
//   - every ```go snippet in them must be a verbatim excerpt of the body of
//     some Example test in the module (so it compiles and runs with
//     `go test`);
//   - every block of shell commands in README.md and docs/*.md (```sh
//     blocks, and "$ " lines of untagged ones) runs from the repository
//     root with a freshly built dpsolve first on PATH, page by page in
//     order, and must succeed; a block that cannot run says why in an HTML
//     comment before it, <!-- not run: REASON -->, and one that takes more
//     than a few seconds is marked <!-- long: REASON --> and skipped under
//     -short;
//   - the packages table of README.md's "Library" section must list every
//     package of the module;
//   - every relative link and image of README.md, docs/*.md,
//     bench/README.md and bench/results/README.md must resolve, #anchors
//     into Markdown pages included, and README.md must link every docs/
//     page.
package readme

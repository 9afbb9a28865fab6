// Package layers holds no code, only the test that keeps the module's
// dependency arrows pointing down: every package sits in one layer of
// docs/architecture.md (foundation, kernels, optimizers and data model,
// privacy primitives, mechanisms and planners, pipelines, benchmarks and
// experiments, commands), and no non-test file imports a package of a higher
// layer or a test-only package (internal/testkit and below).
package layers

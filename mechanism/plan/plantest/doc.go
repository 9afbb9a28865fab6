// Package plantest holds the tests and benchmarks of package plan's
// templates together with the templates other packages register (the
// marginals template): hybrid unions, the portfolio, and the dense
// re-scoring of every template's strategy on HDMM-style workloads
// (internal/testkit/kronwork). They live here because registering the marginals
// template inside package plan's own test binary would change what its
// unit tests see. The package has no API.
package plantest

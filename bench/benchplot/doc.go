// Package benchplot draws the figures of the benchmarks and experiments:
// solve time against n and gap against seconds from a bench.Report, the
// marginals template's planning time, and the functional-perturbation
// figure. It is the only package that imports gonum/plot (and with it LaTeX,
// PDF and font packages); the dpsolve binary does not import it, so the
// figures are drawn by cmd/dpsolve-plot from the JSON reports dpsolve writes.
package benchplot

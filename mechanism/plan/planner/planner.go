// Package planner names every plan template of the repository and runs
// them by name: kron, union, dense (package plan), marginals (package
// marginals) and best, the portfolio of all of them. The list is explicit
// (Templates); no template registers itself. Package plan cannot import
// package marginals (which imports plan), so the portfolio's list lives
// here, above both.
package planner

import (
	"context"
	"sort"
	"strings"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/model/domain"
)

// hybrid lists the templates union may use for a part of its stack.
func hybrid() []plan.Template {
	return []plan.Template{marginals.Template{Objective: marginals.Sum}}
}

// Best returns the portfolio: kron, union (with marginals parts), dense and
// the marginals template, in that order of preference on ties. Of these,
// the marginals template of a marginals workload under Gaussian noise and
// kron of a single product term certify their plans, so plan.Best runs
// them first and stops at a certified result.
func Best() plan.Best {
	return plan.Best{Templates: []plan.Template{
		plan.Kron{}, plan.Union{Hybrid: hybrid()}, plan.Dense{}, marginals.Template{Objective: marginals.Sum},
	}}
}

// Templates returns every template, in the order Names lists them.
func Templates() []plan.Template {
	ts := []plan.Template{
		Best(), plan.Dense{}, plan.Kron{}, marginals.Template{Objective: marginals.Sum}, plan.Union{Hybrid: hybrid()},
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name() < ts[j].Name() })
	return ts
}

// Names lists the templates' names, sorted.
func Names() []string {
	var ns []string
	for _, t := range Templates() {
		ns = append(ns, t.Name())
	}
	return ns
}

// Lookup returns the template of that name, or an error wrapping
// inputerr.ErrInput that lists the names.
func Lookup(name string) (plan.Template, error) {
	for _, t := range Templates() {
		if t.Name() == name {
			return t, nil
		}
	}
	return nil, inputerr.Errorf("plan", "unknown template %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// Run plans w with the named template through plan.Run (the dense
// comparison on small domains and the final progress event).
func Run(ctx context.Context, w *domain.Kron, name string, opt plan.Options) (*plan.Result, error) {
	t, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return plan.Run(ctx, w, t, opt)
}

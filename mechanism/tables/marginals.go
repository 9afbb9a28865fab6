package tables

import (
	"context"

	"github.com/dpsolve/dpsolve/mechanism/noise"
)

// MarginalsStrategy is the residual plan of a marginal workload (package
// marginals): each residual measured from the marginal tables it needs.
type MarginalsStrategy struct{}

// Template returns "marginals".
func (MarginalsStrategy) Template() string { return "marginals" }
func (MarginalsStrategy) isStrategy()      {}

// marginalsPlan is the prepared residual plan.
type marginalsPlan struct{}

func (m *marginalsPlan) needs() [][]int { return nil }

func (r *Release) prepareMarginals(MarginalsStrategy) error {
	return errorf("marginals plans are not available in this build yet")
}

func (r *Release) runMarginals(context.Context, Data, *noise.Sampler, func() error, PostProcess) (*Result, error) {
	return nil, errorf("marginals plans are not available in this build yet")
}

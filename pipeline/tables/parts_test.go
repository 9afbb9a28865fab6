package tables

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// A split over terms is one release per term at its share: the parts'
// budgets add up to the whole (ρ composes additively), and Parts.Run is
// the parts' own Release.Run in turn on one noise stream, charging once.
func TestPartsSplitTerms(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(planfileSpec), ".", workload.Blocks)
	require.NoError(t, err)
	b := zcdp(0.8)
	var checked []string
	ps, err := PrepareParts(context.Background(), PartsRequest{Workload: k, Budget: b, Template: "kron",
		SplitTerms: true, TermShares: []float64{1, 3},
		CheckPart: func(c PartCheck) error { checked = append(checked, c.Term); return nil }})
	require.NoError(t, err)
	assert.Equal(t, []string{"m", "p"}, checked)
	parts := ps.Parts()
	require.Len(t, parts, 2)
	assert.InDelta(t, 0.2, parts[0].Budget.Rho(), 1e-15)
	assert.InDelta(t, 0.6, parts[1].Budget.Rho(), 1e-15)
	assert.Equal(t, []float64{0.25, 0.75}, []float64{parts[0].Share, parts[1].Share})
	assert.Equal(t, [][]int{{0}, {1}}, [][]int{parts[0].Terms, parts[1].Terms})

	x := make([]float64, 30)
	for i := range x {
		x[i] = float64(i % 7)
	}
	d := Data{Histogram: x, Tables: records.Marginalize(x, k.Attributes(), nil)}
	charges := 0
	res, err := ps.Run(context.Background(), d, noise.NewSeededInsecure(3), func() error { charges++; return nil }, Publishable{})
	require.NoError(t, err)
	assert.Equal(t, 1, charges, "the whole budget is charged once")
	src := noise.NewSeededInsecure(3)
	for _, p := range parts {
		pres, err := p.Release.Run(context.Background(), d, src, nil, Publishable{})
		require.NoError(t, err)
		assert.Equal(t, pres.Answers[0], res.Answers[p.Terms[0]])
		assert.Equal(t, pres.Std[0], res.Std[p.Terms[0]])
	}

	// A refused charge releases nothing; so does a refused part.
	stop := errors.New("refused")
	_, err = ps.Run(context.Background(), d, noise.NewSeededInsecure(3), func() error { return stop }, Publishable{})
	assert.ErrorIs(t, err, stop)
	_, err = PrepareParts(context.Background(), PartsRequest{Workload: k, Budget: b, Template: "kron", SplitTerms: true,
		CheckPart: func(c PartCheck) error {
			if c.Term == "p" {
				return stop
			}
			return nil
		}})
	assert.ErrorIs(t, err, stop)
}

package tables

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
)

func writePlan(t *testing.T, files map[string]*mat.Dense, strategy string) string {
	dir := t.TempDir()
	for name, m := range files {
		require.NoError(t, matio.WriteMatrix(filepath.Join(dir, name), m))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "strategy.json"), []byte(strategy), 0o644))
	return dir
}

const smallDomainJSON = `"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}]`

func TestReadStrategyDir(t *testing.T) {
	w := smallWorkload()
	fa, fb, fc := identityTotal(3), identityTotal(4), identityTotal(2)
	files := map[string]*mat.Dense{"A_a.npy": fa, "A_b.npy": fb, "A_c.npy": fc, "A.npy": denseOf(fa, fb, fc)}
	factors := `[{"attribute": "a", "file": "A_a.npy"}, {"attribute": "b", "file": "A_b.npy"}, {"attribute": "c", "file": "A_c.npy"}]`
	// The format dpsolve plan writes: a numeric objective, the domain.
	dir := writePlan(t, files, `{"template": "kron", "privacy": "gaussian", "objective": 123.4, "cells": 24, `+smallDomainJSON+`, "factors": `+factors+`}`)
	s, err := readStrategyDir(dir, w)
	require.NoError(t, err)
	ks, ok := s.(KronStrategy)
	require.True(t, ok)
	assert.True(t, mat.Equal(fb, ks.A.Factor(1)))

	dir = writePlan(t, files, `{"template": "union", "parts": [{"weight": 0.8, "terms": ["m"], "factors": `+factors+`}, {"weight": 0.6, "terms": ["p"], "factors": `+factors+`}]}`)
	s, err = readStrategyDir(dir, w)
	require.NoError(t, err)
	require.Len(t, s.(UnionStrategy).Parts, 2)
	_, err = prepare(w, s, zcdp(1))
	require.NoError(t, err)

	dir = writePlan(t, files, `{"template": "dense", "matrix": "A.npy", `+smallDomainJSON+`}`)
	s, err = readStrategyDir(dir, w)
	require.NoError(t, err)
	r, err := prepare(w, s, zcdp(1))
	require.NoError(t, err)
	assert.Equal(t, "dense", r.Template())

	// Marginals: re-planned; listed residual variances must match.
	mw := &explicitWorkload{Domain: w.Domain, Terms: w.Terms[:1]}
	rp, err := prepare(mw, MarginalsStrategy{}, zcdp(1))
	require.NoError(t, err)
	var res []map[string]any
	for _, x := range rp.Plan().Residuals {
		names := []string{}
		for _, a := range x.Attrs {
			names = append(names, w.Domain[a].Name)
		}
		res = append(res, map[string]any{"attributes": names, "variance": x.Variance})
	}
	rj, _ := json.Marshal(res)
	dir = writePlan(t, nil, `{"template": "marginals", "objective": "sum", "residuals": `+string(rj)+`}`)
	_, err = readStrategyDir(dir, mw)
	require.NoError(t, err)
	res[0]["variance"] = res[0]["variance"].(float64) * 1.01
	rj, _ = json.Marshal(res)
	dir = writePlan(t, nil, `{"template": "marginals", "residuals": `+string(rj)+`}`)
	_, err = readStrategyDir(dir, mw)
	require.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "made for another spec")

	for name, body := range map[string]string{
		"other domain":   `{"template": "kron", "domain": [{"name": "a", "size": 3}, {"name": "b", "size": 5}, {"name": "c", "size": 2}], "factors": ` + factors + `}`,
		"factor order":   `{"template": "kron", "factors": [{"attribute": "b", "file": "A_b.npy"}, {"attribute": "a", "file": "A_a.npy"}, {"attribute": "c", "file": "A_c.npy"}]}`,
		"too few":        `{"template": "kron", "factors": [{"attribute": "a", "file": "A_a.npy"}]}`,
		"wrong size":     `{"template": "kron", "factors": [{"attribute": "a", "file": "A_b.npy"}, {"attribute": "b", "file": "A_b.npy"}, {"attribute": "c", "file": "A_c.npy"}]}`,
		"escape":         `{"template": "dense", "matrix": "../A.npy"}`,
		"unknown":        `{"template": "magic"}`,
		"not json":       `{`,
		"bad objective":  `{"template": "marginals", "objective": "median"}`,
		"missing matrix": `{"template": "dense"}`,
	} {
		dir := writePlan(t, files, body)
		_, err := readStrategyDir(dir, w)
		assert.ErrorIs(t, err, ErrInput, name)
	}
	_, err = readStrategyDir(filepath.Join(t.TempDir(), "none"), w)
	assert.ErrorIs(t, err, ErrInput)
}

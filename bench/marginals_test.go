package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/blas"
)

// A short sweep fills every column, the residual counts are the binomial
// sums Σ_{j≤3} C(n, j) (binary attributes: one residual per set), the gaps
// are certified, and the table and plot are written.
func TestMarginalsScaling(t *testing.T) {
	rows, err := MarginalsScaling(MarginalsConfig{Attributes: []int{4, 8}, Repeat: 1, MaxAttributes: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Residuals != 1+4+6+4 || rows[1].Residuals != 1+8+28+56 {
		t.Fatalf("rows %+v", rows)
	}
	if !rows[0].MaxSeconds.Valid() || rows[1].MaxSeconds.Valid() {
		t.Fatalf("max plan should run at n = 4 only: %+v", rows)
	}
	if rows[0].MaxGap > 1e-8 || rows[0].SumGap > 1e-12 {
		t.Fatalf("gaps %+v", rows[0])
	}
	var buf bytes.Buffer
	if err := WriteMarginalsTable(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| 8 | 93 | 93 | ") {
		t.Fatalf("table:\n%s", buf.String())
	}
	png := filepath.Join(t.TempDir(), "m.png")
	if err := WriteMarginalsPlot(png, rows); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Fatalf("plot not written: %v", err)
	}
}

// TestMarginalsScalingRecord records the sweep of docs/marginals.md (10…100 binary
// attributes, all 0…3-way marginals) into $DPSOLVE_MARGINALS_SWEEP (a
// directory): marginals-scaling.{json,md,png}, medians of 5 sum plans and
// one max plan per point. Opt-in: it plans for about a minute.
func TestMarginalsScalingRecord(t *testing.T) {
	dir := os.Getenv("DPSOLVE_MARGINALS_SWEEP")
	if dir == "" {
		t.Skip("set DPSOLVE_MARGINALS_SWEEP=DIR to record the sweep")
	}
	var log bytes.Buffer
	rows, err := MarginalsScaling(MarginalsConfig{Attributes: []int{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, Repeat: 5, MaxRepeat: 1, Log: &log})
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.MarshalIndent(struct {
		Backend string         `json:"backend"`
		Rows    []MarginalsRow `json:"rows"`
	}{blas.Describe(), rows}, "", " ")
	if err := os.WriteFile(filepath.Join(dir, "marginals-scaling.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := WriteMarginalsTable(&md, rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "marginals-scaling.md"), md.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarginalsPlot(filepath.Join(dir, "marginals-scaling.png"), rows); err != nil {
		t.Fatal(err)
	}
}

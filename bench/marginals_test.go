package bench

import (
	"bytes"
	"strings"
	"testing"
)

// A short sweep fills every column, the residual counts are the binomial
// sums Σ_{j≤3} C(n, j) (binary attributes: one residual per set), the gaps
// are certified, and the table is written (benchplot tests the plot).
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
}

package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Structured cases parse with b and k together, run, and print their own
// table with the bound below the loss and the reference figures.
func TestMFStructuredRows(t *testing.T) {
	cases, err := ParseMFCases("n=2052,b=342,k=6,family=blt;n=600,b=100,k=3,family=toeplitz,bands=8")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0] != (MFCase{N: 2052, MinSep: 342, Epochs: 6, Workload: "prefix", Family: "blt"}) || cases[1].Bands != 8 {
		t.Fatalf("parsed %+v", cases)
	}
	if _, err := ParseMFCases("n=64,b=8,family=dense"); err == nil {
		t.Fatal("family=dense accepted")
	}
	rows, err := (&MFBench{}).Run(context.Background(), cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !(r.BoundMean > 0 && r.BoundMean < r.Loss) {
			t.Fatalf("%+v: bound %v loss %v", r.Case, r.BoundMean, r.Loss)
		}
	}
	if rows[0].Loss > 84.32 || rows[0].RefLoss != 84.32 {
		t.Fatalf("blt row %+v", rows[0])
	}
	var buf bytes.Buffer
	if err := WriteMFMarkdown(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| 2052 | 342 | 6 | blt | prefix |") {
		t.Fatalf("table:\n%s", buf.String())
	}
}

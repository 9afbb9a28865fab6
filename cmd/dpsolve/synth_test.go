package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dpsolve synth end to end on a small data set: both mechanisms write the
// CSV (header of attribute names, the requested number of records, codes in
// range) and synth.json (budget split adding up to ρ), charging the ledger
// once; bad input is a usage error that charges nothing.
func TestSynthCommand(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
 "workload": [{"name": "pairs", "marginals": {"k": 2}}]}`), 0o644)
	var sb strings.Builder
	sb.WriteString("a,b,c\n")
	for i := 0; i < 600; i++ {
		sb.WriteString(strings.Join([]string{itoa(i % 3), itoa((i % 3) + (i/3)%2), itoa(i % 2)}, ",") + "\n")
	}
	data := filepath.Join(dir, "data.csv")
	os.WriteFile(data, []byte(sb.String()), 0o644)
	led := filepath.Join(dir, "ledger.json")
	os.WriteFile(led, []byte(`{"limit": {"rho": 1}, "spent": []}`), 0o644)
	for _, mech := range []string{"mst", "aim"} {
		out := filepath.Join(dir, mech)
		var stdout, stderr bytes.Buffer
		code := run([]string{"synth", "--spec", spec, "--data", data, "--rho", "0.2", "--mechanism", mech, "--records", "250",
			"--budget-file", led, "--insecure-seed", "3", "--json", "--out", out}, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", mech, code, stderr.String())
		}
		var rep struct {
			Mechanism string `json:"mechanism"`
			ZCDP      struct {
				Rho float64 `json:"rho"`
			} `json:"zcdp"`
			SpentRho float64 `json:"spent_rho"`
			Records  int     `json:"records"`
			Private  bool    `json:"private"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Mechanism != mech || rep.Records != 250 || rep.Private || rep.ZCDP.Rho != 0.2 || rep.SpentRho < 0.2*(1-1e-12) || rep.SpentRho > 0.2*(1+1e-12) {
			t.Fatalf("%s: report %+v", mech, rep)
		}
		csv, _ := os.ReadFile(filepath.Join(out, "synthetic.csv"))
		lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
		if lines[0] != "a,b,c" || len(lines) != 251 {
			t.Fatalf("%s: %d lines, header %q", mech, len(lines), lines[0])
		}
		if !strings.Contains(stderr.String(), "NOT differentially private") {
			t.Fatalf("%s: no warning on stderr: %s", mech, stderr.String())
		}
	}
	before, _ := os.ReadFile(led)
	if !bytes.Contains(before, []byte(`"rho": 0.2`)) && !bytes.Contains(before, []byte(`"rho":0.2`)) {
		t.Fatalf("ledger not charged: %s", before)
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("a,b,c\n0,9,1\n"), 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"synth", "--spec", spec, "--data", bad, "--rho", "0.2", "--budget-file", led, "--out", filepath.Join(dir, "x")}, &stdout, &stderr); code != 2 {
		t.Fatalf("bad data: exit %d: %s", code, stderr.String())
	}
	after, _ := os.ReadFile(led)
	if !bytes.Equal(before, after) {
		t.Fatal("bad data charged the ledger")
	}
	if code := run([]string{"synth", "--spec", spec, "--data", data, "--out", dir}, &stdout, &stderr); code != 2 {
		t.Fatalf("no budget: exit %d", code)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

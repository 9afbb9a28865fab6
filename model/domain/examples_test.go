package domain_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

// TestExampleSpecsParse: every spec shipped under examples/ (a JSON file
// with both "domain" and "workload") parses with today's rules. The loans
// benchmarks once named an attribute "term", which the reserved output
// columns later refused, and nothing noticed until a benchmark run.
func TestExampleSpecsParse(t *testing.T) {
	var specs []string
	err := filepath.WalkDir("../../examples", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(b, &top) != nil || top["domain"] == nil || top["workload"] == nil {
			return nil // not a spec (a domain file, a manifest)
		}
		specs = append(specs, path)
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(specs), 15, "the examples' specs were not found: %v", specs)
	for _, path := range specs {
		_, err := domain.LoadSpec(path, workload.Blocks)
		require.NoError(t, err, path)
	}
}

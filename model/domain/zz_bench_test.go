package domain_test

import (
	"os"
	"testing"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

func BenchmarkZZParse100(b *testing.B) {
	if _, err := os.Stat("/tmp/m100.json"); err != nil {
		b.Skip()
	}
	for b.Loop() {
		if _, err := domain.LoadSpec("/tmp/m100.json", workload.Blocks); err != nil {
			b.Fatal(err)
		}
	}
}

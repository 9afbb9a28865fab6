package synth_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/dpsolve/dpsolve/mechanism/synth"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// Synthetic records from an MST run under ρ = 0.3 zCDP. The seeded noise
// and selection make it reproducible and NOT private: a release uses
// noise.NewSecure() and crypto/rand.Reader (pipeline/synthetic.Release does).
func ExampleSynthesize() {
	sizes := []int{3, 4, 2}
	d := &synth.Data{Sizes: sizes, Cols: make([][]int32, 3)}
	for i := 0; i < 900; i++ {
		d.Cols[0] = append(d.Cols[0], int32(i%3))
		d.Cols[1] = append(d.Cols[1], int32(i%3+i/3%2))
		d.Cols[2] = append(d.Cols[2], int32(i%2))
	}
	budget, err := calibrate.ZCDP(0.3)
	if err != nil {
		panic(err)
	}
	res, err := synth.Synthesize(context.Background(), d, synth.Options{
		Mechanism: synth.MST,
		Budget:    budget,
		Noise:     noise.NewSeededInsecure(1),   // noise.NewSecure() for a release
		Bits:      rand.NewChaCha8([32]byte{1}), // crypto/rand.Reader for a release
	})
	if err != nil {
		panic(err)
	}
	syn := res.Sample(900, rand.New(rand.NewPCG(1, 2))) // controlled rounding
	fmt.Printf("%s spent ρ = %.3g in %d steps; %d records\n", res.Report.Mechanism, res.Report.SpentRho, len(res.Report.Steps), syn.Len())
	fmt.Printf("2-way error %.2f\n", synth.WorkloadError(d, syn, 2))
	// Output:
	// mst spent ρ = 0.3 in 4 steps; 900 records
	// 2-way error 0.01
}

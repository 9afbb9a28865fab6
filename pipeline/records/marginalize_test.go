package records

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/model/domain"
)

// Marginalize of a histogram equals ReadMarginals of the records it counts:
// two independent paths (one sums cells of the histogram, the other counts
// records one by one), exact in integers.
func TestMarginalizeMatchesReadMarginals(t *testing.T) {
	attrs := []domain.Attribute{{Name: "a", Size: 2}, {Name: "b", Size: 3}, {Name: "c", Size: 4}}
	rng := rand.New(rand.NewPCG(1, 2)) // test data only
	var csv strings.Builder
	csv.WriteString("a,b,c\n")
	for i := 0; i < 500; i++ {
		csv.WriteString(strconv.Itoa(rng.IntN(2)) + "," + strconv.Itoa(rng.IntN(3)) + "," + strconv.Itoa(rng.IntN(4)) + "\n")
	}
	sets := [][]int{{}, {0}, {2}, {0, 1}, {1, 2}, {0, 1, 2}}
	x, _, err := ReadHistogram(strings.NewReader(csv.String()), attrs, nil)
	require.NoError(t, err)
	want, _, err := ReadMarginals(strings.NewReader(csv.String()), attrs, sets, nil)
	require.NoError(t, err)
	got := Marginalize(x, attrs, sets)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Attrs, got[i].Attrs, "set %v", sets[i])
		assert.Equal(t, want[i].Sizes, got[i].Sizes, "set %v", sets[i])
		assert.Equal(t, want[i].Counts, got[i].Counts, "set %v", sets[i])
	}
	assert.Equal(t, []float64{500}, got[0].Counts, "the empty set is the total")
	assert.Nil(t, Marginalize(x, attrs, nil))
}

package records

import (
	"math"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/model/domain"
)

// ReadHistogramNPY reads an existing histogram (.npy or .csv vector,
// row-major in domain order) and checks that its length equals the domain's
// cell count and that every count is finite and non-negative.
func ReadHistogramNPY(path string, attrs []domain.Attribute) ([]float64, error) {
	n, err := Cells(attrs)
	if err != nil {
		return nil, err
	}
	x, err := matio.ReadVector(path)
	if err != nil {
		return nil, err
	}
	if len(x) != n {
		return nil, errorf("%s has %d cells but the domain (%s) has %d", path, len(x), names(attrs), n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, errorf("%s: cell %d is %v; counts must be finite and non-negative", path, i, v)
		}
	}
	return x, nil
}

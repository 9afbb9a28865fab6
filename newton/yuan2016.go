package newton

import (
	"context"
	"errors"

	"gonum.org/v1/gonum/mat"
)

func solveYuan2016(ctx context.Context, V *mat.SymDense, opt Options) (*Result, error) {
	return nil, errors.New("newton: yuan2016 not yet implemented")
}

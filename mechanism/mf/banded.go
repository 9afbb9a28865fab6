package mf

import (
	"context"
	"errors"
)

func solveBanded(ctx context.Context, w *Workload, s Schema, opt *Options) (*Result, error) {
	return nil, errors.New("mf: banded solver not implemented yet")
}

package ctxwait

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAbandonReturnsResult(t *testing.T) {
	v, err := Abandon(context.Background(), func() (int, error) { return 7, nil })
	assert.NoError(t, err)
	assert.Equal(t, 7, v)
	bad := errors.New("bad")
	_, err = Abandon(context.Background(), func() (int, error) { return 0, bad })
	assert.ErrorIs(t, err, bad)
}

// A cancellation returns at once with the cause while f is still running.
func TestAbandonReturnsOnCancel(t *testing.T) {
	cause := errors.New("stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	release := make(chan struct{})
	defer close(release)
	go func() { time.Sleep(10 * time.Millisecond); cancel(cause) }()
	v, err := Abandon(ctx, func() (int, error) { <-release; return 1, nil })
	assert.ErrorIs(t, err, cause)
	assert.Zero(t, v)
}

// A result without error that arrives after the cancellation is not used.
func TestAbandonDropsLateResult(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Abandon(ctx, func() (int, error) { cancel(); return 1, nil })
	assert.ErrorIs(t, err, context.Canceled)
}

// Package ctxwait runs a computation that cannot be interrupted so that its
// caller can be: the caller returns as soon as its context is cancelled,
// and the computation finishes in the background and is discarded.
package ctxwait

import "context"

// Abandon runs f and returns its result, or context.Cause(ctx) as soon as
// ctx is cancelled, without waiting for f. f then runs to its end in the
// background and its result is dropped, so f must have no side effect a
// caller could observe (no output written, no budget spent). A result that
// arrives after the cancellation without an error is also replaced by the
// cause: the caller asked to stop, so nothing computed after that is used.
func Abandon[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned f does not block
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		if r.err == nil && ctx.Err() != nil {
			r.err = context.Cause(ctx)
		}
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/pipeline/publish"
)

// syncBuffer is a bytes.Buffer safe for the handler goroutine to write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestSignalContext: the first SIGTERM cancels the context (with a cause
// wrapping context.Canceled); the second calls the exit at once with 130,
// but only after a post-release write in progress has finished.
func TestSignalContext(t *testing.T) {
	exited := make(chan int, 1)
	exitNow = func(code int) { exited <- code }
	defer func() { exitNow = os.Exit }()
	var errb syncBuffer
	ctx, stop := signalContext(context.Background(), &errb, "test")
	defer stop()
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("first signal did not cancel the context")
	}
	assert.True(t, errors.Is(errCancelled(ctx), context.Canceled))
	assert.True(t, interrupted(ctx, errCancelled(ctx)))
	assert.Contains(t, errb.String(), "send it again")

	done := publish.Quiesce() // as a release's commit in progress holds it
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case <-exited:
		t.Fatal("exited during a post-release write")
	case <-time.After(200 * time.Millisecond):
	}
	done()
	select {
	case code := <-exited:
		assert.Equal(t, exitInterrupted, code)
	case <-time.After(5 * time.Second):
		t.Fatal("second signal did not exit")
	}
}

// TestUntilCancelled: the result of a finished call passes through; a
// cancelled one returns at once without waiting for the call.
func TestUntilCancelled(t *testing.T) {
	v, err := untilCancelled(context.Background(), func() (int, error) { return 7, nil })
	assert.Equal(t, 7, v)
	assert.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err = untilCancelled(ctx, func() (int, error) { <-release; return 1, nil })
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 2*time.Second)
}

// TestPanicBecomesMessage: a panicking command exits 1 with a message, not
// a stack dump.
func TestPanicBecomesMessage(t *testing.T) {
	register(&command{name: "test-panic", summary: "test", run: func(context.Context, []string, io.Writer, io.Writer) error {
		var s []int
		_ = s[3]
		return nil
	}})
	defer delete(commands, "test-panic")
	var o, e bytes.Buffer
	code := run([]string{"test-panic"}, &o, &e)
	assert.Equal(t, 1, code)
	assert.Contains(t, e.String(), "internal error")
	assert.NotContains(t, e.String(), "goroutine")
}

package publish

import (
	"io"
	"strings"
	"testing"
)

// TestLineLimit: a line longer than the limit fails as soon as the limit is
// passed (reading through a 1-byte buffer shows nothing beyond it is
// needed), with its line number; lines at the limit pass unchanged.
func TestLineLimit(t *testing.T) {
	ok := "a,b\n" + strings.Repeat("1", 10) + "\n12\n"
	got, err := io.ReadAll(LineLimit(strings.NewReader(ok), 10))
	if err != nil || string(got) != ok {
		t.Fatalf("%q %v", got, err)
	}
	long := "a,b\n1,2\n" + strings.Repeat("9", 1000)
	r := LineLimit(&oneByte{strings.NewReader(long)}, 10)
	read := 0
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		read += n
		if err != nil {
			if !strings.Contains(err.Error(), "line 3") {
				t.Fatalf("got %v", err)
			}
			break
		}
	}
	if read > 8+10 {
		t.Fatalf("read %d bytes before refusing", read)
	}
}

type oneByte struct{ r io.Reader }

func (o *oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:1]) }

package publish

import (
	"bytes"
	"io"
)

// MaxLineBytes is the longest line a records CSV may have (1 MiB): a
// record of integer codes is a few bytes per attribute, and the CSV
// reader buffers a whole line before it can refuse it (a 1 GB line took
// 4.4 GB before the refusal).
const MaxLineBytes = 1 << 20

// LineLimit returns a reader of r that fails with an input error as soon as
// a line (bytes since the last newline) exceeds max bytes, before the line
// is buffered by the reader above it.
func LineLimit(r io.Reader, max int) io.Reader {
	return &lineLimit{r: r, max: max, line: 1}
}

type lineLimit struct {
	r        io.Reader
	max, run int
	line     int
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.run += len(b)
			break
		}
		if l.run+i > l.max {
			l.run += i
			break
		}
		l.run, l.line, b = 0, l.line+1, b[i+1:]
	}
	if l.run > l.max {
		return 0, errorf("line %d of the records is longer than %d bytes; a records CSV has one short line per record (is this the right file?)", l.line, l.max)
	}
	return n, err
}

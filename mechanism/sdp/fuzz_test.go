package sdp

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReadSDPA: parsing never panics, and anything that parses writes back
// to a file that parses to the same problem (zero entries are dropped by the
// writer, so they are dropped before comparing).
func FuzzReadSDPA(f *testing.F) {
	f.Add(handApprox)
	f.Add("* c\n2\n2\n{3, -2}\n(0.0, 1.5)\n0 1 1 3 -1\n1 1 3 1 2\n2 2 2 2 -1e-3\n")
	f.Add("1\n1\n-3\n1\n1 1 1 2 1\n")
	f.Add("1\n1\n3\n1\n1 1 1 2 0\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ReadSDPA(strings.NewReader(in))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteSDPA(&buf, p); err != nil {
			t.Fatalf("write of a parsed problem: %v", err)
		}
		q, err := ReadSDPA(&buf)
		if err != nil {
			t.Fatalf("re-read: %v\n%s", err, buf.String())
		}
		var nz []Entry
		for _, e := range p.Entries {
			if e.Value != 0 {
				nz = append(nz, e)
			}
		}
		sortEntries(nz)
		if len(nz) != len(q.Entries) || len(p.C) != len(q.C) || len(p.Blocks) != len(q.Blocks) {
			t.Fatalf("round trip changed the problem sizes")
		}
		for i := range nz {
			if nz[i] != q.Entries[i] {
				t.Fatalf("entry %d: %+v → %+v", i, nz[i], q.Entries[i])
			}
		}
		for i := range p.C {
			if p.C[i] != q.C[i] {
				t.Fatalf("c[%d]: %v → %v", i, p.C[i], q.C[i])
			}
		}
	})
}

package records

import (
	"io"

	"github.com/dpsolve/dpsolve/model/domain"
)

// Scan reads records from r as ReadHistogram does — CSV, gzipped CSV or
// Parquet, labelled values through each attribute's codebook, integer codes
// otherwise — and calls visit with each record's codes in domain order
// (the slice is reused: copy what you keep). A caller that needs the
// records themselves, not tables (a synthetic-data mechanism), reads them
// with it.
func Scan(r io.Reader, attrs []domain.Attribute, opt *Options, visit func(codes []int)) (Stats, error) {
	if err := checkDomain(attrs); err != nil {
		return Stats{}, err
	}
	return scan(r, attrs, opt, visit)
}

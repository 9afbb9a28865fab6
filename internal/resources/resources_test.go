package resources

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]float64{
		"1024": 1024, "512MiB": 512 << 20, "2GiB": 2 << 30, "1.5G": 1.5 * (1 << 30), "3 kb": 3 << 10, "7B": 7, "1TiB": 1 << 40,
	} {
		got, err := ParseBytes(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "GiB", "-1G", "0", "abc", "1e400", "NaN"} {
		_, err := ParseBytes(s)
		assert.Error(t, err, "%q", s)
	}
}

func TestFormatBytes(t *testing.T) {
	assert.Equal(t, "512 B", FormatBytes(512))
	assert.Equal(t, "1.5 KiB", FormatBytes(1536))
	assert.Equal(t, "745 GiB", FormatBytes(8*10*1e10)) // solve's model at n = 1e5
	assert.Contains(t, FormatBytes(1e30), "EiB")
}

// TestAvailableOverride: the environment variable wins and is named as the
// source; a machine value is positive (this test runs on Linux in CI).
func TestAvailableOverride(t *testing.T) {
	t.Setenv(EnvLimit, "3GiB")
	m := Available()
	assert.Equal(t, float64(3<<30), m.Bytes)
	assert.Equal(t, EnvLimit, m.Source)
	t.Setenv(EnvLimit, "")
	m = Available()
	assert.True(t, m.Bytes > 0, "%v", m)
	if m.Source != "unknown" {
		// Physical memory is an upper bound for any cgroup limit we report.
		p, ok := physical()
		require.True(t, ok)
		assert.LessOrEqual(t, m.Bytes, p)
	}
}

// TestLargestNClosedForm: for need(n) = c·n² the answer is ⌊√(Usable·B/c)⌋,
// computed here directly.
func TestLargestNClosedForm(t *testing.T) {
	avail := Memory{Bytes: 24 << 30, Source: "test"}
	for _, c := range []float64{8, 80, 192} {
		got := LargestN(func(n float64) float64 { return c * n * n }, avail)
		want := int(math.Floor(math.Sqrt(Usable * avail.Bytes / c)))
		assert.Equal(t, want, got, "c = %g", c)
	}
	assert.Equal(t, 0, LargestN(func(n float64) float64 { return 1e30 }, avail))
	assert.Equal(t, math.MaxInt, LargestN(func(n float64) float64 { return n }, Memory{Bytes: math.Inf(1)}))
}

func TestCheck(t *testing.T) {
	avail := Memory{Bytes: 1 << 30, Source: "test limit"}
	assert.NoError(t, Check(0.5*(1<<30), avail, "x"))
	err := Check(2<<30, avail, "solve at n = 9")
	require.Error(t, err)
	assert.Equal(t, "solve at n = 9 needs about 2 GiB of memory, but this machine has 1 GiB (test limit)", err.Error())
}

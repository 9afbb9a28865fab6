package batch

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Shard is one of Count equal shares of a manifest: the jobs whose 0-based
// manifest index k has k mod Count == Index. Dealing jobs round-robin keeps
// the shares balanced when a manifest lists similar jobs together.
type Shard struct {
	Index, Count int
	// Source says where the shard came from ("--shard", "SLURM_ARRAY_TASK_ID", …).
	Source string
}

// String formats the shard as "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Has reports whether the job at manifest index k belongs to the shard.
func (s Shard) Has(k int) bool { return k%s.Count == s.Index }

// Select returns the shard's jobs, in manifest order.
func (s Shard) Select(jobs []Job) []Job {
	var out []Job
	for k, j := range jobs {
		if s.Has(k) {
			out = append(out, j)
		}
	}
	return out
}

// ParseShard parses "I/N" with 0 ≤ I < N.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, inputerr.Errorf("batch", "shard %q is not I/N (for example 0/4)", s)
	}
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil {
		return Shard{}, inputerr.Errorf("batch", "shard %q is not I/N with integers I and N", s)
	}
	return newShard(idx, cnt, "--shard")
}

func newShard(idx, cnt int, source string) (Shard, error) {
	if cnt < 1 {
		return Shard{}, inputerr.Errorf("batch", "%s: the number of shards must be at least 1, got %d", source, cnt)
	}
	if idx < 0 || idx >= cnt {
		return Shard{}, inputerr.Errorf("batch", "%s: shard index %d is outside 0..%d", source, idx, cnt-1)
	}
	return Shard{Index: idx, Count: cnt, Source: source}, nil
}

// ShardFrom chooses the shard: flag ("I/N", from --shard) when given;
// otherwise a Slurm array task (SLURM_ARRAY_TASK_ID relative to
// SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_STEP, out of
// SLURM_ARRAY_TASK_COUNT, which shards overrides when positive); otherwise a
// Kubernetes indexed-job pod (JOB_COMPLETION_INDEX out of shards, which must
// then be given); otherwise the whole manifest (0/1). getenv is os.Getenv
// when nil.
func ShardFrom(flag string, shards int, getenv func(string) string) (Shard, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if shards < 0 {
		return Shard{}, inputerr.Errorf("batch", "--shards must be positive, got %d", shards)
	}
	if flag != "" {
		s, err := ParseShard(flag)
		if err == nil && shards > 0 && shards != s.Count {
			return Shard{}, inputerr.Errorf("batch", "--shard %s contradicts --shards %d", flag, shards)
		}
		return s, err
	}
	num := func(name string, def int) (int, error) {
		v := getenv(name)
		if v == "" {
			return def, nil
		}
		x, err := strconv.Atoi(v)
		if err != nil {
			return 0, inputerr.Errorf("batch", "%s=%q is not an integer", name, v)
		}
		return x, nil
	}
	if getenv("SLURM_ARRAY_TASK_ID") != "" {
		id, err := num("SLURM_ARRAY_TASK_ID", 0)
		if err != nil {
			return Shard{}, err
		}
		lo, err := num("SLURM_ARRAY_TASK_MIN", 0)
		if err != nil {
			return Shard{}, err
		}
		step, err := num("SLURM_ARRAY_TASK_STEP", 1)
		if err != nil {
			return Shard{}, err
		}
		cnt, err := num("SLURM_ARRAY_TASK_COUNT", 0)
		if err != nil {
			return Shard{}, err
		}
		if shards > 0 {
			cnt = shards
		}
		if step < 1 || (id-lo)%step != 0 {
			return Shard{}, inputerr.Errorf("batch", "Slurm array task %d is not on the array's grid (min %d, step %d); use --array=0-(N-1) or give --shard I/N", id, lo, step)
		}
		return newShard((id-lo)/step, cnt, "SLURM_ARRAY_TASK_ID")
	}
	if getenv("JOB_COMPLETION_INDEX") != "" {
		idx, err := num("JOB_COMPLETION_INDEX", 0)
		if err != nil {
			return Shard{}, err
		}
		if shards == 0 {
			return Shard{}, inputerr.Errorf("batch", "JOB_COMPLETION_INDEX is set (a Kubernetes indexed job): give --shards N, the job's completions")
		}
		return newShard(idx, shards, "JOB_COMPLETION_INDEX")
	}
	if shards > 1 {
		return Shard{}, inputerr.Errorf("batch", "--shards %d needs --shard I/N, a Slurm array task or JOB_COMPLETION_INDEX to say which shard this is", shards)
	}
	return Shard{Index: 0, Count: 1, Source: "whole manifest"}, nil
}

package batch

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	s, err := ParseShard("2/5")
	if err != nil || s.Index != 2 || s.Count != 5 || s.String() != "2/5" {
		t.Fatalf("ParseShard(2/5) = %+v, %v", s, err)
	}
	for _, bad := range []string{"", "3", "a/4", "1/b", "4/4", "-1/4", "0/0", "1/-2"} {
		_, err := ParseShard(bad)
		if err == nil || !errors.Is(err, ErrInput) {
			t.Errorf("ParseShard(%q) = %v, want an input error", bad, err)
		}
		checkOnePrefix(t, err)
	}
}

func TestShardsPartitionTheJobs(t *testing.T) {
	jobs := make([]Job, 23)
	for i := range jobs {
		jobs[i].ID = fmt.Sprint("j", i)
	}
	for _, n := range []int{1, 2, 4, 7, 30} {
		seen := map[string]int{}
		for i := range n {
			part := Shard{Index: i, Count: n}.Select(jobs)
			// Round-robin: shares differ by at most one job.
			if len(part) < len(jobs)/n || len(part) > len(jobs)/n+1 {
				t.Errorf("shard %d/%d has %d jobs", i, n, len(part))
			}
			for _, j := range part {
				seen[j.ID]++
			}
		}
		for _, j := range jobs {
			if seen[j.ID] != 1 {
				t.Errorf("N=%d: job %s is in %d shards", n, j.ID, seen[j.ID])
			}
		}
	}
}

func TestShardFrom(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name   string
		flag   string
		shards int
		env    func(string) string
		want   string // "I/N source" or "error: substring"
	}{
		{"nothing", "", 0, env(), "0/1 whole manifest"},
		{"flag", "1/3", 0, env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "4"), "1/3 --shard"},
		{"flag and same shards", "1/3", 3, env(), "1/3 --shard"},
		{"flag contradicts shards", "1/3", 4, env(), "error: contradicts"},
		{"slurm", "", 0, env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0"), "2/4 SLURM_ARRAY_TASK_ID"},
		{"slurm from 1", "", 0, env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "1"), "3/4 SLURM_ARRAY_TASK_ID"},
		{"slurm step", "", 0, env("SLURM_ARRAY_TASK_ID", "10", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_MIN", "6", "SLURM_ARRAY_TASK_STEP", "2"), "2/3 SLURM_ARRAY_TASK_ID"},
		{"slurm off grid", "", 0, env("SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_MIN", "6", "SLURM_ARRAY_TASK_STEP", "2"), "error: grid"},
		{"slurm shards override", "", 8, env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_COUNT", "6"), "5/8 SLURM_ARRAY_TASK_ID"},
		{"slurm id beyond count", "", 0, env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_COUNT", "4"), "error: outside 0..3"},
		{"slurm garbage", "", 0, env("SLURM_ARRAY_TASK_ID", "x", "SLURM_ARRAY_TASK_COUNT", "4"), "error: not an integer"},
		{"kubernetes", "", 5, env("JOB_COMPLETION_INDEX", "4"), "4/5 JOB_COMPLETION_INDEX"},
		{"kubernetes without shards", "", 0, env("JOB_COMPLETION_INDEX", "4"), "error: --shards"},
		{"kubernetes out of range", "", 4, env("JOB_COMPLETION_INDEX", "4"), "error: outside"},
		{"shards alone", "", 4, env(), "error: needs --shard"},
		{"negative shards", "", -1, env(), "error: positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ShardFrom(tc.flag, tc.shards, tc.env)
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrInput) {
					t.Errorf("got %v, %v; want an input error containing %q", s, err, want)
				}
				checkOnePrefix(t, err)
				return
			}
			if err != nil || s.String()+" "+s.Source != tc.want {
				t.Errorf("got %q, %v; want %q", s.String()+" "+s.Source, err, tc.want)
			}
		})
	}
}

package pipeline

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Shard is the I-th of N interleaved parts of a run's samples (Index from 0,
// as Kubernetes counts). The zero value is the whole run.
type Shard struct {
	Index int `json:"index" msgpack:"index"`
	Count int `json:"count" msgpack:"count"`
}

// String spells the shard as --shard takes it: "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Check reports a shard outside 0 <= Index < Count (the zero value is fine).
func (s Shard) Check() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %v: want I/N with 0 <= I < N", s)
	}
	return nil
}

// ParseShard reads a --shard value: "I/N", or "N" alone with the index from
// the environment (JOB_COMPLETION_INDEX of a Kubernetes Indexed Job, else
// SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN of a Slurm array). An empty
// value takes a Slurm array's index and count when both are set, else the
// whole run. getenv is os.Getenv outside tests.
func ParseShard(s string, getenv func(string) string) (Shard, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	s = strings.TrimSpace(s)
	if s == "" {
		id, count := getenv("SLURM_ARRAY_TASK_ID"), getenv("SLURM_ARRAY_TASK_COUNT")
		if id == "" || count == "" {
			return Shard{}, nil
		}
		n, err := strconv.Atoi(count)
		if err != nil {
			return Shard{}, fmt.Errorf("SLURM_ARRAY_TASK_COUNT=%q is not a number", count)
		}
		return envShard(n, getenv)
	}
	is, ns, hasIndex := strings.Cut(s, "/")
	if !hasIndex {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return Shard{}, fmt.Errorf("shard %q: want I/N (e.g. 0/4) or the count N with the index from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID", s)
		}
		return envShard(n, getenv)
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	sh := Shard{i, n}
	if err1 != nil || err2 != nil || n < 1 || sh.Check() != nil { // 0/0 is the zero Shard, which Check accepts
		return Shard{}, fmt.Errorf("shard %q: want I/N with 0 <= I < N, e.g. 0/4", s)
	}
	return sh, nil
}

// envShard is shard count n with the index from the environment.
func envShard(n int, getenv func(string) string) (Shard, error) {
	var i int
	switch k8s, slurm := getenv("JOB_COMPLETION_INDEX"), getenv("SLURM_ARRAY_TASK_ID"); {
	case k8s != "":
		v, err := strconv.Atoi(k8s)
		if err != nil {
			return Shard{}, fmt.Errorf("JOB_COMPLETION_INDEX=%q is not a number", k8s)
		}
		i = v
	case slurm != "":
		v, err := strconv.Atoi(slurm)
		if err != nil {
			return Shard{}, fmt.Errorf("SLURM_ARRAY_TASK_ID=%q is not a number", slurm)
		}
		lo := 0
		if m := getenv("SLURM_ARRAY_TASK_MIN"); m != "" {
			if lo, err = strconv.Atoi(m); err != nil {
				return Shard{}, fmt.Errorf("SLURM_ARRAY_TASK_MIN=%q is not a number", m)
			}
		}
		i = v - lo
	default:
		return Shard{}, fmt.Errorf("shard count %d without an index: give I/%d, or run as a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) or a Slurm array (SLURM_ARRAY_TASK_ID)", n, n)
	}
	sh := Shard{i, n}
	if err := sh.Check(); err != nil {
		return Shard{}, fmt.Errorf("%w (index from the environment)", err)
	}
	return sh, nil
}

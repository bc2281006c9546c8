package wgpu

import (
	"fmt"
	"math"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// PipelineStatistics are what the driver reports of one compiled compute pipeline (FeaturePipelineStatistics):
// per executable it made of the pipeline (compute pipelines have one), its statistics.
type PipelineStatistics struct {
	Label       string               `json:"label"` // the pipeline's
	Executables []PipelineExecutable `json:"executables"`
	// Err says why the statistics could not be read ("" when they were); the pipeline itself is fine.
	Err string `json:"error,omitempty"`
}

// PipelineExecutable is one executable the driver compiled a pipeline into, with its statistics.
type PipelineExecutable struct {
	Name         string              `json:"name"`
	Description  string              `json:"description,omitempty"`
	SubgroupSize uint32              `json:"subgroup_size"` // the subgroup size it runs with
	Statistics   []PipelineStatistic `json:"statistics"`
}

// PipelineStatistic is one statistic of an executable, named and described as the driver does ("Register
// Count" on NVIDIA's driver, "Instruction Count" on Mesa's): what it means is the driver's to say.
type PipelineStatistic struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Value is a bool, int64, uint64 or float64, as the driver reports it.
	Value any `json:"value"`
}

// Lookup returns the value of the first statistic named name in any executable, and whether there is one.
func (s PipelineStatistics) Lookup(name string) (any, bool) {
	for _, e := range s.Executables {
		for _, st := range e.Statistics {
			if st.Name == name {
				return st.Value, true
			}
		}
	}
	return nil, false
}

// Statistics returns the driver's statistics of the pipeline, read when it was created. The device needs
// FeaturePipelineStatistics (ErrMissingFeature otherwise); a driver that failed to report them is an error too.
func (p *ComputePipeline) Statistics() (PipelineStatistics, error) {
	if !p.d.features[FeaturePipelineStatistics] {
		return PipelineStatistics{}, errorf(ErrMissingFeature, "pipeline %q: statistics need %s", p.label, FeaturePipelineStatistics)
	}
	if p.stats.Err != "" {
		return p.stats, fmt.Errorf("pipeline %q: statistics: %s", p.label, p.stats.Err)
	}
	return p.stats, nil
}

// PipelineStatistics returns the statistics of every compute pipeline the device created, closed ones included,
// in creation order; nil without FeaturePipelineStatistics.
func (d *Device) PipelineStatistics() []PipelineStatistics {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]PipelineStatistics(nil), d.stats...)
}

// maxPipelineReports bounds the executables and statistics read of one pipeline: the driver says how many there
// are, and no driver reports more than a few dozen.
const maxPipelineReports = 1024

// pipelineStatistics reads the driver's statistics of pipeline h (created with CAPTURE_STATISTICS); a failure is
// recorded in Err.
func (d *Device) pipelineStatistics(h vk.Pipeline, label string) PipelineStatistics {
	return readPipelineStatistics(label, func(info *vk.PipelineInfoKHR, n *uint32, p *vk.PipelineExecutablePropertiesKHR) vk.Result {
		info.Pipeline = h
		return d.fn.GetPipelineExecutablePropertiesKHR(d.h, info, n, p)
	}, func(info *vk.PipelineExecutableInfoKHR, n *uint32, p *vk.PipelineExecutableStatisticKHR) vk.Result {
		info.Pipeline = h
		return d.fn.GetPipelineExecutableStatisticsKHR(d.h, info, n, p)
	})
}

// executablesQuery and statisticsQuery are vkGetPipelineExecutablePropertiesKHR and
// vkGetPipelineExecutableStatisticsKHR for one pipeline (tests give their own drivers).
type (
	executablesQuery func(info *vk.PipelineInfoKHR, n *uint32, p *vk.PipelineExecutablePropertiesKHR) vk.Result
	statisticsQuery  func(info *vk.PipelineExecutableInfoKHR, n *uint32, p *vk.PipelineExecutableStatisticKHR) vk.Result
)

// readPipelineStatistics reads a pipeline's executables and their statistics through the two queries.
func readPipelineStatistics(label string, execs executablesQuery, stats statisticsQuery) PipelineStatistics {
	out := PipelineStatistics{Label: label, Executables: []PipelineExecutable{}}
	var ar vk.Arena
	defer ar.Release()
	info := vk.New[vk.PipelineInfoKHR](&ar)
	props, err := countThenFill(&ar, "vkGetPipelineExecutablePropertiesKHR", "executables",
		func(n *uint32, p *vk.PipelineExecutablePropertiesKHR) vk.Result { return execs(info, n, p) })
	if err != nil {
		out.Err = err.Error()
		return out
	}
	for i := range props {
		e := PipelineExecutable{Name: vk.BytesString(props[i].Name[:]), Description: vk.BytesString(props[i].Description[:]),
			SubgroupSize: props[i].SubgroupSize}
		st, err := executableStatistics(uint32(i), stats)
		if err != nil {
			out.Err = fmt.Sprintf("executable %d (%s): %v", i, e.Name, err)
			return out
		}
		e.Statistics = st
		out.Executables = append(out.Executables, e)
	}
	return out
}

// countThenFill asks query (the Vulkan command call) for its count of what, then for that many structs, allocated
// in ar with their sType set, as such calls require. A count past maxPipelineReports is refused; VK_INCOMPLETE
// (more than the count by the time of the fill) keeps those written.
func countThenFill[T any](ar *vk.Arena, call, what string, query func(n *uint32, p *T) vk.Result) ([]T, error) {
	var n uint32
	if err := check(call, query(&n, nil)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	if n > maxPipelineReports {
		return nil, fmt.Errorf("the driver reports %d %s", n, what)
	}
	out := vk.NewSlice[T](ar, int(n))
	if r := query(&n, &out[0]); r != vk.Incomplete {
		if err := check(call, r); err != nil {
			return nil, err
		}
	}
	return out[:min(int(n), len(out))], nil
}

// executableStatistics reads the statistics of executable i through query.
func executableStatistics(i uint32, query statisticsQuery) ([]PipelineStatistic, error) {
	var ar vk.Arena
	defer ar.Release()
	info := vk.New[vk.PipelineExecutableInfoKHR](&ar)
	info.ExecutableIndex = i
	stats, err := countThenFill(&ar, "vkGetPipelineExecutableStatisticsKHR", "statistics",
		func(n *uint32, p *vk.PipelineExecutableStatisticKHR) vk.Result { return query(info, n, p) })
	if err != nil {
		return nil, err
	}
	out := []PipelineStatistic{}
	for j := range stats {
		s := &stats[j]
		st := PipelineStatistic{Name: vk.BytesString(s.Name[:]), Description: vk.BytesString(s.Description[:])}
		switch s.Format {
		case vk.PipelineExecutableStatisticFormatBool32KHR:
			st.Value = *s.Value.B32() != 0
		case vk.PipelineExecutableStatisticFormatInt64KHR:
			st.Value = *s.Value.I64()
		case vk.PipelineExecutableStatisticFormatUint64KHR:
			st.Value = *s.Value.U64()
		case vk.PipelineExecutableStatisticFormatFloat64KHR:
			st.Value = *s.Value.F64()
			if f := *s.Value.F64(); math.IsNaN(f) || math.IsInf(f, 0) {
				st.Value = fmt.Sprint(f) // JSON has no NaN or infinity
			}
		default:
			return nil, fmt.Errorf("statistic %q: unknown format %d", st.Name, s.Format)
		}
		out = append(out, st)
	}
	return out, nil
}

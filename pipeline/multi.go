package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// NewMulti is one Backend over several (--device all): batch i (Batch.Index)
// goes to part i mod n, so every run, resumed or not, assigns the same batches
// to the same devices and
// Evaluate adds their sums in batch order, exactly as for one device. Close
// closes every part, then calls onClose (when not nil), such as to release
// the instance the parts came from.
func NewMulti(parts []Backend, onClose func() error) Backend {
	return &multi{parts: parts, closeInst: onClose}
}

// multi spreads batches over several backends (--device all): batch i
// (Batch.Index) goes to part i mod n, so every run, resumed or not, assigns
// the same batches to the same devices (whose last bits may differ) and
// Evaluate adds their sums in batch order, exactly as for one device.
type multi struct {
	parts     []Backend
	closeInst func() error
}

func (m *multi) Name() string {
	names := make([]string, len(m.parts))
	for i, p := range m.parts {
		names[i] = p.Name()
	}
	return strings.Join(names, " + ")
}

// Feed is the parts' common widths, the smallest budget, and every part's
// batches in flight at once.
func (m *multi) Feed() Feed {
	f := m.parts[0].Feed()
	f.InFlight = 0
	for _, p := range m.parts {
		pf := p.Feed()
		if pf.BatchTokens > 0 && (f.BatchTokens == 0 || pf.BatchTokens < f.BatchTokens) {
			f.BatchTokens = pf.BatchTokens
		}
		if !slices.Equal(pf.Widths, f.Widths) {
			f.Widths = nil // any width: every part takes it
		}
		f.InFlight += max(pf.InFlight, 1)
	}
	return f
}

func (m *multi) Submit(ctx context.Context, b Batch) (Pending, error) {
	if b.Index < 0 {
		return nil, fmt.Errorf("batch index %d", b.Index) // our bug
	}
	return m.parts[b.Index%len(m.parts)].Submit(ctx, b)
}

// SetupTimes is the parts' added: their batches are submitted one after
// another.
func (m *multi) SetupTimes() SetupTimes {
	var t SetupTimes
	for _, p := range m.parts {
		t = t.Add(SetupOf(p))
	}
	return t
}

func (m *multi) Close() error {
	var errs []error
	for _, p := range m.parts {
		errs = append(errs, p.Close())
	}
	if m.closeInst != nil {
		errs = append(errs, m.closeInst())
	}
	return errors.Join(errs...)
}

// Describe is the parts' descriptions combined: each field theirs where
// they agree, else each part's joined with " + " in order (as Name is), the
// threads added, and every part's DeviceInfo in Device.Parts.
func (m *multi) Describe() BackendInfo {
	infos := make([]BackendInfo, len(m.parts))
	for i, p := range m.parts {
		infos[i] = p.Describe()
	}
	join := func(field func(BackendInfo) string) string {
		vals := make([]string, len(infos))
		for i, in := range infos {
			vals[i] = field(in)
		}
		if len(slices.Compact(slices.Clone(vals))) == 1 {
			return vals[0]
		}
		return strings.Join(vals, " + ")
	}
	b := BackendInfo{
		Precision: join(func(b BackendInfo) string { return b.Precision }),
		Device: DeviceInfo{
			Kind:       join(func(b BackendInfo) string { return b.Device.Kind }),
			Name:       m.Name(),
			Adapter:    join(func(b BackendInfo) string { return b.Device.Adapter }),
			Vendor:     join(func(b BackendInfo) string { return b.Device.Vendor }),
			Driver:     join(func(b BackendInfo) string { return b.Device.Driver }),
			APIVersion: join(func(b BackendInfo) string { return b.Device.APIVersion }),
			CPUModel:   join(func(b BackendInfo) string { return b.Device.CPUModel }),
			Kernels:    join(func(b BackendInfo) string { return b.Device.Kernels }),
		},
	}
	for _, in := range infos {
		b.Threads += in.Threads
		b.Device.Parts = append(b.Device.Parts, in.Device)
	}
	// The matrix units' decision where every part made the same (else each
	// part's is in Parts).
	if mu := infos[0].Device.MatrixUnits; mu != nil && !slices.ContainsFunc(infos, func(in BackendInfo) bool {
		return in.Device.MatrixUnits == nil || *in.Device.MatrixUnits != *mu
	}) {
		b.Device.MatrixUnits = mu
	}
	return b
}

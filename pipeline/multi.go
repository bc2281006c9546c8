package pipeline

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// multi spreads batches over several backends (--device all): batch i goes to
// part i mod n, so every run assigns the same batches to the same devices and
// Evaluate adds their sums in batch order, exactly as for one device.
type multi struct {
	parts     []Backend
	next      int
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
	p := m.parts[m.next%len(m.parts)]
	m.next++
	return p.Submit(ctx, b)
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

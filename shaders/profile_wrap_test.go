package shaders

import (
	"slices"
	"testing"
)

// TestElapsedNanosWrap: the time between two timestamps is their difference,
// or, where the counter wrapped in between (the end reads smaller), the
// difference modulo the counter's span of 2^bits ticks, in nanoseconds at the
// tick's period; a 64-bit counter, or a step back of a span or more, counts 0.
func TestElapsedNanosWrap(t *testing.T) {
	const top36 = 1<<36 - 1 // the last tick of a 36-bit counter
	for _, c := range []struct {
		name       string
		start, end uint64
		bits       uint32
		period     float32
		want       uint64
	}{
		{"plain", 100, 350, 36, 1, 250},
		{"equal", 7, 7, 36, 1, 0},
		{"wrap at 1 ns", top36 - 9, 20, 36, 1, 30},               // 10 ticks to the wrap, 20 after
		{"wrap at 1 ns 48 bits", 1<<48 - 1000, 500, 48, 1, 1500}, // 1000 + 500
		{"64 bits, end first", 500, 100, 64, 1, 0},
		{"64 bits", 100, 500, 64, 1, 400},
		{"back by a span", 1 << 36, 0, 36, 1, 0},
	} {
		if got := elapsedNanos(c.start, c.end, c.bits, c.period); got != c.want {
			t.Errorf("%s: elapsedNanos(%d, %d, %d bits, %v ns) = %d, want %d", c.name, c.start, c.end, c.bits, c.period, got, c.want)
		}
	}
	// 83.3 ns a tick (some Intel GPUs), 36 bits: ticks 2^36 - 2 to 1 are 3
	// ticks, 249.9 ns; Read's nanoseconds are the ticks times the period,
	// truncated, so the result is within a nanosecond.
	period := float32(83.3)
	ns := func(tick uint64) uint64 { return uint64(float64(tick) * float64(period)) } // as wgpu.QuerySet.Read
	if got := elapsedNanos(ns(top36-1), ns(1), 36, period); got < 249 || got > 250 {
		t.Errorf("83.3 ns a tick: 3 ticks across the wrap gave %d ns, want 249.9 to a nanosecond", got)
	}
}

// TestProfileWrapped: a dispatch whose end timestamp wrapped past the
// counter's valid bits counts the ticks across the wrap in its kernel's time,
// not 0.
func TestProfileWrapped(t *testing.T) {
	ops := []opRecord{{kernel: "matmul", groups: 4, flops: 10}, {kernel: "layernorm", groups: 1}, {kernel: "matmul", groups: 4, flops: 10}}
	const top = 1<<36 - 1
	ts := []uint64{
		top - 99, top - 20, // 79 ns
		top - 10, 40, // wraps: 10 ns to the top, 1 to 0, 40 after
		60, 110, // 50 ns
	}
	got := profileOf(ops, ts, 36, 1)
	want := []KernelTime{{Kernel: "matmul", Dispatches: 2, Workgroups: 8, Nanos: 129, Flops: 20}, {Kernel: "layernorm", Dispatches: 1, Workgroups: 1, Nanos: 51}}
	if !slices.Equal(got, want) {
		t.Errorf("profile %+v, want %+v", got, want)
	}
}

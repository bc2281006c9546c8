package pipeline

import (
	"testing"
	"time"
)

// timedBackend is a fakeBackend with setup times.
type timedBackend struct {
	fakeBackend
	setup SetupTimes
}

func (b *timedBackend) SetupTimes() SetupTimes { return b.setup }

// TestSetupTimesOfMulti: several devices' setup times add up (their batches
// are submitted one after another); a part without any counts none, and so
// does a backend that is no SetupTimer.
func TestSetupTimesOfMulti(t *testing.T) {
	a := &timedBackend{setup: SetupTimes{Compile: 2 * time.Second, Tune: 5 * time.Second, Check: time.Second}}
	b := &timedBackend{setup: SetupTimes{Compile: time.Second, Tune: 3 * time.Second}}
	m := NewMulti([]Backend{a, &fakeBackend{}, b}, nil)
	want := SetupTimes{Compile: 3 * time.Second, Tune: 8 * time.Second, Check: time.Second}
	if got := SetupOf(m); got != want {
		t.Errorf("the parts' setup times: %+v, want %+v", got, want)
	}
	if got := SetupOf(&fakeBackend{}); got != (SetupTimes{}) {
		t.Errorf("a backend without setup times: %+v", got)
	}
	if got := want.Sub(a.setup); got != b.setup {
		t.Errorf("Sub: %+v, want %+v", got, b.setup)
	}
	if got := want.Total(); got != 12*time.Second {
		t.Errorf("Total: %v", got)
	}
}

// TestNewTimings: the setup work done while loading is taken out of the
// loading's time, that done while scoring out of the scoring's, and each
// kind is the two added; neither remainder goes below zero.
func TestNewTimings(t *testing.T) {
	inLoad := SetupTimes{Check: 2 * time.Second}
	inScore := SetupTimes{Compile: time.Second, Tune: 4 * time.Second, Check: time.Second}
	got := *NewTimings(500*time.Millisecond, 5*time.Second, inLoad, inScore, 10)
	want := Timings{Tokenize: 0.5, Load: 3, Compile: 1, Tune: 4, Check: 3, Score: 4}
	if got != want {
		t.Errorf("NewTimings: %+v, want %+v", got, want)
	}
	if got := *NewTimings(0, time.Second, SetupTimes{Check: 2 * time.Second}, inScore, 5); got.Load != 0 || got.Score != 0 {
		t.Errorf("setup work beyond the spans measured: load %v, score %v, want 0 and 0", got.Load, got.Score)
	}
}

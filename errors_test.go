package wgpueval

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// TestGenerateOptionsCheck: every bad GenerateOptions value is an
// *OptionError naming its field, from Check and from Generate alike; the
// zero value and good ones pass.
func TestGenerateOptionsCheck(t *testing.T) {
	ev := openGenerator(t, nil)
	for _, c := range []struct {
		opt    GenerateOptions
		option string // "" for none
		value  string
	}{
		{GenerateOptions{}, "", ""},
		{GenerateOptions{MaxNewTokens: 2, Sampling: SampleOptions{Temperature: 0.8, TopK: 5, TopP: 0.9, Seed: 1}}, "", ""},
		{GenerateOptions{MaxNewTokens: 1, Sampling: SampleOptions{TopP: 1}}, "", ""},
		{GenerateOptions{MaxNewTokens: -1}, "MaxNewTokens", "-1"},
		{GenerateOptions{Sampling: SampleOptions{Temperature: -1}}, "Sampling.Temperature", "-1"},
		{GenerateOptions{Sampling: SampleOptions{Temperature: math.NaN()}}, "Sampling.Temperature", "NaN"},
		{GenerateOptions{Sampling: SampleOptions{Temperature: math.Inf(1)}}, "Sampling.Temperature", "+Inf"},
		{GenerateOptions{Sampling: SampleOptions{TopK: -3}}, "Sampling.TopK", "-3"},
		{GenerateOptions{Sampling: SampleOptions{TopP: 2}}, "Sampling.TopP", "2"},
		{GenerateOptions{Sampling: SampleOptions{TopP: -0.5}}, "Sampling.TopP", "-0.5"},
		{GenerateOptions{Sampling: SampleOptions{TopP: math.NaN()}}, "Sampling.TopP", "NaN"},
	} {
		for _, via := range []string{"Check", "Generate"} {
			var err error
			if via == "Check" {
				err = c.opt.Check()
			} else {
				if c.opt.MaxNewTokens == 0 {
					c.opt.MaxNewTokens = 1 // a short generation where it is good
				}
				_, err = ev.Generate(context.Background(), "To be", c.opt)
			}
			var oe *OptionError
			if errors.As(err, &oe) != (c.option != "") || oe != nil && (oe.Option != c.option || oe.Value != c.value) {
				t.Errorf("%s(%+v) = %v (%#v), want an OptionError of %q, value %q", via, c.opt, err, oe, c.option, c.value)
			}
			if c.option == "" && err != nil {
				t.Errorf("%s(%+v) = %v", via, c.opt, err)
			}
		}
	}
}

// TestTokenizeOptionsCheck: a negative MaxTokens and an unknown Split are
// *OptionErrors of their fields, from Check and from Tokenize.
func TestTokenizeOptionsCheck(t *testing.T) {
	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt    TokenizeOptions
		option string
	}{
		{TokenizeOptions{}, ""},
		{TokenizeOptions{MaxTokens: 3, Split: "val"}, ""},
		{TokenizeOptions{MaxTokens: -1}, "MaxTokens"},
		{TokenizeOptions{Threads: 2}, ""},
		{TokenizeOptions{Threads: -1}, "Threads"},
		{TokenizeOptions{Split: "bogus"}, "Split"},
	} {
		var oe *OptionError
		if err := c.opt.Check(); errors.As(err, &oe) != (c.option != "") || oe != nil && oe.Option != c.option {
			t.Errorf("Check(%+v) = %v, want an OptionError of %q", c.opt, err, c.option)
		}
		oe = nil
		opt := c.opt
		opt.Stdin, opt.NoTokenCache = strings.NewReader(dataText), true
		_, err := Tokenize(context.Background(), tok, "-", opt)
		if errors.As(err, &oe) != (c.option != "") || oe != nil && oe.Option != c.option || c.option == "" && err != nil {
			t.Errorf("Tokenize(%+v) = %v, want an OptionError of %q", c.opt, err, c.option)
		}
	}
}

// TestErrClosed: after Close, Evaluate, Generate and Prepare return
// ErrClosed (errors.Is), and Close again returns nil.
func TestErrClosed(t *testing.T) {
	ev := openGenerator(t, nil)
	if err := ev.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ev.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
	_, err := ev.Evaluate(context.Background(), Text("x", dataText), EvalOptions{Ctx: 16})
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Evaluate after Close: %v", err)
	}
	if _, err := ev.Generate(context.Background(), "x", GenerateOptions{MaxNewTokens: 1}); !errors.Is(err, ErrClosed) {
		t.Errorf("Generate after Close: %v", err)
	}
	if _, err := ev.Prepare(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Prepare after Close: %v", err)
	}
	// An Evaluator never prepared refuses too.
	ev2, err := Open(context.Background(), tinyModel(t), Options{Device: DeviceCPU, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	ev2.Close()
	if _, err := ev2.Prepare(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Prepare after Close, never prepared: %v", err)
	}
}

package wgpueval

import (
	"context"
	"strings"
	"testing"
)

// TestEvaluateReportsTokenizing: a long text's tokenizing is reported
// (Stage "tokenize", in bytes, ending at the text's size) before the
// evaluation's reports.
func TestEvaluateReportsTokenizing(t *testing.T) {
	var reports []Progress
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: "cpu", Offline: true, Progress: func(p Progress) {
		if p.Stage == "tokenize" || p.Stage == "eval" {
			reports = append(reports, p)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	text := strings.Repeat("To be, or not to be, that is the question. ", 36_000) // 1.5 MiB
	if _, err := ev.Evaluate(context.Background(), Text("hamlet", text), EvalOptions{Ctx: 64, MaxTokens: 512}); err != nil {
		t.Fatal(err)
	}
	var tok []Progress
	for i, p := range reports {
		if p.Stage == "tokenize" {
			if i > len(tok) {
				t.Fatalf("a tokenize report after an eval report: %v", reports)
			}
			tok = append(tok, p)
		}
	}
	if len(tok) == 0 || tok[0].File != "hamlet" || tok[len(tok)-1].Total != int64(len(text)) {
		t.Fatalf("tokenize reports %v, want some of hamlet's %d bytes", tok, len(text))
	}
}

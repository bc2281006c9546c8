package wgpueval

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestGenerationJSON: the keys of a Generation in JSON, nested ones as
// parent.key, are exactly these, all snake_case.
func TestGenerationJSON(t *testing.T) {
	data, err := json.Marshal(Generation{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, v := range m {
		keys = append(keys, k)
		if sub, ok := v.(map[string]any); ok {
			for s := range sub {
				keys = append(keys, k+"."+s)
			}
		}
	}
	slices.Sort(keys)
	want := []string{"decode_seconds", "decode_tokens_per_second", "device", "logprobs", "max_new_tokens", "model",
		"prefill_seconds", "prefill_tokens_per_second", "prompt", "prompt_tokens", "sampling", "sampling.seed",
		"sampling.temperature", "sampling.top_k", "sampling.top_p", "stop_reason", "text", "tokens"}
	if !slices.Equal(keys, want) {
		t.Errorf("JSON keys %v, want %v", keys, want)
	}
	for _, k := range keys {
		if strings.ToLower(k) != k || strings.ContainsAny(k, "- ") {
			t.Errorf("key %q is not snake_case", k)
		}
	}
}

package runfile_test

import (
	"bytes"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// decodeGeneric decodes a per-token file as a reader that knows only msgpack
// does: maps, strings as strings, binaries as byte slices.
func decodeGeneric(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := msgpack.NewDecoder(bytes.NewReader(data)).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPerTokenExactSumIsString: the header's nll_sum_exact is a msgpack
// string, "0xHEXp±EXP" as in the JSON result (README), not a binary a
// reader must know to turn into text; a file of earlier builds, which wrote
// it as a binary, still reads.
func TestPerTokenExactSumIsString(t *testing.T) {
	f := testPerTokenFile(t)
	data, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m := decodeGeneric(t, data)
	h := m["header"].(map[string]any)
	want := f.Header.NLLSumExact.String()
	if got, ok := h["nll_sum_exact"].(string); !ok || got != want {
		t.Fatalf("header nll_sum_exact is %T %v, want the string %q", h["nll_sum_exact"], h["nll_sum_exact"], want)
	}

	// As earlier builds wrote it: the same text as a msgpack binary.
	h["nll_sum_exact"] = []byte(want)
	var buf bytes.Buffer
	if err := msgpack.NewEncoder(&buf).Encode(m); err != nil {
		t.Fatal(err)
	}
	old, err := runfile.ParsePerToken(buf.Bytes())
	if err != nil {
		t.Fatalf("a file with nll_sum_exact as a binary: %v", err)
	}
	if *old.Header.NLLSumExact != *f.Header.NLLSumExact || len(old.Tokens) != len(f.Tokens) {
		t.Errorf("a file with nll_sum_exact as a binary reads as %v, %d targets", old.Header.NLLSumExact, len(old.Tokens))
	}
}

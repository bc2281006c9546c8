package runfile_test

import (
	"bytes"
	"hash/crc32"
	"strings"
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

// TestPerTokenChecksum: the file carries crc32c, the CRC-32C (Castagnoli) of
// its columns' bytes in the order doc, pos, token, nll, top_id, top_logprob,
// which a reader can check without re-encoding anything; a byte changed in
// the token or top columns (which no other check sees while the id stays in
// the vocabulary and the log-probabilities in order) is refused; a file
// without it (earlier builds) still reads.
func TestPerTokenChecksum(t *testing.T) {
	f := topFile(2)
	data, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m := decodeGeneric(t, data)
	var cols []byte
	for _, c := range []string{"doc", "pos", "token", "nll", "top_id", "top_logprob"} {
		cols = append(cols, m[c].([]byte)...)
	}
	want := crc32.Checksum(cols, crc32.MakeTable(crc32.Castagnoli))
	if got, ok := m["crc32c"]; !ok || toUint64(got) != uint64(want) {
		t.Fatalf("crc32c is %T %v, want %d", got, got, want)
	}

	// The first target's id, 10, is 11 now: in the vocabulary, in order.
	tok := m["token"].([]byte)
	i := bytes.Index(data, tok)
	if i < 0 || tok[0] != 10 {
		t.Fatal("token column not found")
	}
	bad := bytes.Clone(data)
	bad[i] = 11
	if _, err := runfile.ParsePerToken(bad); err == nil || !strings.Contains(err.Error(), "CRC-32C") {
		t.Errorf("a changed token id: err = %v, want a CRC-32C mismatch", err)
	}
	// And a top log-probability's lowest mantissa bit.
	lp := m["top_logprob"].([]byte)
	bad = bytes.Clone(data)
	bad[bytes.Index(data, lp)] ^= 1
	if _, err := runfile.ParsePerToken(bad); err == nil {
		t.Error("a changed top log-probability was accepted")
	}

	delete(m, "crc32c")
	var buf bytes.Buffer
	if err := msgpack.NewEncoder(&buf).Encode(m); err != nil {
		t.Fatal(err)
	}
	if _, err := runfile.ParsePerToken(buf.Bytes()); err != nil {
		t.Errorf("a file without crc32c: %v", err)
	}
}

// toUint64 is a msgpack integer decoded into any as a uint64.
func toUint64(v any) uint64 {
	switch x := v.(type) {
	case uint8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint32:
		return uint64(x)
	case uint64:
		return x
	case int8:
		return uint64(x)
	case int16:
		return uint64(x)
	case int32:
		return uint64(x)
	case int64:
		return uint64(x)
	}
	return 1 << 63
}

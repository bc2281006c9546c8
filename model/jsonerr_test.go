package model

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// TestJSONErrorsInFileTerms: a config.json or safetensors header value of the
// wrong type is named by its field and the JSON type wanted, with no Go
// struct names in the message.
func TestJSONErrorsInFileTerms(t *testing.T) {
	for _, c := range []struct {
		config string
		want   string
	}{
		{`{"model_type":"gpt2","n_layer":"two"}`, "field n_layer: a JSON string, where a whole number is wanted"},
		{`{"model_type":"llama","num_attention_heads":[4]}`, "field num_attention_heads: a JSON array, where a whole number is wanted"},
		{`{"model_type":7}`, "field model_type: a JSON number, where a string is wanted"},
		{`{"model_type":"gpt2",}`, "not valid JSON at byte"},
	} {
		_, err := ParseConfig([]byte(c.config))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "Go struct") {
			t.Errorf("%s: err = %v, want %q", c.config, err, c.want)
		}
	}
	header := []byte(`{"w":{"dtype":"F32","shape":"4","data_offsets":[0,16]}}`)
	file := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	file = append(append(file, header...), make([]byte, 16)...)
	_, err := ParseSafetensors(bytes.NewReader(file), int64(len(file)))
	if want := `tensor "w": field shape: a JSON string, where a list is wanted`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Go struct") {
		t.Errorf("shape as a string: err = %v, want %q", err, want)
	}
}

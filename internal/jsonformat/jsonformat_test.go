package jsonformat

import (
	"encoding/json"
	"strings"
	"testing"
)

type doc struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
}

type marked doc

func (d marked) MarshalJSON() ([]byte, error) { return Marshal("test doc", 3, doc(d)) }

func TestMarshal(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{doc{A: 1, B: "<x>"}, `{"format":"test doc","format_version":3,"a":1,"b":"<x>"}`},
		{struct{}{}, `{"format":"test doc","format_version":3}`},
	} {
		got, err := Marshal("test doc", 3, tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("Marshal(%#v) = %s, %v; want %s", tc.v, got, err, tc.want)
		}
	}
	if _, err := Marshal("test doc", 1, []int{1}); err == nil || !strings.Contains(err.Error(), "not encode as a JSON object") {
		t.Errorf("Marshal of an array: %v, want an error", err)
	}
}

// TestMarshalThroughEncoders: the marked type's keys come first, in
// json.Marshal's and MarshalIndent's output, and the caller's encoder decides
// HTML escaping.
func TestMarshalThroughEncoders(t *testing.T) {
	v := marked{A: 2, B: "a<b"}
	b, err := json.Marshal(v)
	if err != nil || string(b) != `{"format":"test doc","format_version":3,"a":2,"b":"a\u003cb"}` {
		t.Errorf("json.Marshal: %s, %v", b, err)
	}
	b, err = json.MarshalIndent(struct {
		In marked `json:"in"`
	}{v}, "", " ")
	want := "{\n \"in\": {\n  \"format\": \"test doc\",\n  \"format_version\": 3,\n  \"a\": 2,\n  \"b\": \"a\\u003cb\"\n }\n}"
	if err != nil || string(b) != want {
		t.Errorf("MarshalIndent: %s, %v; want %s", b, err, want)
	}
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil || sb.String() != `{"format":"test doc","format_version":3,"a":2,"b":"a<b"}`+"\n" {
		t.Errorf("Encoder without HTML escaping: %s, %v", sb.String(), err)
	}
	var back doc
	if err := json.Unmarshal(b, &struct {
		In *doc `json:"in"`
	}{&back}); err != nil || back != doc(v) {
		t.Errorf("read back %+v, %v; want %+v", back, err, v)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		data, err string
	}{
		{`{"a":1}`, ""}, // an older build's: no mark
		{`{"format":"test doc","format_version":1,"a":1}`, ""},
		{`{"format":"test doc","format_version":2}`, ""},
		{`{"format":"test doc","format_version":3}`, "written by a newer wgpu-eval: this build reads up to 2"},
		{`{"format":"wgpu-eval compare","format_version":1}`, `a "wgpu-eval compare" file, not a test doc`},
		{`{"format":"test doc"}`, "only one is there"},
		{`{"format_version":1}`, "only one is there"},
		{`{"format":"test doc","format_version":0}`, "format_version 0"},
		{`{"format":7,"format_version":1}`, "cannot unmarshal"},
		{`{"format":"test doc","format_version":1.5}`, "cannot unmarshal"},
		{`[1,2]`, "cannot unmarshal"},
		{`{"format":`, "unexpected end"},
	} {
		err := Check([]byte(tc.data), "test doc", 2)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Check(%s) = %v; want %q", tc.data, err, tc.err)
		}
	}
}

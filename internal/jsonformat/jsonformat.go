// Package jsonformat marks the JSON documents wgpu-eval writes with what they
// are and the version of their layout, and checks that mark where a file is
// read back, so that a reader (ours or anyone's) tells a result from a
// comparison, and a layout a later build changed from the one it knows,
// without guessing from the keys or the tool's version.
//
// The mark is two keys before the document's own: "format", a fixed name
// such as "wgpu-eval result", and "format_version", an integer that grows
// by one whenever a key is removed or changes meaning (adding a key does not
// change it: readers ignore keys they do not know). Files written before the
// mark existed have neither key.
package jsonformat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Marshal is v's JSON object with "format": format and "format_version":
// version before v's own keys. v must encode as a JSON object, and must not
// be a type whose MarshalJSON calls Marshal with itself (convert it to a type
// without the method first, as in
//
//	func (r Result) MarshalJSON() ([]byte, error) {
//		type plain Result
//		return jsonformat.Marshal(ResultFormat, ResultFormatVersion, plain(r))
//	}
//
// ). It escapes no HTML characters itself, so that the encoder that calls
// MarshalJSON decides (json.Marshal escapes them, an Encoder with
// SetEscapeHTML(false) does not).
func Marshal(format string, version int, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("jsonformat: %s: %T does not encode as a JSON object", format, v)
	}
	name, err := json.Marshal(format)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(name)+40)
	out = append(out, `{"format":`...)
	out = append(out, name...)
	out = append(out, `,"format_version":`...)
	out = strconv.AppendInt(out, int64(version), 10)
	if rest := body[1:]; !bytes.Equal(bytes.TrimSpace(rest), []byte{'}'}) {
		out = append(out, ',')
		out = append(out, rest...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

// mark is the two keys as Check decodes them.
type mark struct {
	Format  *string `json:"format"`
	Version *int    `json:"format_version"`
}

// Check reads the mark of the JSON object data and says whether this build
// can read it as format: an object without the mark (an older build's) is
// fine; one marked as another format, or with a version above newest, is an
// error naming what it is. It does not check the rest of data (decoding it
// does); data that is not a JSON object is an error.
func Check(data []byte, format string, newest int) error {
	var m mark
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	switch {
	case m.Format == nil && m.Version == nil:
		return nil
	case m.Format == nil || m.Version == nil:
		return fmt.Errorf(`a damaged %s: "format" and "format_version" go together, and only one is there`, format)
	case *m.Format != format:
		return fmt.Errorf("a %q file, not a %s", *m.Format, format)
	case *m.Version < 1:
		return fmt.Errorf("a damaged %s: format_version %d", format, *m.Version)
	case *m.Version > newest:
		return fmt.Errorf("a %s of format_version %d, written by a newer wgpu-eval: this build reads up to %d", format, *m.Version, newest)
	}
	return nil
}

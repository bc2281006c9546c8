package model

import (
	"encoding/json"
	"errors"
	"fmt"
)

// jsonError says what is wrong with a model file's JSON in its own terms:
// a value of the wrong type names the field and both types ("field n_layer:
// a JSON string, where a number is wanted") instead of Go's wording, which
// names this package's struct types; a syntax error gets its byte offset.
// Other errors pass unchanged.
func jsonError(err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		field := te.Field
		if field == "" {
			field = "the top level"
		} else {
			field = "field " + field
		}
		return fmt.Errorf("%s: a JSON %s, where %s is wanted", field, te.Value, jsonKind(te.Type.Kind().String()))
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("not valid JSON at byte %d: %w", se.Offset, err)
	}
	return err
}

// jsonKind names a Go kind as the JSON value it is decoded from.
func jsonKind(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "an object"
	}
	return "another type"
}

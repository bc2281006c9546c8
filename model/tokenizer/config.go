package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ConfigFile is the file beside tokenizer.json that transformers reads with
// it: the names of the special tokens and how the Llama classes add them.
const ConfigFile = "tokenizer_config.json"

// tokenizerConfig is the part of a tokenizer_config.json this package uses.
//
// Its legacy and add_prefix_space are not read. transformers' fast Llama
// tokenizer (4.x) uses them only when it converts tokenizer.model
// (SentencePiece) instead of reading tokenizer.json: with from_slow, which
// a non-null add_prefix_space forces. legacy false then writes the "▁" as a
// Metaspace pre-tokenizer with prepend_scheme "first" ("never" when
// add_prefix_space is false) and no normalizer; legacy true as a Replace
// normalizer after a Prepend (none when add_prefix_space is false). A
// tokenizer.json saved from such a tokenizer holds those components; loaded
// from tokenizer.json, the file's own components decide.
type tokenizerConfig struct {
	Class              string    `json:"tokenizer_class"`
	BOS                tokenName `json:"bos_token"`
	EOS                tokenName `json:"eos_token"`
	AddBOS             *bool     `json:"add_bos_token"`
	AddEOS             *bool     `json:"add_eos_token"`
	SplitSpecialTokens bool      `json:"split_special_tokens"`
	present            bool      // the file exists
	path               string
}

// tokenName is a special token named in tokenizer_config.json: a string, an
// object with a "content" (an AddedToken), or null.
type tokenName string

// UnmarshalJSON reads either form.
func (n *tokenName) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*n = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = tokenName(s)
		return nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(b, &obj); err != nil || obj.Content == nil {
		return fmt.Errorf("want a token as a string or an object with \"content\", got %s", bytes.TrimSpace(b))
	}
	*n = tokenName(*obj.Content)
	return nil
}

// readConfig reads the tokenizer_config.json at path; a missing file is an
// empty configuration. It returns the file's bytes for the tokenizer's ID.
func readConfig(path string) (*tokenizerConfig, []byte, error) {
	ok, err := exists(path)
	if err != nil || !ok {
		return &tokenizerConfig{path: path}, nil, err
	}
	data, err := readFile(path)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := parseConfig(data, path)
	return cfg, data, err
}

// parseConfig parses the bytes of the tokenizer_config.json at path.
func parseConfig(data []byte, path string) (*tokenizerConfig, error) {
	cfg := &tokenizerConfig{present: true, path: path}
	if err := json.Unmarshal(data, cfg); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, jsonError(err))
	}
	return cfg, nil
}

// llamaClasses are the transformers classes whose fast tokenizer replaces
// the file's post-processor with "[bos] $A [eos]" as add_bos_token (default
// true) and add_eos_token (default false) say (update_post_processor).
var llamaClasses = map[string]bool{
	"LlamaTokenizer": true, "LlamaTokenizerFast": true,
	"CodeLlamaTokenizer": true, "CodeLlamaTokenizerFast": true,
	"GemmaTokenizer": true, "GemmaTokenizerFast": true,
}

// template returns the special tokens transformers' tokenizer(text) puts
// around a text under this configuration, by name, and whether the
// configuration decides them (else the file's post-processor does).
func (c *tokenizerConfig) template() (lead, trail []string, decides bool, err error) {
	if !llamaClasses[c.Class] {
		return nil, nil, false, nil
	}
	if c.AddBOS == nil || *c.AddBOS {
		if c.BOS == "" {
			return nil, nil, false, fmt.Errorf("%s: add_bos_token is true but there is no bos_token", c.path)
		}
		lead = []string{string(c.BOS)}
	}
	if c.AddEOS != nil && *c.AddEOS {
		if c.EOS == "" {
			return nil, nil, false, fmt.Errorf("%s: add_eos_token is true but there is no eos_token", c.path)
		}
		trail = []string{string(c.EOS)}
	}
	return lead, trail, true, nil
}

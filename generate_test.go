package wgpueval

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// openGenerator opens synth.Peaked (edited first by edit, when set) on
// the CPU, prepared.
func openGenerator(t *testing.T, edit func(*model.Model)) *Evaluator {
	t.Helper()
	m := synth.Peaked(synth.TinyConfig(), 5)
	if edit != nil {
		edit(m)
	}
	dir := filepath.Join(t.TempDir(), "peaked")
	if err := synth.WriteSafetensors(dir, m, "F32"); err != nil {
		t.Fatal(err)
	}
	ev, err := Open(context.Background(), dir, Options{Device: "cpu", Threads: 1, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ev.Close() })
	if _, err := ev.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestGenerateStopReasons: each way a generation ends sets its StopReason:
// <|endoftext|>, --max-new-tokens, the model's positions (64 in the tiny
// model), and a cancelled context, during the decoding (what was generated so
// far comes back with the error) and during the prefill (no tokens).
func TestGenerateStopReasons(t *testing.T) {
	const prompt = "To be, or not to be"
	ev := openGenerator(t, nil)
	bg := context.Background()
	nPrompt := len(ev.Tokenizer().Encode(prompt))

	g, err := ev.Generate(bg, prompt, GenerateOptions{MaxNewTokens: 5})
	if err != nil || g.StopReason != StopMaxTokens || len(g.Tokens) != 5 || g.MaxNewTokens != 5 {
		t.Fatalf("max new tokens: %v, stop %q, %d tokens, max_new_tokens %d", err, g.StopReason, len(g.Tokens), g.MaxNewTokens)
	}

	g, err = ev.Generate(bg, prompt, GenerateOptions{})
	if err != nil || g.StopReason != StopPositions || nPrompt+len(g.Tokens) != 65 {
		t.Fatalf("positions: %v, stop %q after %d+%d tokens, want positions after 64+1", err, g.StopReason, nPrompt, len(g.Tokens))
	}

	ctx, cancel := context.WithCancel(bg)
	pieces := 0
	g, err = ev.Generate(ctx, prompt, GenerateOptions{OnText: func(string) {
		if pieces++; pieces == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || g == nil {
		t.Fatalf("cancelled while decoding: %v, %v", g, err)
	}
	if g.StopReason != StopCancelled || len(g.Tokens) < 3 || len(g.Tokens) >= 64-nPrompt || len(g.Logprobs) != len(g.Tokens) {
		t.Errorf("cancelled while decoding: stop %q after %d tokens (%d logprobs)", g.StopReason, len(g.Tokens), len(g.Logprobs))
	}
	if want := ev.Tokenizer().Decode(g.Tokens); g.Text != want {
		t.Errorf("cancelled while decoding: text %q, the tokens decode to %q", g.Text, want)
	}

	g, err = ev.Generate(ctx, prompt, GenerateOptions{}) // ctx is cancelled: the prefill stops
	if !errors.Is(err, context.Canceled) || g == nil || g.StopReason != StopCancelled || len(g.Tokens) != 0 {
		t.Fatalf("cancelled before the prefill: %+v, %v", g, err)
	}

	eot := openGenerator(t, func(m *model.Model) { m.Weights.WTE[50256*m.Config.NEmbd] = 20 }) // <|endoftext|> the likeliest
	g, err = eot.Generate(bg, prompt, GenerateOptions{MaxNewTokens: 5})
	if err != nil || g.StopReason != StopEOT || !slices.Equal(g.Tokens, []int32{50256}) || g.Text != "" {
		t.Fatalf("eot: %v, stop %q, tokens %v, text %q", err, g.StopReason, g.Tokens, g.Text)
	}
}

// TestGenerateJSONKeys: the keys of a Generation in JSON, nested ones as
// parent.key, are exactly these, all snake_case.
func TestGenerateJSONKeys(t *testing.T) {
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
	want := []string{"decode_seconds", "decode_tokens_per_second", "device", "format", "format_version", "logprobs", "max_new_tokens", "model",
		"prefill_seconds", "prefill_tokens_per_second", "prompt", "prompt_tokens", "sampling", "sampling.seed",
		"sampling.temperature", "sampling.top_k", "sampling.top_p", "stop_reason", "text", "tokens"}
	if !slices.Equal(keys, want) {
		t.Errorf("JSON keys %v, want %v", keys, want)
	}
	if !strings.HasPrefix(string(data), `{"format":"wgpu-eval generate","format_version":1,"model":`) {
		t.Errorf("the JSON does not start with its mark: %.80s", data)
	}
	for _, k := range keys {
		if strings.ToLower(k) != k || strings.ContainsAny(k, "- ") {
			t.Errorf("key %q is not snake_case", k)
		}
	}
}

// TestGeneratePromptSpecials: the prompt is fed as transformers'
// tokenizer(prompt) gives it, the special tokens the tokenizer's
// post-processor puts before a text included (the sp tokenizer's <s>,
// bl-llama3's <|begin|>; none for GPT-2), and the model sees them: the first
// new token's logprob is the CPU forward's over those ids.
func TestGeneratePromptSpecials(t *testing.T) {
	const prompt = "To be, or not to be"
	for _, c := range []struct {
		modelType, tok string
		bos            int32 // -1: none
	}{{"llama", "sp", 1}, {"qwen2", "bl-llama3", 433}, {"qwen2", "bl-qwen", -1}} {
		dir, _ := llamaFolder(t, c.modelType, c.tok)
		ev, err := Open(context.Background(), dir, Options{Device: "cpu", Threads: 1, Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ev.Close() })
		g, err := ev.Generate(context.Background(), prompt, GenerateOptions{MaxNewTokens: 2})
		if err != nil {
			t.Fatal(err)
		}
		want := ev.Tokenizer().Encode(prompt)
		if c.bos >= 0 {
			want = append([]int32{c.bos}, want...)
		}
		if !slices.Equal(g.PromptTokens, want) {
			t.Errorf("%s: prompt tokens %v, want %v", c.tok, g.PromptTokens, want)
		}
		ck, err := model.OpenCheckpoint(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		cpu, err := model.LoadCPU(context.Background(), ck, 1, model.LoadOptions{})
		ck.Close()
		if err != nil {
			t.Fatal(err)
		}
		_, nll, err := cpu.LossPerToken(context.Background(), []model.Sequence{{Tokens: append(slices.Clone(want), g.Tokens[0]), First: len(want)}})
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(g.Logprobs[0] + float64(nll[0])); d > 1e-5 {
			t.Errorf("%s: first new token's logprob %.7f, the forward over %v gives %.7f", c.tok, g.Logprobs[0], want, -nll[0])
		}
	}
}

// TestGenerateStopsAtEOSList: Generate stops, as transformers' generate
// does, at every id of the model's eos_token_id (an id or a list), from
// generation_config.json, else config.json, besides the tokenizer's
// end-of-text token; the stop token is in Tokens, not in Text.
func TestGenerateStopsAtEOSList(t *testing.T) {
	const prompt = "To be, or not to be"
	dir, _ := llamaFolder(t, "qwen2", "bl-qwen")
	var logged []string
	generate := func() *Generation {
		t.Helper()
		logged = nil
		ev, err := Open(context.Background(), dir, Options{Device: "cpu", Threads: 1, Offline: true,
			Log: func(msg string) { logged = append(logged, msg) }})
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Close()
		g, err := ev.Generate(context.Background(), prompt, GenerateOptions{MaxNewTokens: 4})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	first := generate().Tokens[0] // the greedy first token, not the tokenizer's <|end|> (434)
	if first == 434 {
		t.Fatal("the model's first greedy token is <|end|>: choose another prompt")
	}
	setEOS := func(file string, eos any) {
		t.Helper()
		m := map[string]any{}
		if data, err := os.ReadFile(filepath.Join(dir, file)); err == nil {
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
		}
		m["eos_token_id"] = eos
		data, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name      string
		setup     func()
		stopFirst bool
	}{
		{"config.json id", func() { setEOS("config.json", first) }, true},
		{"generation_config.json list", func() { setEOS("generation_config.json", []any{434, first}) }, true},
		// generation_config.json decides where it names eos_token_id, as in transformers.
		{"generation_config.json without it", func() { setEOS("generation_config.json", 434) }, false},
		// One that JSON cannot read (Python writes NaN) is passed over with a warning: config.json's id.
		{"unreadable generation_config.json", func() {
			if err := os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"temperature": NaN, "eos_token_id": 434}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		c.setup()
		g := generate()
		if c.stopFirst && (g.StopReason != StopEOT || !slices.Equal(g.Tokens, []int32{first}) || g.Text != "") {
			t.Errorf("%s: stop %q, tokens %v, text %q; want eot after [%d], no text", c.name, g.StopReason, g.Tokens, g.Text, first)
		}
		if !c.stopFirst && (g.StopReason != StopMaxTokens || len(g.Tokens) != 4) {
			t.Errorf("%s: stop %q after %v; want the 4 tokens", c.name, g.StopReason, g.Tokens)
		}
		warned := slices.ContainsFunc(logged, func(m string) bool { return strings.Contains(m, "generation_config.json") })
		if want := strings.HasPrefix(c.name, "unreadable"); warned != want {
			t.Errorf("%s: log %q, want a warning naming generation_config.json: %v", c.name, logged, want)
		}
	}
}

// TestGenerateNonFiniteLogits: logits that are not finite (an embedding of
// 3e38 overflows the forward: an infinite logit, NaN log-probabilities) end
// the generation with an error, as Evaluate's non-finite NLL does, rather
// than with tokens of NaN logprob (which JSON cannot hold); what was
// generated before comes back.
func TestGenerateNonFiniteLogits(t *testing.T) {
	ev := openGenerator(t, func(m *model.Model) {
		C := m.Config.NEmbd
		hello := 15496
		m.Weights.WTE[hello*C+3], m.Weights.WTE[hello*C+4] = 3e38, -3e38
	})
	g, err := ev.Generate(context.Background(), "Hello world", GenerateOptions{MaxNewTokens: 4})
	if err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Fatalf("error %v, want one saying the logits are not finite", err)
	}
	if g == nil || len(g.Tokens) != len(g.Logprobs) || len(g.Tokens) >= 4 {
		t.Fatalf("generation %+v", g)
	}
	for _, lp := range g.Logprobs {
		if math.IsNaN(lp) || math.IsInf(lp, 0) {
			t.Errorf("logprobs %v", g.Logprobs)
		}
	}
	if _, err := json.Marshal(g); err != nil {
		t.Error(err)
	}
}

// TestTextStreamWholeCharacters: the text of tokens that cut characters
// (GPT-2's byte-level BPE splits an emoji or a CJK character over several
// tokens; the sp tokenizer's byte fallback gives one byte a token) reaches
// OnText in pieces of whole UTF-8 characters only, and all of it: the pieces
// add up to the text. Invalid bytes that no later token completes are passed
// on as they are, at the latest by the flush.
func TestTextStreamWholeCharacters(t *testing.T) {
	const text = "naïve café — 東京 🤖👍🏽 ok\n𝔘𝔫𝔦"
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := llamaFolder(t, "llama", "sp")
	sp, err := tokenizer.LoadJSON(filepath.Join(dir, tokenizer.TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []*tokenizer.Tokenizer{gpt2, sp} {
		ids := tok.Encode(text)
		cut := 0
		for _, id := range ids {
			if !utf8.ValidString(tok.TokenText(id)) {
				cut++
			}
		}
		if cut == 0 {
			t.Fatalf("%s: no token of %q cuts a character: the test tests nothing", tok.ID(), text)
		}
		var pieces []string
		var want strings.Builder // every token's text as it stands in running text (sp's first "▁" a space, unlike Decode)
		s := textStream{emit: func(p string) { pieces = append(pieces, p) }}
		for _, id := range ids {
			s.add(tok.TokenText(id))
			want.WriteString(tok.TokenText(id))
		}
		s.flush()
		for _, p := range pieces {
			if !utf8.ValidString(p) {
				t.Errorf("%s: piece %q is not whole UTF-8 characters", tok.ID(), p)
			}
		}
		if got := strings.Join(pieces, ""); got != want.String() || s.text != got || strings.TrimPrefix(got, " ") != text {
			t.Errorf("%s: streamed %q (text %q), the tokens' texts are %q", tok.ID(), got, s.text, want.String())
		}
	}
	// Bytes no token completes: passed on as they are.
	var got []string
	s := textStream{emit: func(p string) { got = append(got, p) }}
	for _, p := range []string{"a\xe2\x80", "b", "\xf0\x9f"} {
		s.add(p)
	}
	s.flush()
	if strings.Join(got, "") != "a\xe2\x80b\xf0\x9f" || len(got) != 3 {
		t.Errorf("incomplete characters: pieces %q", got)
	}
}

package wgpueval

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/internal/jsonformat"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
)

// GenerateOptions say how Generate continues a prompt. The zero value decodes
// greedily until an end-of-sequence token (<|endoftext|>, ...: see
// Generate) or the model's last position.
type GenerateOptions struct {
	// MaxNewTokens bounds the tokens generated; 0 means until an end-of-sequence token
	// or the model's positions.
	MaxNewTokens int
	// Sampling: temperature (0 is greedy), top-k, top-p and the seed.
	Sampling SampleOptions
	// OnText, when set, receives the text as it is generated, piece by piece
	// (each a whole number of UTF-8 characters, held back until a character
	// cut by a token is complete). It is called from Generate's goroutine,
	// and may call the Evaluator as Options.Progress may (Close stops the
	// generation).
	OnText func(text string)
}

// Check reports the first bad value of o (Generate makes these checks
// first), as an *OptionError: MaxNewTokens, Sampling.Temperature,
// Sampling.TopK or Sampling.TopP out of range.
func (o GenerateOptions) Check() error {
	s := o.Sampling
	switch {
	case o.MaxNewTokens < 0:
		return badInt("MaxNewTokens", o.MaxNewTokens, "must not be negative")
	case s.Temperature < 0 || math.IsNaN(s.Temperature) || math.IsInf(s.Temperature, 0):
		return badFloat("Sampling.Temperature", s.Temperature, "must be a finite number >= 0 (0 is greedy)")
	case s.TopK < 0:
		return badInt("Sampling.TopK", s.TopK, "must not be negative (0 keeps all)")
	case s.TopP < 0 || s.TopP > 1 || math.IsNaN(s.TopP):
		return badFloat("Sampling.TopP", s.TopP, "must be between 0 and 1 (0 or 1 keeps all)")
	}
	// Anything model's own check refuses that the cases above let through
	// is still an OptionError, of the sampling as a whole.
	if err := s.Check(); err != nil {
		return &OptionError{"Sampling", fmt.Sprintf("%+v", s), err.Error()}
	}
	return nil
}

// Stop reasons of a Generation.
const (
	StopEOT       = "eot"            // the model generated an end-of-sequence token (<|endoftext|>, ...)
	StopMaxTokens = "max_new_tokens" // MaxNewTokens were generated
	StopPositions = "positions"      // the model's n_positions (or the fewer its device holds) are full
	StopCancelled = "cancelled"      // ctx was cancelled (Generate returns its error too)
)

// GenerationFormat and GenerationFormatVersion mark a Generation's JSON
// (generate --json): its first keys are "format" and "format_version", as
// a result's are (pipeline.ResultFormat).
const (
	GenerationFormat        = "wgpu-eval generate"
	GenerationFormatVersion = 1
)

// Generation is the outcome of Generate, as `wgpu-eval generate --json`
// writes it.
type Generation struct {
	Model        string    `json:"model"`
	Device       string    `json:"device"`
	Prompt       string    `json:"prompt"`
	PromptTokens []int32   `json:"prompt_tokens"`
	Tokens       []int32   `json:"tokens"`      // the new token ids, the end-of-sequence token included when generated
	Logprobs     []float64 `json:"logprobs"`    // ln p(token | everything before) under the model, at temperature 1
	Text         string    `json:"text"`        // the new tokens' text, without the end-of-sequence token
	StopReason   string    `json:"stop_reason"` // StopEOT, StopMaxTokens, StopPositions or StopCancelled
	// Positions is, with StopPositions, the positions that were full: the
	// model's, or fewer where the device caps them (lavapipe's shader loop
	// limit, a GPU's binding limit: see wgpu-eval devices); 0 otherwise.
	Positions int `json:"positions,omitempty"`

	MaxNewTokens int           `json:"max_new_tokens"` // the limit asked for (0: none)
	Sampling     SampleOptions `json:"sampling"`

	PrefillSeconds         float64 `json:"prefill_seconds"`
	DecodeSeconds          float64 `json:"decode_seconds"`
	PrefillTokensPerSecond float64 `json:"prefill_tokens_per_second"`
	DecodeTokensPerSecond  float64 `json:"decode_tokens_per_second"` // new tokens after the first, per second of decoding
}

// MarshalJSON is the Generation's JSON, marked with GenerationFormat and
// GenerationFormatVersion.
func (g Generation) MarshalJSON() ([]byte, error) {
	type fields Generation // without this method
	return jsonformat.Marshal(GenerationFormat, GenerationFormatVersion, fields(g))
}

// Generate continues prompt with the model: it prefills the prompt's tokens
// (PromptTokens: with the BOS the tokenizer puts before a text) into a KV
// cache allocated once for the prompt and opt.MaxNewTokens (the model's
// positions when 0), then decodes one token at a time (each step runs only
// the new token, writing its keys and values in place), sampling on the
// host. It stops at an end-of-sequence token (the tokenizer's end-of-text
// token and every eos_token_id of the model's generation_config.json, else
// config.json, as transformers' generate stops), after opt.MaxNewTokens, or
// when the model's positions are full (StopReason says which). Cancelling
// ctx (during the prefill or the decoding) returns ctx's error with what
// was generated so far, StopReason StopCancelled; logits that are not
// finite return an error with what was generated before them. An empty
// prompt, or one longer than the model's positions, is an *OptionError of
// "Prompt".
//
// Generation runs on the Evaluator's device: the CPU path's KV-cache
// generator, or a decode session on a GPU (its KV cache of every layer on the
// device, one readback of the logits per step); "all" is refused.
func (e *Evaluator) Generate(ctx context.Context, prompt string, opt GenerateOptions) (*Generation, error) {
	if e.fromCallback() {
		return nil, fmt.Errorf("generate: %w", ErrReentrant)
	}
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if prompt == "" {
		return nil, &OptionError{"Prompt", `""`, "empty: give some text to continue"}
	}
	cfg := e.Config()
	ptoks, err := e.promptTokens(ctx, prompt)
	if err != nil {
		return nil, fmt.Errorf("generate: prompt: %w", err)
	}
	if len(ptoks) > cfg.NPositions {
		return nil, &OptionError{"Prompt", fmt.Sprintf("of %d tokens", len(ptoks)), fmt.Sprintf("longer than the model's %d positions", cfg.NPositions)}
	}
	sampler, err := model.NewSampler(opt.Sampling)
	if err != nil {
		return nil, err
	}
	stops := e.stopTokens()

	ctx, end, err := e.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer end()
	e.mu.Lock()
	defer e.unlock()
	positions := 0 // the model's n_positions
	if opt.MaxNewTokens > 0 {
		positions = min(cfg.NPositions, len(ptoks)+opt.MaxNewTokens)
	}
	g, device, done, err := e.decoderFor(ctx, positions)
	if err != nil {
		return nil, err
	}
	defer done()
	out := &Generation{Model: e.name, Device: device, Prompt: prompt, PromptTokens: ptoks,
		Tokens: []int32{}, Logprobs: []float64{}, MaxNewTokens: opt.MaxNewTokens, Sampling: opt.Sampling}
	stream := textStream{}
	if opt.OnText != nil {
		stream.emit = func(text string) { callUser(e, func() { opt.OnText(text) }) }
	}

	start := time.Now()
	logits, err := g.Append(ctx, ptoks)
	out.PrefillSeconds = time.Since(start).Seconds()
	if err != nil {
		if ctx.Err() != nil {
			out.StopReason = StopCancelled
			return out, err
		}
		return nil, err
	}
	decodeStart := time.Now()
	for {
		id, lp := sampler.Sample(logits)
		if math.IsNaN(lp) || math.IsInf(lp, 0) { // a NaN or +Inf logit: no distribution to sample
			err = fmt.Errorf("generate: the model's next-token logits after %d new tokens are not finite (a NaN or an infinity); "+
				"the model's weights or the backend's arithmetic are broken", len(out.Tokens))
			break
		}
		out.Tokens = append(out.Tokens, id)
		out.Logprobs = append(out.Logprobs, lp)
		if slices.Contains(stops, id) {
			out.StopReason = StopEOT
			break
		}
		stream.add(e.tok.TokenText(id))
		if opt.MaxNewTokens > 0 && len(out.Tokens) == opt.MaxNewTokens {
			out.StopReason = StopMaxTokens
			break
		}
		if g.Len() == g.Cap() { // the model's positions, or the fewer a GPU holds (shaders.GPT2.Positions)
			out.Positions = g.Cap()
			out.StopReason = StopPositions
			break
		}
		if logits, err = g.Append(ctx, []int32{id}); err != nil {
			if ctx.Err() != nil {
				out.StopReason = StopCancelled
			}
			break
		}
	}
	out.DecodeSeconds = time.Since(decodeStart).Seconds()
	stream.flush()
	out.Text = stream.text
	if out.PrefillSeconds > 0 {
		out.PrefillTokensPerSecond = float64(len(ptoks)) / out.PrefillSeconds
	}
	if n := len(out.Tokens) - 1; n > 0 && out.DecodeSeconds > 0 {
		out.DecodeTokensPerSecond = float64(n) / out.DecodeSeconds
	}
	return out, err
}

// PromptTokens returns the ids Generate feeds for prompt: as transformers'
// tokenizer(prompt) gives them, with the special tokens the tokenizer's
// post-processor puts before a text (Llama 2's <s>, Llama 3.1's
// <|begin_of_text|>; none for GPT-2 or Qwen), but not those it would put
// after it (an end-of-sequence token, where add_eos_token asks for one: the
// model would continue a text that has ended). It returns nil for a prompt
// the tokenizer cannot encode (tokenizer.ErrPieceTooLong: a run of 2 GiB
// without spaces), which Generate refuses with the tokenizer's error.
func (e *Evaluator) PromptTokens(prompt string) []int32 {
	ids, err := e.promptTokens(context.Background(), prompt)
	if err != nil {
		return nil
	}
	return ids
}

// promptTokens is PromptTokens with the tokenizer's error.
func (e *Evaluator) promptTokens(ctx context.Context, prompt string) ([]int32, error) {
	ids, err := e.tok.EncodeContext(ctx, prompt, nil)
	if err != nil {
		return nil, err
	}
	lead, _ := e.tok.Specials()
	return append(slices.Clone(lead), ids...), nil
}

// stopTokens returns the ids Generate stops at: the tokenizer's end-of-text
// token (EOT) and, as transformers' generate stops at each of them, the
// eos_token_id of the model's generation_config.json, else of its
// config.json (an id or a list: Llama 3 Instruct's [128001, 128008, 128009]
// adds <|eot_id|>, Qwen2.5 Instruct's <|im_end|>). Ids outside the
// vocabulary, which cannot be generated, are left out. A file that cannot
// be read, or whose eos_token_id is not one (Python's json writes NaN, which
// no JSON reader takes), is passed over with a warning through Options.Log.
func (e *Evaluator) stopTokens() []int32 {
	var stops []int32
	if eot := e.tok.EOT(); eot >= 0 {
		stops = append(stops, eot)
	}
	files := map[string]string{}
	for _, p := range e.Files() {
		files[filepath.Base(p)] = p
	}
	for _, name := range []string{"generation_config.json", "config.json"} {
		p, ok := files[name]
		if !ok {
			continue
		}
		ids, found, err := eosTokenIDs(p)
		if err != nil {
			e.opt.log("warning: %v: its eos_token_id does not stop the generation", err)
			continue
		}
		for _, id := range ids {
			if id >= 0 && id < int64(e.Config().VocabSize) && !slices.Contains(stops, int32(id)) {
				stops = append(stops, int32(id))
			}
		}
		if found {
			break
		}
	}
	return stops
}

// eosTokenIDs reads eos_token_id (an id, a list of ids, or null) from the
// JSON file at path; found is false where the file does not set it.
func eosTokenIDs(path string) (ids []int64, found bool, err error) {
	data, err := infile.ReadFile(path, model.MaxJSONFile)
	if err != nil {
		return nil, false, err
	}
	var f struct {
		EOS json.RawMessage `json:"eos_token_id"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.EOS) == 0 || string(f.EOS) == "null" {
		return nil, false, nil
	}
	var one int64
	if json.Unmarshal(f.EOS, &one) == nil {
		return []int64{one}, true, nil
	}
	if err := json.Unmarshal(f.EOS, &ids); err != nil {
		return nil, false, fmt.Errorf("%s: eos_token_id %s: want a token id or a list of them", path, f.EOS)
	}
	return ids, true, nil
}

// decoder is a KV-cache decode on one device: model.Generator on the CPU,
// shaders.Session on a GPU.
type decoder interface {
	Append(ctx context.Context, tokens []int32) ([]float32, error)
	Len() int
	Cap() int // the positions its cache holds: at most the model's, fewer where a GPU caps them
}

// decoderFor opens the device (as Evaluate does) and a decoder on it for
// positions tokens (0: the model's n_positions), its KV cache sized by them;
// done releases the decoder. e.mu must be held.
func (e *Evaluator) decoderFor(ctx context.Context, positions int) (dec decoder, device string, done func(), err error) {
	b, err := e.prepare(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	switch b := b.(type) {
	case *backend.CPU:
		g, err := b.Model().NewGeneratorFor(positions)
		return g, b.Name(), func() {}, err
	case *backend.GPU:
		s, err := b.Model().NewSessionFor(positions)
		if err != nil {
			return nil, "", nil, err
		}
		return s, b.Name(), func() { s.Close() }, nil
	}
	return nil, "", nil, fmt.Errorf("generation runs on one device, and %s is several: use gpu:N or cpu", b.Name())
}

// textStream passes generated text on in whole UTF-8 characters: a token may
// end inside a character that the next one completes.
type textStream struct {
	emit    func(string)
	text    string // everything emitted
	pending string // bytes of an incomplete character at the end
}

func (s *textStream) add(piece string) {
	p := s.pending + piece
	cut := len(p)
	// Hold back an incomplete last character (at most utf8.UTFMax-1 bytes).
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRuneInString(p[i:]) {
				cut = i
			}
			break
		}
	}
	s.pending = p[cut:]
	s.out(p[:cut])
}

// flush emits what is held back (an incomplete character at the end stays
// as the bytes it is).
func (s *textStream) flush() {
	p := s.pending
	s.pending = ""
	s.out(p)
}

func (s *textStream) out(p string) {
	if p == "" {
		return
	}
	s.text += p
	if s.emit != nil {
		s.emit(p)
	}
}

// Tokenizer is the model's tokenizer.
func (e *Evaluator) Tokenizer() *Tokenizer { return e.tok }

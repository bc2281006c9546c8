package wgpueval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// LoadTokenizer returns the tokenizer that Open gives the model name, and
// where the model is, without reading its weights: a local folder needs only
// its tokenizer files (tokenizer.Load; none: GPT-2's), a file is a
// checkpoint (GPT-2's tokenizer for an llm.c one), and a hub id is located
// as Open locates it (downloaded if need be). Of opt it uses Offline, Hub,
// InsecureSkipVerify, Progress ("download") and Log.
func LoadTokenizer(ctx context.Context, name string, opt Options) (*Tokenizer, string, error) {
	path, err := opt.hubClient().Locate(ctx, name)
	if err != nil {
		return nil, "", err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", fmt.Errorf("model %s: %w", infile.Quote(name), err)
	}
	if st.IsDir() {
		// A folder's config.json, when it has one, says whether the model is
		// of the Llama family, whose tokenizer is its tokenizer.json.
		cfgPath := filepath.Join(path, "config.json")
		if _, err := os.Lstat(cfgPath); err == nil {
			cfg, err := model.LoadConfig(cfgPath)
			if err != nil {
				return nil, "", err
			}
			if cfg.Arch != model.ArchGPT2 {
				tok, err := llamaTokenizer(path, cfg)
				return tok, path, err
			}
		}
		tok, err := tokenizer.Load(path)
		return tok, path, err
	}
	ck, err := model.OpenCheckpoint(ctx, path)
	if err != nil {
		return nil, "", err
	}
	defer ck.Close()
	tok, err := loadTokenizer(path, ck, opt)
	return tok, path, err
}

// TokenizeOptions say which text Tokenize encodes: the options of
// EvalOptions that choose and cut it.
type TokenizeOptions struct {
	// MaxTokens keeps only the first MaxTokens ids; 0 keeps all.
	MaxTokens int
	// Split is "all" (the default), "train" or "val" of a text corpus.
	Split string
	// Separator cuts a text corpus into documents.
	Separator string
	// TinyShakespeareFile is a local copy of TinyShakespeare to use instead of the download.
	TinyShakespeareFile string
	// NoTokenCache tokenizes again instead of using the token cache.
	NoTokenCache bool
	// Threads is how many goroutines tokenize; 0 means all cores. The ids
	// are the same whatever the count.
	Threads int
	// CacheDir is the folder of the token cache (CacheDir/tokens) and the
	// TinyShakespeare download (CacheDir/data), as Options.CacheDir; ""
	// means os.UserCacheDir()/wgpu-eval.
	CacheDir string
	// Stdin is read for the corpus "-".
	Stdin io.Reader
	// Offline uses only local files and caches, never the network.
	Offline bool
	// Progress and Log are as in Options ("corpus" and "tokenize" reports).
	Progress func(Progress)
	Log      func(msg string)
}

// Check reports the first bad value of o (Tokenize makes these checks
// first), as an *OptionError: a negative MaxTokens or Threads, or a Split
// that is not all, train or val.
func (o TokenizeOptions) Check() error {
	if o.MaxTokens < 0 {
		return badInt("MaxTokens", o.MaxTokens, "must not be negative")
	}
	if o.Threads < 0 {
		return badInt("Threads", o.Threads, "must not be negative")
	}
	return checkSplit(o.Split)
}

// Tokenize returns the ids of the corpus spec (as Evaluate takes it) that
// Evaluate's stream and strided modes score: the text as transformers'
// tokenizer(text) encodes it (with Llama 2's BOS first), separate documents
// one after another, each as the tokenizer encodes it (GPT-2: after
// <|endoftext|>), an llm.c token file's ids as they are; the first
// opt.MaxTokens of them. A bad option is an *OptionError.
func Tokenize(ctx context.Context, tok *Tokenizer, spec string, opt TokenizeOptions) ([]int32, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	o := Options{Progress: opt.Progress, Log: opt.Log}
	corp, err := corpus.Load(ctx, spec, corpus.Options{
		Split:           opt.Split,
		Separator:       opt.Separator,
		TinyShakespeare: opt.TinyShakespeareFile,
		CacheDir:        opt.CacheDir,
		Offline:         opt.Offline,
		Progress:        func(done, total int64) { o.report(Progress{Stage: "corpus", File: spec, Done: done, Total: total}) },
		Waiting:         func(msg string) { o.log("%s", msg) },
		Stdin:           opt.Stdin,
	})
	if err != nil {
		return nil, err
	}
	if corp.SeparatorNote != "" {
		o.log("warning: corpus %s: %s", infile.Quote(spec), corp.SeparatorNote)
	}
	toks, err := corpus.Tokenize(ctx, corp, tok, corpus.TokenizeOptions{
		CacheDir:   opt.CacheDir,
		NoCache:    opt.NoTokenCache,
		MaxTokens:  opt.MaxTokens,
		Threads:    opt.Threads,
		CacheError: func(err error) { o.log("warning: token cache not written: %v", err) },
		Progress:   func(done, total int64) { o.report(Progress{Stage: "tokenize", File: spec, Done: done, Total: total}) },
	})
	if err != nil {
		return nil, err
	}
	if err := checkSeparator(toks, tok); err != nil {
		return nil, err
	}
	ids := toks.Stream(tok.DocSeparator())
	if opt.MaxTokens > 0 && len(ids) > opt.MaxTokens {
		ids = ids[:opt.MaxTokens]
	}
	return ids, nil
}

// checkSeparator refuses separate documents joined into one stream by a
// tokenizer that has nothing to put between them.
func checkSeparator(toks *corpus.Tokens, tok *tokenizer.Tokenizer) error {
	if lead, _ := tok.Specials(); toks.Separated && len(lead) == 0 && tok.DocSeparator() < 0 {
		return errors.New("the corpus holds separate documents, and the tokenizer has neither a BOS nor an end-of-text token to put before each")
	}
	return nil
}

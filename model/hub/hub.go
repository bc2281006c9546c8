// Package hub finds model checkpoints (GPT-2 and the Llama family: config,
// weights, sharded or not, and tokenizer files) by Hugging Face hub id (gpt2,
// openai-community/gpt2, org/name@revision) in the local Hugging Face cache and
// downloads them into it when missing. The cache layout is exactly that of the
// Python huggingface_hub library (models--org--name/{blobs,refs,snapshots}), so
// a cache is shared with Python users both ways. The entry point is
// (*Client).Locate; FromEnv builds a Client from the same environment variables
// huggingface_hub reads.
//
// It imports internal/download and nothing else of this module; it never
// prints, reporting progress through Client.Progress and silences through
// Client.Waiting.
package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// DefaultEndpoint is the hub used when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// DefaultRevision is the revision of an id without "@rev".
const DefaultRevision = "main"

// Client resolves hub ids to snapshot folders in a Hugging Face cache. A zero
// Client uses DefaultEndpoint, no token, and the default cache folder.
type Client struct {
	Endpoint string       // hub URL without a trailing slash; "" means DefaultEndpoint
	Token    string       // sent as "Authorization: Bearer" to the hub (never to a CDN it redirects to)
	CacheDir string       // the hub cache (HF_HUB_CACHE); "" means DefaultCacheDir()
	Offline  bool         // use only the cache, never the network (HF_HUB_OFFLINE=1)
	HTTP     *http.Client // nil means download.DefaultClient
	// TokenFrom says where Token came from, for the errors that blame it:
	// "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN" or the token file's path (FromEnv
	// sets it); "" means Token was set by the program.
	TokenFrom string
	// Progress, when set, is called while a file downloads with its name in the
	// repo, the bytes so far and the total (-1 when unknown).
	Progress func(file string, done, total int64)
	// Waiting, when set, is told when a file makes no progress for
	// WaitInterval (the hub does not answer, the data stops, another download
	// holds the file's lock), and again every WaitInterval while that lasts. It
	// is called from a goroutine of its own, never after Locate returns.
	Waiting func(Wait)
	// WaitInterval is the silence before a Wait report and between two of
	// them; 0 means DefaultWaitInterval.
	WaitInterval time.Duration
	// InsecureSkipVerify accepts files whose content cannot be checked. A
	// download is checked against the ETag the hub names the file by: the
	// sha256 of the content for an LFS file (X-Linked-Etag), the git blob
	// sha1 for any other; a file whose ETag is neither is refused unless this
	// is set, and then used unchecked (the command's --insecure-skip-verify).
	InsecureSkipVerify bool
	// StallTimeout gives up on a download that delivers less than
	// download.StallMinBytes (1 KiB) in that long; its partial file stays for
	// the next Locate to resume. 0 means download.DefaultStallTimeout (a
	// minute), a negative value no limit.
	StallTimeout time.Duration
	// Reconnects is how often one Locate asks again, from where it broke,
	// for a file whose download breaks off (download.Options.Reconnects):
	// 0 means download.DefaultReconnects, a negative value none.
	Reconnects int
	// MaxRetryWait is the longest wait before asking again a server that
	// answers 429, 502, 503 or 504 (at most download.DefaultRetries times, after the
	// Retry-After it sends); one that asks for longer is an error. 0 means
	// download.DefaultMaxRetryWait (a minute).
	MaxRetryWait time.Duration
}

// MaxUnsizedFile is the most bytes read of a file that is not an LFS file
// when neither the hub's HEAD nor the download announces its size (the hub
// keeps files over 10 MB in LFS). An LFS file whose size nothing announces is
// refused.
const MaxUnsizedFile = 64 << 20

// Files a snapshot must hold (weights: one of the forms in weightFiles) and
// files fetched when the repo has them.
var (
	requiredFiles = []string{"config.json"}
	optionalFiles = []string{"vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json", "generation_config.json"}
)

const (
	weightsFile = "model.safetensors"
	weightsIdx  = "model.safetensors.index.json"
)

// FromEnv returns a Client configured as huggingface_hub would be: HF_ENDPOINT,
// HF_TOKEN (else HUGGING_FACE_HUB_TOKEN, else the token file that
// `huggingface-cli login` writes: HF_TOKEN_PATH or HF_HOME/token), HF_HUB_OFFLINE
// (or TRANSFORMERS_OFFLINE) set to 1/true/yes/on, and the cache folder of
// DefaultCacheDir.
func FromEnv() *Client {
	token, from := envToken()
	c := &Client{
		Endpoint:  strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/"),
		Token:     token,
		TokenFrom: from,
		CacheDir:  DefaultCacheDir(),
		Offline:   isTrue(os.Getenv("HF_HUB_OFFLINE")) || isTrue(os.Getenv("TRANSFORMERS_OFFLINE")),
	}
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	return c
}

// DefaultCacheDir is the hub cache folder huggingface_hub uses: HF_HUB_CACHE,
// else the legacy HUGGINGFACE_HUB_CACHE, else HF_HOME/hub, where HF_HOME
// defaults to $XDG_CACHE_HOME/huggingface or ~/.cache/huggingface.
func DefaultCacheDir() string {
	for _, k := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} {
		if v := os.Getenv(k); v != "" {
			return expandHome(v)
		}
	}
	return filepath.Join(hfHome(), "hub")
}

// hfHome is HF_HOME or its default.
func hfHome() string {
	if v := os.Getenv("HF_HOME"); v != "" {
		return expandHome(v)
	}
	if v := os.Getenv("XDG_CACHE_HOME"); v != "" {
		return filepath.Join(expandHome(v), "huggingface")
	}
	return filepath.Join(expandHome("~"), ".cache", "huggingface")
}

// envToken is the token huggingface_hub would send, and where it came from
// (the variable's name or the token file's path).
func envToken() (token, from string) {
	for _, k := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"} {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" {
			return v, k
		}
	}
	path := os.Getenv("HF_TOKEN_PATH")
	if path == "" {
		path = filepath.Join(hfHome(), "token")
	}
	path = expandHome(path)
	b, err := os.ReadFile(path)
	if err != nil {
		return "", ""
	}
	if token = strings.TrimSpace(string(b)); token == "" {
		return "", ""
	}
	return token, path
}

// expandHome replaces a leading "~" with the home folder.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}

func isTrue(s string) bool {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

// repoIDRe mirrors huggingface_hub's validate_repo_id: an optional namespace
// and a name of word characters, '-' and '.', each starting and ending with a
// word character, the name at most 96 characters.
var repoIDRe = regexp.MustCompile(`^(?:\b[\w.-]+\b/)?\b[\w.-]{1,96}\b$`)

// ParseID splits a hub id "name", "org/name" or "org/name@revision" into the
// repo id and the revision (DefaultRevision when absent). It rejects ids the
// hub would reject, and revisions that could escape the cache folder.
func ParseID(id string) (repo, revision string, err error) {
	repo, revision, hasRev := strings.Cut(id, "@")
	if !hasRev {
		revision = DefaultRevision
	}
	switch {
	case repo == "":
		return "", "", fmt.Errorf("hub id %q: empty repo name", id)
	case !repoIDRe.MatchString(repo):
		return "", "", fmt.Errorf("hub id %q: a repo id is \"name\" or \"org/name\" of letters, digits, '_', '-' and '.' "+
			"(starting and ending with a letter, digit or '_', the name at most 96 characters)", id)
	case strings.Contains(repo, "--") || strings.Contains(repo, ".."):
		return "", "", fmt.Errorf("hub id %q: \"--\" and \"..\" are not allowed in a repo id", id)
	case strings.HasSuffix(repo, ".git"):
		return "", "", fmt.Errorf("hub id %q: a repo id cannot end with \".git\"", id)
	}
	if err := checkRevision(revision); err != nil {
		return "", "", fmt.Errorf("hub id %q: %w", id, err)
	}
	return repo, revision, nil
}

// checkRevision accepts branch names, tags, commit hashes and refs such as
// "refs/pr/1": slash-separated, no empty, "." or ".." part, no backslash or
// control character.
func checkRevision(rev string) error {
	if rev == "" {
		return errors.New("empty revision after '@'")
	}
	if strings.ContainsAny(rev, "\\:") {
		return fmt.Errorf("revision %q contains '\\' or ':'", rev)
	}
	for _, r := range rev {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("revision %q contains a control character", rev)
		}
	}
	for _, part := range strings.Split(rev, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("revision %q has an empty, \".\" or \"..\" path part", rev)
		}
	}
	return nil
}

// Locate returns a local path for src. An existing file or folder is returned
// as is. Otherwise src is a hub id, and Locate returns the snapshot folder of its
// revision in the cache, downloading config.json, the safetensors weights
// (model.safetensors, or model.safetensors.index.json and its shards) and, when
// the repo has them, vocab.json, merges.txt, tokenizer.json,
// tokenizer_config.json and generation_config.json. A snapshot that already holds the config and weights
// (and a tokenizer: tokenizer.json, or vocab.json and merges.txt, or a record
// in .no_exist that the repo has none; a snapshot without them has its
// optional files fetched at its commit, when the hub answers)
// is used without any network access when the revision resolves in the cache
// (refs/REVISION, or a commit hash); so a cached branch is not checked for newer
// commits (pass org/name@COMMIT, or delete refs/BRANCH, to move on). Offline,
// only the cache is used. Every file downloaded is checked against the hub's
// ETag for it (a sha256 or a git blob sha1) and its size; one that cannot be
// checked is refused unless c.InsecureSkipVerify. Interrupted and stalled
// downloads resume on the next call; two processes must not download the same
// model into one cache at the same time.
func (c *Client) Locate(ctx context.Context, src string) (string, error) {
	if src == "" {
		return "", errors.New("hub: empty model path or id")
	}
	if _, err := os.Stat(src); err == nil {
		return src, nil
	} else if looksLikePath(src) {
		return "", fmt.Errorf("model %s: no such file or folder (%w)", src, err)
	}
	repo, rev, err := ParseID(src)
	if err != nil {
		return "", fmt.Errorf("hub: %q is neither an existing file or folder nor a hub id: %w", src, err)
	}
	r := c.repo(repo)
	if commit, ok := r.cachedCommit(rev); ok {
		if snap := r.snapshot(commit); r.complete(commit) {
			if !c.Offline && !r.tokenizerKnown(commit) {
				// A snapshot another program left without tokenizer files
				// (Python's AutoModel alone fetches none): without them a
				// model loads with the wrong tokenizer or not at all.
				// Best effort: the snapshot served before, so a hub out of
				// reach leaves it as it is.
				if err := c.fetchOptional(ctx, r, commit); err != nil && ctx.Err() != nil {
					return "", fmt.Errorf("hub: %s@%s: %w", repo, rev, err)
				}
			}
			return snap, nil
		}
	}
	if commit, ok := r.cachedCommit(rev); ok && c.Offline {
		if info, err := os.Stat(r.snapshot(commit)); err == nil && info.IsDir() {
			miss := r.missing(commit)
			return "", fmt.Errorf("hub: %s@%s is only partly in the cache: its snapshot %s lacks %s, and offline mode is on "+
				"(--offline, or HF_HUB_OFFLINE set): run once online to finish the download (it resumes)",
				repo, rev, r.snapshot(commit), strings.Join(miss, ", "))
		}
	}
	if c.Offline {
		return "", fmt.Errorf("hub: %s@%s is not in the cache %s and offline mode is on (--offline, or HF_HUB_OFFLINE set): "+
			"download it once online, or point --model at a local folder", repo, rev, r.dir)
	}
	snap, err := c.download(ctx, r, rev)
	if err != nil {
		return "", fmt.Errorf("hub: %s@%s: %w", repo, rev, err)
	}
	return snap, nil
}

func (c *Client) endpoint() string {
	if c.Endpoint == "" {
		return DefaultEndpoint
	}
	return strings.TrimRight(c.Endpoint, "/")
}

func (c *Client) cacheDir() string {
	if c.CacheDir == "" {
		return DefaultCacheDir()
	}
	return c.CacheDir
}

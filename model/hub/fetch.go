package hub

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/download"
)

// userAgent identifies this client to the hub.
const userAgent = "wgpu-eval (Go; hub client)"

// sha256Re is an LFS file's etag: the sha256 of its content.
var sha256Re = regexp.MustCompile(`(?i)^[0-9a-f]{64}$`)

// gitSHA1Re is any other file's etag: its git blob id, the sha1 of
// "blob <size>\x00" and the content.
var gitSHA1Re = regexp.MustCompile(`(?i)^[0-9a-f]{40}$`)

// gitBlobSHA1 is the git blob id of the file at path.
func gitBlobSHA1(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", info.Size())
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileMeta is what the hub says about one file at one revision, from a HEAD of
// {endpoint}/{repo}/resolve/{revision}/{file}.
type fileMeta struct {
	commit   string // X-Repo-Commit
	etag     string // X-Linked-Etag (LFS: sha256 of the content) or ETag, unquoted
	size     int64  // X-Linked-Size or Content-Length; -1 when unknown
	location string // where to GET the content: the resolve URL or the CDN it redirects to
	lfs      bool   // an LFS file: the hub sent X-Linked-Etag or X-Linked-Size
}

// resolveURL is the hub URL of file at rev, escaped as huggingface_hub does
// (the revision as one path segment, so "refs/pr/1" becomes "refs%2Fpr%2F1").
func (c *Client) resolveURL(repo, rev, file string) string {
	parts := strings.Split(file, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return c.endpoint() + "/" + repo + "/resolve/" + url.PathEscape(rev) + "/" + strings.Join(parts, "/")
}

// onHub reports whether u is on the hub's own host, the only place the token goes.
func (c *Client) onHub(u string) bool {
	a, err1 := url.Parse(u)
	b, err2 := url.Parse(c.endpoint())
	return err1 == nil && err2 == nil && a.Scheme == b.Scheme && a.Host == b.Host
}

// headers are the request headers for u.
func (c *Client) headers(u string) http.Header {
	h := http.Header{}
	h.Set("User-Agent", userAgent)
	if c.Token != "" && c.onHub(u) {
		h.Set("Authorization", "Bearer "+c.Token)
	}
	return h
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP == nil {
		return download.DefaultClient
	}
	return c.HTTP
}

// head asks the hub about file at rev. It follows redirects within the hub (a
// renamed repo) and stops at one to another host (the CDN of LFS files), whose
// address becomes the download location.
func (c *Client) head(ctx context.Context, repo, rev, file string) (fileMeta, error) {
	hc := *c.httpClient()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	u := c.resolveURL(repo, rev, file)
	for hop := 0; hop < 10; hop++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
		if err != nil {
			return fileMeta{}, err
		}
		req.Header = c.headers(u)
		req.Header.Set("Accept-Encoding", "identity") // the real size, never a compressed one
		w := c.watch(Wait{Kind: WaitAnswer, File: file, Timeout: download.HeaderTimeout(&hc)}, u)
		resp, err := download.Do(&hc, req, c.retry())
		w.stop()
		if err != nil {
			return fileMeta{}, err
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			loc, err := req.URL.Parse(resp.Header.Get("Location"))
			if err != nil || resp.Header.Get("Location") == "" {
				return fileMeta{}, fmt.Errorf("HEAD %s: %s with a bad Location %q", u, resp.Status, resp.Header.Get("Location"))
			}
			if loc.Scheme == req.URL.Scheme && loc.Host == req.URL.Host {
				u = loc.String()
				continue
			}
			return metaFrom(resp, loc.String(), false), nil
		}
		if resp.StatusCode >= 400 {
			return fileMeta{}, download.NewHTTPError(u, resp)
		}
		return metaFrom(resp, u, true), nil
	}
	return fileMeta{}, fmt.Errorf("HEAD %s: too many redirects", c.resolveURL(repo, rev, file))
}

// metaFrom reads the hub's headers. Content-Length counts only on a final
// response (on a redirect it is the redirect's own body).
func metaFrom(resp *http.Response, location string, final bool) fileMeta {
	m := fileMeta{commit: resp.Header.Get("X-Repo-Commit"), size: -1, location: location}
	m.lfs = resp.Header.Get("X-Linked-Etag") != "" || resp.Header.Get("X-Linked-Size") != ""
	m.etag = resp.Header.Get("X-Linked-Etag")
	if m.etag == "" {
		m.etag = resp.Header.Get("ETag")
	}
	m.etag = strings.Trim(strings.TrimPrefix(m.etag, "W/"), `"`)
	size := resp.Header.Get("X-Linked-Size")
	if size == "" && final {
		size = resp.Header.Get("Content-Length")
	}
	if v, err := strconv.ParseInt(size, 10, 64); err == nil && v >= 0 {
		m.size = v
	}
	return m
}

// download fetches the snapshot of rev into the cache and returns its folder.
// The revision is resolved to a commit once (with config.json); every other
// file is asked for at that commit, so the snapshot is consistent.
func (c *Client) download(ctx context.Context, r repoCache, rev string) (string, error) {
	const config = "config.json"
	m, err := c.head(ctx, r.id, rev, config)
	var he *download.HTTPError
	if err != nil && !errors.As(err, &he) && ctx.Err() == nil {
		return "", fmt.Errorf("cannot reach the hub %s and the model is not in the cache %s "+
			"(without network, pass a local folder): %w", c.endpoint(), r.dir, err)
	}
	if err != nil {
		return "", c.explain(r.id, rev, config, err)
	}
	commit := m.commit
	if !commitRe.MatchString(commit) {
		return "", fmt.Errorf("%s: the server sent no commit hash (X-Repo-Commit %q): is HF_ENDPOINT %s a Hugging Face hub?",
			c.resolveURL(r.id, rev, config), commit, c.endpoint())
	}
	if err := r.writeRef(rev, commit); err != nil {
		return "", fmt.Errorf("record revision %s in %s: %w", rev, r.dir, err)
	}
	if c.onHub(m.location) {
		// Fetch what the commit holds even if the branch moves meanwhile.
		m.location = c.resolveURL(r.id, commit, config)
	}
	if err := c.fetch(ctx, r, commit, config, m); err != nil {
		return "", err
	}
	for _, f := range requiredFiles {
		if err := c.fetchFile(ctx, r, commit, f, false); err != nil {
			return "", err
		}
	}
	if err := c.fetchOptional(ctx, r, commit); err != nil {
		return "", err
	}
	if err := c.fetchWeights(ctx, r, commit); err != nil {
		return "", err
	}
	return r.snapshot(commit), nil
}

// fetchFile brings file at commit into the snapshot unless it is there. An
// optional file the repo does not have is recorded in .no_exist, as
// huggingface_hub does, and skipped.
func (c *Client) fetchFile(ctx context.Context, r repoCache, commit, file string, optional bool) error {
	if r.has(commit, file) || (optional && r.noExist(commit, file)) {
		return nil
	}
	m, err := c.head(ctx, r.id, commit, file)
	if optional && download.IsNotFound(err) {
		if err := r.markNoExist(commit, file); err != nil {
			return fmt.Errorf("record missing %s in %s: %w", file, r.dir, err)
		}
		return nil
	}
	if err != nil {
		return c.explain(r.id, commit, file, err)
	}
	return c.fetch(ctx, r, commit, file, m)
}

// fetchOptional brings the optional files into the snapshot of commit,
// those it lacks and that .no_exist does not list, stopping at the first error.
func (c *Client) fetchOptional(ctx context.Context, r repoCache, commit string) error {
	for _, f := range optionalFiles {
		if err := c.fetchFile(ctx, r, commit, f, true); err != nil {
			return err
		}
	}
	return nil
}

// fetchWeights brings the safetensors weights into the snapshot: model.safetensors,
// or model.safetensors.index.json and its shards.
func (c *Client) fetchWeights(ctx context.Context, r repoCache, commit string) error {
	if r.has(commit, weightsFile) {
		return nil
	}
	m, err := c.head(ctx, r.id, commit, weightsFile)
	if err == nil {
		return c.fetch(ctx, r, commit, weightsFile, m)
	}
	if !download.IsNotFound(err) {
		return c.explain(r.id, commit, weightsFile, err)
	}
	if ierr := c.fetchFile(ctx, r, commit, weightsIdx, false); ierr == nil {
		shards, err := readShards(filepath.Join(r.snapshot(commit), weightsIdx))
		if err != nil {
			return err
		}
		return c.fetchShards(ctx, r, commit, shards)
	} else if !download.IsNotFound(ierr) {
		return ierr
	}
	const pickle = "pytorch_model.bin"
	if _, perr := c.head(ctx, r.id, commit, pickle); perr == nil {
		return fmt.Errorf("the repo has %s (a PyTorch pickle) but no %s: wgpu-eval reads safetensors or llm.c .bin "+
			"checkpoints; convert it (in Python: AutoModelForCausalLM.from_pretrained(...).save_pretrained(DIR, "+
			"safe_serialization=True)) and pass the folder", pickle, weightsFile)
	}
	return fmt.Errorf("the repo has no %s (nor %s) at commit %s", weightsFile, weightsIdx, commit)
}

// checkSpace is download.CheckSpace, replaced by tests.
var checkSpace = download.CheckSpace

// fetchShards brings the shards of a sharded checkpoint into the snapshot
// of commit: first the hub's sizes of those not there, so that shards that
// cannot fit in the cache's free space all together are refused before the
// first is downloaded (each download checks its own file too).
func (c *Client) fetchShards(ctx context.Context, r repoCache, commit string, shards []string) error {
	metas := map[string]fileMeta{}
	var need int64
	for _, s := range shards {
		if r.has(commit, s) {
			continue
		}
		m, err := c.head(ctx, r.id, commit, s)
		if err != nil {
			return c.explain(r.id, commit, s, err)
		}
		metas[s] = m
		need += r.toFetch(m)
	}
	what := fmt.Sprintf("%d shards of %s", len(metas), weightsIdx)
	if err := checkSpace(filepath.Join(r.dir, "blobs"), need, what, c.spaceHint()); err != nil {
		return err
	}
	for _, s := range shards {
		if m, ok := metas[s]; ok {
			if err := c.fetch(ctx, r, commit, s, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// toFetch is how many bytes of the file m describes are still to download:
// none when its blob is cached, else its size less a partial download's
// (0 where the hub gave no size).
func (r repoCache) toFetch(m fileMeta) int64 {
	if m.size <= 0 || !safeEtag(m.etag) {
		return 0
	}
	blob := filepath.Join(r.dir, "blobs", m.etag)
	if _, err := os.Stat(blob); err == nil {
		return 0
	}
	if info, err := os.Stat(blob + download.IncompleteSuffix); err == nil && info.Size() <= m.size {
		return m.size - info.Size()
	}
	return m.size
}

// spaceHint is what a download refused for want of free space suggests.
func (c *Client) spaceHint() string {
	return "the hub cache is " + c.cacheDir() + ": HF_HUB_CACHE or HF_HOME puts it on another disk"
}

// fetch stores file's blob (downloading it unless the blob is cached already;
// its content is checked against its etag, a sha256 or a git blob sha1, and
// its size against the hub's) and links it into the snapshot. A file with
// another etag, which nothing can check, is refused unless
// c.InsecureSkipVerify.
func (c *Client) fetch(ctx context.Context, r repoCache, commit, file string, m fileMeta) error {
	if r.has(commit, file) {
		return nil
	}
	if !safeEtag(m.etag) {
		return fmt.Errorf("%s: the hub sent no usable ETag (%q)", c.resolveURL(r.id, commit, file), m.etag)
	}
	checkSHA256, checkSHA1 := sha256Re.MatchString(m.etag), gitSHA1Re.MatchString(m.etag)
	if !checkSHA256 && !checkSHA1 && !c.InsecureSkipVerify {
		return fmt.Errorf("%s: refusing a file that cannot be verified: the hub's ETag %q (%s) is neither a sha256 "+
			"(an LFS file's content) nor a git blob sha1; to use it unchecked, set InsecureSkipVerify "+
			"(the command's --insecure-skip-verify)", file, m.etag, c.resolveURL(r.id, commit, file))
	}
	blob := filepath.Join(r.dir, "blobs", m.etag)
	// One download of a blob at a time, also across processes; whoever waited
	// finds the blob there.
	lock := filepath.Join(filepath.Dir(r.dir), ".locks", filepath.Base(r.dir), m.etag+".lock")
	lw := c.watch(Wait{Kind: WaitLock, File: file, Lock: lock}, "")
	unlock, err := lockFile(ctx, lock)
	lw.stop()
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	defer unlock()
	if r.has(commit, file) {
		return nil
	}
	newBlob := false
	if info, err := os.Stat(blob); err != nil || !info.Mode().IsRegular() {
		opt := download.Options{Header: c.headers(m.location), Client: c.httpClient(),
			StallTimeout: c.StallTimeout, Retry: c.retry(), Reconnects: c.Reconnects,
			SpaceHint: c.spaceHint()}
		if checkSHA256 {
			opt.SHA256 = m.etag
		}
		// Checked before the blob is named: a process killed between the
		// two left an unchecked blob that later runs trusted.
		opt.Verify = func(path string) error {
			if m.size >= 0 {
				if info, err := os.Stat(path); err != nil || info.Size() != m.size {
					return fmt.Errorf("got a file of another size than the hub's %d bytes", m.size)
				}
			}
			if checkSHA1 {
				got, err := gitBlobSHA1(path)
				if err != nil {
					return err
				}
				if !strings.EqualFold(got, m.etag) {
					return fmt.Errorf("git blob sha1 mismatch: got %s, want the hub's ETag %s", got, m.etag)
				}
			}
			return nil
		}
		switch {
		case m.size > 0:
			opt.Size = m.size
		case m.lfs || checkSHA256:
			opt.MaxSize = -1 // the GET must announce the size
		default:
			opt.MaxSize = MaxUnsizedFile
		}
		hc := c.httpClient()
		dataTimeout := c.stallTimeout()
		if dataTimeout == 0 {
			dataTimeout = hc.Timeout
		}
		w := c.watch(Wait{Kind: WaitAnswer, File: file, Timeout: download.HeaderTimeout(hc)}, m.location)
		opt.Progress = func(done, total int64) {
			w.active(WaitData, done, dataTimeout)
			if c.Progress != nil {
				c.Progress(file, done, total)
			}
		}
		err := download.File(ctx, m.location, blob, opt)
		w.stop()
		if err != nil {
			return c.explain(r.id, commit, file, err)
		}
		newBlob = true
	}
	if err := r.link(commit, file, blob, newBlob); err != nil {
		return fmt.Errorf("link %s into %s: %w", file, r.snapshot(commit), err)
	}
	return nil
}

// retry is how requests answered 429, 502, 503 or 504 are retried.
func (c *Client) retry() download.Retry {
	return download.Retry{MaxWait: c.MaxRetryWait}
}

// stallTimeout is the download.Options.StallTimeout in effect: 0 for none.
func (c *Client) stallTimeout() time.Duration {
	switch {
	case c.StallTimeout < 0:
		return 0
	case c.StallTimeout == 0:
		return download.DefaultStallTimeout
	}
	return c.StallTimeout
}

// explain turns the hub's HTTP errors into what the user should do.
func (c *Client) explain(repo, rev, file string, err error) error {
	var he *download.HTTPError
	if !errors.As(err, &he) {
		return fmt.Errorf("%s: %w", file, err)
	}
	token := "HF_TOKEN is not set"
	if c.Token != "" {
		from := c.TokenFrom
		if from == "" {
			from = "the program's"
		}
		token = fmt.Sprintf("the token sent (%s) does not give access to it", from)
	}
	page := c.endpoint() + "/" + repo
	switch {
	case he.ErrorCode == "GatedRepo":
		return fmt.Errorf("%s is a gated repo: accept its terms at %s and set HF_TOKEN to a token of that account (%s): %w",
			repo, page, token, err)
	case he.ErrorCode == "RepoNotFound" || he.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("repo %s not found on %s, or it is private or gated (%s): %w", repo, c.endpoint(), token, err)
	case he.StatusCode == http.StatusForbidden:
		return fmt.Errorf("access to %s denied; it may be gated (accept its terms at %s) and %s: %w", repo, page, token, err)
	case he.ErrorCode == "RevisionNotFound":
		return fmt.Errorf("revision %q not found in %s: %w", rev, repo, err)
	case he.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s not found in %s at revision %s: %w", file, repo, rev, err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

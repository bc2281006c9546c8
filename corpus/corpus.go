package corpus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
)

// Format is how a corpus is stored.
type Format string

// The corpus formats Load reads.
const (
	// FormatText is UTF-8 text: a file, stdin, or TinyShakespeare.
	FormatText Format = "text"
	// FormatJSONL is one JSON object per line whose string field "text" is a document.
	FormatJSONL Format = "jsonl"
	// FormatTokens is an llm.c token file: pre-tokenized GPT-2 ids.
	FormatTokens Format = "tokens"
)

// The splits of a text corpus (nanoGPT's convention).
const (
	SplitAll   = "all"   // the whole corpus
	SplitTrain = "train" // the first 90% of the characters
	SplitVal   = "val"   // the last 10% of the characters
)

// TinyShakespeare is the name of the built-in corpus, with its canonical source.
const (
	TinyShakespeare       = "tinyshakespeare"
	TinyShakespeareURL    = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
	TinyShakespeareSHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
	// TinyShakespeareEnv names an environment variable that may hold the path of
	// a local copy, used instead of the cache and the download.
	TinyShakespeareEnv = "WGPU_EVAL_TINYSHAKESPEARE"
)

// llm.c token files, as its dev/data/data_common.py writes them: a header of
// 256 little-endian int32 (magic, version, token count), then the ids. GPT-2's
// files have magic 20240520, version 1 and uint16 ids; Llama 3's (written with
// --model_desc llama-3) magic 20240801, version 7 and uint32 ids. Magic
// 20240520 with version 2 and uint32 ids is read too: this package's docs
// once described that form, though llm.c never wrote it.
const (
	tokenMagic       = 20240520 // GPT-2's files
	tokenMagicLlama3 = 20240801 // Llama 3's files
	tokenHeaderSize  = 256 * 4
	llmcModelMagic   = 20240326 // an llm.c model checkpoint, a common mix-up
)

// DefaultWaitInterval is Options.WaitInterval when it is zero.
const DefaultWaitInterval = 5 * time.Second

// Options tunes Load. The zero value is usable.
type Options struct {
	// Split is "all" (or ""), "train" or "val": for text corpora, the first 90% or
	// the last 10% of the characters, cut at int(0.9*characters) as nanoGPT does
	// (for ASCII text such as TinyShakespeare, characters are bytes). JSONL and
	// token files have no split: asking for one is an error.
	Split string
	// Separator, when not empty, cuts a text corpus into documents at each
	// occurrence (for example "\n\n"); empty parts are dropped. It must be
	// UTF-8, as the text is. JSONL and token files refuse it: they already
	// hold documents.
	Separator string
	// TinyShakespeare is the path of a local copy of TinyShakespeare, used as is
	// (after a sha256 check) instead of the cache; when empty, the environment
	// variable WGPU_EVAL_TINYSHAKESPEARE is consulted.
	TinyShakespeare string
	// CacheDir is the root of wgpu-eval's cache; "" means os.UserCacheDir()/wgpu-eval.
	// TinyShakespeare is kept in CacheDir/data, the lock of its download in
	// CacheDir/.locks.
	CacheDir string
	// Offline forbids downloads: a missing TinyShakespeare is an error.
	Offline bool
	// URL replaces TinyShakespeareURL (a mirror; tests).
	URL string
	// HTTP makes the download requests; nil means download.DefaultClient.
	HTTP *http.Client
	// Progress, when set, is called as the TinyShakespeare download proceeds,
	// with bytes so far and the total (-1 when unknown).
	Progress func(done, total int64)
	// Waiting, when set, is told in one line when the TinyShakespeare server
	// has been silent for WaitInterval (no answer yet, or no more data), and
	// again every WaitInterval while that lasts; from a goroutine of its own,
	// never after Load returns.
	Waiting func(msg string)
	// WaitInterval is that silence; 0 means DefaultWaitInterval.
	WaitInterval time.Duration
	// Stdin is read for the spec "-"; nil means os.Stdin.
	Stdin io.Reader
	// MaxBytes bounds the text read from stdin, and refuses a larger file
	// before reading it; 0 means DefaultMaxBytes. Stdin is bounded by the
	// memory available too.
	MaxBytes int64
}

// Corpus is text, documents or token ids, loaded and split, ready to tokenize.
type Corpus struct {
	Name   string // the spec it was loaded from: "tinyshakespeare", a path, or "-"
	Path   string // the file read; "" for stdin
	Format Format
	Split  string // "all", "train" or "val"
	// Docs holds the text: FormatText without a separator has exactly one element;
	// with a separator, or FormatJSONL, one per document.
	Docs []string
	// Separated is true when Docs are separate documents (JSONL, or a text cut
	// at a separator) rather than one continuous text.
	Separated bool
	// SeparatorNote is a sentence for the user where Options.Separator never
	// occurs in the text (after the split), which is then one document: it
	// says so, and what may have been meant where the text tells (its lines
	// end in CRLF); "" otherwise.
	SeparatorNote string
	// Tokens holds the ids of a FormatTokens corpus (Docs is nil then).
	Tokens []int32
	// IDBytes is the size of an id in the token file Tokens were read from:
	// 2 for llm.c's GPT-2 files (uint16, so written for a vocabulary of at
	// most 65,536 ids), 4 for uint32 ids; 0 for every other corpus, ids held
	// in memory included.
	IDBytes int
	// SHA256 is the hex digest identifying the content (after the split): of the
	// text itself for one continuous text, of the token file for FormatTokens, and
	// of a length-prefixed encoding of the documents otherwise. It keys the
	// tokenization cache.
	SHA256 string
}

// Bytes is the number of UTF-8 bytes of text the corpus holds (0 for token files).
func (c *Corpus) Bytes() int {
	n := 0
	for _, d := range c.Docs {
		n += len(d)
	}
	return n
}

// DefaultMaxBytes bounds what Load reads from stdin when Options.MaxBytes is
// 0 (and refuses larger files before reading them); the memory available
// bounds it further.
const DefaultMaxBytes = 16 << 30

// bom is the UTF-8 byte order mark some editors put at the start of a file;
// Load drops it there (elsewhere it is text: U+FEFF, a zero-width no-break space).
const bom = "\uFEFF"

// Load reads the corpus spec names: "tinyshakespeare" (a local copy from
// opt or the environment, else the cached download, else downloaded from
// TinyShakespeareURL into the cache, sha256-checked in every case), "-" (text on
// stdin), a .jsonl file (documents: one JSON object per line with a string
// field "text"; blank lines skipped), an llm.c token file (recognized by its
// magic number, GPT-2's 20240520 or Llama 3's 20240801; a .bin file without
// one is an error), or any other
// file, read as UTF-8 text. The named corpus wins over a file of the same name
// (write ./tinyshakespeare to mean the file).
// Empty corpora and text that is not UTF-8 are errors; a UTF-8 byte order
// mark at the start of a text or JSONL file is dropped.
//
// A path must name a regular file (symbolic links followed): a FIFO, a device
// or a folder is refused before it is opened, since reading one could block
// or never end; a stream is read as stdin. Stdin is read until its end, at
// most opt.MaxBytes, and Load returns when ctx is done even while that read
// blocks. A file or stream larger than the memory available is refused with
// an error saying so. The text is held once, as a string; a .jsonl file's
// documents are parts of its bytes, decoded in place, or, where they are
// less than half of the file, a copy of them, and the file let go.
func Load(ctx context.Context, spec string, opt Options) (*Corpus, error) {
	split, err := checkSplit(spec, opt.Split)
	if err != nil {
		return nil, err
	}
	c := &Corpus{Name: spec, Split: split}
	limit := opt.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	var text string
	var jsonl []byte // a .jsonl file's bytes (see readFile)
	switch {
	case spec == "":
		return nil, errors.New("corpus: no name or path given")
	case spec == TinyShakespeare:
		c.Path, err = tinyShakespeare(ctx, opt)
		if err != nil {
			return nil, err
		}
		text, jsonl, err = readFile(c.Path, limit)
	case spec == "-":
		in := opt.Stdin
		if in == nil {
			in = os.Stdin
		}
		spec = "stdin"
		if avail, ok := sysmem.Available(); ok && int64(avail) < limit {
			limit = max(int64(avail), 1)
		}
		text, err = infile.ReadAll(ctx, in, limit, spec)
	default:
		c.Path = spec
		text, jsonl, err = readFile(spec, limit)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("corpus %s: no such file (the named corpus is %q)", infile.Quote(spec), TinyShakespeare)
		}
	}
	var nr *infile.NotRegularError
	if errors.As(err, &nr) && nr.Mode.IsDir() {
		return nil, fmt.Errorf("corpus %s is a folder: name a file in it (text, .jsonl, or an llm.c token file)", infile.Quote(spec))
	}
	if errors.As(err, &nr) {
		return nil, fmt.Errorf("corpus %s is %s, not a regular file (give a stream as stdin: --data - < source)", infile.Quote(spec), infile.Kind(nr.Mode))
	}
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", infile.Quote(spec), err)
	}

	// What the first bytes say a file that is not text is (cheap: a prefix,
	// and a count over 4 KiB), the prefix checked against the whole text
	// only where it says something.
	notTextErr, utf16 := notText(text), utf16NoBOM(text)
	valid := func() bool {
		if jsonl != nil {
			return utf8.Valid(jsonl)
		}
		return utf8.ValidString(text)
	}
	switch {
	case c.Path != "" && isTokenFile(c.Path, text):
		c.Format = FormatTokens
		err = noSeparator(opt.Separator, "an llm.c token file is one stream of token ids")
		if err == nil && jsonl != nil { // by its magic, under a .jsonl name
			text = string(jsonl)
		}
		if err == nil {
			err = c.loadTokens(text)
		}
	case notTextErr != nil && !valid():
		// Said before a JSONL line's or the text's first bad byte, whose
		// advice (iconv from Latin-1) would make scored garbage of it.
		err = notTextErr
	case utf16 != "": // valid UTF-8 where the text is ASCII, each character with a NUL
		err = fmt.Errorf("%s text without a byte order mark (by its first bytes: a NUL in every other byte), not UTF-8 text: "+
			"convert it first: iconv -f %s -t UTF-8 FILE > OUT", utf16, utf16)
	case jsonl != nil:
		c.Format = FormatJSONL
		err = noSeparator(opt.Separator, "a .jsonl file's documents are its lines")
		if err == nil {
			err = c.loadJSONL(bytes.TrimPrefix(jsonl, []byte(bom)))
		}
	default:
		c.Format = FormatText
		err = c.loadText(strings.TrimPrefix(text, bom), opt.Separator)
	}
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", infile.Quote(spec), err)
	}
	return c, nil
}

// noSeparator refuses a separator for a corpus that is not text, which it
// would not cut (why says what the corpus is instead).
func noSeparator(sep, why string) error {
	if sep == "" {
		return nil
	}
	return fmt.Errorf("separator %q: only a text corpus is cut into documents at a separator; %s", sep, why)
}

// sniffBytes is how much of a file Load looks at to tell what it is.
const sniffBytes = 4096

// readFile reads the regular file at path, after checking that its size
// fits in limit and in the memory available: as text, or, for a .jsonl
// file, as bytes (jsonl, not nil) that loadJSONL decodes its documents in,
// text being then a copy of their first sniffBytes. Either is the file's
// size in memory, the memory checked here (measured: loading 200 MB of JSON
// Lines peaks at 204 MB, their text as a .txt at 193 MB); loadJSONL checks
// for its list of documents, and for the copy of documents that are a minor
// part of the file (compactDocs).
func readFile(path string, limit int64) (text string, jsonl []byte, err error) {
	fi, err := infile.Check(path)
	if err != nil {
		return "", nil, err
	}
	isJSONL := strings.EqualFold(filepath.Ext(path), ".jsonl")
	what := fmt.Sprintf("its text (%d bytes)", fi.Size())
	if isJSONL {
		what = fmt.Sprintf("its JSON Lines (%d bytes)", fi.Size())
	}
	if err := sysmem.Check(what, uint64(fi.Size())); err != nil { // the caller names the corpus
		return "", nil, err
	}
	if !isJSONL {
		text, err = infile.ReadText(path, limit)
		return text, nil, err
	}
	if jsonl, err = infile.ReadFile(path, limit); err != nil {
		return "", nil, err
	}
	if jsonl == nil {
		jsonl = []byte{}
	}
	return string(jsonl[:min(len(jsonl), sniffBytes)]), jsonl, nil
}

// isTokenFile reports whether data is (or, by its .bin name, claims to be) an
// llm.c token file; loadTokens then checks it.
func isTokenFile(path string, data string) bool {
	if len(data) >= 4 && (le32(data, 0) == tokenMagic || le32(data, 0) == tokenMagicLlama3) {
		return true
	}
	return strings.EqualFold(filepath.Ext(path), ".bin")
}

func (c *Corpus) loadText(text string, sep string) error {
	if err := checkUTF8(text); err != nil {
		return err
	}
	if text == "" {
		return errors.New("empty text")
	}
	if !utf8.ValidString(sep) {
		// Its bytes would match inside the text's characters (byte 0xa7,
		// a '§' in Latin-1, is the second of every UTF-8 '§') and cut them
		// in two: documents that are not UTF-8, which no tokenizer reads.
		return fmt.Errorf("separator %q is not UTF-8 text, as the corpus is: it would cut the text's characters apart "+
			"(a shell whose locale is not UTF-8?)", sep)
	}
	part := splitText(text, c.Split)
	if part == "" { // only train can be: the first int(0.9*n) characters of one
		n, chars := utf8.RuneCountInString(text), "characters"
		if n == 1 {
			chars = "character"
		}
		return fmt.Errorf("the %s split is empty: the text has %d %s, and the train split is the first 90%% of them, "+
			"rounded down (the val split the rest)", c.Split, n, chars)
	}
	text = part
	if sep == "" {
		c.Docs = []string{text}
		c.SHA256 = sha256Hex(text)
		return nil
	}
	for _, d := range strings.Split(text, sep) {
		if d != "" {
			c.Docs = append(c.Docs, d)
		}
	}
	if len(c.Docs) == 0 {
		return fmt.Errorf("no text between the separators %q", sep)
	}
	if len(c.Docs) == 1 && len(c.Docs[0]) == len(text) { // the whole text: sep never occurs
		c.SeparatorNote = separatorNote(text, sep)
	}
	c.Separated = true
	c.SHA256 = docsHash(c.Docs)
	return nil
}

// separatorNote is Corpus.SeparatorNote for a separator that never occurs
// in text.
func separatorNote(text, sep string) string {
	note := fmt.Sprintf("the separator %q never occurs in the text, which is one document", sep)
	if crlf := strings.ReplaceAll(sep, "\n", "\r\n"); crlf != sep && !strings.Contains(sep, "\r\n") && strings.Contains(text, crlf) {
		note += fmt.Sprintf(": its lines end in CRLF, \"\\r\\n\"; the separator %q occurs", crlf)
	}
	return note
}

// splitText returns the part of text that split names: the first
// int(0.9*characters) characters for train, the rest for val.
func splitText(text, split string) string {
	if split == SplitAll {
		return text
	}
	cut := int(0.9 * float64(utf8.RuneCountInString(text)))
	off := len(text)
	for i := range text { // i is the byte offset of each character in turn
		if cut == 0 {
			off = i
			break
		}
		cut--
	}
	if split == SplitTrain {
		return text[:off]
	}
	return text[off:]
}

func (c *Corpus) loadTokens(data string) error {
	if c.Split != SplitAll {
		return fmt.Errorf("split %q: only text corpora have train/val splits; llm.c keeps train and val in separate token files", c.Split)
	}
	if len(data) < tokenHeaderSize {
		return fmt.Errorf("not an llm.c token file: %d bytes, shorter than the %d-byte header", len(data), tokenHeaderSize)
	}
	header := func(i int) int32 { return int32(le32(data, 4*i)) }
	var width int
	switch magic, v := header(0), header(1); {
	case magic == tokenMagic && v == 1:
		width = 2 // GPT-2's: uint16 ids
	case magic == tokenMagic && v == 2:
		width = 4 // uint32 ids (see tokenMagic)
	case magic == tokenMagic:
		return fmt.Errorf("llm.c token file (magic %d) of version %d: only 1 (GPT-2's, uint16 ids) exists", magic, v)
	case magic == tokenMagicLlama3 && v == 7:
		width = 4 // Llama 3's: uint32 ids
	case magic == tokenMagicLlama3:
		return fmt.Errorf("llm.c Llama 3 token file (magic %d) of version %d: only 7 (uint32 ids) exists", magic, v)
	case magic == llmcModelMagic:
		return errors.New("this is an llm.c model checkpoint (magic 20240326), not a token file")
	default:
		return fmt.Errorf("not an llm.c token file: magic %d, want %d (GPT-2's) or %d (Llama 3's)", magic, tokenMagic, tokenMagicLlama3)
	}
	n := int64(header(2))
	if n <= 0 {
		return fmt.Errorf("the header says %d tokens: nothing to evaluate", n)
	}
	if want := tokenHeaderSize + n*int64(width); int64(len(data)) != want {
		return fmt.Errorf("file is %d bytes, but the header's %d tokens of %d bytes need %d", len(data), n, width, want)
	}
	// The ids take 4 bytes each, twice the file for uint16 ids: readFile
	// checked the memory for the file only.
	if err := sysmem.Check(fmt.Sprintf("its %d token ids", n), uint64(4*n)); err != nil {
		return err
	}
	body := data[tokenHeaderSize:]
	c.Tokens = make([]int32, n)
	for i := range c.Tokens {
		if width == 2 {
			c.Tokens[i] = int32(body[2*i]) | int32(body[2*i+1])<<8
			continue
		}
		v := le32(body, 4*i)
		if v > 1<<31-1 {
			return fmt.Errorf("token %d: id %d out of range", i, v)
		}
		c.Tokens[i] = int32(v)
	}
	c.IDBytes = width
	c.SHA256 = sha256Hex(data)
	return nil
}

// notText returns an error saying what data is instead of UTF-8 text
// where its first bytes tell (a compressed file; UTF-16 or UTF-32 text,
// by its byte order mark), with what to do; nil otherwise. Load asks only
// about data that is not UTF-8.
func notText(data string) error {
	for _, f := range []struct{ magic, what, fix string }{
		{"\x1f\x8b", "a gzip-compressed file", "decompress it first: gunzip -k FILE"},
		{"\x28\xb5\x2f\xfd", "a zstd-compressed file", "decompress it first: zstd -d FILE"},
		{"\xfd7zXZ\x00", "an xz-compressed file", "decompress it first: xz -dk FILE"},
		{"BZh", "a bzip2-compressed file", "decompress it first: bunzip2 -k FILE"},
		{"PK\x03\x04", "a zip archive", "take the file out first: unzip FILE"},
		{"\xff\xfe\x00\x00", "UTF-32 text", "convert it first: iconv -f UTF-32 -t UTF-8 FILE > OUT"},
		{"\x00\x00\xfe\xff", "UTF-32 text", "convert it first: iconv -f UTF-32 -t UTF-8 FILE > OUT"},
		{"\xff\xfe", "UTF-16 text", "convert it first: iconv -f UTF-16 -t UTF-8 FILE > OUT"},
		{"\xfe\xff", "UTF-16 text", "convert it first: iconv -f UTF-16 -t UTF-8 FILE > OUT"},
	} {
		if strings.HasPrefix(data, f.magic) {
			return fmt.Errorf("%s (by its first bytes), not UTF-8 text: %s", f.what, f.fix)
		}
	}
	return nil
}

// utf16NoBOM returns "UTF-16LE" or "UTF-16BE" where data's first bytes
// (up to 4 KiB) look like UTF-16 text without a byte order mark, mostly
// ASCII: at least four pairs of bytes, of which at least 90% have a NUL in
// one place and at most 10% in the other; "" otherwise. UTF-8 text has no
// such pattern: a NUL is a control character it holds rarely, never in
// every other byte.
func utf16NoBOM(data string) string {
	n := min(len(data), sniffBytes) / 2
	if n < 4 {
		return ""
	}
	var zeros [2]int // NULs at even and at odd offsets
	for i := range 2 * n {
		if data[i] == 0 {
			zeros[i%2]++
		}
	}
	switch {
	case 10*zeros[1] >= 9*n && 10*zeros[0] <= n:
		return "UTF-16LE"
	case 10*zeros[0] >= 9*n && 10*zeros[1] <= n:
		return "UTF-16BE"
	}
	return ""
}

// utf8Error is text that is not valid UTF-8.
type utf8Error struct {
	Offset int  // byte offset of the first invalid byte
	Byte   byte // its value
}

func (e *utf8Error) Error() string {
	return fmt.Sprintf("not UTF-8 text: invalid byte 0x%02x at byte offset %d (convert the file to UTF-8 first, e.g. iconv -f latin1 -t utf-8)", e.Byte, e.Offset)
}

// checkUTF8 returns a *utf8Error for the first invalid byte of b, nil
// where b is UTF-8 (checked on every core where it is long: validUTF8).
func checkUTF8(b string) error {
	if validUTF8(b) {
		return nil
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRuneInString(b[i:])
		if r == utf8.RuneError && size == 1 {
			return &utf8Error{Offset: i, Byte: b[i]}
		}
		i += size
	}
	return nil // unreachable: validUTF8 said otherwise
}

// minUTF8Part is the least text that validUTF8 checks on a core of its own
// (a variable for tests).
var minUTF8Part = 4 << 20

// validUTF8 reports whether s is UTF-8, as utf8.ValidString does, checking
// the parts of a long s on every core. A part ends before a byte that can
// start a character (not 10xxxxxx), found within utf8.UTFMax-1 bytes back
// of an even cut where s is UTF-8: so the parts of UTF-8 are UTF-8, and,
// since UTF-8 joined to UTF-8 is UTF-8, text whose parts are UTF-8 is,
// however it was cut.
func validUTF8(s string) bool {
	if len(s) < 2*minUTF8Part {
		return utf8.ValidString(s)
	}
	n := min(runtime.GOMAXPROCS(0), len(s)/minUTF8Part)
	valid := make([]bool, n)
	var wg sync.WaitGroup
	lo := 0
	for k := range n {
		hi := share(len(s), k+1, n)
		for back := 0; back < utf8.UTFMax-1 && hi > lo && hi < len(s) && !utf8.RuneStart(s[hi]); back++ {
			hi--
		}
		part := s[lo:hi]
		wg.Go(func() { valid[k] = utf8.ValidString(part) })
		lo = hi
	}
	wg.Wait()
	return !slices.Contains(valid, false)
}

// le32 is the little-endian uint32 at s[i:].
func le32(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

func sha256Hex(s string) string {
	h := sha256.New()
	hashString(h, s)
	return hex.EncodeToString(h.Sum(nil))
}

// hashString writes s to h without a copy: h.Write gets s's bytes, which
// io.Writer's contract forbids it to change, even for a moment, or to keep.
// (io.WriteString would copy all of s, as a hash has no WriteString; a
// buffer, as before, copied it in pieces: 3% of loading a text.)
func hashString(h hash.Hash, s string) {
	if s != "" {
		h.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
	}
}

// docsHash digests documents unambiguously: a tag, then each document's length
// and bytes.
func docsHash(docs []string) string {
	h := sha256.New()
	io.WriteString(h, "wgpu-eval documents v1\n")
	var n [binary.MaxVarintLen64]byte
	for _, d := range docs {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(d)))])
		hashString(h, d)
	}
	return hex.EncodeToString(h.Sum(nil))
}

package runfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/internal/msgpackbound"
	"github.com/wgpu-eval/wgpu-eval/model/exactsum"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// PerTokenFormat and PerTokenVersion mark a per-token file (--per-token).
// Version 1 holds each target's position, id and NLL; version 2 adds its top
// log-probabilities (--top-logprobs). A file without them is written as
// version 1, so that older builds still read it; this build reads both.
const (
	PerTokenFormat  = "wgpu-eval per-token"
	PerTokenVersion = 2
)

// An exact sum is written to msgpack as the string MarshalText gives,
// "0xHEXp±EXP" as in the JSON result, so that a reader of the per-token
// file's header (or of a checkpoint) gets text, not bytes. The msgpack
// library writes a TextMarshaler as a binary, which is how builds before this
// wrote it; its decoder reads a TextUnmarshaler from either, so both read.
func init() {
	msgpack.Register(exactsum.Sum{}, func(e *msgpack.Encoder, v reflect.Value) error {
		text, err := v.Interface().(exactsum.Sum).MarshalText()
		if err != nil {
			return err
		}
		return e.EncodeString(string(text))
	}, nil)
}

// PerTokenHeader is what a per-token file says about its run. The field
// names are those of the result's JSON.
type PerTokenHeader struct {
	Model  string `json:"model"`
	Data   string `json:"data"`
	Mode   string `json:"mode"`
	Ctx    int    `json:"ctx"`
	Stride int    `json:"stride"`
	// BOSEachWindow is Result.BOSEachWindow: every window started with the
	// BOS (or <|endoftext|>) as context.
	BOSEachWindow bool   `json:"bos_each_window,omitempty"`
	Tokenizer     string `json:"tokenizer"` // the tokenizer's identity (tokenizer.BuiltinID for the built-in GPT-2)
	// Targets is the number of targets the file holds; NLLSum the sum of
	// their NLLs, and NLLSumExact that sum exactly (nil in files of builds
	// before exact sums): a reader checks the records against it.
	Targets     int           `json:"targets"`
	NLLSum      float64       `json:"nll_sum"`
	NLLSumExact *exactsum.Sum `json:"nll_sum_exact,omitempty"`
	// VocabSize is the model's vocabulary (0 where unknown): every id in the
	// file is below it.
	VocabSize int `json:"vocab_size,omitempty"`
	// TopLogprobs is K of --top-logprobs: every target then has its position's
	// K highest log-probabilities (TokenNLL.Top); 0 for none.
	TopLogprobs int                  `json:"top_logprobs,omitempty"`
	Shard       *pipeline.Shard      `json:"shard,omitempty"`
	Config      *pipeline.RunConfig  `json:"config,omitempty"`
	Provenance  *pipeline.Provenance `json:"provenance,omitempty"`
}

// PerTokenFile is the content of a per-token file: the header and every
// scored target in corpus order.
type PerTokenFile struct {
	Header PerTokenHeader
	Tokens []pipeline.TokenNLL
}

// perTokenDisk is the file's msgpack object: a map whose columns are
// little-endian binary blobs of 4 bytes per target (doc and pos u32, token
// i32, nll f32), so that a file is compact and reads without a decoder
// allocation per target. With top log-probabilities (version 2), top_id (i32)
// and top_logprob (f32) hold K values per target, target after target.
type perTokenDisk struct {
	Format     string         `json:"format"`
	Version    int            `json:"version"`
	Header     PerTokenHeader `json:"header"`
	Doc        []byte         `json:"doc"`
	Pos        []byte         `json:"pos"`
	Token      []byte         `json:"token"`
	NLL        []byte         `json:"nll"`
	TopID      []byte         `json:"top_id,omitempty"`
	TopLogprob []byte         `json:"top_logprob,omitempty"`
	// CRC32C is the CRC-32C (Castagnoli) of the columns' bytes in the order
	// above (doc, pos, token, nll, top_id, top_logprob): damage to an id or
	// a top log-probability that the other checks cannot see is refused.
	// Files of builds before it have none (nil) and are read unchecked;
	// those builds read files that have it.
	CRC32C *uint32 `json:"crc32c,omitempty"`
}

// columnsCRC is the CRC-32C of d's columns (perTokenDisk.CRC32C).
func (d *perTokenDisk) columnsCRC() uint32 {
	var crc uint32
	for _, c := range [][]byte{d.Doc, d.Pos, d.Token, d.NLL, d.TopID, d.TopLogprob} {
		crc = crc32.Update(crc, castagnoli, c)
	}
	return crc
}

// NewPerTokenFile is the per-token file of res (evaluated with
// EvalConfig.PerToken), for the tokenizer identified by tokenizer; its header
// sum is its records' exact sum (res's, for a whole run or shard).
func NewPerTokenFile(res *pipeline.Result, tokenizer string) *PerTokenFile {
	f := &PerTokenFile{
		Header: PerTokenHeader{Model: res.Model, Data: res.Data, Mode: res.Mode, Ctx: res.Ctx, Stride: res.Stride, BOSEachWindow: res.BOSEachWindow,
			Tokenizer: tokenizer, TopLogprobs: res.TopLogprobs, VocabSize: res.VocabSize,
			Shard: res.Shard, Config: res.Config, Provenance: res.Provenance},
		Tokens: res.PerToken,
	}
	f.setSum()
	return f
}

// setSum sets the header's target count and sums from the records.
func (f *PerTokenFile) setSum() {
	var sum exactsum.Sum
	for _, t := range f.Tokens {
		sum.Add(float64(t.NLL))
	}
	f.Header.Targets = len(f.Tokens)
	f.Header.NLLSum, f.Header.NLLSumExact = sum.Float64(), &sum
}

// Marshal encodes f as a per-token file; the header's target count and sums
// are those of f.Tokens.
func (f *PerTokenFile) Marshal() ([]byte, error) {
	n, k := len(f.Tokens), f.Header.TopLogprobs
	if err := pipeline.CheckTopLogprobs(k, 0); err != nil {
		return nil, fmt.Errorf("per-token: %w", err)
	}
	d := perTokenDisk{Format: PerTokenFormat, Version: 1, Header: f.Header,
		Doc: make([]byte, 4*n), Pos: make([]byte, 4*n), Token: make([]byte, 4*n), NLL: make([]byte, 4*n)}
	if k > 0 {
		d.Version = 2
		d.TopID, d.TopLogprob = make([]byte, 4*n*k), make([]byte, 4*n*k)
	}
	d.Header.Targets = n
	var sum exactsum.Sum // the header's sum is its records', whatever f.Header says
	for _, t := range f.Tokens {
		sum.Add(float64(t.NLL))
	}
	d.Header.NLLSum, d.Header.NLLSumExact = sum.Float64(), &sum
	le := binary.LittleEndian
	for i, t := range f.Tokens {
		if t.Doc < 0 || t.Doc > math.MaxUint32 || t.Pos < 0 || t.Pos > math.MaxUint32 {
			return nil, fmt.Errorf("per-token: target %d at document %d position %d does not fit 32 bits", i, t.Doc, t.Pos)
		}
		if len(t.Top) != k {
			return nil, fmt.Errorf("per-token: target %d has %d top log-probabilities, the header says %d", i, len(t.Top), k)
		}
		le.PutUint32(d.Doc[4*i:], uint32(t.Doc))
		le.PutUint32(d.Pos[4*i:], uint32(t.Pos))
		le.PutUint32(d.Token[4*i:], uint32(t.Token))
		le.PutUint32(d.NLL[4*i:], math.Float32bits(t.NLL))
		for j, x := range t.Top {
			le.PutUint32(d.TopID[4*(i*k+j):], uint32(x.ID))
			le.PutUint32(d.TopLogprob[4*(i*k+j):], math.Float32bits(x.Logprob))
		}
	}
	crc := d.columnsCRC()
	d.CRC32C = &crc
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetCustomStructTag("json")
	if err := enc.Encode(&d); err != nil {
		return nil, fmt.Errorf("per-token: %w", err)
	}
	return buf.Bytes(), nil
}

// WritePerToken writes f to path atomically: a temporary file in the same
// folder, synced, then renamed over path.
func WritePerToken(path string, f *PerTokenFile) error {
	data, err := f.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("write per-token file %s: %w", path, err)
	}
	return nil
}

// ReadPerToken reads the per-token file at path; what is not a regular file
// (a FIFO, a device) is refused before it is opened.
func ReadPerToken(path string) (*PerTokenFile, error) {
	fh, err := infile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("per-token file: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("per-token file %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(fh, fi.Size()+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f, err := ParsePerToken(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// ParsePerToken decodes a per-token file. Every length in it is checked
// against the bytes there are before anything is allocated by it; the
// records against the header's exact sum, and the columns against their
// CRC-32C where the file has one.
func ParsePerToken(data []byte) (*PerTokenFile, error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return nil, errors.New("not a per-token file: it is JSON text (a --json result file?)")
	}
	if err := msgpackbound.CheckLengths(data); err != nil {
		return nil, fmt.Errorf("not a per-token file, or a truncated one: %w", err)
	}
	var d perTokenDisk
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	dec.SetCustomStructTag("json")
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("not a per-token file: %w", err)
	}
	if d.Format != PerTokenFormat {
		return nil, fmt.Errorf("not a per-token file (format %q)", d.Format)
	}
	if d.Version < 1 || d.Version > PerTokenVersion {
		return nil, fmt.Errorf("per-token file version %d; this build reads 1 to %d", d.Version, PerTokenVersion)
	}
	n, k, vocab := d.Header.Targets, d.Header.TopLogprobs, d.Header.VocabSize
	if vocab < 0 || vocab > math.MaxInt32 {
		return nil, fmt.Errorf("per-token file damaged: vocabulary of %d tokens", vocab)
	}
	if n < 0 || n > len(data)/16 {
		return nil, fmt.Errorf("per-token file damaged: %d targets in %d bytes", n, len(data))
	}
	if err := pipeline.CheckTopLogprobs(k, 0); err != nil || d.Version == 1 && k != 0 {
		return nil, fmt.Errorf("per-token file damaged: version %d with %d top log-probabilities per target", d.Version, k)
	}
	for _, c := range []struct {
		name string
		b    []byte
		per  int
	}{{"doc", d.Doc, 4}, {"pos", d.Pos, 4}, {"token", d.Token, 4}, {"nll", d.NLL, 4},
		{"top_id", d.TopID, 4 * k}, {"top_logprob", d.TopLogprob, 4 * k}} {
		// n*per <= 400*len(data): no overflow. The columns are in data, so
		// what they ask to allocate is bounded by its size.
		if len(c.b) != c.per*n {
			return nil, fmt.Errorf("per-token file damaged: column %s has %d bytes for %d targets", c.name, len(c.b), n)
		}
	}
	f := &PerTokenFile{Header: d.Header, Tokens: make([]pipeline.TokenNLL, n)}
	var top []pipeline.TokenLogprob
	if k > 0 {
		top = make([]pipeline.TokenLogprob, n*k)
	}
	le := binary.LittleEndian
	var sum exactsum.Sum
	for i := range f.Tokens {
		f.Tokens[i] = pipeline.TokenNLL{Doc: int(le.Uint32(d.Doc[4*i:])), Pos: int(le.Uint32(d.Pos[4*i:])),
			Token: int32(le.Uint32(d.Token[4*i:])), NLL: math.Float32frombits(le.Uint32(d.NLL[4*i:]))}
		if k > 0 {
			row := top[i*k : (i+1)*k : (i+1)*k]
			for j := range row {
				row[j] = pipeline.TokenLogprob{ID: int32(le.Uint32(d.TopID[4*(i*k+j):])), Logprob: math.Float32frombits(le.Uint32(d.TopLogprob[4*(i*k+j):]))}
			}
			f.Tokens[i].Top = row
		}
		if err := f.Tokens[i].Check(vocab); err != nil {
			return nil, fmt.Errorf("per-token file damaged: target %d (document %d position %d): %w", i, f.Tokens[i].Doc, f.Tokens[i].Pos, err)
		}
		sum.Add(float64(f.Tokens[i].NLL))
		if i > 0 {
			p, t := f.Tokens[i-1], f.Tokens[i]
			if t.Doc < p.Doc || t.Doc == p.Doc && t.Pos <= p.Pos {
				return nil, fmt.Errorf("per-token file damaged: target %d (document %d position %d) is not after the one before", i, t.Doc, t.Pos)
			}
		}
	}
	if err := checkSum(d.Header, sum); err != nil {
		return nil, fmt.Errorf("per-token file damaged: %w", err)
	}
	// Last, so that the checks above name the target where they can.
	if d.CRC32C != nil {
		if got := d.columnsCRC(); got != *d.CRC32C {
			return nil, fmt.Errorf("per-token file damaged: its columns' CRC-32C is %08x, the file says %08x", got, *d.CRC32C)
		}
	}
	return f, nil
}

// checkSum compares the records' exact sum with the header's: equal to the
// bit where the header has the exact sum, else (a file of an older build,
// which added in float32 or float64) within 1e-5 relative.
func checkSum(h PerTokenHeader, sum exactsum.Sum) error {
	got := sum.Float64()
	if e := h.NLLSumExact; e != nil {
		if *e != sum || h.NLLSum != got {
			return fmt.Errorf("the records' NLLs add up to %v (%v), the header says %v (%v)", got, sum.String(), h.NLLSum, e.String())
		}
		return nil
	}
	if math.IsNaN(h.NLLSum) || math.Abs(got-h.NLLSum) > 1e-5*max(1, math.Abs(h.NLLSum)) {
		return fmt.Errorf("the records' NLLs add up to %v, the header says %v", got, h.NLLSum)
	}
	return nil
}

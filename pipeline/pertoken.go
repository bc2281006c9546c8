package pipeline

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/msgpackbound"
)

// PerTokenFormat and PerTokenVersion mark a per-token file (--per-token).
const (
	PerTokenFormat  = "wgpu-eval per-token"
	PerTokenVersion = 1
)

// PerTokenHeader is what a per-token file says about its run. The field
// names are those of the result's JSON.
type PerTokenHeader struct {
	Model     string `json:"model"`
	Data      string `json:"data"`
	Mode      string `json:"mode"`
	Ctx       int    `json:"ctx"`
	Stride    int    `json:"stride"`
	Tokenizer string `json:"tokenizer"` // the tokenizer's identity (tokenizer.BuiltinID for the built-in GPT-2)
	// Targets is the number of targets the file holds; NLLSum the run's sum.
	Targets    int         `json:"targets"`
	NLLSum     float64     `json:"nll_sum"`
	Shard      *Shard      `json:"shard,omitempty"`
	Config     *RunConfig  `json:"config,omitempty"`
	Provenance *Provenance `json:"provenance,omitempty"`
}

// PerTokenFile is the content of a per-token file: the header and every
// scored target in corpus order.
type PerTokenFile struct {
	Header PerTokenHeader
	Tokens []TokenNLL
}

// perTokenDisk is the file's msgpack object: a map whose columns are
// little-endian binary blobs of 4 bytes per target (doc and pos u32, token
// i32, nll f32), so that a file is compact and reads without a decoder
// allocation per target.
type perTokenDisk struct {
	Format  string         `json:"format"`
	Version int            `json:"version"`
	Header  PerTokenHeader `json:"header"`
	Doc     []byte         `json:"doc"`
	Pos     []byte         `json:"pos"`
	Token   []byte         `json:"token"`
	NLL     []byte         `json:"nll"`
}

// NewPerTokenFile is the per-token file of res (evaluated with
// EvalConfig.PerToken), for the tokenizer identified by tokenizer.
func NewPerTokenFile(res *Result, tokenizer string) *PerTokenFile {
	return &PerTokenFile{
		Header: PerTokenHeader{Model: res.Model, Data: res.Data, Mode: res.Mode, Ctx: res.Ctx, Stride: res.Stride,
			Tokenizer: tokenizer, Targets: len(res.PerToken), NLLSum: res.NLLSum, Shard: res.Shard,
			Config: res.Config, Provenance: res.Provenance},
		Tokens: res.PerToken,
	}
}

// Marshal encodes f as a per-token file.
func (f *PerTokenFile) Marshal() ([]byte, error) {
	n := len(f.Tokens)
	d := perTokenDisk{Format: PerTokenFormat, Version: PerTokenVersion, Header: f.Header,
		Doc: make([]byte, 4*n), Pos: make([]byte, 4*n), Token: make([]byte, 4*n), NLL: make([]byte, 4*n)}
	d.Header.Targets = n
	le := binary.LittleEndian
	for i, t := range f.Tokens {
		if t.Doc < 0 || t.Doc > math.MaxUint32 || t.Pos < 0 || t.Pos > math.MaxUint32 {
			return nil, fmt.Errorf("per-token: target %d at document %d position %d does not fit 32 bits", i, t.Doc, t.Pos)
		}
		le.PutUint32(d.Doc[4*i:], uint32(t.Doc))
		le.PutUint32(d.Pos[4*i:], uint32(t.Pos))
		le.PutUint32(d.Token[4*i:], uint32(t.Token))
		le.PutUint32(d.NLL[4*i:], math.Float32bits(t.NLL))
	}
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

// ReadPerToken reads the per-token file at path.
func ReadPerToken(path string) (*PerTokenFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
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
// against the bytes there are before anything is allocated by it.
func ParsePerToken(data []byte) (*PerTokenFile, error) {
	if err := msgpackbound.CheckLengths(data); err != nil {
		return nil, fmt.Errorf("not a per-token file: %w", err)
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
	if d.Version != PerTokenVersion {
		return nil, fmt.Errorf("per-token file version %d; this build reads %d", d.Version, PerTokenVersion)
	}
	n := d.Header.Targets
	if n < 0 || n > len(data)/16 {
		return nil, fmt.Errorf("per-token file damaged: %d targets in %d bytes", n, len(data))
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{{"doc", d.Doc}, {"pos", d.Pos}, {"token", d.Token}, {"nll", d.NLL}} {
		if len(c.b) != 4*n {
			return nil, fmt.Errorf("per-token file damaged: column %s has %d bytes for %d targets", c.name, len(c.b), n)
		}
	}
	f := &PerTokenFile{Header: d.Header, Tokens: make([]TokenNLL, n)}
	le := binary.LittleEndian
	for i := range f.Tokens {
		f.Tokens[i] = TokenNLL{Doc: int(le.Uint32(d.Doc[4*i:])), Pos: int(le.Uint32(d.Pos[4*i:])),
			Token: int32(le.Uint32(d.Token[4*i:])), NLL: math.Float32frombits(le.Uint32(d.NLL[4*i:]))}
		if i > 0 {
			p, t := f.Tokens[i-1], f.Tokens[i]
			if t.Doc < p.Doc || t.Doc == p.Doc && t.Pos <= p.Pos {
				return nil, fmt.Errorf("per-token file damaged: target %d (document %d position %d) is not after the one before", i, t.Doc, t.Pos)
			}
		}
	}
	return f, nil
}

package runfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// checkpointVersion changes whenever RunCheckpoint's layout or meaning does.
// Version 2: exact sums (exactsum), a trailing checksum, checksummed sidecar
// records. Version 3: the bytes scored count the text only (a special token
// added to it, such as the <|endoftext|> before a joined document, none).
// Version 4: the batches done (State.Batches), by which --device all picks
// each batch's device, the device's kernel set in RunIdentity.Device, and
// the build (RunIdentity.Tool).
const checkpointVersion = 4

// maxCheckpointBytes bounds a checkpoint file read: a real one is a few
// hundred bytes, and every field is of fixed shape (no slices, no maps), so
// decoding never allocates by a number read from the file.
const maxCheckpointBytes = 1 << 16

// RunIdentity is what a checkpoint's run must share with the run that resumes
// it for the totals to be those of an uninterrupted run.
type RunIdentity struct {
	ModelSHA256  string `msgpack:"model_sha256"`
	CorpusSHA256 string `msgpack:"corpus_sha256"`
	Tokenizer    string `msgpack:"tokenizer"`
	Mode         string `msgpack:"mode"`
	Ctx          int    `msgpack:"ctx"`
	Stride       int    `msgpack:"stride"`
	// BOSEachWindow is EvalConfig.BOSEachWindow (false in checkpoints of
	// builds before it, which had no such option).
	BOSEachWindow bool   `msgpack:"bos_each_window"`
	MaxTokens     int    `msgpack:"max_tokens"`
	Split         string `msgpack:"split"`
	Separator     string `msgpack:"separator"`
	Precision     string `msgpack:"precision"`
	// Device is the backend's name and kernel set (another device or kernel
	// set rounds differently); with several devices (--device all), each
	// one's, joined with " + ". A run on any number of devices that are all
	// the same device gives the same bits, so those match (Diff).
	Device string         `msgpack:"device"`
	Shard  pipeline.Shard `msgpack:"shard"`
	// PerToken is set for a run with per-token output: its records so far
	// are in a sidecar PerTokenLog; TopLogprobs is their top-K.
	PerToken    bool `msgpack:"per_token"`
	TopLogprobs int  `msgpack:"top_logprobs"`
	// Tool is the build that wrote the checkpoint (version and commit, as
	// the result's provenance has them): another build's kernels may round
	// otherwise, and a resumed run would add two builds' sums.
	Tool string `msgpack:"tool"`
}

// RunCheckpoint is an interrupted run's state on disk (--checkpoint; not to
// be confused with model.Checkpoint, a model's weight files).
type RunCheckpoint struct {
	Version int            `msgpack:"version"`
	Run     RunIdentity    `msgpack:"run"`
	State   pipeline.State `msgpack:"state"`
	// PerTokenRecords is, for a run with per-token output, how many records
	// of its PerTokenLog are valid (synced before this checkpoint was
	// written): State.Sums.Count.
	PerTokenRecords int `msgpack:"per_token_records"`
}

// Diff names the first field in which two identities differ, with both
// values; "" when they are equal. The options that choose what of a corpus
// is scored (mode, split, separator) come before the corpus's sha256, which
// is of what is scored: another --split names the split, not a hash.
func (a RunIdentity) Diff(b RunIdentity) string {
	for _, f := range []struct {
		name string
		x, y any
	}{
		{"model weights (sha256)", a.ModelSHA256, b.ModelSHA256},
		{"tokenizer", a.Tokenizer, b.Tokenizer},
		{"mode", a.Mode, b.Mode},
		{"split", a.Split, b.Split},
		{"separator", fmt.Sprintf("%q", a.Separator), fmt.Sprintf("%q", b.Separator)},
		{"corpus (sha256)", a.CorpusSHA256, b.CorpusSHA256},
		{"BOS each window", a.BOSEachWindow, b.BOSEachWindow},
		{"ctx", a.Ctx, b.Ctx},
		{"stride", a.Stride, b.Stride},
		{"max tokens", a.MaxTokens, b.MaxTokens},
		{"precision", a.Precision, b.Precision},
		{"device", a.Device, sameDevices(a.Device, b.Device)},
		{"shard", shardName(&a.Shard), shardName(&b.Shard)}, // 0/1 is the whole run, as none
		{"per-token output", a.PerToken, b.PerToken},
		{"top logprobs", a.TopLogprobs, b.TopLogprobs},
		{"build of wgpu-eval", a.Tool, b.Tool},
	} {
		if f.x != f.y {
			return fmt.Sprintf("%s: %v in the checkpoint, %v now", f.name, f.x, f.y)
		}
	}
	return ""
}

// sameDevices is b, or a where a and b name runs on the same one device,
// each on any number of them (--device all on two identical GPUs, then on
// the one left): batches on identical devices give identical bits,
// whichever of them scores which batch.
func sameDevices(a, b string) string {
	one := func(s string) string { // the device all parts are, "" if they differ
		parts := strings.Split(s, " + ")
		for _, p := range parts[1:] {
			if p != parts[0] {
				return ""
			}
		}
		return parts[0]
	}
	if x := one(a); x != "" && x == one(b) {
		return a
	}
	return b
}

// LoadRunCheckpoint reads the checkpoint at path; a missing file gives
// fs.ErrNotExist (a fresh run), a damaged one a clear error.
func LoadRunCheckpoint(path string) (*RunCheckpoint, error) {
	f, err := infile.Open(path) // a FIFO is refused, not opened: its open would block
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("checkpoint %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCheckpointBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	if len(data) > maxCheckpointBytes {
		return nil, fmt.Errorf("checkpoint %s is larger than %d bytes: not a wgpu-eval checkpoint", path, maxCheckpointBytes)
	}
	if !looksLikeCheckpoint(data) {
		return nil, fmt.Errorf("checkpoint %s: %w", path, errNotCheckpoint)
	}
	c, err := ParseRunCheckpoint(data)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w: delete it to start over", path, err)
	}
	return c, nil
}

// errNotCheckpoint is LoadRunCheckpoint's error for a file that does not
// begin as every checkpoint does: a user's file named by mistake, which must
// not be called damaged (with the advice to delete it).
var errNotCheckpoint = errors.New("the file there is not a wgpu-eval checkpoint (it does not begin as one): give the checkpoint a path of its own")

// looksLikeCheckpoint reports whether data begins as Save writes every
// checkpoint: a msgpack map whose first key is "version". A checkpoint
// damaged after that beginning is still one (and called damaged).
func looksLikeCheckpoint(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	head := 0 // the map header's length: a fixmap of 1 to 15 entries, a map16 or a map32
	switch b := data[0]; {
	case b > 0x80 && b <= 0x8f:
		head = 1
	case b == 0xde:
		head = 3
	case b == 0xdf:
		head = 5
	default:
		return false
	}
	return bytes.HasPrefix(data[min(head, len(data)):], []byte("\xa7version")) // fixstr "version"
}

// ParseRunCheckpoint decodes a checkpoint file: msgpack followed by the
// CRC-32C of those bytes (little-endian). It refuses a file whose checksum
// does not match, of another version, or whose numbers no run writes
// (negative or huge counts, sums that are not finite or below what the
// targets allow).
func ParseRunCheckpoint(data []byte) (*RunCheckpoint, error) {
	if len(data) < 4 {
		return nil, errors.New("damaged (too short)")
	}
	var v struct {
		Version int `msgpack:"version"`
	}
	if msgpack.Unmarshal(data, &v) == nil && v.Version != checkpointVersion {
		return nil, fmt.Errorf("version %d, and this build reads %d", v.Version, checkpointVersion)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	var c RunCheckpoint
	if err := msgpack.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("damaged (%v)", err)
	}
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, fmt.Errorf("damaged (checksum %08x, the file says %08x)", got, sum)
	}
	st := c.State
	for _, n := range []int{st.Samples, st.Sums.Count, st.Bytes, st.BatchTokens, st.Batches, c.PerTokenRecords, c.Run.Ctx, c.Run.Stride, c.Run.MaxTokens, c.Run.TopLogprobs} {
		if n < 0 || n > pipeline.MaxCount {
			return nil, fmt.Errorf("damaged (a count of %d)", n)
		}
	}
	sum1, sumSq := st.Sums.Sum.Float64(), st.Sums.SumSq.Float64()
	if !st.Sums.Finite() || sum1 < pipeline.MinNLL*float64(st.Sums.Count) || sumSq < 0 {
		return nil, fmt.Errorf("damaged (NLL sums %v and %v for %d targets)", sum1, sumSq, st.Sums.Count)
	}
	if c.Run.PerToken && c.PerTokenRecords != st.Sums.Count || !c.Run.PerToken && c.PerTokenRecords != 0 {
		return nil, fmt.Errorf("damaged (%d per-token records for %d targets)", c.PerTokenRecords, st.Sums.Count)
	}
	return &c, nil
}

// castagnoli is the CRC-32C table of checkpoints and per-token logs.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Save writes c to path atomically: a temporary file in the same folder,
// synced, then renamed over path, so a crash leaves the old or the new
// checkpoint, never half of one. A checksum follows the msgpack.
func (c *RunCheckpoint) Save(path string) error {
	c.Version = checkpointVersion
	data, err := msgpack.Marshal(c)
	if err != nil {
		return err
	}
	data = binary.LittleEndian.AppendUint32(data, crc32.Checksum(data, castagnoli))
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", path, err)
	}
	return nil
}

// IsNoRunCheckpoint reports whether err from LoadRunCheckpoint means there is none yet.
func IsNoRunCheckpoint(err error) bool { return errors.Is(err, fs.ErrNotExist) }

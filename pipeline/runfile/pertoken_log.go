package runfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// PerTokenLog is the sidecar of a checkpointed run with per-token output: an
// append-only file of fixed-size records (document, position, token, NLL and
// the top log-probabilities, then the CRC-32C of those bytes, little-endian)
// in the order the run scored them.
// The run appends each batch's records, syncs the log before each checkpoint
// write, and the checkpoint says how many records are valid; a resumed run
// reopens the log at that count, dropping whatever a crash left after it.
type PerTokenLog struct {
	f    *os.File
	path string
	k    int // top log-probabilities per record
	n    int // records in the file
	buf  []byte
}

// perTokenRecordBytes is the size of one record with k top log-probabilities
// and its checksum.
func perTokenRecordBytes(k int) int { return 20 + 8*k }

// OpenPerTokenLog opens the log at path for a run whose records have k top
// log-probabilities, keeping its first valid records (0: a fresh run, the
// file is created or emptied) and returning them; the rest of the file is
// cut off. A log shorter than valid records is refused.
func OpenPerTokenLog(path string, valid, k int) (*PerTokenLog, []pipeline.TokenNLL, error) {
	if err := pipeline.CheckTopLogprobs(k, 0); err != nil {
		return nil, nil, fmt.Errorf("per-token log %s: %w", path, err)
	}
	if valid < 0 {
		return nil, nil, fmt.Errorf("per-token log %s: %d records asked", path, valid)
	}
	// Something other than a regular file at path is refused before open(2).
	if _, err := infile.Check(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("per-token log: %w", err)
	}
	flags := os.O_RDWR | os.O_CREATE
	if valid == 0 {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("per-token log: %w", err)
	}
	l := &PerTokenLog{f: f, path: path, k: k, n: valid}
	records, err := l.load(valid)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return l, records, nil
}

// load reads the first n records and truncates the file after them.
func (l *PerTokenLog) load(n int) ([]pipeline.TokenNLL, error) {
	fi, err := l.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("per-token log %s: %w", l.path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("per-token log %s is not a regular file", l.path)
	}
	size := int64(perTokenRecordBytes(l.k))
	// Bounded by the file's size before anything is allocated by n.
	if int64(n) > fi.Size()/size {
		return nil, fmt.Errorf("per-token log %s is damaged: %d bytes, and the checkpoint says it holds %d records of %d bytes; "+
			"delete the checkpoint to start over", l.path, fi.Size(), n, size)
	}
	out := make([]pipeline.TokenNLL, n)
	var top []pipeline.TokenLogprob
	if l.k > 0 {
		top = make([]pipeline.TokenLogprob, n*l.k)
	}
	r := bufio.NewReader(io.NewSectionReader(l.f, 0, int64(n)*size))
	rec := make([]byte, size)
	le := binary.LittleEndian
	for i := range out {
		if _, err := io.ReadFull(r, rec); err != nil {
			return nil, fmt.Errorf("per-token log %s: record %d: %w", l.path, i, err)
		}
		if got, want := crc32.Checksum(rec[:size-4], castagnoli), le.Uint32(rec[size-4:]); got != want {
			return nil, fmt.Errorf("per-token log %s is damaged: record %d fails its checksum (%08x, stored %08x); delete the checkpoint to start over",
				l.path, i, got, want)
		}
		out[i] = pipeline.TokenNLL{Doc: int(le.Uint32(rec)), Pos: int(le.Uint32(rec[4:])), Token: int32(le.Uint32(rec[8:])),
			NLL: math.Float32frombits(le.Uint32(rec[12:]))}
		if l.k > 0 {
			row := top[i*l.k : (i+1)*l.k : (i+1)*l.k]
			for j := range row {
				b := rec[16+8*j:]
				row[j] = pipeline.TokenLogprob{ID: int32(le.Uint32(b)), Logprob: math.Float32frombits(le.Uint32(b[4:]))}
			}
			out[i].Top = row
		}
	}
	if err := l.f.Truncate(int64(n) * size); err != nil {
		return nil, fmt.Errorf("per-token log %s: %w", l.path, err)
	}
	if _, err := l.f.Seek(int64(n)*size, io.SeekStart); err != nil {
		return nil, fmt.Errorf("per-token log %s: %w", l.path, err)
	}
	return out, nil
}

// Append writes records at the end of the log (not yet synced).
func (l *PerTokenLog) Append(records []pipeline.TokenNLL) error {
	size := perTokenRecordBytes(l.k)
	l.buf = l.buf[:0]
	le := binary.LittleEndian
	for _, t := range records {
		if t.Doc < 0 || t.Doc > math.MaxUint32 || t.Pos < 0 || t.Pos > math.MaxUint32 || len(t.Top) != l.k {
			return fmt.Errorf("per-token log %s: record at document %d position %d with %d top log-probabilities does not fit it",
				l.path, t.Doc, t.Pos, len(t.Top))
		}
		l.buf = le.AppendUint32(l.buf, uint32(t.Doc))
		l.buf = le.AppendUint32(l.buf, uint32(t.Pos))
		l.buf = le.AppendUint32(l.buf, uint32(t.Token))
		l.buf = le.AppendUint32(l.buf, math.Float32bits(t.NLL))
		for _, x := range t.Top {
			l.buf = le.AppendUint32(l.buf, uint32(x.ID))
			l.buf = le.AppendUint32(l.buf, math.Float32bits(x.Logprob))
		}
		rec := l.buf[len(l.buf)-(size-4):]
		l.buf = le.AppendUint32(l.buf, crc32.Checksum(rec, castagnoli))
	}
	if len(l.buf) != size*len(records) {
		return errors.New("per-token log: record size mismatch") // our bug
	}
	if _, err := l.f.Write(l.buf); err != nil {
		return fmt.Errorf("per-token log %s: %w", l.path, err)
	}
	l.n += len(records)
	return nil
}

// Sync makes the records appended so far durable and returns their count:
// what a checkpoint written next may call valid.
func (l *PerTokenLog) Sync() (int, error) {
	if err := l.f.Sync(); err != nil {
		return 0, fmt.Errorf("per-token log %s: %w", l.path, err)
	}
	return l.n, nil
}

// Close closes the log, keeping the file.
func (l *PerTokenLog) Close() error { return l.f.Close() }

// Remove closes the log and deletes its file (the run is complete).
func (l *PerTokenLog) Remove() error {
	l.f.Close()
	if err := os.Remove(l.path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove per-token log: %w", err)
	}
	return nil
}

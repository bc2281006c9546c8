package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"

	"github.com/x448/float16"
)

// MaxSafetensorsHeader is the largest JSON header a safetensors file may have
// (100 MB, as the reference implementation allows).
const MaxSafetensorsHeader = 100_000_000

// dtypeSizes maps every safetensors dtype to its size in bytes.
var dtypeSizes = map[string]int64{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
	"U16": 2, "I16": 2, "F16": 2, "BF16": 2,
	"U32": 4, "I32": 4, "F32": 4,
	"U64": 8, "I64": 8, "F64": 8,
}

// TensorInfo describes one tensor of a safetensors file.
type TensorInfo struct {
	Name  string
	DType string // "F32", "F16", "BF16", "I64", ...
	Shape []int
	// Begin and End are the tensor's byte range within the data section,
	// which starts right after the header.
	Begin, End int64
}

// NumElements is the product of the shape (1 for a scalar).
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// Safetensors is a safetensors file whose header has been read and validated:
// every tensor has a known dtype and a byte range of exactly the size its shape
// implies, and the ranges tile the data section with no gap or overlap. Tensor
// data is read on demand, one tensor at a time.
type Safetensors struct {
	Path     string            // file name, for messages; may be empty
	Tensors  []TensorInfo      // in file order (by Begin)
	Metadata map[string]string // the header's __metadata__, if any

	r       io.ReaderAt
	closer  io.Closer
	dataOff int64 // absolute offset of the data section
	byName  map[string]int
}

// OpenSafetensors opens the safetensors file at path and validates its header.
// Close it when done.
func OpenSafetensors(path string) (*Safetensors, error) {
	if err := checkRegular(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	s, err := ParseSafetensors(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Path, s.closer = path, f
	return s, nil
}

// ParseSafetensors reads and validates the header of a safetensors file of
// size bytes read through r. Header entries must have dtype, shape and
// data_offsets (other fields are ignored); only whitespace may follow the JSON. It
// never panics, whatever the bytes.
func ParseSafetensors(r io.ReaderAt, size int64) (*Safetensors, error) {
	var lenBuf [8]byte
	if size < 8 {
		return nil, fmt.Errorf("safetensors file of %d bytes is too short for its 8-byte header length", size)
	}
	if err := readFull(r, lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("read header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > MaxSafetensorsHeader {
		return nil, fmt.Errorf("header length %d is larger than the %d-byte limit (not a safetensors file?)", n, MaxSafetensorsHeader)
	}
	if int64(n) > size-8 {
		return nil, fmt.Errorf("header length %d is larger than the %d bytes after it (truncated file?)", n, size-8)
	}
	header := make([]byte, n)
	if err := readFull(r, header, 8); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	tensors, meta, err := parseHeader(header)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	dataLen := size - 8 - int64(n)
	if err := checkLayout(tensors, dataLen); err != nil {
		return nil, err
	}
	s := &Safetensors{Tensors: tensors, Metadata: meta, r: r, dataOff: 8 + int64(n), byName: make(map[string]int, len(tensors))}
	for i, t := range tensors {
		s.byName[t.Name] = i
	}
	return s, nil
}

// rawTensor is a header entry as JSON has it.
type rawTensor struct {
	DType       *string  `json:"dtype"`
	Shape       []int64  `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
}

// parseHeader decodes the JSON header: an object of tensor entries and an
// optional "__metadata__" object of strings. Duplicate names are errors.
func parseHeader(header []byte) ([]TensorInfo, map[string]string, error) {
	if len(header) == 0 || header[0] != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(header))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, nil, fmt.Errorf("not valid JSON: %w", err)
	}
	var tensors []TensorInfo
	var meta map[string]string
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("not valid JSON: %w", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("unexpected %v", tok)
		}
		if seen[name] {
			return nil, nil, fmt.Errorf("tensor %q appears twice", name)
		}
		seen[name] = true
		if name == "__metadata__" {
			if err := dec.Decode(&meta); err != nil {
				return nil, nil, fmt.Errorf("__metadata__: want an object of strings: %w", err)
			}
			continue
		}
		var raw rawTensor
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", name, jsonError(err))
		}
		t, err := raw.info(name)
		if err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		tensors = append(tensors, t)
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, nil, fmt.Errorf("not valid JSON: %w", err)
	}
	// Only padding (spaces, by the reference writer) may follow the object.
	if tail := header[dec.InputOffset():]; len(bytes.TrimSpace(tail)) != 0 {
		return nil, nil, errors.New("data after the JSON object")
	}
	return tensors, meta, nil
}

// info checks one entry's fields: a known dtype, non-negative dimensions,
// two offsets in order whose difference is the size the shape implies.
func (raw rawTensor) info(name string) (TensorInfo, error) {
	if raw.DType == nil {
		return TensorInfo{}, errors.New("no dtype")
	}
	dsize, ok := dtypeSizes[*raw.DType]
	if !ok {
		return TensorInfo{}, fmt.Errorf("unknown dtype %q", *raw.DType)
	}
	if raw.Shape == nil {
		return TensorInfo{}, errors.New("no shape")
	}
	if len(raw.DataOffsets) != 2 {
		return TensorInfo{}, fmt.Errorf("data_offsets has %d numbers, want 2", len(raw.DataOffsets))
	}
	begin, end := raw.DataOffsets[0], raw.DataOffsets[1]
	if begin > math.MaxInt64 || end > math.MaxInt64 {
		return TensorInfo{}, fmt.Errorf("data_offsets [%d, %d] out of range", begin, end)
	}
	if end < begin {
		return TensorInfo{}, fmt.Errorf("data_offsets [%d, %d] end before begin", begin, end)
	}
	shape := make([]int, len(raw.Shape))
	bytes := uint64(dsize)
	for i, d := range raw.Shape {
		if d < 0 {
			return TensorInfo{}, fmt.Errorf("shape %v has a negative dimension", raw.Shape)
		}
		shape[i] = int(d)
		if d == 0 {
			bytes = 0
		}
	}
	for _, d := range raw.Shape {
		if bytes == 0 {
			break
		}
		// bytes*d would exceed end-begin (and might overflow): a mismatch.
		if bytes > (end-begin)/uint64(d) {
			return TensorInfo{}, fmt.Errorf("shape %v of %s needs more than the %d bytes of data_offsets [%d, %d]", raw.Shape, *raw.DType, end-begin, begin, end)
		}
		bytes *= uint64(d)
	}
	if bytes != end-begin {
		return TensorInfo{}, fmt.Errorf("shape %v of %s is %d bytes but data_offsets [%d, %d] hold %d", raw.Shape, *raw.DType, bytes, begin, end, end-begin)
	}
	return TensorInfo{Name: name, DType: *raw.DType, Shape: shape, Begin: int64(begin), End: int64(end)}, nil
}

// checkLayout sorts tensors by offset and checks that they cover the data
// section of dataLen bytes exactly, with no gap, overlap or overrun.
func checkLayout(tensors []TensorInfo, dataLen int64) error {
	slices.SortStableFunc(tensors, func(a, b TensorInfo) int {
		if a.Begin != b.Begin {
			return compare(a.Begin, b.Begin)
		}
		return compare(a.End, b.End)
	})
	var pos int64
	var prev string
	for _, t := range tensors {
		if t.End > dataLen {
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] run past the %d bytes of data (truncated file?)", t.Name, t.Begin, t.End, dataLen)
		}
		switch {
		case t.Begin < pos:
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] overlap tensor %q, which ends at %d", t.Name, t.Begin, t.End, prev, pos)
		case t.Begin > pos:
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] leave a gap after byte %d", t.Name, t.Begin, t.End, pos)
		}
		pos, prev = t.End, t.Name
	}
	if pos != dataLen {
		return fmt.Errorf("tensors end at byte %d of the %d bytes of data", pos, dataLen)
	}
	return nil
}

func compare(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Tensor returns the description of the tensor called name.
func (s *Safetensors) Tensor(name string) (TensorInfo, bool) {
	i, ok := s.byName[name]
	if !ok {
		return TensorInfo{}, false
	}
	return s.Tensors[i], true
}

// ReadFloat32 reads the tensor called name, converting F32, F16 or BF16 to
// float32. Other dtypes are errors; NaN and infinite values are read as they
// are. It reads in chunks, so memory use is the result plus a small buffer.
func (s *Safetensors) ReadFloat32(name string) ([]float32, error) {
	t, ok := s.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("no tensor %q", name)
	}
	r := tensorRef{s, t}
	if _, ok := parseDType(t.DType); !ok {
		return nil, fmt.Errorf("tensor %q: dtype %s, want F32, F16 or BF16", name, t.DType)
	}
	src := r.source()
	out := make([]float32, src.n)
	var sc scratch
	for e := 0; e < src.n; e += chunkValues {
		vals, _, err := src.chunk(&sc, e, min(chunkValues, src.n-e))
		if err != nil {
			return nil, err
		}
		copy(out[e:], vals)
	}
	return out, nil
}

// readFull fills b from r at off. A ReaderAt may report io.EOF along with a
// full read that ends at the end of the input; that is a success.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	switch {
	case n == len(b):
		return nil
	case errors.Is(err, io.EOF):
		return io.ErrUnexpectedEOF
	case err == nil:
		return io.ErrShortBuffer // not allowed by io.ReaderAt's contract
	}
	return err
}

// Close closes the underlying file, if OpenSafetensors opened it.
func (s *Safetensors) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}

func convF32(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func convBF16(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
	}
}

// f16Table maps every binary16 bit pattern to its float32 value.
var f16Table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = float16.Frombits(uint16(i)).Float32()
	}
	return &t
})

func convF16(dst []float32, src []byte) {
	t := f16Table()
	for i := range dst {
		dst[i] = t[binary.LittleEndian.Uint16(src[2*i:])]
	}
}

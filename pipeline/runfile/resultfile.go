package runfile

import (
	"encoding/json"
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/internal/jsonformat"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// MaxResultBytes bounds a --json result file read back (by merge).
const MaxResultBytes = 1 << 20

// ParseResult decodes a --json result file and checks its numbers
// (CheckNumbers). A result marked as another format, or with a
// format_version above pipeline.ResultFormatVersion, is refused; an
// unmarked one (an older build's) is read.
func ParseResult(data []byte) (*pipeline.Result, error) {
	if len(data) > MaxResultBytes {
		return nil, fmt.Errorf("larger than %d bytes: not a wgpu-eval result", MaxResultBytes)
	}
	if err := jsonformat.Check(data, pipeline.ResultFormat, pipeline.ResultFormatVersion); err != nil {
		return nil, fmt.Errorf("not a wgpu-eval --json result this build reads: %w", err)
	}
	var r pipeline.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("not a wgpu-eval --json result: %w", err)
	}
	if err := r.CheckNumbers(); err != nil {
		return nil, fmt.Errorf("damaged or edited result: %w", err)
	}
	return &r, nil
}

// WriteJSON writes v as indented JSON (and a newline) to path with
// atomicfile.Write: a crash leaves the old file or the new one, and a link,
// a device or a FIFO at path is written through, never replaced.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", infile.Quote(path), err)
	}
	if err := atomicfile.Write(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", infile.Quote(path), err)
	}
	return nil
}

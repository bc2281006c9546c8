package runfile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/model/exactsum"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// DocumentScore is one document's score in documents mode (--per-document):
// its targets' NLLs added exactly, and the metrics from them. Doc is the
// document's number in the corpus (TokenNLL.Doc: an empty document, which
// has no score, counted).
type DocumentScore struct {
	Doc     int     `json:"doc"`
	Targets int     `json:"targets"`
	NLLSum  float64 `json:"nll_sum"`  // nats
	MeanNLL float64 `json:"mean_nll"` // nats per target
	PPL     float64 `json:"ppl"`      // exp(MeanNLL), at most 1.8e308 (math.MaxFloat64)
	// Bytes is the UTF-8 bytes of the document's targets (every token of the
	// document in documents mode; a special token the tokenizer added, such
	// as an EOS, none) and BitsPerByte NLLSum / ln 2 / Bytes;
	// both 0 where the tokenizer's byte lengths are unknown.
	Bytes       int     `json:"bytes"`
	BitsPerByte float64 `json:"bits_per_byte"`
}

// DocumentScores groups per-token records (in corpus order, as
// Result.PerToken holds them) by document. bytes gives the UTF-8 bytes of
// text a record stands for (pipeline.RecordBytes); nil leaves Bytes and
// BitsPerByte 0.
func DocumentScores(records []pipeline.TokenNLL, bytes func(pipeline.TokenNLL) int) []DocumentScore {
	var out []DocumentScore
	var sum exactsum.Sum
	flush := func() {
		d := &out[len(out)-1]
		d.NLLSum = sum.Float64()
		d.MeanNLL = d.NLLSum / float64(d.Targets)
		// At most the largest float64, as the result's perplexity: a mean
		// NLL past ln(MaxFloat64) would give +Inf, which JSON cannot hold.
		d.PPL = min(math.Exp(d.MeanNLL), math.MaxFloat64)
		if d.Bytes > 0 {
			d.BitsPerByte = d.NLLSum / math.Ln2 / float64(d.Bytes)
		}
	}
	for i, r := range records {
		if i == 0 || r.Doc != records[i-1].Doc {
			if i > 0 {
				flush()
			}
			out = append(out, DocumentScore{Doc: r.Doc})
			sum = exactsum.Sum{}
		}
		d := &out[len(out)-1]
		d.Targets++
		sum.Add(float64(r.NLL))
		if bytes != nil {
			d.Bytes += bytes(r)
		}
	}
	if len(out) > 0 {
		flush()
	}
	return out
}

// WriteDocumentScores writes docs to path as JSON Lines, one document per
// line, atomically (atomicfile.WriteFunc).
func WriteDocumentScores(path string, docs []DocumentScore) error {
	err := atomicfile.WriteFunc(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		for _, d := range docs {
			if err := enc.Encode(d); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("write per-document file %s: %w", path, err)
	}
	return nil
}

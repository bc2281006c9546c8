package shaders

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// sessionChunk is the most positions a Session's Append runs in one pass; a
// longer prompt is prefilled in chunks of it.
const sessionChunk = 64

// Session decodes one sequence on the device: a KV cache of every layer for
// the model's positions, allocated once, into which Append writes the keys and
// values of new tokens in place (the prefix is never recomputed), returning
// the next token's logits. It is the GPU side of text generation. A Session
// is not safe for concurrent use; Close it when done.
type Session struct {
	g        *GPT2
	a        *arena
	logits   *wgpu.Buffer // (V) f32
	readback *wgpu.Buffer // (V) f32, host-visible
	n        int          // positions in the cache
	size     int          // positions the cache holds
	out      []float32
	raw      []byte
}

// NewSession allocates a decode session's device memory: a cache of every
// layer for the model's positions (NPositions, or fewer where the adapter
// caps them: see Positions), activations for sessionChunk rows and the
// logits with their readback. NewSessionFor allocates what a shorter
// sequence needs.
func (g *GPT2) NewSession() (*Session, error) { return g.NewSessionFor(0) }

// NewSessionFor is NewSession with a cache of positions positions (the
// prompt and the tokens to generate; <= 0 or more than Positions:
// Positions), so that a short generation with a model of a hundred thousand
// positions costs what it needs.
func (g *GPT2) NewSessionFor(positions int) (*Session, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errors.New("gpu session: model closed")
	}
	cfg := g.cfg
	size := g.positions
	if positions > 0 && positions < size {
		size = positions
	}
	a, err := g.newArena(arenaSize{rows: sessionChunk, cacheTok: size, cacheLayers: cfg.NLayer, targets: 1, tokens: sessionChunk})
	if err != nil {
		return nil, fmt.Errorf("gpu session: %w", err)
	}
	s := &Session{g: g, a: a, size: size, out: make([]float32, cfg.VocabSize), raw: make([]byte, 4*cfg.VocabSize)}
	bytes := uint64(4 * cfg.VocabSize)
	if s.logits, err = g.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: "logits", Size: bytes,
		Usage: wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc}); err == nil {
		s.readback, err = g.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: "logits readback", Size: bytes,
			Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst})
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("gpu session: %w", err)
	}
	return s, nil
}

// Len is the positions in the cache so far.
func (s *Session) Len() int { return s.n }

// Cap is the positions the cache holds: those NewSessionFor was given, or
// the device's Positions, which may be fewer than the model's.
func (s *Session) Cap() int { return s.size }

// Append runs tokens after those already in the cache, writing their keys and
// values into it, and returns the logits (V values, float32) of the token
// that follows the last one. The slice is reused by the next call. Tokens past
// the model's positions or outside the vocabulary are refused, and nothing is
// appended then.
func (s *Session) Append(ctx context.Context, tokens []int32) ([]float32, error) {
	cfg := s.g.cfg
	switch {
	case s.a == nil:
		return nil, errors.New("gpu session: closed")
	case len(tokens) == 0:
		return nil, errors.New("gpu session: no tokens to append")
	case s.n+len(tokens) > s.size && s.size < s.g.positions:
		return nil, fmt.Errorf("gpu session: %d tokens after %d exceed the session's %d positions", len(tokens), s.n, s.size)
	case s.n+len(tokens) > s.size:
		return nil, fmt.Errorf("gpu session: %d tokens after %d exceed the model's %d positions%s", len(tokens), s.n, s.size, s.g.capped())
	}
	for i, id := range tokens {
		if id < 0 || int(id) >= cfg.VocabSize {
			return nil, fmt.Errorf("gpu session: token %d at %d outside the vocabulary [0, %d)", id, i, cfg.VocabSize)
		}
	}
	for len(tokens) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk := tokens[:min(len(tokens), sessionChunk)]
		if err := s.run(chunk); err != nil {
			return nil, err
		}
		s.n += len(chunk)
		tokens = tokens[len(chunk):]
	}
	return s.out, nil
}

// run records and runs one chunk and reads its last position's logits back.
func (s *Session) run(chunk []int32) error {
	g, a := s.g, s.a
	g.mu.Lock()
	defer g.mu.Unlock()
	tok := make([]byte, 4*len(chunk))
	for i, id := range chunk {
		binary.LittleEndian.PutUint32(tok[4*i:], uint32(id))
	}
	q := g.dev.Queue()
	if err := q.WriteBuffer(a.tokens, 0, tok); err != nil {
		return fmt.Errorf("gpu session: %w", err)
	}
	ranges := g.wteRanges()
	T := len(chunk)
	C := g.cfg.NEmbd
	record := func(r *recorder) {
		g.forwardChunk(r, Buf{Buffer: a.tokens}, 1, T, s.n, s.size, true, ranges)
		for _, vr := range ranges {
			n := vr[1] - vr[0]
			r.op(g.logits, constSet{}, logitsBufs{H: Buf{Buffer: a.ln}, WTE: g.headRange(vr), Out: Buf{Buffer: s.logits}},
				logitsParams{C: uint32(C), V: uint32(n), V0: uint32(vr[0]), Row: uint32(T - 1)},
				perInvocation(n))
		}
	}
	p := &Pending{}
	g.makePipelines(recordingKey{session: true, W: s.size, T: T}, a, p, record)
	enc, err := g.dev.CreateCommandEncoder(&wgpu.CommandEncoderDescriptor{Label: "gpt2 decode"})
	if err != nil {
		return fmt.Errorf("gpu session: %w", err)
	}
	r := &recorder{g: g, enc: enc, pass: enc.BeginComputePass(nil), a: a, p: p}
	record(r)
	if r.err == nil {
		r.pass.End()
		enc.CopyBufferToBuffer(s.logits, 0, s.readback, 0, s.logits.Size())
	}
	cb, err := enc.Finish()
	if r.err != nil {
		err = r.err
	}
	if err == nil {
		_, err = q.Submit(cb)
	}
	if err == nil {
		err = q.ReadBuffer(s.readback, 0, s.raw)
	}
	if err != nil {
		return fmt.Errorf("gpu session: %w", err)
	}
	for i := range s.out {
		s.out[i] = math.Float32frombits(binary.LittleEndian.Uint32(s.raw[4*i:]))
	}
	return nil
}

// Close releases the session's device memory.
func (s *Session) Close() error {
	if s.a != nil {
		s.a.close()
		s.a = nil
	}
	var errs []error
	for _, b := range []*wgpu.Buffer{s.logits, s.readback} {
		if b != nil {
			errs = append(errs, b.Close())
		}
	}
	s.logits, s.readback = nil, nil
	return errors.Join(errs...)
}

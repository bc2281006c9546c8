package shaders

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestArenaLayout checks the one table of an arena's buffers: arenaBytes is
// GPT-2's and the Llama family's activation memory written out by hand
// (res, ln, qkv, att, fc per row; the caches; targets, h, partials, target
// logits, NLLs and their readback per target, and h rounded to f16 where the
// matrix units may run; the tokens), newArena allocates every
// buffer of the table with its bytes, each into its own field, and the
// arena's buffers add up to arenaBytes.
func TestArenaLayout(t *testing.T) {
	d := newTestDev(t)
	s := arenaSize{rows: 37, cacheTok: 45, cacheLayers: 2, targets: 29, tokens: 64}
	for i, cfg := range []model.Config{synth.TinyConfig(), synth.TinyLlamaConfig("qwen3"), synth.TinyConfig()} {
		// The third: f16 weights and the hardware kernels, where the matrix
		// units may run and h rounded to f16 needs room. One partial per tile
		// of 256 ids with either kernel set.
		h16 := i == 2
		g := &GPT2{dev: d.dev, cfg: cfg, vt: 256, f16: h16, sharedMatmul: h16, sliceTiles: 1}
		C := int64(cfg.NEmbd)
		w := g.widths()
		if cfg.Arch == model.ArchLlama {
			if w != (widths{qkv: cfg.QDim() + 2*cfg.KVDim(), att: cfg.QDim(), fc: cfg.Inner(), kv: cfg.KVDim()}) {
				t.Fatalf("%s: widths %+v", cfg.ModelType, w)
			}
		} else if w != (widths{qkv: 3 * cfg.NEmbd, att: cfg.NEmbd, fc: 4 * cfg.NEmbd, kv: cfg.NEmbd}) {
			t.Fatalf("gpt2: widths %+v", w)
		}
		parts := int64((cfg.VocabSize + 255) / 256) // one partial per tile of 256 ids
		stride := (int64(s.cacheTok)*int64(w.kv)*4 + 255) / 256 * 256
		want := 4*int64(s.rows)*(2*C+int64(w.qkv+w.att+w.fc)) + 2*stride*int64(s.cacheLayers) +
			4*int64(s.targets)*(1+C+2*parts+3) + 4*int64(s.tokens) // targets, h, partials, tgt, nll, readback
		if h16 {
			want += 2 * int64(s.targets) * C
		}
		if got := g.arenaBytes(s); got != want {
			t.Errorf("%s: arenaBytes %d, want %d", cfg.ModelType, got, want)
		}
		a, err := g.newArena(s)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[*wgpu.Buffer]bool{}
		var total int64
		dims := g.arenaDims(s)
		for _, ab := range arenaLayout {
			b := *ab.field(a)
			if b == nil || seen[b] {
				t.Fatalf("%s: buffer %s not allocated into a field of its own", cfg.ModelType, ab.label)
			}
			seen[b] = true
			if n := ab.bytes(dims, s); b.Size() != uint64(max(n, 16)) {
				t.Errorf("%s: %s has %d bytes, the table says %d", cfg.ModelType, ab.label, b.Size(), n)
			}
			total += ab.bytes(dims, s)
		}
		if len(a.bufs) != len(arenaLayout) || total != g.arenaBytes(s) {
			t.Errorf("%s: %d buffers of %d bytes, the table %d of %d", cfg.ModelType, len(a.bufs), total, len(arenaLayout), g.arenaBytes(s))
		}
		if a.layerStride != uint64(stride) {
			t.Errorf("%s: layer stride %d, want %d", cfg.ModelType, a.layerStride, stride)
		}
		a.close()
	}
}

package model_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// LoadCPU keeps F16 and BF16 matrices in 16 bits and widens them inside the
// kernels, which is exact: the loss, the per-token NLLs and the generator's
// logits are bit-identical to those of the same checkpoint widened to float32
// by Load and run by NewCPU, for any thread count. The shape has 4C = 320 rows
// in its c_proj matrix (more than one band of the parallel transpose), K = C =
// 80 and 4C = 320 (multiples of 16) and a head dim of 20; the vocabulary of
// 300 is not a multiple of 4. An untied lm_head is read in its own dtype.
// The weights take half the memory of float32, but for the vectors and wpe.
func TestLoadCPU16BitMatchesWidened(t *testing.T) {
	cfg := model.Config{NLayer: 2, NHead: 4, NEmbd: 80, NPositions: 48, VocabSize: 300, LayerNormEps: 1e-5}
	ctx := context.Background()
	seqs := []model.Sequence{
		{Tokens: []int32{1, 7, 42, 299, 0, 13, 8, 8, 150, 3, 77, 12}, First: 1},
		{Tokens: []int32{5, 6, 7, 8, 9}, First: 2},
	}
	tied := synth.Peaked(cfg, 9)
	untied := synth.Peaked(cfg, 9)
	untied.Weights.LMHead = synth.Random(cfg, 10).Weights.WTE
	for _, tc := range []struct {
		name  string
		m     *model.Model
		dtype string
	}{
		{"F16", tied, "F16"}, {"BF16", tied, "BF16"}, {"F16 untied", untied, "F16"}, {"BF16 untied", untied, "BF16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeModel(t, tc.m, tc.dtype)
			widened, err := model.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			ref := model.NewCPU(widened, 2)
			wantSums, wantNLL, err := ref.LossPerToken(ctx, seqs)
			if err != nil {
				t.Fatal(err)
			}
			wantLogits := generate(t, ref, seqs[0].Tokens)
			f32Bytes := ref.WeightBytes()
			for _, threads := range []int{1, 3} {
				c := loadCPU(t, dir, threads)
				sums, nll, err := c.LossPerToken(ctx, seqs)
				if err != nil {
					t.Fatal(err)
				}
				if sums != wantSums || !slices.Equal(nll, wantNLL) {
					t.Errorf("threads %d: 16-bit loss %+v, widened %+v", threads, sums, wantSums)
				}
				if got := generate(t, c, seqs[0].Tokens); !slices.Equal(got, wantLogits) {
					t.Errorf("threads %d: 16-bit generator's logits differ from the widened model's", threads)
				}
				C := int64(cfg.NEmbd)
				vectors := 4 * (int64(cfg.NPositions)*C + 2*C + int64(cfg.NLayer)*13*C)
				if got, want := c.WeightBytes(), (f32Bytes-vectors)/2+vectors; got != want {
					t.Errorf("threads %d: weights take %d bytes, want %d (float32: %d)", threads, got, want, f32Bytes)
				}
			}
		})
	}
}

// An F32 checkpoint read by LoadCPU scores bit for bit as Load + NewCPU, from
// a Hugging Face folder and from an llm.c file (stored (out, in), padded vocabulary).
func TestLoadCPUF32MatchesLoad(t *testing.T) {
	cfg := synth.TinyConfig()
	m := synth.Peaked(cfg, 42)
	seqs := []model.Sequence{
		{Tokens: []int32{50256, 464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13}, First: 1},
		{Tokens: []int32{15496, 11, 995, 0, 50256, 40, 716}, First: 3},
	}
	ctx := context.Background()
	want, err := model.NewCPU(m, 2).Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "model.bin")
	if err := synth.WriteLLMC(bin, m, 3); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{writeModel(t, m, "F32"), bin} {
		c := loadCPU(t, path, 2)
		got, err := c.Loss(ctx, seqs)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: LoadCPU loss %+v, NewCPU %+v", filepath.Base(path), got, want)
		}
		if got, want := c.WeightBytes(), model.NewCPU(m, 1).WeightBytes(); got != want {
			t.Errorf("%s: weights take %d bytes, NewCPU's %d", filepath.Base(path), got, want)
		}
	}
}

// LoadCPU stops on a cancelled context and names the checkpoint.
func TestLoadCPUCancelled(t *testing.T) {
	dir := writeModel(t, synth.Random(smallConfig(), 3), "F16")
	ck, err := model.OpenCheckpoint(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = model.LoadCPU(ctx, ck, 1, model.LoadOptions{})
	wantErr(t, err, dir, "context canceled")
}

// loadCPU opens the checkpoint at path and reads it with model.LoadCPU.
func loadCPU(t *testing.T, path string, threads int) *model.CPU {
	t.Helper()
	ck, err := model.OpenCheckpoint(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	var last, total int64
	c, err := model.LoadCPU(context.Background(), ck, threads, model.LoadOptions{Progress: func(d, n int64) { last, total = d, n }})
	if err != nil {
		t.Fatal(err)
	}
	if last != total || total == 0 {
		t.Errorf("progress ended at %d of %d bytes", last, total)
	}
	return c
}

// A NaN in a 16-bit matrix is refused by LoadCPU, naming the tensor and the
// index, as every loader does.
func TestLoadCPURejectsNaN(t *testing.T) {
	for _, dtype := range []string{"F16", "BF16"} {
		m := synth.Random(smallConfig(), 4)
		m.Weights.Layers[1].FCW[40] = float32(math.NaN())
		dir := writeModel(t, m, dtype)
		ck, err := model.OpenCheckpoint(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = model.LoadCPU(context.Background(), ck, 2, model.LoadOptions{})
		ck.Close()
		wantErr(t, err, dir, "h.1.mlp.c_fc.weight", "NaN", "index 40")
	}
}

// A nil checkpoint is an error, not a panic.
func TestLoadCPUNil(t *testing.T) {
	_, err := model.LoadCPU(context.Background(), nil, 1, model.LoadOptions{})
	wantErr(t, err, "nil checkpoint")
}

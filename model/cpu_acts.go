package model

// acts are the activations and scratch of one chunk of the CPU forward, carved
// from one float32 arena by the table in layout. Buffers are reused layer after
// layer (inference keeps no per-layer activations).
type acts struct {
	residual []float32 // (N, C) the residual stream
	ln       []float32 // (N, C) LayerNorm output; also gathers ln_f's input rows
	qkv      []float32 // (N, ld) c_attn output, q|k|v (heads.ld)
	kt       []float32 // (KV heads, key panels, hd, kvPanel) keys in panels per head
	vt       []float32 // (KV heads, hd, N) values transposed per head
	atty     []float32 // (N, QDim) attention output, before c_proj
	fch      []float32 // (N, Inner) c_fc output, then gelu_new in place; SwiGLU's product
	lnf      []float32 // (P, C) ln_f output at the predicting positions
	nll      []float32 // (P) per-target NLL
	tileMax  []float32 // (vocab tiles, P) per-tile max logit
	tileSum  []float32 // (vocab tiles, P) per-tile Σ exp(logit - max)
	tgt      []float32 // (P) the target's logit
	tile     []float32 // (workers, mmScratch) matmul scratch
	scores   []float32 // (workers, attRows*maxT) attention scratch
	logits   []float32 // (workers, lossRows*vocabTile) logits scratch
}

// actSpec is one row of the arena table: a named buffer and its shape.
type actSpec struct {
	name  string
	shape []int
	dst   *[]float32
}

// chunkDims are the sizes one chunk's arena depends on.
type chunkDims struct {
	N         int // rows: the tokens of the chunk's sequences, less the last of each
	P         int // predicting positions (scored targets)
	maxT      int // most rows of one sequence
	keyPanels int // kvPanel-key panels of all sequences, each starting a panel
	workers   int
}

// layout is the arena table of a chunk for model configuration cfg.
func (a *acts) layout(cfg Config, d chunkDims) []actSpec {
	C, hs := cfg.NEmbd, headsOf(cfg)
	tiles := (cfg.VocabSize + vocabTile - 1) / vocabTile
	return []actSpec{
		{"residual", []int{d.N, C}, &a.residual},
		{"ln", []int{d.N, C}, &a.ln},
		{"qkv", []int{d.N, hs.ld()}, &a.qkv},
		{"kt", []int{hs.kvDim(), d.keyPanels * kvPanel}, &a.kt},
		{"vt", []int{hs.kvDim(), d.N}, &a.vt},
		{"atty", []int{d.N, hs.qDim()}, &a.atty},
		{"fch", []int{d.N, cfg.Inner()}, &a.fch},
		{"lnf", []int{d.P, C}, &a.lnf},
		{"nll", []int{d.P}, &a.nll},
		{"tileMax", []int{tiles, d.P}, &a.tileMax},
		{"tileSum", []int{tiles, d.P}, &a.tileSum},
		{"tgt", []int{d.P}, &a.tgt},
		{"tile", []int{d.workers, mmScratch}, &a.tile},
		{"scores", []int{d.workers, attRows * d.maxT}, &a.scores},
		{"logits", []int{d.workers, lossRows * vocabTile}, &a.logits},
	}
}

// arenaSize is the number of floats the table needs.
func arenaSize(table []actSpec) int {
	n := 0
	for _, s := range table {
		n += numel(s.shape)
	}
	return n
}

// carve points every buffer of the table into arena, in table order;
// arena must hold arenaSize(table) floats.
func carve(arena []float32, table []actSpec) {
	for _, s := range table {
		n := numel(s.shape)
		*s.dst = arena[:n:n]
		arena = arena[n:]
	}
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

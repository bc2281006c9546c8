package model

import (
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
)

// Role is what a parameter tensor is for, whatever its layer: the token
// embedding, the first LayerNorm's weight, the MLP's output projection.
type Role int

// The roles of the parameters: GPT-2's first, per-layer roles in the order
// Hugging Face (and llm.c) store a block's tensors, then the Llama family's.
const (
	RoleWTE     Role = iota // wte.weight (V, C)
	RoleWPE                 // wpe.weight (NPositions, C)
	RoleLN1W                // h.N.ln_1.weight (C)
	RoleLN1B                // h.N.ln_1.bias (C)
	RoleQKVW                // h.N.attn.c_attn.weight (C, 3C)
	RoleQKVB                // h.N.attn.c_attn.bias (3C)
	RoleProjW               // h.N.attn.c_proj.weight (C, C)
	RoleProjB               // h.N.attn.c_proj.bias (C)
	RoleLN2W                // h.N.ln_2.weight (C)
	RoleLN2B                // h.N.ln_2.bias (C)
	RoleFCW                 // h.N.mlp.c_fc.weight (C, Inner): Inner is 4C but for n_inner
	RoleFCB                 // h.N.mlp.c_fc.bias (Inner)
	RoleFCProjW             // h.N.mlp.c_proj.weight (Inner, C)
	RoleFCProjB             // h.N.mlp.c_proj.bias (C)
	RoleLNFW                // ln_f.weight (C)
	RoleLNFB                // ln_f.bias (C)
	RoleLMHead              // lm_head.weight (V, C); usually tied to wte

	RoleInputNorm // model.layers.N.input_layernorm.weight (C)
	RoleQW        // model.layers.N.self_attn.q_proj.weight (QDim, C)
	RoleQB        // model.layers.N.self_attn.q_proj.bias (QDim)
	RoleKW        // model.layers.N.self_attn.k_proj.weight (KVDim, C)
	RoleKB        // model.layers.N.self_attn.k_proj.bias (KVDim)
	RoleVW        // model.layers.N.self_attn.v_proj.weight (KVDim, C)
	RoleVB        // model.layers.N.self_attn.v_proj.bias (KVDim)
	RoleQNorm     // model.layers.N.self_attn.q_norm.weight (HeadDim)
	RoleKNorm     // model.layers.N.self_attn.k_norm.weight (HeadDim)
	RoleOW        // model.layers.N.self_attn.o_proj.weight (C, QDim)
	RoleOB        // model.layers.N.self_attn.o_proj.bias (C)
	RolePostNorm  // model.layers.N.post_attention_layernorm.weight (C)
	RoleGateW     // model.layers.N.mlp.gate_proj.weight (Inner, C)
	RoleGateB     // model.layers.N.mlp.gate_proj.bias (Inner)
	RoleUpW       // model.layers.N.mlp.up_proj.weight (Inner, C)
	RoleUpB       // model.layers.N.mlp.up_proj.bias (Inner)
	RoleDownW     // model.layers.N.mlp.down_proj.weight (C, Inner)
	RoleDownB     // model.layers.N.mlp.down_proj.bias (C)
	RoleNorm      // model.norm.weight (C): the final RMSNorm
)

// layerTensor is one row of a per-block table: everything the loaders and
// checks know about a block's tensor, written once.
type layerTensor struct {
	role    Role
	suffix  string               // Hugging Face name after the layer's prefix ("h.N.", "model.layers.N.")
	llmc    string               // llm.c's name for the tensor (train_gpt2.c); GPT-2 only
	shape   func(c Config) []int // Hugging Face shape; Conv1D weights are (in, out), nn.Linear's (out, in)
	present func(c Config) bool  // whether a model of c has the tensor; nil: always
	field   func(*Layer) *[]float32
}

// layerTable lists a GPT-2 block's tensors in Hugging Face's order, which is
// also llm.c's order of parameter kinds.
var layerTable = [...]layerTensor{
	{RoleLN1W, "ln_1.weight", "ln1w", vec(1), nil, func(l *Layer) *[]float32 { return &l.LN1W }},
	{RoleLN1B, "ln_1.bias", "ln1b", vec(1), nil, func(l *Layer) *[]float32 { return &l.LN1B }},
	{RoleQKVW, "attn.c_attn.weight", "qkvw", mat(1, 3), nil, func(l *Layer) *[]float32 { return &l.QKVW }},
	{RoleQKVB, "attn.c_attn.bias", "qkvb", vec(3), nil, func(l *Layer) *[]float32 { return &l.QKVB }},
	{RoleProjW, "attn.c_proj.weight", "attprojw", mat(1, 1), nil, func(l *Layer) *[]float32 { return &l.ProjW }},
	{RoleProjB, "attn.c_proj.bias", "attprojb", vec(1), nil, func(l *Layer) *[]float32 { return &l.ProjB }},
	{RoleLN2W, "ln_2.weight", "ln2w", vec(1), nil, func(l *Layer) *[]float32 { return &l.LN2W }},
	{RoleLN2B, "ln_2.bias", "ln2b", vec(1), nil, func(l *Layer) *[]float32 { return &l.LN2B }},
	{RoleFCW, "mlp.c_fc.weight", "fcw", dims(cC, cI), nil, func(l *Layer) *[]float32 { return &l.FCW }},
	{RoleFCB, "mlp.c_fc.bias", "fcb", dims(cI), nil, func(l *Layer) *[]float32 { return &l.FCB }},
	{RoleFCProjW, "mlp.c_proj.weight", "fcprojw", dims(cI, cC), nil, func(l *Layer) *[]float32 { return &l.FCProjW }},
	{RoleFCProjB, "mlp.c_proj.bias", "fcprojb", vec(1), nil, func(l *Layer) *[]float32 { return &l.FCProjB }},
}

func vec(k int) func(Config) []int { return func(c Config) []int { return []int{k * c.NEmbd} } }
func mat(i, o int) func(Config) []int {
	return func(c Config) []int { return []int{i * c.NEmbd, o * c.NEmbd} }
}

// llamaTable lists a Llama-family block's tensors: attention, then the MLP.
// The shapes are nn.Linear's (out, in).
var llamaTable = [...]layerTensor{
	{RoleInputNorm, "input_layernorm.weight", "", dims(cC), nil, func(l *Layer) *[]float32 { return &l.LN1W }},
	{RoleQW, "self_attn.q_proj.weight", "", dims(cQ, cC), nil, func(l *Layer) *[]float32 { return &l.QW }},
	{RoleQB, "self_attn.q_proj.bias", "", dims(cQ), qkvBias, func(l *Layer) *[]float32 { return &l.QB }},
	{RoleKW, "self_attn.k_proj.weight", "", dims(cKV, cC), nil, func(l *Layer) *[]float32 { return &l.KW }},
	{RoleKB, "self_attn.k_proj.bias", "", dims(cKV), qkvBias, func(l *Layer) *[]float32 { return &l.KB }},
	{RoleVW, "self_attn.v_proj.weight", "", dims(cKV, cC), nil, func(l *Layer) *[]float32 { return &l.VW }},
	{RoleVB, "self_attn.v_proj.bias", "", dims(cKV), qkvBias, func(l *Layer) *[]float32 { return &l.VB }},
	{RoleQNorm, "self_attn.q_norm.weight", "", dims(cHD), qkNorm, func(l *Layer) *[]float32 { return &l.QNormW }},
	{RoleKNorm, "self_attn.k_norm.weight", "", dims(cHD), qkNorm, func(l *Layer) *[]float32 { return &l.KNormW }},
	{RoleOW, "self_attn.o_proj.weight", "", dims(cC, cQ), nil, func(l *Layer) *[]float32 { return &l.OW }},
	{RoleOB, "self_attn.o_proj.bias", "", dims(cC), oBias, func(l *Layer) *[]float32 { return &l.OB }},
	{RolePostNorm, "post_attention_layernorm.weight", "", dims(cC), nil, func(l *Layer) *[]float32 { return &l.LN2W }},
	{RoleGateW, "mlp.gate_proj.weight", "", dims(cI, cC), nil, func(l *Layer) *[]float32 { return &l.GateW }},
	{RoleGateB, "mlp.gate_proj.bias", "", dims(cI), mlpBias, func(l *Layer) *[]float32 { return &l.GateB }},
	{RoleUpW, "mlp.up_proj.weight", "", dims(cI, cC), nil, func(l *Layer) *[]float32 { return &l.UpW }},
	{RoleUpB, "mlp.up_proj.bias", "", dims(cI), mlpBias, func(l *Layer) *[]float32 { return &l.UpB }},
	{RoleDownW, "mlp.down_proj.weight", "", dims(cC, cI), nil, func(l *Layer) *[]float32 { return &l.DownW }},
	{RoleDownB, "mlp.down_proj.bias", "", dims(cC), mlpBias, func(l *Layer) *[]float32 { return &l.DownB }},
}

// The sizes a Llama-family shape is made of.
func cC(c Config) int  { return c.NEmbd }
func cQ(c Config) int  { return c.QDim() }
func cKV(c Config) int { return c.KVDim() }
func cHD(c Config) int { return c.HeadDim() }
func cI(c Config) int  { return c.Inner() }

func dims(d ...func(Config) int) func(Config) []int {
	return func(c Config) []int {
		s := make([]int, len(d))
		for i, f := range d {
			s[i] = f(c)
		}
		return s
	}
}

func qkvBias(c Config) bool { return c.QKVBias }
func oBias(c Config) bool   { return c.OBias }
func mlpBias(c Config) bool { return c.MLPBias }
func qkNorm(c Config) bool  { return c.QKNorm }

// blockTable is the per-block table of c's decoder.
func (c Config) blockTable() []layerTensor {
	if c.Arch == ArchLlama {
		return llamaTable[:]
	}
	return layerTable[:]
}

// layerPrefix is the name of block i's tensors up to the suffix.
func (c Config) layerPrefix(i int) string {
	if c.Arch == ArchLlama {
		return "model.layers." + strconv.Itoa(i) + "."
	}
	return "h." + strconv.Itoa(i) + "."
}

// layerEntry returns the table row of a per-layer role.
func layerEntry(r Role) (layerTensor, bool) {
	for _, table := range [][]layerTensor{layerTable[:], llamaTable[:]} {
		for _, t := range table {
			if t.role == r {
				return t, true
			}
		}
	}
	return layerTensor{}, false
}

var roleNames = [...]string{
	RoleWTE: "wte", RoleWPE: "wpe",
	RoleLN1W: "ln_1.weight", RoleLN1B: "ln_1.bias", RoleQKVW: "attn.c_attn.weight", RoleQKVB: "attn.c_attn.bias",
	RoleProjW: "attn.c_proj.weight", RoleProjB: "attn.c_proj.bias", RoleLN2W: "ln_2.weight", RoleLN2B: "ln_2.bias",
	RoleFCW: "mlp.c_fc.weight", RoleFCB: "mlp.c_fc.bias", RoleFCProjW: "mlp.c_proj.weight", RoleFCProjB: "mlp.c_proj.bias",
	RoleLNFW: "ln_f.weight", RoleLNFB: "ln_f.bias", RoleLMHead: "lm_head",
	RoleInputNorm: "input_layernorm.weight", RoleQW: "self_attn.q_proj.weight", RoleQB: "self_attn.q_proj.bias",
	RoleKW: "self_attn.k_proj.weight", RoleKB: "self_attn.k_proj.bias", RoleVW: "self_attn.v_proj.weight",
	RoleVB: "self_attn.v_proj.bias", RoleQNorm: "self_attn.q_norm.weight", RoleKNorm: "self_attn.k_norm.weight",
	RoleOW: "self_attn.o_proj.weight", RoleOB: "self_attn.o_proj.bias", RolePostNorm: "post_attention_layernorm.weight",
	RoleGateW: "mlp.gate_proj.weight", RoleGateB: "mlp.gate_proj.bias", RoleUpW: "mlp.up_proj.weight",
	RoleUpB: "mlp.up_proj.bias", RoleDownW: "mlp.down_proj.weight", RoleDownB: "mlp.down_proj.bias", RoleNorm: "norm.weight",
}

// String names the role as Hugging Face does, without the layer or the
// model prefix ("mlp.c_fc.weight", "mlp.gate_proj.weight").
func (r Role) String() string {
	if r >= 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

// TensorSpec describes one parameter tensor of a model of a given Config.
type TensorSpec struct {
	// Name is the Hugging Face name: GPT-2's without the "transformer."
	// prefix ("h.3.mlp.c_fc.weight", "lm_head.weight"), the Llama family's
	// as saved ("model.layers.3.mlp.up_proj.weight").
	Name string
	// Shape is the Hugging Face shape; GPT-2's Conv1D weights are (in, out),
	// the Llama family's nn.Linear weights (out, in).
	Shape []int
	Role  Role
	Layer int // the block, or -1 for a tensor outside the blocks
}

// NumElements is the product of the shape.
func (s TensorSpec) NumElements() int {
	n := 1
	for _, d := range s.Shape {
		n *= d
	}
	return n
}

// Tensors lists every parameter of a model of shape c: for GPT-2 in Hugging
// Face's order (wte, wpe, each block's twelve tensors, ln_f weight and bias),
// for the Llama family embed_tokens, each block's tensors (llamaTable, those
// the config's options call for) and the final norm. lm_head is not listed:
// LMHeadSpec describes it. It is the one table of the tensors that loaders,
// checks and backends use.
func (c Config) Tensors() []TensorSpec {
	s := make([]TensorSpec, 0, 4+len(c.blockTable())*max(c.NLayer, 0))
	for t := range c.tensors() {
		s = append(s, t)
	}
	return s
}

// tensors yields Tensors one by one, so that a loader can check a file
// against a config without allocating a table sized by the config.
func (c Config) tensors() iter.Seq[TensorSpec] {
	return func(yield func(TensorSpec) bool) {
		for _, s := range c.embeddings() {
			if !yield(s) {
				return
			}
		}
		table := c.blockTable()
		for i := range max(c.NLayer, 0) {
			for _, t := range table {
				if t.present != nil && !t.present(c) {
					continue
				}
				if !yield(c.layerSpec(i, t)) {
					return
				}
			}
		}
		for _, s := range c.final() {
			if !yield(s) {
				return
			}
		}
	}
}

func (c Config) embeddings() []TensorSpec {
	if c.Arch == ArchLlama {
		return []TensorSpec{{"model.embed_tokens.weight", []int{c.VocabSize, c.NEmbd}, RoleWTE, -1}}
	}
	return []TensorSpec{
		{"wte.weight", []int{c.VocabSize, c.NEmbd}, RoleWTE, -1},
		{"wpe.weight", []int{c.NPositions, c.NEmbd}, RoleWPE, -1},
	}
}

func (c Config) final() []TensorSpec {
	if c.Arch == ArchLlama {
		return []TensorSpec{{"model.norm.weight", []int{c.NEmbd}, RoleNorm, -1}}
	}
	return []TensorSpec{
		{"ln_f.weight", []int{c.NEmbd}, RoleLNFW, -1},
		{"ln_f.bias", []int{c.NEmbd}, RoleLNFB, -1},
	}
}

func (c Config) layerSpec(i int, t layerTensor) TensorSpec {
	return TensorSpec{c.layerPrefix(i) + t.suffix, t.shape(c), t.role, i}
}

// LMHeadSpec describes lm_head.weight (V, C), which GPT-2 ties to wte (and
// the Llama family where tie_word_embeddings says so).
func (c Config) LMHeadSpec() TensorSpec {
	return TensorSpec{lmHead, []int{c.VocabSize, c.NEmbd}, RoleLMHead, -1}
}

const lmHead = "lm_head.weight"

// lookupSpec returns the spec of c called name (lm_head included), parsing
// the name rather than searching the table. A tensor the config's options
// leave out (a bias the model has none of) is not found.
func (c Config) lookupSpec(name string) (TensorSpec, bool) {
	if name == lmHead {
		return c.LMHeadSpec(), true
	}
	for _, s := range append(c.embeddings(), c.final()...) {
		if s.Name == name {
			return s, true
		}
	}
	prefix := "h."
	if c.Arch == ArchLlama {
		prefix = "model.layers."
	}
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return TensorSpec{}, false
	}
	num, suffix, _ := strings.Cut(rest, ".")
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 || i >= c.NLayer || strconv.Itoa(i) != num {
		return TensorSpec{}, false
	}
	for _, t := range c.blockTable() {
		if t.suffix == suffix && (t.present == nil || t.present(c)) {
			return c.layerSpec(i, t), true
		}
	}
	return TensorSpec{}, false
}

// checkSpec reports whether s is one of c's tensors exactly as the table
// has it, and names the problem if not.
func (c Config) checkSpec(s TensorSpec) error {
	want, ok := c.lookupSpec(s.Name)
	if !ok {
		return fmt.Errorf("no tensor %q in a %s with %d layers", s.Name, c.Arch, c.NLayer)
	}
	if want.Role != s.Role || want.Layer != s.Layer || !slices.Equal(want.Shape, s.Shape) {
		return fmt.Errorf("tensor %s: spec {%v layer %d shape %v}, want {%v layer %d shape %v}",
			s.Name, s.Role, s.Layer, s.Shape, want.Role, want.Layer, want.Shape)
	}
	return nil
}

// slot returns where the tensor of spec s lives in w, or nil when w has no
// such layer. For RoleLMHead it is &w.LMHead.
func (w *Weights) slot(s TensorSpec) *[]float32 {
	switch s.Role {
	case RoleWTE:
		return &w.WTE
	case RoleWPE:
		return &w.WPE
	case RoleLNFW, RoleNorm:
		return &w.LNFW
	case RoleLNFB:
		return &w.LNFB
	case RoleLMHead:
		return &w.LMHead
	}
	t, ok := layerEntry(s.Role)
	if !ok || s.Layer < 0 || s.Layer >= len(w.Layers) {
		return nil
	}
	return t.field(&w.Layers[s.Layer])
}

// Tensor returns the float32 values of m's tensor spec (one of
// m.Config.Tensors() or LMHeadSpec; lm_head is WTE when tied), or nil when
// m has no such tensor. The slice is m's, not a copy.
func (m *Model) Tensor(spec TensorSpec) []float32 {
	p := m.Weights.slot(spec)
	if p == nil {
		return nil
	}
	if spec.Role == RoleLMHead && (*p == nil || (m.Config.Arch == ArchLlama && m.Config.TiedEmbed)) {
		return m.Weights.WTE
	}
	return *p
}

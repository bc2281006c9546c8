package model

import (
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
)

// Role is what a GPT-2 parameter tensor is for, whatever its layer: the
// token embedding, the first LayerNorm's weight, the MLP's output projection.
type Role int

// The roles of GPT-2's parameters. Per-layer roles come in the order Hugging
// Face (and llm.c) store a block's tensors.
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
	RoleFCW                 // h.N.mlp.c_fc.weight (C, 4C)
	RoleFCB                 // h.N.mlp.c_fc.bias (4C)
	RoleFCProjW             // h.N.mlp.c_proj.weight (4C, C)
	RoleFCProjB             // h.N.mlp.c_proj.bias (C)
	RoleLNFW                // ln_f.weight (C)
	RoleLNFB                // ln_f.bias (C)
	RoleLMHead              // lm_head.weight (V, C); usually tied to wte
)

// layerTensor is one row of the per-block table: everything the loaders and
// checks know about a block's tensor, written once.
type layerTensor struct {
	role   Role
	suffix string            // Hugging Face name after "h.N."
	llmc   string            // llm.c's name for the tensor (train_gpt2.c)
	shape  func(C int) []int // Hugging Face shape; Conv1D weights are (in, out)
	field  func(*Layer) *[]float32
}

// layerTable lists a block's tensors in Hugging Face's order, which is also
// llm.c's order of parameter kinds.
var layerTable = [...]layerTensor{
	{RoleLN1W, "ln_1.weight", "ln1w", vec(1), func(l *Layer) *[]float32 { return &l.LN1W }},
	{RoleLN1B, "ln_1.bias", "ln1b", vec(1), func(l *Layer) *[]float32 { return &l.LN1B }},
	{RoleQKVW, "attn.c_attn.weight", "qkvw", mat(1, 3), func(l *Layer) *[]float32 { return &l.QKVW }},
	{RoleQKVB, "attn.c_attn.bias", "qkvb", vec(3), func(l *Layer) *[]float32 { return &l.QKVB }},
	{RoleProjW, "attn.c_proj.weight", "attprojw", mat(1, 1), func(l *Layer) *[]float32 { return &l.ProjW }},
	{RoleProjB, "attn.c_proj.bias", "attprojb", vec(1), func(l *Layer) *[]float32 { return &l.ProjB }},
	{RoleLN2W, "ln_2.weight", "ln2w", vec(1), func(l *Layer) *[]float32 { return &l.LN2W }},
	{RoleLN2B, "ln_2.bias", "ln2b", vec(1), func(l *Layer) *[]float32 { return &l.LN2B }},
	{RoleFCW, "mlp.c_fc.weight", "fcw", mat(1, 4), func(l *Layer) *[]float32 { return &l.FCW }},
	{RoleFCB, "mlp.c_fc.bias", "fcb", vec(4), func(l *Layer) *[]float32 { return &l.FCB }},
	{RoleFCProjW, "mlp.c_proj.weight", "fcprojw", mat(4, 1), func(l *Layer) *[]float32 { return &l.FCProjW }},
	{RoleFCProjB, "mlp.c_proj.bias", "fcprojb", vec(1), func(l *Layer) *[]float32 { return &l.FCProjB }},
}

func vec(k int) func(int) []int    { return func(C int) []int { return []int{k * C} } }
func mat(i, o int) func(int) []int { return func(C int) []int { return []int{i * C, o * C} } }

// layerEntry returns the table row of a per-layer role.
func layerEntry(r Role) (layerTensor, bool) {
	if r < RoleLN1W || r > RoleFCProjB {
		return layerTensor{}, false
	}
	return layerTable[r-RoleLN1W], true
}

var roleNames = [...]string{
	RoleWTE: "wte", RoleWPE: "wpe",
	RoleLN1W: "ln_1.weight", RoleLN1B: "ln_1.bias", RoleQKVW: "attn.c_attn.weight", RoleQKVB: "attn.c_attn.bias",
	RoleProjW: "attn.c_proj.weight", RoleProjB: "attn.c_proj.bias", RoleLN2W: "ln_2.weight", RoleLN2B: "ln_2.bias",
	RoleFCW: "mlp.c_fc.weight", RoleFCB: "mlp.c_fc.bias", RoleFCProjW: "mlp.c_proj.weight", RoleFCProjB: "mlp.c_proj.bias",
	RoleLNFW: "ln_f.weight", RoleLNFB: "ln_f.bias", RoleLMHead: "lm_head",
}

// String names the role as Hugging Face does, without the layer ("mlp.c_fc.weight").
func (r Role) String() string {
	if r >= 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

// TensorSpec describes one parameter tensor of a GPT-2 of a given Config.
type TensorSpec struct {
	// Name is the Hugging Face name without the "transformer." prefix
	// ("h.3.mlp.c_fc.weight", "lm_head.weight").
	Name string
	// Shape is the Hugging Face shape; Conv1D weights are (in, out).
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

// Tensors lists every parameter of a GPT-2 of shape c in Hugging Face's order
// (wte, wpe, each block's twelve tensors, ln_f weight and bias), without
// lm_head, which LMHeadSpec describes. It is the one table of GPT-2's tensors
// that loaders, checks and backends use.
func (c Config) Tensors() []TensorSpec {
	s := make([]TensorSpec, 0, 4+len(layerTable)*max(c.NLayer, 0))
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
		for i := range max(c.NLayer, 0) {
			for _, t := range layerTable {
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

func (c Config) embeddings() [2]TensorSpec {
	return [2]TensorSpec{
		{"wte.weight", []int{c.VocabSize, c.NEmbd}, RoleWTE, -1},
		{"wpe.weight", []int{c.NPositions, c.NEmbd}, RoleWPE, -1},
	}
}

func (c Config) final() [2]TensorSpec {
	return [2]TensorSpec{
		{"ln_f.weight", []int{c.NEmbd}, RoleLNFW, -1},
		{"ln_f.bias", []int{c.NEmbd}, RoleLNFB, -1},
	}
}

func (c Config) layerSpec(i int, t layerTensor) TensorSpec {
	return TensorSpec{"h." + strconv.Itoa(i) + "." + t.suffix, t.shape(c.NEmbd), t.role, i}
}

// LMHeadSpec describes lm_head.weight (V, C), which GPT-2 ties to wte.
func (c Config) LMHeadSpec() TensorSpec {
	return TensorSpec{lmHead, []int{c.VocabSize, c.NEmbd}, RoleLMHead, -1}
}

const lmHead = "lm_head.weight"

// lookupSpec returns the spec of c called name (lm_head included), parsing
// the name rather than searching the table.
func (c Config) lookupSpec(name string) (TensorSpec, bool) {
	if name == lmHead {
		return c.LMHeadSpec(), true
	}
	e, f := c.embeddings(), c.final()
	for _, s := range append(e[:], f[:]...) {
		if s.Name == name {
			return s, true
		}
	}
	rest, ok := strings.CutPrefix(name, "h.")
	if !ok {
		return TensorSpec{}, false
	}
	num, suffix, _ := strings.Cut(rest, ".")
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 || i >= c.NLayer || strconv.Itoa(i) != num {
		return TensorSpec{}, false
	}
	for _, t := range layerTable {
		if t.suffix == suffix {
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
		return fmt.Errorf("no tensor %q in a GPT-2 with %d layers", s.Name, c.NLayer)
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
	case RoleLNFW:
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

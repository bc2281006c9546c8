package shaders

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// SPIR-V opcodes and enumerants the inspection below needs (SPIR-V 1.3 spec).
const (
	spvOpExtInst     = 12
	spvOpTypeVector  = 23
	spvOpTypePointer = 32
	spvOpVariable    = 59
	spvOpLoad        = 61
	spvOpStore       = 62
	spvOpAccessChain = 65
	spvOpSelect      = 169
	spvOpCoopLoad    = 4457 // OpCooperativeMatrixLoadKHR (SPV_KHR_cooperative_matrix)
	spvOpCoopStore   = 4458 // OpCooperativeMatrixStoreKHR
	spvWorkgroup     = 4    // StorageClass Workgroup
	spvGLSLUMin      = 38   // GLSL.std.450 UMin
)

// eachInstruction calls f with each instruction of a SPIR-V module after
// its header: the opcode and the instruction's words (the first is the
// opcode and word count).
func eachInstruction(words []uint32, f func(op uint32, w []uint32)) {
	for i := 5; i < len(words); {
		op, n := words[i]&0xffff, int(words[i]>>16)
		if n == 0 || i+n > len(words) {
			return
		}
		f(op, words[i:i+n])
		i += n
	}
}

// workgroupLoads inspects a specialized module: the loads through access
// chains into workgroup variables, whether each loads a vector, and whether
// any index of its access chain is a UMin (a clamp: clampedVec of the vector
// loads, clamped of all); and the UMins in all.
func workgroupLoads(words []uint32) (vecLoads, scalarLoads, clampedVec, clamped, umins int) {
	wgVar := map[uint32]bool{} // workgroup variables
	wgPtr := map[uint32]bool{} // pointer types into workgroup memory
	vecType := map[uint32]bool{}
	chainClamped := map[uint32]bool{} // access chains into workgroup memory: clamped?
	umin := map[uint32]bool{}
	eachInstruction(words, func(op uint32, w []uint32) {
		switch op {
		case spvOpTypeVector:
			vecType[w[1]] = true
		case spvOpTypePointer:
			if w[2] == spvWorkgroup {
				wgPtr[w[1]] = true
			}
		case spvOpVariable:
			if w[3] == spvWorkgroup {
				wgVar[w[2]] = true
			}
		case spvOpExtInst:
			if len(w) >= 5 && w[4] == spvGLSLUMin {
				umin[w[2]] = true
				umins++
			}
		case spvOpAccessChain:
			if wgVar[w[3]] {
				c := false
				for _, idx := range w[4:] {
					c = c || umin[idx]
				}
				chainClamped[w[2]] = c
			}
		case spvOpLoad:
			if c, ok := chainClamped[w[3]]; ok {
				if vecType[w[1]] {
					vecLoads++
				} else {
					scalarLoads++
				}
				if c {
					clamped++
					if vecType[w[1]] {
						clampedVec++
					}
				}
			}
		}
	})
	return
}

// useCount is how many accesses of one kind workgroupUses found, and how
// many of them were guarded.
type useCount struct{ all, guarded int }

// workgroupUses inspects a specialized module: its accesses of workgroup
// memory through access chains, by use ("load", "store", "coop load",
// "coop store"), and of each the guarded ones: those with an index that is
// a UMin (an index clamp) or an OpSelect (the guarded offset of a
// cooperative-matrix load or store).
func workgroupUses(words []uint32) map[string]useCount {
	wgVar := map[uint32]bool{}
	guard := map[uint32]bool{}   // results of UMin and OpSelect
	chain := map[uint32]bool{}   // access chains into workgroup memory: guarded?
	out := map[string]useCount{} // by use
	use := func(kind string, ptr uint32) {
		if g, ok := chain[ptr]; ok {
			c := out[kind]
			c.all++
			if g {
				c.guarded++
			}
			out[kind] = c
		}
	}
	eachInstruction(words, func(op uint32, w []uint32) {
		switch op {
		case spvOpVariable:
			if w[3] == spvWorkgroup {
				wgVar[w[2]] = true
			}
		case spvOpExtInst:
			if len(w) >= 5 && w[4] == spvGLSLUMin {
				guard[w[2]] = true
			}
		case spvOpSelect:
			guard[w[2]] = true
		case spvOpAccessChain:
			if wgVar[w[3]] {
				g := false
				for _, idx := range w[4:] {
					g = g || guard[idx]
				}
				chain[w[2]] = g
			}
		case spvOpLoad:
			use("load", w[3])
		case spvOpStore:
			use("store", w[1])
		case spvOpCoopLoad:
			use("coop load", w[3])
		case spvOpCoopStore:
			use("coop store", w[1])
		}
	})
	return out
}

// coopSPIRVKernel is a cooperative-matrix kernel at one tiling, as the
// SPIR-V tests below compile it: its name, its text and its constants.
type coopSPIRVKernel struct {
	name   string
	src    func() (wgsl.Expanded, error)
	consts map[string]float64
}

// coopSPIRVKernels are the cooperative-matrix kernels at every tiling
// their autotuners time, at 16x16x16 and 16x8x16 and subgroups of 32 and
// 16, within NVIDIA's limits: matmul_coop.wgsl with four epilogues,
// lmhead_loss_coop.wgsl, and attention_coop.wgsl at head size 64.
func coopSPIRVKernels(t *testing.T) []coopSPIRVKernel {
	t.Helper()
	limits := wgpu.Limits{MaxComputeWorkgroupStorageSize: 48 << 10, MaxComputeInvocationsPerWorkgroup: 1024}
	var ks []coopSPIRVKernel
	for _, cfg := range []MatrixConfig{{M: 16, N: 16, K: 16}, {M: 16, N: 8, K: 16}} {
		for _, sgs := range []int{32, 16} {
			mm := []coopTiles{coopMatmulTiles(cfg, sgs)}
			for _, s := range coopShapes {
				if tl, ok := s.tiles(cfg, sgs, int(limits.MaxComputeWorkgroupStorageSize)); ok && tl.fitsLimits(limits) == nil {
					mm = append(mm, tl)
				}
			}
			for _, tl := range mm {
				for _, epi := range []epilogue{epiStore, epiQKV, epiSwiGLU, epiGELUErf} {
					ks = append(ks, coopSPIRVKernel{"matmul_coop.wgsl " + tl.String(), func() (wgsl.Expanded, error) { return coopSource("matmul_coop.wgsl", tl) },
						tl.constSet().with("EPI", float64(epi)).Map()})
				}
			}
			def := coopHeadTiles(cfg, sgs, sharedVocabTile, sharedSliceTiles)
			head := []coopTiles{def}
			for _, s := range coopHeadShapes {
				if tl, ok := s.tiles(cfg, sgs, def.vt, def.nt, int(limits.MaxComputeWorkgroupStorageSize)); ok && tl.fitsLimits(limits) == nil {
					head = append(head, tl)
				}
			}
			for _, tl := range head {
				ks = append(ks, coopSPIRVKernel{"lmhead_loss_coop.wgsl " + tl.String(), func() (wgsl.Expanded, error) { return coopSource("lmhead_loss_coop.wgsl", tl) }, tl.constSet().Map()})
			}
			adef, err := attnCoopTilesFor(cfg, sgs, 64, limits)
			if err != nil {
				t.Fatal(err)
			}
			attn := []attnCoopTiles{adef}
			for _, s := range attnCoopShapes {
				if tl, ok := s.tiles(adef); ok && tl.fits(limits) == nil {
					attn = append(attn, tl)
				}
			}
			for _, tl := range attn {
				ks = append(ks, coopSPIRVKernel{"attention_coop.wgsl " + tl.String(), func() (wgsl.Expanded, error) { return attnCoopSource(tl) }, nil})
			}
		}
	}
	return ks
}

// TestCoopWorkgroupIndicesSPIRV: in the SPIR-V of the cooperative-matrix
// kernels as a device with matrix units gets them, for every tiling their
// autotuners time, at 16x16x16 and 16x8x16 and subgroups of 32 and 16, no
// access of workgroup memory has a guard: the f16 staging stores keep their
// plain offsets, so that a driver can merge a vec4's four into one store,
// and every matrix load and store its offset as written (the compiler's
// range analysis proves them in bounds: wgsl's ranges.go). The one
// exception is the LM head's fold, whose scalar reads of the logits walk a
// row from a column the analysis cannot bound (one clamp each).
func TestCoopWorkgroupIndicesSPIRV(t *testing.T) {
	ks := coopSPIRVKernels(t)
	seen := map[string]bool{}
	for _, k := range ks {
		src, err := k.src()
		if err != nil {
			t.Fatal(err)
		}
		m, err := wgsl.Compile(k.name, src.Text, wgsl.Options{CooperativeMatrix: true})
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		sp, err := m.Specialize("main", k.consts)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		uses := workgroupUses(sp.SPIRV)
		if uses["coop load"].all == 0 || uses["store"].all == 0 {
			t.Fatalf("%s: %v: no matrix loads or no stores found", k.name, uses)
		}
		seen[k.name[:strings.Index(k.name, " ")]] = true
		for use, c := range uses {
			if c.guarded == 0 || use == "load" && strings.HasPrefix(k.name, "lmhead_loss_coop.wgsl") {
				continue
			}
			t.Errorf("%s %v: %d of %d workgroup %ss guarded", k.name, k.consts, c.guarded, c.all, use)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("kernels checked: %v", seen)
	}
}

// TestMatmulInnerLoopSPIRV: in the SPIR-V the shipped matmul_shared.wgsl
// compiles to for every tile configuration the autotuner may pick (and the
// flash-attention and LM-head kernels with their defaults), every read of
// workgroup memory is a whole vec4 and none has an index clamp: the range
// analysis of the compiler proves the indices in bounds (wgsl's ranges.go).
// So do the flash-attention kernel's and the LM head's. Global memory keeps
// its clamps (robust access).
func TestMatmulInnerLoopSPIRV(t *testing.T) {
	type kernel struct {
		file   string
		consts map[string]float64
	}
	var ks []kernel
	for _, c := range matmulCandidates {
		ks = append(ks, kernel{"matmul_shared.wgsl", c.constants()})
	}
	ks = append(ks, kernel{"attention_shared.wgsl", defaultAttnTiles.constants(64)}, kernel{"lmhead_loss_shared.wgsl", nil})
	for _, k := range ks {
		for _, f16 := range []bool{false, true} {
			src, err := Source(k.file, f16)
			if err != nil {
				t.Fatal(err)
			}
			m, err := wgsl.Compile(k.file, src, wgsl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			sp, err := m.Specialize("main", k.consts)
			if err != nil {
				t.Fatal(err)
			}
			vec, scalar, clampedVec, clamped, umins := workgroupLoads(sp.SPIRV)
			t.Logf("%s f16=%v %v: %d vec4 and %d scalar workgroup loads, %d clamped; %d UMin in all", k.file, f16, k.consts, vec, scalar, clamped, umins)
			if clampedVec != 0 || clamped != 0 {
				t.Errorf("%s f16=%v %v: %d workgroup loads with a clamped index", k.file, f16, k.consts, clamped)
			}
			if k.file == "matmul_shared.wgsl" && (scalar != 0 || vec == 0) {
				t.Errorf("%s %v: %d vec4 and %d scalar workgroup loads: want vec4 only", k.file, k.consts, vec, scalar)
			}
		}
	}
}

// SPIR-V opcodes and enumerants of control flow and decorations (SPIR-V 1.3
// spec), for branchedLoads.
const (
	spvOpConstantTrue    = 41
	spvOpConstantFalse   = 42
	spvOpFunction        = 54
	spvOpFunctionEnd     = 56
	spvOpFunctionCall    = 57
	spvOpDecorate        = 71
	spvOpSelectionMerge  = 247
	spvOpLabel           = 248
	spvOpBranchCond      = 250
	spvDecorationBinding = 33
)

// branchedLoads inspects a specialized module: its loads through access
// chains into the buffers of the given bindings, and of those the ones a
// selection construct with a condition that is not a constant encloses,
// in their function or at a call of it (transitively). Such a load is one
// a driver may wait for where the selection ends, before the code after
// it runs. It relies on the compiler's structured order: a selection's
// blocks follow its header and end at its merge block's label.
func branchedLoads(words []uint32, bindings ...uint32) (all, branched int) {
	binding := map[uint32]uint32{} // variable -> binding
	want := map[uint32]bool{}      // variables of the bindings
	chain := map[uint32]bool{}     // access chains into them
	constant := map[uint32]bool{}  // OpConstantTrue / False results
	type fn struct {
		loads    []bool            // per load: under a non-constant selection here
		calls    map[uint32][]bool // callee -> per call: under one
		branched bool              // called from under one (somewhere up the calls)
	}
	fns := map[uint32]*fn{}
	var cur *fn
	type selection struct {
		merge uint32
		cond  bool // a non-constant condition
	}
	var stack []selection
	pendingMerge := uint32(0)
	under := func() bool {
		for _, s := range stack {
			if s.cond {
				return true
			}
		}
		return false
	}
	eachInstruction(words, func(op uint32, w []uint32) {
		switch op {
		case spvOpDecorate:
			if len(w) >= 4 && w[2] == spvDecorationBinding {
				binding[w[1]] = w[3]
			}
		case spvOpVariable:
			if b, ok := binding[w[2]]; ok && slices.Contains(bindings, b) {
				want[w[2]] = true
			}
		case spvOpConstantTrue, spvOpConstantFalse:
			constant[w[2]] = true
		case spvOpAccessChain:
			if want[w[3]] {
				chain[w[2]] = true
			}
		case spvOpFunction:
			cur = &fn{calls: map[uint32][]bool{}}
			fns[w[2]] = cur
			stack = stack[:0]
		case spvOpFunctionEnd:
			cur = nil
		case spvOpSelectionMerge:
			pendingMerge = w[1]
		case spvOpBranchCond:
			if pendingMerge != 0 {
				stack = append(stack, selection{pendingMerge, !constant[w[1]]})
				pendingMerge = 0
			}
		case spvOpLabel:
			for len(stack) > 0 && stack[len(stack)-1].merge == w[1] {
				stack = stack[:len(stack)-1]
			}
		case spvOpFunctionCall:
			if cur != nil {
				cur.calls[w[3]] = append(cur.calls[w[3]], under())
			}
		case spvOpLoad:
			if cur != nil && chain[w[3]] {
				cur.loads = append(cur.loads, under())
			}
		}
	})
	// A function called from under a selection, or from a function that
	// is, has all its loads under one.
	for changed := true; changed; {
		changed = false
		for _, f := range fns {
			for callee, us := range f.calls {
				c := fns[callee]
				if c == nil || c.branched {
					continue
				}
				if f.branched || slices.Contains(us, true) {
					c.branched, changed = true, true
				}
			}
		}
	}
	for _, f := range fns {
		for _, u := range f.loads {
			all++
			if u || f.branched {
				branched++
			}
		}
	}
	return all, branched
}

// TestCoopTileLoadsUnbranchedSPIRV: in the SPIR-V of matmul_coop.wgsl,
// lmhead_loss_coop.wgsl and attention_coop.wgsl as a device with matrix
// units gets them (every tiling their autotuners time; the matmul with
// vector and scalar loads), no load of the tiles' operands (x and w, h and
// wte: bindings 0 and 1; the cache's keys and values: 1 and 2) is inside a
// branch. AMD's compiler waited for each such load at its
// branch's end, one after another and before the multiplies that the
// loads of ST 2 and 3 are meant to overlap (its disassembly, RADV_DEBUG=
// shaders, for an RX 7900 XTX); the kernels now load whatever the bounds
// (indices clamped as every index is) and drop what lies outside only as
// they stage the tiles.
func TestCoopTileLoadsUnbranchedSPIRV(t *testing.T) {
	n := 0
	for _, k := range coopSPIRVKernels(t) {
		bindings := []uint32{0, 1}
		if strings.HasPrefix(k.name, "attention_coop.wgsl") {
			if strings.HasSuffix(k.name, "prefetch 1") { // rounds its loads as they arrive: waits for them there, branch or not
				continue
			}
			bindings = []uint32{1, 2} // the cache's keys and values
		}
		src, err := k.src()
		if err != nil {
			t.Fatal(err)
		}
		m, err := wgsl.Compile(k.name, src.Text, wgsl.Options{CooperativeMatrix: true, UnrollRegisters: true, WorkgroupInit: wgsl.WorkgroupUninitialized})
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		variants := []map[string]float64{k.consts}
		if strings.HasPrefix(k.name, "matmul_coop.wgsl") {
			scalar := maps.Clone(k.consts)
			scalar["VEC"] = 0
			variants = append(variants, scalar)
		}
		for _, c := range variants {
			sp, err := m.Specialize("main", c)
			if err != nil {
				t.Fatalf("%s: %v", k.name, err)
			}
			all, branched := branchedLoads(sp.SPIRV, bindings...)
			if all == 0 {
				t.Fatalf("%s %v: no loads of bindings %v found", k.name, c, bindings)
			}
			if branched != 0 {
				t.Errorf("%s %v: %d of %d loads of the tiles' operands inside a branch", k.name, c, branched, all)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no kernels checked")
	}
}

package shaders

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// SPIR-V opcodes and enumerants the inspection below needs (SPIR-V 1.3 spec).
const (
	spvOpExtInst     = 12
	spvOpTypeVector  = 23
	spvOpTypePointer = 32
	spvOpVariable    = 59
	spvOpLoad        = 61
	spvOpAccessChain = 65
	spvWorkgroup     = 4  // StorageClass Workgroup
	spvGLSLUMin      = 38 // GLSL.std.450 UMin
)

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
	for i := 5; i < len(words); {
		op, n := words[i]&0xffff, int(words[i]>>16)
		if n == 0 || i+n > len(words) {
			break
		}
		w := words[i : i+n]
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
			if n >= 5 && w[4] == spvGLSLUMin {
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
		i += n
	}
	return
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

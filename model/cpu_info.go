package model

import (
	"fmt"
	"os"
)

// Kernels names the kernel set the CPU path runs in this build on this
// machine ("generic", "avx2", "avx512", "neon"), for provenance; in the bf16 mode
// followed by the bf16 products' ("avx2+bf16-generic", "avx512+bf16-avx512",
// "avx512+bf16-amx").
func (c *CPU) Kernels() string {
	if c.bf16 != bf16Off {
		return kern.set.String() + "+" + c.bf16.String()
	}
	return kern.set.String()
}

// Precision is "bf16" in the bf16 mode (products of bf16 weights and
// activations), else "f32".
func (c *CPU) Precision() string {
	if c.bf16 != bf16Off {
		return "bf16"
	}
	return "f32"
}

// Threads is the goroutines the CPU path uses.
func (c *CPU) Threads() int { return c.threads }

// WeightBytes is the host memory the CPU's weights take: 4 bytes a value for
// float32 tensors, 2 for matrices kept in F16 or BF16 (LoadCPU), the panel
// layout's zero padding included (ops_panel.go: a matrix's last panel of 32
// output channels). A tied lm_head is counted once.
func (c *CPU) WeightBytes() int64 {
	f := func(x []float32) int64 { return 4 * int64(len(x)) }
	n := c.wte.bytes() + f(c.wpe) + f(c.lnfw) + f(c.lnfb)
	if !c.lmHead.same(c.wte) {
		n += c.lmHead.bytes()
	}
	for i := range c.layers {
		l := &c.layers[i]
		for _, v := range [][]float32{l.ln1w, l.ln1b, l.qkvB, l.qNorm, l.kNorm, l.projB, l.ln2w, l.ln2b, l.fcB, l.upB, l.fcProjB} {
			n += f(v)
		}
		for _, m := range l.matrices() {
			n += m.bytes()
		}
	}
	return n
}

// CheckKernelsEnv reports a value of $WGPU_EVAL_CPU_KERNELS that names no
// kernel set: unset, generic, avx2, avx512, amx and neon are valid. On amd64
// a set the CPU lacks runs the best one it has below it, and neon the best
// it has; on arm64 every value but generic runs neon; other architectures
// run generic. amx, like unset, lets the bf16 mode use AMX tiles where the
// CPU has them; avx512 and avx2 keep it on VDPBF16PS.
func CheckKernelsEnv() error {
	switch v := os.Getenv(kernelsEnv); v {
	case "", "generic", "avx2", "avx512", "amx", "neon":
		return nil
	default:
		return fmt.Errorf("$%s=%q: want generic, avx2, avx512, amx or neon (or unset: the best the CPU has)", kernelsEnv, v)
	}
}

// Command neongen writes the arm64 assembly kernels of package model
// (ops_arm64.s) and their Go declarations (ops_arm64_stubs.go): the
// outer-product kernels of the weights in panels of 32 channels (model's
// ops_panel.go), gemmNN's blocks (attention's scores: the same register
// tiles over a row-major b, nn{R}x{V}NEON, and nnColNEON for single
// columns), gemmNT's dot blocks and the row kernels (exponentials, maxima,
// GELU, SwiGLU, the norms, the rotary embedding, the epilogue), with NEON (ASIMD, which every arm64 CPU has, fused
// multiply-add included). Run by `go generate` in model:
//
//	go run ./internal/neongen -out ops_arm64.s -stubs ops_arm64_stubs.go
//
// avo, which writes the amd64 kernels (internal/asmgen), is amd64-only: this
// program writes the text itself. Instructions Go's arm64 assembler lacks
// (FMLA by element, FCVTL, SHLL, the vector float arithmetic) are WORD
// directives whose encodings it computes (encode.go), each with its GNU
// syntax in a comment; the tests check them against GNU as.
//
// Each kernel computes what model's panelKernel documents: c[i*ldc+j] =
// (acc != 0 ? c[i*ldc+j] : 0) + Σ_k a[i*lda+k]·p[k*32+j], one chain of
// fused multiply-adds per element in increasing k, the panel in float32,
// F16 (widened by FCVTL/FCVTL2, exact) or BF16 (widened by SHLL #16, exact).
// FMLA rounds each a·p + c once, as AVX2's and AVX-512's VFMADD231PS do, so
// the NEON kernels give the bits of the amd64 ones. The register tiles
// (panelShapes) use the 32 128-bit registers as AVX2's 6 x 16 tile uses
// its 16: 24 accumulators of 4 lanes; but where AVX2 broadcasts one value
// of a per row and k, NEON loads four consecutive values of k per row (one
// 16-byte load) and multiplies by lane (FMLA by element), so per four k a
// row costs one load instead of four. Four values of k a step, then the k
// left over one by one (LD1R of a single value, lane 0). gemmNN's blocks
// compute each element likewise, one FMA chain from zero, as the amd64
// sets' gemmNN does. The row kernels of the softmax, the loss and the
// MLPs' activations (rows.go) repeat internal/asmgen's AVX2 forms lane for
// lane in AVX2's 8 lanes (two NEON vectors), reductions in its tree, so
// they give AVX2's bits too; so do gemmNT's dot blocks (dot.go). The
// norms', rotary embedding's and epilogue's kernels (norms.go) compute
// ops_rows.go's operations in its order. It imports nothing but the
// standard library.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
)

func main() {
	out := flag.String("out", "ops_arm64.s", "assembly output file")
	stubs := flag.String("stubs", "ops_arm64_stubs.go", "Go declarations output file")
	flag.Parse()
	if err := write(*out, *stubs); err != nil {
		log.Fatal(err)
	}
}

// command is how the generated files say they were made.
const command = "go run ./internal/neongen -out ops_arm64.s -stubs ops_arm64_stubs.go"

// write generates the kernels into the assembly file out and the stub file stubs.
func write(out, stubs string) error {
	asm, decl := Generate()
	for _, f := range []struct {
		name string
		b    []byte
	}{{out, asm}, {stubs, decl}} {
		if err := os.WriteFile(f.name, f.b, 0o644); err != nil {
			return fmt.Errorf("neongen: %w", err)
		}
	}
	return nil
}

// asmHeader says in the assembly file what its kernels compute and how.
const asmHeader = `
// The NEON outer-product kernels of model's panel layout (ops_panel.go):
// panel{R}x32{,F16,BF16}NEON sets c[i*ldc+j] (i < R, j < 32) to (acc != 0 ?
// c[i*ldc+j] : 0) + Σ_k a[i*lda+k]·p[k*32+j], one FMA chain per element in
// increasing k, the bits of the AVX2 and AVX-512 panel kernels. R = 6: 24
// accumulators (V0-V23) over the panel's two halves of 16 channels in turn,
// four values of k per row of a in V24-V29 (one 16-byte load), the panel's
// vectors in V30-V31, FMLA by element; R = 4 likewise with four panel
// vectors; R = 2 and 1 over all 32 channels in one pass. The k left over by
// the 4-step loop go one at a time (LD1R of a, lane 0). F16 panels widen by
// FCVTL/FCVTL2, BF16 by SHLL/SHLL2 #16: exact. nn{R}x{V}NEON (gemmNN's
// blocks: attention's scores) are the same tiles over a row-major b from
// zero, nnColNEON one column with scalar FMAs. dot{R}x{C}{,F16,BF16}NEON
// (gemmNT's and gemmNT16's blocks) sum AVX2's 8 lanes of FMAs in two
// vectors per element, reduce them in AVX2's tree and add the k%8 tail,
// products rounded, as AVX2's dot kernels do; 16-bit rows of b widen as
// they load. The row kernels (expSubRow, sumExpSub, maxRow,
// divMaxRow, mulRow, geluRow, geluErfRow, swigluRow; NEON suffix) repeat
// the AVX2 kernels' operations lane for lane over n - n%8 elements, two
// 4-lane vectors a step: Cephes' expf with the same constants and FMAs,
// sums and maxima in AVX2's 8 lanes and its reduction tree, x86's MAXPS as
// FCMGT and BIF, so their bits are AVX2's. The norms', rotary
// embedding's and epilogue's kernels (sumRow, sumSqDevRow, scaleMulRow,
// normAffineRow, rotateRow, addBiasRows, accBiasRows) compute model's
// ops_rows.go operations in its order, float64 sums in its 8 lanes and
// tree, as every set does. WORD directives are the instructions Go's
// assembler lacks, with their GNU syntax.
`

// Generate returns the assembly file and the Go declarations.
func Generate() (asm, decl []byte) {
	var g gen
	head := fmt.Sprintf("// Code generated by command: %s. DO NOT EDIT.\n\n//go:build arm64 && !purego\n", command)
	g.asm.WriteString(head + asmHeader + "\n#include \"textflag.h\"\n")
	g.decl.WriteString(head + "\npackage model\n")
	for _, e := range elems {
		for _, s := range panelShapes {
			g.panel(s, e)
		}
	}
	for _, s := range nnShapes {
		g.nn(s)
	}
	g.nnCol()
	for _, e := range elems {
		for _, s := range dotShapes {
			g.dot(s[0], s[1], e)
		}
	}
	g.rows()
	g.norms()
	return bytes.Clone([]byte(g.asm.String())), []byte(g.decl.String())
}

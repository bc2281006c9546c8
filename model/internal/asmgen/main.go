// Command asmgen writes the amd64 assembly kernels of package model
// (ops_amd64.s) and their Go declarations (ops_amd64_stubs.go) with avo, from
// one description parameterized by vector width: every kernel exists as an
// AVX2+FMA version (8 lanes, YMM registers 0-15) and an AVX-512 version (16
// lanes, ZMM registers 0-31). Run by `go generate` in model:
//
//	go run ./internal/asmgen -out ops_amd64.s -stubs ops_amd64_stubs.go
//
// The kernels compute exactly what model's ops_kernels_amd64.go documents: a dot
// product is one FMA accumulator per lane (lane l sums k ≡ l mod lanes in
// increasing k), the lanes reduced by reduce's fixed tree, then the K mod lanes
// tail added in increasing k with separate multiplies and adds. Every block shape
// does exactly this per output element, so an element never depends on the
// block that computed it. The dot products exist with b (the weights) in
// float32, F16 (widened by VCVTPH2PS) and BF16 (zero-extended into the upper
// half), the 16-bit forms bit-identical to float32 on the widened values. The
// nn kernels (attention's scores, b row-major over k) are one FMA chain per
// element, no lanes reduced, and so are the outer-product kernels of the
// weights in panels of 32 channels (panel{R}x32*, gen_panel.go: AVX-512 a
// 14 x 32 register tile, AVX2 6 x 16 over the panel's two halves in turn;
// per k the tile's vectors of the panel, f32 or 16-bit widened, and R
// broadcasts of a). The row kernels of the norms, the rotary
// embedding and the matmul epilogue (gen_rows.go) sum rows in 8 float64
// lanes at either width and otherwise round every float32 operation in a
// fixed order, unfused. For model's bf16 mode it also writes the
// AMX product (amxChunkBF16 and amxStoreBF16, gen_amx.go: TDPBF16PS on
// tiles, the AMX instructions as bytes checked against GNU as), the
// VDPBF16PS dot products (dpbf*AVX512, gen_bf16.go: a and b both bf16, 16
// lanes of pairs, the tail masked) and the rounding of activations to bf16
// (roundBF16RowAVX512, VCVTNEPS2BF16), with those instructions as raw bytes
// since Go's assembler has no mnemonic for them. It imports nothing of ours.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
)

func main() {
	// Our own flag set: avo's build package registers its flags on the default one.
	fs := flag.NewFlagSet("asmgen", flag.ExitOnError)
	out := fs.String("out", "ops_amd64.s", "assembly output file")
	stubs := fs.String("stubs", "ops_amd64_stubs.go", "Go declarations output file")
	fs.Parse(os.Args[1:])
	if err := write(*out, *stubs); err != nil {
		log.Fatal(err)
	}
}

// write generates the kernels into the assembly file out and the stub file stubs.
func write(out, stubs string) error {
	asm, decl, err := Generate()
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{out, asm}, {stubs, decl}} {
		if err := os.WriteFile(f.name, f.b, 0o644); err != nil {
			return fmt.Errorf("asmgen: %w", err)
		}
	}
	return nil
}

// Package x86emu is a small x86-64 interpreter for tests: it decodes and
// executes, instruction by instruction, the machine code of this project's
// generated amd64 kernels (model/ops_amd64.s), so that kernels a CPU lacks
// (AVX-512, AVX512_BF16, AMX) are executed and checked on any amd64 machine.
//
// It knows exactly the instruction subset the kernels use: legacy prefixes,
// REX, VEX (C4/C5) and EVEX (62) encodings with the opcode maps 0F, 0F38 and
// 0F3A; ModRM, SIB and displacements (EVEX disp8*N too), RIP-relative and
// absolute addressing; 16 general registers with the flags that CMP, TEST,
// ADD, SUB, AND, XOR, INC, DEC and SHL set for Jcc; 32 vector registers of 512
// bits with the VEX/EVEX zeroing of upper bits, in float32 lanes or (packed
// and scalar doubles, and the float32 -> float64 conversion: vec64.go)
// float64 lanes; opmask registers K0-K7 with merging and zeroing masking
// (per 32-bit element, or per 16-bit element for VMOVDQU16), KMOVW/D/Q from
// a general register, and 32-bit broadcasts.
// Masked loads and stores (VMOVUPS, VMOVDQU16) touch only their active
// elements, as the hardware's fault suppression does (vec16.go). AMX
// (amx.go): the tile configuration (palette 1) and eight tiles, LDTILECFG,
// TILERELEASE, TILEZERO, TILELOADD, TILESTORED and TDPBF16PS (in the
// summation order the hardware was measured to use). Anything else is an
// error naming the bytes and their offset in the function, never a guess.
//
// Floating point follows MXCSR's default (round to nearest even, no DAZ or
// FTZ, exceptions masked) exactly; see fp.go for each rule and its source.
//
// Entry points: Decode (bytes -> Inst), FuncOf (the code of a Go or assembly
// function of this process, through Go's ABI wrapper to the ABI0 body) and
// Machine.Call (run it on a Go ABI0 argument frame built with Frame). Memory
// is the process's own, read and written through unsafe pointers; a
// Machine's Memory list confines what the code may touch.
//
// Allowed imports: the standard library only.
package x86emu

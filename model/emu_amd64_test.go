//go:build amd64 && !purego

package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/wgpu-eval/wgpu-eval/internal/x86emu"
)

// On CPUs without AVX-512 the tests run the AVX-512 kernels in an x86
// emulator (internal/x86emu): init swaps avx512 and dots*AVX512 for
// emulated kernels with the same signatures and sets avx512Emulated, so every
// test looping over kernelSets() covers them. TestEmulatorMatchesAVX2 makes
// the emulator trustworthy: every AVX2 kernel gives, emulated, the bits it
// gives natively.
//
// Likewise, on CPUs without AVX512_BF16, init swaps dpbfAVX512 (the bf16
// mode's VDPBF16PS kernels) for the same assembly run in the emulator and
// sets bf16AsmEmulated; tests that want the bf16 mode to pick them call
// BF16Asm (cpu_export_test.go), which sets bf16Emulated for the test.

// emuSetupErr is why the AVX-512 kernels could not be emulated (nil if they
// are, or if the CPU runs them natively); emuBF16Err the same for dpbfAVX512.
var emuSetupErr, emuBF16Err error

func init() {
	if !hasBF16Kernels() {
		emuBF16Err = emulateBF16()
		bf16AsmEmulated = emuBF16Err == nil
	}
	if kern.set == kernelsAVX512 {
		return // the real thing runs (an AVX-512 CPU)
	}
	emuSetupErr = emulateAVX512()
	avx512Emulated = emuSetupErr == nil
}

// KernelSetEmulated reports whether the kernel set named as KernelSets
// names it runs in the emulator here (AVX-512 on a CPU without it), about
// fifty times slower than natively: tests trim their work there.
func KernelSetEmulated(name string) bool {
	return avx512Emulated && name == kernelsAVX512.String()
}

// hasAVX512 reports whether this CPU runs the AVX-512 kernels natively.
func hasAVX512() bool { return cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW }

func emulateAVX512() error {
	var firstErr error
	look := func(fn any) x86emu.Func {
		f, err := x86emu.FuncOf(fn)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return f
	}
	d := dotKernels[float32]{4, emuDot[float32](look(dot4x4AVX512)), emuDot[float32](look(dot1x4AVX512)), emuDot[float32](look(dot1x1AVX512)),
		chunkKernels[float32, float32]{emuChunk[float32, float32](look(dot4x4StartAVX512)), emuChunk[float32, float32](look(dot4x4MidAVX512)), emuChunk[float32, float32](look(dot4x4EndAVX512))}}
	d16 := dotKernels[uint16]{4, emuDot[uint16](look(dot4x4F16AVX512)), emuDot[uint16](look(dot1x4F16AVX512)), emuDot[uint16](look(dot1x1F16AVX512)),
		chunkKernels[float32, uint16]{emuChunk[float32, uint16](look(dot4x4F16StartAVX512)), emuChunk[float32, uint16](look(dot4x4F16MidAVX512)), emuChunk[float32, uint16](look(dot4x4F16EndAVX512))}}
	db16 := dotKernels[uint16]{4, emuDot[uint16](look(dot4x4BF16AVX512)), emuDot[uint16](look(dot1x4BF16AVX512)), emuDot[uint16](look(dot1x1BF16AVX512)),
		chunkKernels[float32, uint16]{emuChunk[float32, uint16](look(dot4x4BF16StartAVX512)), emuChunk[float32, uint16](look(dot4x4BF16MidAVX512)), emuChunk[float32, uint16](look(dot4x4BF16EndAVX512))}}
	e := *vecAVX512
	e.nn4x3, e.nn1x3 = emuDot[float32](look(nn4x3AVX512)), emuDot[float32](look(nn1x3AVX512))
	e.nn4x1, e.nn1x1 = emuDot[float32](look(nn4x1AVX512)), emuDot[float32](look(nn1x1AVX512))
	e.nnCol = emuNNCol(look(nnColAVX512))
	e.dots, e.dotsF16, e.dotsBF16 = d, d16, db16
	e.divMaxRow = emuRowRet(look(divMaxRowAVX512))
	e.maxRow = emuRowMax(look(maxRowAVX512))
	e.expSubRow = emuRowRet(look(expSubRowAVX512))
	e.sumExpSub = emuRowRet(look(sumExpSubAVX512))
	e.mulRow = emuRowArg(look(mulRowAVX512))
	e.geluRow = emuRow(look(geluRowAVX512))
	e.swigluRow = emuRow2(look(swigluRowAVX512))
	e.geluErfRow = emuRow(look(geluErfRowAVX512))
	e.rows = emuRows(look, rowsAVX512)
	e.panelF32 = &panelKernels[float32]{{14, emuPanel[float32](look(panel14x32AVX512))}, {8, emuPanel[float32](look(panel8x32AVX512))},
		{4, emuPanel[float32](look(panel4x32AVX512))}, {2, emuPanel[float32](look(panel2x32AVX512))}, {1, emuPanel[float32](look(panel1x32AVX512))}}
	e.panelF16 = &panelKernels[uint16]{{14, emuPanel[uint16](look(panel14x32F16AVX512))}, {8, emuPanel[uint16](look(panel8x32F16AVX512))},
		{4, emuPanel[uint16](look(panel4x32F16AVX512))}, {2, emuPanel[uint16](look(panel2x32F16AVX512))}, {1, emuPanel[uint16](look(panel1x32F16AVX512))}}
	e.panelBF16 = &panelKernels[uint16]{{14, emuPanel[uint16](look(panel14x32BF16AVX512))}, {8, emuPanel[uint16](look(panel8x32BF16AVX512))},
		{4, emuPanel[uint16](look(panel4x32BF16AVX512))}, {2, emuPanel[uint16](look(panel2x32BF16AVX512))}, {1, emuPanel[uint16](look(panel1x32BF16AVX512))}}
	if firstErr != nil {
		return firstErr
	}
	vecAVX512 = &e
	return nil
}

// emulateBF16 sets dpbfAVX512 (its chunk kernels too) to the VDPBF16PS
// kernels run in the emulator.
func emulateBF16() error {
	var fs [6]x86emu.Func
	for i, fn := range []any{dpbf4x4AVX512, dpbf1x4AVX512, dpbf1x1AVX512, dpbf4x4StartAVX512, dpbf4x4MidAVX512, dpbf4x4EndAVX512} {
		f, err := x86emu.FuncOf(fn)
		if err != nil {
			return err
		}
		fs[i] = f
	}
	dpbfAVX512 = dpbfKernels{4, emuDpbf(fs[0]), emuDpbf(fs[1]), emuDpbf(fs[2]),
		chunkKernels[uint16, uint16]{emuChunk[uint16, uint16](fs[3]), emuChunk[uint16, uint16](fs[4]), emuChunk[uint16, uint16](fs[5])}}
	f, err := x86emu.FuncOf(roundBF16RowAVX512)
	if err != nil {
		return err
	}
	roundBF16AVX512 = emuFunc[func(dst *uint16, x *float32, n int)](f)
	return nil
}

func addr[T any](p *T) uint64 { return uint64(uintptr(unsafe.Pointer(p))) }

// emuCall runs f on frame; a kernel the emulator cannot run is a test bug
// with no error path in the kernels' signatures, so it panics (failing the
// test that called it) with the emulator's message.
func emuCall(m *x86emu.Machine, f x86emu.Func, fr *x86emu.Frame) {
	if err := m.Call(f, fr.Bytes()); err != nil {
		panic(err)
	}
	emuSteps.Add(int64(m.Steps))
}

// emuSteps counts the instructions the emulated kernels have executed.
var emuSteps atomic.Int64

// The emulated kernels. Frame.PutPointer keeps their pointer arguments on
// the heap and alive for the call.

func putDotArgs[A, E float32 | uint16](fr *x86emu.Frame, a *A, lda int, b *E, ldb int, k int, out *float32, ldo int) {
	fr.PutPointer(unsafe.Pointer(a))
	fr.PutUint64(uint64(lda))
	fr.PutPointer(unsafe.Pointer(b))
	fr.PutUint64(uint64(ldb))
	fr.PutUint64(uint64(k))
	fr.PutPointer(unsafe.Pointer(out))
	fr.PutUint64(uint64(ldo))
}

func emuDpbf(f x86emu.Func) dpbfKernel {
	return func(a *uint16, lda int, b *uint16, ldb int, k int, out *float32, ldo int) {
		var fr x86emu.Frame
		putDotArgs(&fr, a, lda, b, ldb, k, out, ldo)
		emuCall(new(x86emu.Machine), f, &fr)
	}
}

func emuChunk[A, B float32 | uint16](f x86emu.Func) chunkKernel[A, B] {
	return func(a *A, lda int, b *B, ldb int, k int, acc *float32, out *float32, ldo int) {
		var fr x86emu.Frame
		fr.PutPointer(unsafe.Pointer(a))
		fr.PutUint64(uint64(lda))
		fr.PutPointer(unsafe.Pointer(b))
		fr.PutUint64(uint64(ldb))
		fr.PutUint64(uint64(k))
		fr.PutPointer(unsafe.Pointer(acc))
		fr.PutPointer(unsafe.Pointer(out))
		fr.PutUint64(uint64(ldo))
		emuCall(new(x86emu.Machine), f, &fr)
	}
}

func putNNColArgs(fr *x86emu.Frame, a *float32, b *float32, ldb int, k int, out *float32) {
	fr.PutPointer(unsafe.Pointer(a))
	fr.PutPointer(unsafe.Pointer(b))
	fr.PutUint64(uint64(ldb))
	fr.PutUint64(uint64(k))
	fr.PutPointer(unsafe.Pointer(out))
}

func emuDot[E float32 | uint16](f x86emu.Func) dotKernel[E] {
	return func(a *float32, lda int, b *E, ldb int, k int, out *float32, ldo int) {
		var fr x86emu.Frame
		putDotArgs(&fr, a, lda, b, ldb, k, out, ldo)
		emuCall(new(x86emu.Machine), f, &fr)
	}
}

func putPanelArgs[E float32 | uint16](fr *x86emu.Frame, a *float32, lda int, p *E, k int, c *float32, ldc int, acc int) {
	fr.PutPointer(unsafe.Pointer(a))
	fr.PutUint64(uint64(lda))
	fr.PutPointer(unsafe.Pointer(p))
	fr.PutUint64(uint64(k))
	fr.PutPointer(unsafe.Pointer(c))
	fr.PutUint64(uint64(ldc))
	fr.PutUint64(uint64(acc))
}

func emuPanel[E float32 | uint16](f x86emu.Func) panelKernel[E] {
	return func(a *float32, lda int, p *E, k int, c *float32, ldc int, acc int) {
		var fr x86emu.Frame
		putPanelArgs(&fr, a, lda, p, k, c, ldc, acc)
		emuCall(new(x86emu.Machine), f, &fr)
	}
}

func emuNNCol(f x86emu.Func) func(a *float32, b *float32, ldb int, k int, out *float32) {
	return func(a *float32, b *float32, ldb int, k int, out *float32) {
		var fr x86emu.Frame
		putNNColArgs(&fr, a, b, ldb, k, out)
		emuCall(new(x86emu.Machine), f, &fr)
	}
}

func emuRowRet(f x86emu.Func) func(row *float32, n int, x float32) float32 {
	return func(row *float32, n int, x float32) float32 {
		var fr x86emu.Frame
		fr.PutPointer(unsafe.Pointer(row))
		fr.PutUint64(uint64(n))
		fr.PutFloat32(math.Float32bits(x))
		ret := fr.Result(4)
		emuCall(new(x86emu.Machine), f, &fr)
		return math.Float32frombits(fr.Uint32At(ret))
	}
}

func emuRowMax(f x86emu.Func) func(row *float32, n int) float32 {
	return func(row *float32, n int) float32 {
		var fr x86emu.Frame
		fr.PutPointer(unsafe.Pointer(row))
		fr.PutUint64(uint64(n))
		ret := fr.Result(4)
		emuCall(new(x86emu.Machine), f, &fr)
		return math.Float32frombits(fr.Uint32At(ret))
	}
}

func emuRowArg(f x86emu.Func) func(row *float32, n int, x float32) {
	return func(row *float32, n int, x float32) {
		var fr x86emu.Frame
		fr.PutPointer(unsafe.Pointer(row))
		fr.PutUint64(uint64(n))
		fr.PutFloat32(math.Float32bits(x))
		emuCall(new(x86emu.Machine), f, &fr)
	}
}

func emuRow(f x86emu.Func) func(x *float32, n int) {
	return func(x *float32, n int) {
		var fr x86emu.Frame
		fr.PutPointer(unsafe.Pointer(x))
		fr.PutUint64(uint64(n))
		emuCall(new(x86emu.Machine), f, &fr)
	}
}

func emuRow2(f x86emu.Func) func(x, y *float32, n int) {
	return func(x, y *float32, n int) {
		var fr x86emu.Frame
		fr.PutPointer(unsafe.Pointer(x))
		fr.PutPointer(unsafe.Pointer(y))
		fr.PutUint64(uint64(n))
		emuCall(new(x86emu.Machine), f, &fr)
	}
}

// The AVX-512 kernels run here, natively or emulated, so the kernel-set
// tests cover them.
func TestAVX512KernelsRun(t *testing.T) {
	if emuSetupErr != nil {
		t.Fatalf("cannot emulate the AVX-512 kernels: %v", emuSetupErr)
	}
	if !slicesContains(kernelSets(), kernelsAVX512) {
		t.Skip("the AVX-512 kernels are neither in use nor emulated here")
	}
	if !avx512Emulated {
		return
	}
	// Each entry point reaches the emulator.
	defer useKernels(kernelsAVX512)()
	r := rand.New(rand.NewPCG(1, 1))
	a, b := randVec(r, 5*40), randVec(r, 40*40)
	out := make([]float32, 5*40)
	b16 := make([]uint16, 40*40)
	for name, run := range map[string]func(){
		"gemmNT":       func() { gemmNT(out, 40, a, 40, b, 40, 5, 5, 40) },
		"gemmNT16":     func() { gemmNT16(out, 40, a, 40, b16, 40, 5, 5, 40, BF16) },
		"gemmNN":       func() { gemmNN(out, 40, a, 40, b, 40, 5, 40, 40) },
		"gemmPanelW":   func() { gemmNTW(out, 40, a, nil, 40, packPanels(f32Matrix(b), 40), 0, 40, 5, 40, 40) },
		"dot1x1":       func() { dot1x1(a[:40], b[:40]) },
		"divMaxRow":    func() { divMaxRow(a[:40], 3) },
		"maxRow":       func() { maxRow(a[:40]) },
		"mulRow":       func() { mulRow(a[:40], 0.5) },
		"expSubRow":    func() { expSubRow(a[:40], 3) },
		"sumExpSub":    func() { sumExpSub(a[:40], 3) },
		"geluRow":      func() { geluRow(a[:40]) },
		"swigluRow":    func() { swigluRow(a[:40], b[:40]) },
		"geluErfRow":   func() { geluErfRow(a[:40]) },
		"rmsnormRow":   func() { rmsnormRow(out[:40], a[:40], b[:40], 1e-5) },
		"layernormRow": func() { layernormRow(out[:40], a[:40], b[:40], b[40:80], 1e-5) },
		"rotateHalves": func() { rotateHalves(a[:40], a[40:80], b[:40], b[40:80]) },
		"addBias":      func() { addBias(out, 40, a, 40, b, 5, 40) },
		"accBias":      func() { accBias(out, 40, a, 40, b, 5, 40) },
	} {
		before := emuSteps.Load()
		run()
		if emuSteps.Load() == before {
			t.Errorf("%s with the AVX-512 set ran no emulated instruction", name)
		}
	}
}

func slicesContains(s []kernelSet, k kernelSet) bool {
	for _, x := range s {
		if x == k {
			return true
		}
	}
	return false
}

// avx2Kernels are the AVX2 kernels of ops_amd64.s by name, for
// TestEmulatorMatchesAVX2 (which fails on a kernel missing here).
var avx2Kernels = unionOf(rowKernelsOf(rowsAVX2, "AVX2"), map[string]any{
	"dot3x4AVX2": dot3x4AVX2, "dot1x4AVX2": dot1x4AVX2, "dot1x1AVX2": dot1x1AVX2,
	"dot3x4F16AVX2": dot3x4F16AVX2, "dot1x4F16AVX2": dot1x4F16AVX2, "dot1x1F16AVX2": dot1x1F16AVX2,
	"dot3x4BF16AVX2": dot3x4BF16AVX2, "dot1x4BF16AVX2": dot1x4BF16AVX2, "dot1x1BF16AVX2": dot1x1BF16AVX2,
	"nn4x3AVX2": nn4x3AVX2, "nn1x3AVX2": nn1x3AVX2, "nn4x1AVX2": nn4x1AVX2, "nn1x1AVX2": nn1x1AVX2,
	"nnColAVX2": nnColAVX2, "divMaxRowAVX2": divMaxRowAVX2, "maxRowAVX2": maxRowAVX2, "mulRowAVX2": mulRowAVX2,
	"expSubRowAVX2": expSubRowAVX2, "sumExpSubAVX2": sumExpSubAVX2, "geluRowAVX2": geluRowAVX2,
	"swigluRowAVX2": swigluRowAVX2, "geluErfRowAVX2": geluErfRowAVX2,
	"panel6x32AVX2": panel6x32AVX2, "panel4x32AVX2": panel4x32AVX2, "panel2x32AVX2": panel2x32AVX2, "panel1x32AVX2": panel1x32AVX2,
	"panel6x32F16AVX2": panel6x32F16AVX2, "panel4x32F16AVX2": panel4x32F16AVX2, "panel2x32F16AVX2": panel2x32F16AVX2, "panel1x32F16AVX2": panel1x32F16AVX2,
	"panel6x32BF16AVX2": panel6x32BF16AVX2, "panel4x32BF16AVX2": panel4x32BF16AVX2, "panel2x32BF16AVX2": panel2x32BF16AVX2, "panel1x32BF16AVX2": panel1x32BF16AVX2,
})

// asmKernels lists the TEXT symbols of ops_amd64.s.
func asmKernels(t *testing.T) []string {
	src, err := os.ReadFile("ops_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^TEXT ·(\w+)\(SB\)`).FindAllSubmatch(src, -1) {
		names = append(names, string(m[1]))
	}
	if len(names) == 0 {
		t.Fatal("no TEXT symbols in ops_amd64.s")
	}
	return names
}

// region is the memory of s for x86emu.Machine.Memory.
func region[E any](s []E, write bool) x86emu.Region {
	if len(s) == 0 {
		return x86emu.Region{}
	}
	return x86emu.Region{Addr: addr(&s[0]), Size: uint64(len(s)) * uint64(unsafe.Sizeof(s[0])), Write: write}
}

// Every AVX2 kernel of ops_amd64.s, run in the emulator and natively on the
// same random inputs (vector bodies and tails; NaN-free values of mixed
// magnitude; F16/BF16 weights of every finite class), gives bit-identical
// outputs and results. The emulator may touch only the arguments' slices
// (sized exactly as each kernel needs), its stack and the code's constants,
// so a kernel reading past its operands fails here too.
func TestEmulatorMatchesAVX2(t *testing.T) {
	if !(cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C) {
		t.Skip("this CPU cannot run the AVX2 kernels natively")
	}
	checkKernels(t, "AVX2", avx2Kernels, 8, true)
}

// avx512Kernels are the AVX-512 kernels of ops_amd64.s by name, for
// TestAVX512KernelsInBounds.
var avx512Kernels = unionOf(rowKernelsOf(rowsAVX512, "AVX512"), map[string]any{
	"dot4x4AVX512": dot4x4AVX512, "dot1x4AVX512": dot1x4AVX512, "dot1x1AVX512": dot1x1AVX512,
	"dot4x4F16AVX512": dot4x4F16AVX512, "dot1x4F16AVX512": dot1x4F16AVX512, "dot1x1F16AVX512": dot1x1F16AVX512,
	"dot4x4BF16AVX512": dot4x4BF16AVX512, "dot1x4BF16AVX512": dot1x4BF16AVX512, "dot1x1BF16AVX512": dot1x1BF16AVX512,
	"nn4x3AVX512": nn4x3AVX512, "nn1x3AVX512": nn1x3AVX512, "nn4x1AVX512": nn4x1AVX512, "nn1x1AVX512": nn1x1AVX512,
	"nnColAVX512": nnColAVX512, "divMaxRowAVX512": divMaxRowAVX512, "maxRowAVX512": maxRowAVX512,
	"mulRowAVX512": mulRowAVX512, "expSubRowAVX512": expSubRowAVX512, "sumExpSubAVX512": sumExpSubAVX512,
	"geluRowAVX512": geluRowAVX512, "swigluRowAVX512": swigluRowAVX512, "geluErfRowAVX512": geluErfRowAVX512,
	"dpbf4x4AVX512": dpbf4x4AVX512, "dpbf1x4AVX512": dpbf1x4AVX512, "dpbf1x1AVX512": dpbf1x1AVX512,
	"dpbf4x4StartAVX512": dpbf4x4StartAVX512, "dpbf4x4MidAVX512": dpbf4x4MidAVX512, "dpbf4x4EndAVX512": dpbf4x4EndAVX512,
	"dot4x4StartAVX512": dot4x4StartAVX512, "dot4x4MidAVX512": dot4x4MidAVX512, "dot4x4EndAVX512": dot4x4EndAVX512,
	"dot4x4F16StartAVX512": dot4x4F16StartAVX512, "dot4x4F16MidAVX512": dot4x4F16MidAVX512, "dot4x4F16EndAVX512": dot4x4F16EndAVX512,
	"dot4x4BF16StartAVX512": dot4x4BF16StartAVX512, "dot4x4BF16MidAVX512": dot4x4BF16MidAVX512, "dot4x4BF16EndAVX512": dot4x4BF16EndAVX512,
	"roundBF16RowAVX512": roundBF16RowAVX512,
	"panel14x32AVX512":   panel14x32AVX512, "panel8x32AVX512": panel8x32AVX512, "panel4x32AVX512": panel4x32AVX512,
	"panel2x32AVX512": panel2x32AVX512, "panel1x32AVX512": panel1x32AVX512,
	"panel14x32F16AVX512": panel14x32F16AVX512, "panel8x32F16AVX512": panel8x32F16AVX512, "panel4x32F16AVX512": panel4x32F16AVX512,
	"panel2x32F16AVX512": panel2x32F16AVX512, "panel1x32F16AVX512": panel1x32F16AVX512,
	"panel14x32BF16AVX512": panel14x32BF16AVX512, "panel8x32BF16AVX512": panel8x32BF16AVX512, "panel4x32BF16AVX512": panel4x32BF16AVX512,
	"panel2x32BF16AVX512": panel2x32BF16AVX512, "panel1x32BF16AVX512": panel1x32BF16AVX512,
})

// Every AVX-512 kernel, emulated with its operands sized exactly as it
// needs, touches no memory outside them and writes nothing but its outputs
// (the gaps between output rows, and a row's tail past its last whole
// vector, keep their values). Their values are checked by the kernel-set
// tests (kernelSets() includes the emulated set), and, on a CPU with
// AVX-512, here against the hardware bit for bit; the VDPBF16PS kernels'
// (dpbf*) here against dotBF16Ref, and the hardware where it has
// AVX512_BF16.
//
// Masked-off lanes: the dpbf kernels load the K%32 tail with a zeroing mask,
// whose vector reaches past the end of the exact operands. Intel's rule
// (SDM vol. 1, 15.6.1, and VMOVDQU16's exceptions) is that masked-off
// elements are not accessed and do not fault, so the emulator reads only the
// active words of a masked load (internal/x86emu/vec16.go) and the bounds
// are checked on those: every word a kernel's mask lets it read must lie in
// its operand, and none past it need exist.
func TestAVX512KernelsInBounds(t *testing.T) {
	checkKernels(t, "AVX512", avx512Kernels, 16, hasAVX512())
	// The check has teeth: one float too few of a is caught.
	f, err := x86emu.FuncOf(dot1x1AVX512)
	if err != nil {
		t.Fatal(err)
	}
	a, b, out := make([]float32, 17), make([]float32, 17), make([]float32, 1)
	var fr x86emu.Frame
	putDotArgs(&fr, &a[0], 17, &b[0], 17, 17, &out[0], 1)
	m := &x86emu.Machine{Memory: []x86emu.Region{region(a[:16], false), region(b, false), region(out, true)}}
	if err := m.Call(f, fr.Bytes()); err == nil || !strings.Contains(err.Error(), "outside the allowed memory") {
		t.Errorf("dot1x1AVX512 on a short a: %v, want an access outside the allowed memory", err)
	}
	// And on the masked tail: a b one word short of K=33 (its last word is
	// an active lane of the tail's mask) is caught.
	f, err = x86emu.FuncOf(dpbf1x1AVX512)
	if err != nil {
		t.Fatal(err)
	}
	a16, b16 := make([]uint16, 33), make([]uint16, 33)
	fr = x86emu.Frame{}
	putDotArgs(&fr, &a16[0], 33, &b16[0], 33, 33, &out[0], 1)
	m = &x86emu.Machine{Memory: []x86emu.Region{region(a16, false), region(b16[:32], false), region(out, true)}}
	if err := m.Call(f, fr.Bytes()); err == nil || !strings.Contains(err.Error(), "outside the allowed memory") {
		t.Errorf("dpbf1x1AVX512 on a short b: %v, want an access outside the allowed memory", err)
	}
}

// checkKernels runs every kernel of ops_amd64.s whose name ends in suffix
// (each must be in table) in the emulator on random operands with exact
// bounds, and, if native, natively too, requiring the same bits.
func checkKernels(t *testing.T, suffix string, table map[string]any, lanes int, native bool) {
	r := rand.New(rand.NewPCG(41, 42))
	shape := regexp.MustCompile(`^(dot|nn|dpbf|panel)(\d+)x(\d+)`)
	n := 0
	for _, name := range asmKernels(t) {
		if !strings.HasSuffix(name, suffix) {
			continue
		}
		kernel, ok := table[name]
		if !ok {
			t.Errorf("ops_amd64.s has %s, which this test's table lacks", name)
			continue
		}
		f, err := x86emu.FuncOf(kernel)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if !native {
			kernel = nil
		}
		t.Run(name, func(t *testing.T) {
			rows, cols := 1, 1
			if m := shape.FindStringSubmatch(name); m != nil {
				rows, _ = strconv.Atoi(m[2])
				cols, _ = strconv.Atoi(m[3])
			}
			if checkEmuRowKernel(t, r, f, name, table[name], lanes, kernel != nil) {
				return
			}
			nn := strings.HasPrefix(name, "nn")
			if nn {
				cols *= lanes // vectors of columns
			}
			switch sig := table[name].(type) {
			case func(*float32, int, *float32, int, int, *float32, int):
				k, _ := kernel.(func(*float32, int, *float32, int, int, *float32, int))
				for _, K := range []int{1, 3, 7, 8, 9, 16, 17, 31, 33, 64, 100, 255, 768} {
					lda, ldb, ldo := K+3, K+1, cols+2
					bLen := (cols-1)*ldb + K
					if nn {
						ldb = cols + 5
						bLen = (K-1)*ldb + cols
					}
					a, b := mixedVec(r, (rows-1)*lda+K), mixedVec(r, bLen)
					checkEmuDot(t, f, K, a, lda, b, ldb, rows, cols, ldo, k)
				}
			case func(*float32, int, *uint16, int, int, *float32, int):
				k, _ := kernel.(func(*float32, int, *uint16, int, int, *float32, int))
				dtype := F16
				if strings.Contains(name, "BF16") {
					dtype = BF16
				}
				for _, K := range []int{1, 3, 7, 8, 9, 16, 17, 31, 33, 64, 100, 255, 768} {
					lda, ldb, ldo := K+3, K+1, cols+2
					a, b := mixedVec(r, (rows-1)*lda+K), make([]uint16, (cols-1)*ldb+K)
					for i := range b {
						b[i] = random16(r, dtype)
					}
					checkEmuDot(t, f, K, a, lda, b, ldb, rows, cols, ldo, k)
				}
			case func(*uint16, int, *uint16, int, int, *float32, int):
				var k func(*uint16, int, *uint16, int, int, *float32, int)
				if hasBF16Kernels() {
					k = sig
				}
				for _, K := range []int{1, 2, 15, 16, 31, 32, 33, 63, 64, 100, 255, 768} {
					lda, ldb, ldo := K+3, K+1, cols+2
					a, b := make([]uint16, (rows-1)*lda+K), make([]uint16, (cols-1)*ldb+K)
					for i := range a {
						a[i] = bf16Value(r)
					}
					for i := range b {
						b[i] = bf16Value(r)
					}
					checkEmuDpbf(t, f, K, a, lda, b, ldb, rows, cols, ldo, k)
				}
			case func(*uint16, int, *uint16, int, int, *float32, *float32, int):
				var k func(*uint16, int, *uint16, int, int, *float32, *float32, int)
				if hasBF16Kernels() {
					k = sig
				}
				bf16s := func(n int) []uint16 {
					v := make([]uint16, n)
					for i := range v {
						v[i] = bf16Value(r)
					}
					return v
				}
				checkEmuChunk(t, r, f, name, k, bf16s, bf16s)
			case func(*float32, int, *float32, int, int, *float32, *float32, int):
				k, _ := kernel.(func(*float32, int, *float32, int, int, *float32, *float32, int))
				vec := func(n int) []float32 { return mixedVec(r, n) }
				checkEmuChunk(t, r, f, name, k, vec, vec)
			case func(*float32, int, *uint16, int, int, *float32, *float32, int):
				k, _ := kernel.(func(*float32, int, *uint16, int, int, *float32, *float32, int))
				dtype := F16
				if strings.Contains(name, "BF16") {
					dtype = BF16
				}
				w16 := func(n int) []uint16 {
					v := make([]uint16, n)
					for i := range v {
						v[i] = random16(r, dtype)
					}
					return v
				}
				checkEmuChunk(t, r, f, name, k, func(n int) []float32 { return mixedVec(r, n) }, w16)
			case func(*float32, int, *float32, int, *float32, int, int):
				k, _ := kernel.(func(*float32, int, *float32, int, *float32, int, int))
				checkEmuPanel(t, r, f, rows, F32, k, nil)
			case func(*float32, int, *uint16, int, *float32, int, int):
				k, _ := kernel.(func(*float32, int, *uint16, int, *float32, int, int))
				dtype := F16
				if strings.Contains(name, "BF16") {
					dtype = BF16
				}
				checkEmuPanel(t, r, f, rows, dtype, nil, k)
			case func(*float32, *float32, int, int, *float32):
				for _, K := range []int{1, 2, 9, 33} {
					ldb := 3
					a, b := mixedVec(r, K), mixedVec(r, (K-1)*ldb+1)
					want, got := []float32{42}, []float32{42}
					var fr x86emu.Frame
					putNNColArgs(&fr, &a[0], &b[0], ldb, K, &got[0])
					m := &x86emu.Machine{Memory: []x86emu.Region{region(a, false), region(b, false), region(got, true)}}
					if err := m.Call(f, fr.Bytes()); err != nil {
						t.Fatal(err)
					}
					if kernel == nil {
						continue
					}
					sig(&a[0], &b[0], ldb, K, &want[0])
					if sameBits(got, want) >= 0 {
						t.Errorf("K=%d: emulated %v, native %v", K, got[0], want[0])
					}
				}
			case func(*float32, int, float32) float32, func(*float32, int, float32), func(*float32, int), func(*float32, int) float32:
				checkEmuRow(t, r, f, name, table[name], lanes, kernel != nil)
			case func(*float32, *float32, int):
				k, _ := kernel.(func(*float32, *float32, int))
				checkEmuRow2(t, r, f, lanes, k)
			default:
				t.Fatalf("no harness for %s's signature %T", name, sig)
			}
		})
	}
	if n < len(table) {
		t.Errorf("ops_amd64.s has %d %s kernels, the table %d", n, suffix, len(table))
	}
}

// checkEmuDot runs a dot-product or gemmNN block emulated and, unless native
// is nil, natively on the same operands and compares the whole output; the
// gaps between output rows must keep their values either way.
func checkEmuDot[E float32 | uint16](t *testing.T, f x86emu.Func, K int, a []float32, lda int, b []E, ldb, rows, cols, ldo int,
	native func(*float32, int, *E, int, int, *float32, int)) {
	t.Helper()
	want := make([]float32, (rows-1)*ldo+cols)
	for i := range want {
		want[i] = 42
	}
	got := append([]float32(nil), want...)
	if native != nil {
		native(&a[0], lda, &b[0], ldb, K, &want[0], ldo)
	}
	var fr x86emu.Frame
	putDotArgs(&fr, &a[0], lda, &b[0], ldb, K, &got[0], ldo)
	m := &x86emu.Machine{Memory: []x86emu.Region{region(a, false), region(b, false), region(got, true)}}
	if err := m.Call(f, fr.Bytes()); err != nil {
		t.Fatalf("K=%d: %v", K, err)
	}
	if native == nil {
		for i, v := range got {
			if i%ldo >= cols && v != 42 {
				t.Fatalf("K=%d: wrote out[%d][%d], a gap", K, i/ldo, i%ldo)
			}
		}
		return
	}
	if i := sameBits(got, want); i >= 0 {
		t.Errorf("K=%d: out[%d] emulated %v (%#x), native %v (%#x)", K, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
	}
}

// checkEmuDpbf runs a VDPBF16PS block emulated on operands of exact size and
// requires every output to be dotBF16Ref's bits (NaN for NaN), the gaps
// between output rows untouched and, unless native is nil, the hardware's
// bits.
func checkEmuDpbf(t *testing.T, f x86emu.Func, K int, a []uint16, lda int, b []uint16, ldb, rows, cols, ldo int,
	native func(*uint16, int, *uint16, int, int, *float32, int)) {
	t.Helper()
	got := make([]float32, (rows-1)*ldo+cols)
	for i := range got {
		got[i] = 42
	}
	var fr x86emu.Frame
	putDotArgs(&fr, &a[0], lda, &b[0], ldb, K, &got[0], ldo)
	m := &x86emu.Machine{Memory: []x86emu.Region{region(a, false), region(b, false), region(got, true)}}
	if err := m.Call(f, fr.Bytes()); err != nil {
		t.Fatalf("K=%d: %v", K, err)
	}
	for o, v := range got {
		i, j := o/ldo, o%ldo
		if j >= cols {
			if v != 42 {
				t.Fatalf("K=%d: wrote out[%d][%d], a gap", K, i, j)
			}
			continue
		}
		want := dotBF16Ref(a[i*lda:][:K], b[j*ldb:][:K])
		if math.Float32bits(v) != math.Float32bits(want) && !(v != v && want != want) {
			t.Fatalf("K=%d: out[%d][%d] emulated %g (%#x), dotBF16Ref %g (%#x)", K, i, j, v, math.Float32bits(v), want, math.Float32bits(want))
		}
	}
	if native == nil {
		return
	}
	want := make([]float32, len(got))
	for i := range want {
		want[i] = 42
	}
	native(&a[0], lda, &b[0], ldb, K, &want[0], ldo)
	if i := sameBits(got, want); i >= 0 {
		t.Errorf("K=%d: out[%d] emulated %v (%#x), native %v (%#x)", K, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
	}
}

// checkEmuChunk runs a 4x4 chunk kernel (dpbf4x4{Start,Mid,End}AVX512,
// dot4x4{,F16,BF16}{Start,Mid,End}AVX512) emulated on operands of exact size
// (newA and newB make them), lane sums in acc of the exact size, and (unless
// native is nil) natively on the same, requiring the same bits in acc and
// out; Start and Mid must not write out, End must not write acc. Their
// values are the whole kernels' in TestGemmChunked.
func checkEmuChunk[A, B float32 | uint16](t *testing.T, r *rand.Rand, f x86emu.Func, name string,
	native func(*A, int, *B, int, int, *float32, *float32, int), newA func(n int) []A, newB func(n int) []B) {
	t.Helper()
	end := strings.HasSuffix(name, "EndAVX512")
	for _, K := range []int{32, 64, 96, 768} {
		if end {
			K -= r.IntN(32) // the last chunk may end in a tail
		}
		lda, ldb, ldo := K+3, K+1, 4+2
		a, b := newA(3*lda+K), newB(3*ldb+K)
		run := func(call func(acc, out []float32) error) (acc, out []float32) {
			acc, out = make([]float32, 256), make([]float32, 3*ldo+4)
			ra := rand.New(rand.NewPCG(uint64(K), 9))
			for i := range acc {
				acc[i] = float32(ra.NormFloat64())
			}
			for i := range out {
				out[i] = 42
			}
			if err := call(acc, out); err != nil {
				t.Fatalf("K=%d: %v", K, err)
			}
			return acc, out
		}
		gotAcc, gotOut := run(func(acc, out []float32) error {
			var fr x86emu.Frame
			fr.PutPointer(unsafe.Pointer(&a[0]))
			fr.PutUint64(uint64(lda))
			fr.PutPointer(unsafe.Pointer(&b[0]))
			fr.PutUint64(uint64(ldb))
			fr.PutUint64(uint64(K))
			fr.PutPointer(unsafe.Pointer(&acc[0]))
			fr.PutPointer(unsafe.Pointer(&out[0]))
			fr.PutUint64(uint64(ldo))
			mem := []x86emu.Region{region(a, false), region(b, false), region(acc, !end)}
			if end {
				mem = append(mem, region(out, true))
			}
			return (&x86emu.Machine{Memory: mem}).Call(f, fr.Bytes())
		})
		for o, v := range gotOut {
			if (!end || o%ldo >= 4) && v != 42 {
				t.Fatalf("K=%d: wrote out[%d][%d]", K, o/ldo, o%ldo)
			}
		}
		if native == nil {
			continue
		}
		wantAcc, wantOut := run(func(acc, out []float32) error {
			native(&a[0], lda, &b[0], ldb, K, &acc[0], &out[0], ldo)
			return nil
		})
		if i := sameBits(gotAcc, wantAcc); i >= 0 {
			t.Errorf("K=%d: acc[%d] emulated %v, native %v", K, i, gotAcc[i], wantAcc[i])
		}
		if i := sameBits(gotOut, wantOut); i >= 0 {
			t.Errorf("K=%d: out[%d] emulated %v, native %v", K, i, gotOut[i], wantOut[i])
		}
	}
}

// checkEmuRow runs a row kernel emulated and, if native, natively on rows of
// every length up to past two vectors of 16 (the kernels do n - n%lanes
// elements; the rest must keep their values).
func checkEmuRow(t *testing.T, r *rand.Rand, f x86emu.Func, name string, kernel any, lanes int, native bool) {
	t.Helper()
	for n := range 42 {
		in := mixedVec(r, max(n, 1))
		arg := float32(7.3)
		if strings.Contains(name, "Exp") || strings.Contains(name, "gelu") {
			for i := range in {
				in[i] = float32(r.NormFloat64() * 30)
			}
			arg = 0
			for _, v := range in[:n] {
				arg = max(arg, v)
			}
		}
		want, got := append([]float32(nil), in...), append([]float32(nil), in...)
		var wantRet float32
		var fr x86emu.Frame
		fr.PutPointer(unsafe.Pointer(&got[0]))
		fr.PutUint64(uint64(n))
		ret := -1
		switch k := kernel.(type) {
		case func(*float32, int, float32) float32:
			if native {
				wantRet = k(&want[0], n, arg)
			}
			fr.PutFloat32(math.Float32bits(arg))
			ret = fr.Result(4)
		case func(*float32, int) float32:
			if native {
				wantRet = k(&want[0], n)
			}
			ret = fr.Result(4)
		case func(*float32, int, float32):
			if native {
				k(&want[0], n, arg)
			}
			fr.PutFloat32(math.Float32bits(arg))
		case func(*float32, int):
			if native {
				k(&want[0], n)
			}
		}
		m := &x86emu.Machine{Memory: []x86emu.Region{region(got[:n], true)}}
		if err := m.Call(f, fr.Bytes()); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !native {
			tail := n - n%lanes
			if i := sameBits(got[tail:], in[tail:]); i >= 0 {
				t.Errorf("n=%d: wrote row[%d], past the last whole vector", n, tail+i)
			}
			continue
		}
		if i := sameBits(got, want); i >= 0 {
			t.Errorf("n=%d: row[%d] emulated %v, native %v", n, i, got[i], want[i])
		}
		if ret >= 0 {
			if g := fr.Uint32At(ret); g != math.Float32bits(wantRet) {
				t.Errorf("n=%d: returned %v emulated, %v native", n, math.Float32frombits(g), wantRet)
			}
		}
	}
}

// checkEmuRow2 runs a kernel of two rows (swigluRow: x updated from x and
// y) emulated and, unless native is nil, natively, on rows of every length
// up to past two vectors of 16: x past n - n%lanes keeps its values, y is
// only read.
func checkEmuRow2(t *testing.T, r *rand.Rand, f x86emu.Func, lanes int, native func(*float32, *float32, int)) {
	t.Helper()
	for n := range 42 {
		x, y := make([]float32, max(n, 1)), mixedVec(r, max(n, 1))
		for i := range x {
			x[i] = float32(r.NormFloat64() * 30) // through the exponential's clamps
		}
		got, want := append([]float32(nil), x...), append([]float32(nil), x...)
		var fr x86emu.Frame
		fr.PutPointer(unsafe.Pointer(&got[0]))
		fr.PutPointer(unsafe.Pointer(&y[0]))
		fr.PutUint64(uint64(n))
		m := &x86emu.Machine{Memory: []x86emu.Region{region(got[:n], true), region(y[:n], false)}}
		if err := m.Call(f, fr.Bytes()); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if native == nil {
			tail := n - n%lanes
			if i := sameBits(got[tail:], x[tail:]); i >= 0 {
				t.Errorf("n=%d: wrote x[%d], past the last whole vector", n, tail+i)
			}
			continue
		}
		native(&want[0], &y[0], n)
		if i := sameBits(got, want); i >= 0 {
			t.Errorf("n=%d: x[%d] emulated %v, native %v", n, i, got[i], want[i])
		}
	}
}

// Where the kernels promise each element the same value at either width
// (gemmNN's one FMA chain per element, division, scaling; GELU, SwiGLU and
// e^(x-m) in vector lanes), the AVX-512 set gives the AVX2 set's bits, on
// lengths with and without tails. (GELU's, SwiGLU's and e^x's tails are the
// scalar gelu, silu and expf, which may differ from the vector lanes by an
// ulp, so elements 16k..16k+7 of a row can differ between the sets; they are
// compared only where both sets run vectors.)
func TestAVX512MatchesAVX2Elementwise(t *testing.T) {
	sets := kernelSets()
	if !slicesContains(sets, kernelsAVX512) || !slicesContains(sets, kernelsAVX2) {
		t.Skip("needs the AVX2 and AVX-512 sets")
	}
	r := rand.New(rand.NewPCG(51, 52))
	with := func(set kernelSet, in []float32, f func(x []float32)) []float32 {
		defer useKernels(set)()
		x := append([]float32(nil), in...)
		f(x)
		return x
	}
	check := func(name string, in []float32, f func(x []float32)) {
		t.Helper()
		a2, a512 := with(kernelsAVX2, in, f), with(kernelsAVX512, in, f)
		if strings.HasPrefix(name, "gelu") || strings.HasPrefix(name, "swiglu") || strings.HasPrefix(name, "exp") {
			a2, a512 = a2[:len(in)&^15], a512[:len(in)&^15]
		}
		if i := sameBits(a2, a512); i >= 0 {
			t.Errorf("%s (n=%d): element %d is %v with AVX2, %v with AVX-512", name, len(in), i, a2[i], a512[i])
		}
	}
	for _, n := range []int{16, 17, 40, 63, 100} {
		x := mixedVec(r, n)
		check("geluRow", x, geluRow)
		check("geluErfRow", x, geluErfRow)
		u := mixedVec(r, n)
		check("swigluRow", x, func(x []float32) { swigluRow(x, u) })
		check("mulRow", x, func(x []float32) { mulRow(x, 0.37) })
		check("divMaxRow", x, func(x []float32) { x[0] = divMaxRow(x[1:], 3.1) })
		check("maxRow", x, func(x []float32) { x[0] = maxRow(x[1:]) })
		e := randVec(r, n)
		for i := range e {
			e[i] *= 30
		}
		check("expSubRow", e, func(x []float32) { expSubRow(x, 20) })
	}
	for _, s := range []struct{ M, N, K int }{{5, 70, 33}, {4, 48, 16}, {1, 17, 64}, {9, 100, 7}} {
		lda, ldb, ldo := s.K+3, s.N+5, s.N+2
		a, b := mixedVec(r, s.M*lda), mixedVec(r, s.K*ldb)
		check(fmt.Sprintf("gemmNN %v", s), make([]float32, s.M*ldo), func(out []float32) {
			gemmNN(out, ldo, a, lda, b, ldb, s.M, s.N, s.K)
		})
	}
}

// BenchmarkEmulator runs dot4x4AVX512 (K=768) in the emulator and reports
// emulated instructions per second and nanoseconds per multiply-add, beside
// BenchmarkNativeDot3x4AVX2's figure for the hardware.
//
//	go test ./model -run '^$' -bench 'Emulator|NativeDot'
func BenchmarkEmulator(b *testing.B) {
	f, err := x86emu.FuncOf(dot4x4AVX512)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const K = 768
	a, w, out := randVec(r, 4*K), randVec(r, 4*K), make([]float32, 16)
	steps := 0
	for b.Loop() {
		var fr x86emu.Frame
		putDotArgs(&fr, &a[0], K, &w[0], K, K, &out[0], 4)
		var m x86emu.Machine
		if err := m.Call(f, fr.Bytes()); err != nil {
			b.Fatal(err)
		}
		steps += m.Steps
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "insts/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(16*K), "ns/madd")
}

// BenchmarkNativeDot3x4AVX2 is the native AVX2 block for BenchmarkEmulator.
func BenchmarkNativeDot3x4AVX2(b *testing.B) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		b.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(1, 2))
	const K = 768
	a, w, out := randVec(r, 3*K), randVec(r, 4*K), make([]float32, 12)
	for b.Loop() {
		dot3x4AVX2(&a[0], K, &w[0], K, K, &out[0], 4)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(12*K), "ns/madd")
}

// On a CPU without AVX512_BF16 the VDPBF16PS kernels run in the emulator:
// gemmBF16's assembly path reaches it, and the bf16 mode picks it only while
// a test asks (BF16Asm), never by itself.
func TestBF16KernelsEmulated(t *testing.T) {
	if hasBF16Kernels() {
		t.Skip("this CPU runs the VDPBF16PS kernels natively")
	}
	if emuBF16Err != nil {
		t.Fatalf("cannot emulate the VDPBF16PS kernels: %v", emuBF16Err)
	}
	t.Setenv(kernelsEnv, "")
	if set, err := pickBF16(false); err == nil {
		t.Fatalf("the bf16 mode picked %v on a CPU without AVX512_BF16", set)
	}
	if !BF16Asm(t) {
		t.Fatal("BF16Asm: the emulated kernels are not offered")
	}
	if set, err := pickBF16(false); set != bf16AVX512 || err != nil {
		t.Fatalf("with BF16Asm the bf16 mode picked %v (%v), want %v", set, err, bf16AVX512)
	}
	r := rand.New(rand.NewPCG(61, 62))
	const M, N, K = 5, 6, 40
	a, b := bf16Rows(r, M*K, true), bf16Rows(r, N*K, true)
	got, want := make([]float32, M*N), make([]float32, M*N)
	before := emuSteps.Load()
	gemmBF16(bf16AVX512, got, N, a, K, b, K, M, N, K)
	if emuSteps.Load() == before {
		t.Fatal("gemmBF16 with the assembly ran no emulated instruction")
	}
	gemmBF16(bf16Generic, want, N, a, K, b, K, M, N, K)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("out[%d]: emulated assembly %g, portable %g", i, got[i], want[i])
		}
	}
}

// The default kernel set is the widest the CPU has; kernelsEnv only lowers it.
func TestPickKernels(t *testing.T) {
	avx512 := cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW
	avx2 := cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C
	best := kernelsGeneric
	switch {
	case avx512 && avx2:
		best = kernelsAVX512
	case avx2:
		best = kernelsAVX2
	}
	for want, set := range map[string]kernelSet{"": best, "avx512": best, "avx2": min(best, kernelsAVX2), "generic": kernelsGeneric} {
		if got := pickKernels(want); got != set {
			t.Errorf("pickKernels(%q) = %v, want %v", want, got, set)
		}
	}
}

//go:build amd64 && !purego

package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/internal/x86emu"
)

// On CPUs without AMX, init swaps the AMX kernels (amxChunk, amxChunk16,
// amxStore) for the same assembly run in the x86 emulator (internal/x86emu,
// which executes LDTILECFG, TILELOADD, TILESTORED, TILEZERO, TDPBF16PS and
// TILERELEASE) and sets amxAsmEmulated; tests that want the bf16 mode to
// pick them call AMXAsm. Where the CPU has AMX,
// TestAMXEmulatorMatchesHardware runs the kernels both ways, bit for bit,
// which is what makes the emulated runs elsewhere trustworthy.

// emuAMXErr is why the AMX kernel could not be emulated (nil if it is, or
// if the CPU runs it natively).
var emuAMXErr error

func init() {
	if hasAMX() {
		return
	}
	chunk, chunk16, store, err := emuAMXFuncs()
	if err != nil {
		emuAMXErr = err
		return
	}
	amxChunk, amxChunk16, amxStore = chunk, chunk16, store
	amxAsmEmulated = true
}

type (
	amxChunkFunc = func(cfg *byte, w *uint16, ldw int, x *uint16, xg int, steps int, nfb int, ntb int, acc *float32, first int)
	amxStoreFunc = func(acc *float32, nfb int, ntb int, m int, n int, out *float32, ldo int)
)

// emuAMXFuncs returns amxChunkBF16, amxChunk16BF16 and amxStoreBF16 run in
// the emulator.
func emuAMXFuncs() (amxChunkFunc, amxChunkFunc, amxStoreFunc, error) {
	fc, err := x86emu.FuncOf(amxChunkBF16)
	if err != nil {
		return nil, nil, nil, err
	}
	fc16, err := x86emu.FuncOf(amxChunk16BF16)
	if err != nil {
		return nil, nil, nil, err
	}
	fs, err := x86emu.FuncOf(amxStoreBF16)
	if err != nil {
		return nil, nil, nil, err
	}
	chunkOf := func(fc x86emu.Func) amxChunkFunc {
		return func(cfg *byte, w *uint16, ldw int, x *uint16, xg int, steps int, nfb int, ntb int, acc *float32, first int) {
			var fr x86emu.Frame
			fr.PutPointer(unsafe.Pointer(cfg))
			fr.PutPointer(unsafe.Pointer(w))
			fr.PutUint64(uint64(ldw))
			fr.PutPointer(unsafe.Pointer(x))
			fr.PutUint64(uint64(xg))
			fr.PutUint64(uint64(steps))
			fr.PutUint64(uint64(nfb))
			fr.PutUint64(uint64(ntb))
			fr.PutPointer(unsafe.Pointer(acc))
			fr.PutUint64(uint64(first))
			emuCall(new(x86emu.Machine), fc, &fr)
		}
	}
	store := func(acc *float32, nfb int, ntb int, m int, n int, out *float32, ldo int) {
		var fr x86emu.Frame
		fr.PutPointer(unsafe.Pointer(acc))
		fr.PutUint64(uint64(nfb))
		fr.PutUint64(uint64(ntb))
		fr.PutUint64(uint64(m))
		fr.PutUint64(uint64(n))
		fr.PutPointer(unsafe.Pointer(out))
		fr.PutUint64(uint64(ldo))
		emuCall(new(x86emu.Machine), fs, &fr)
	}
	return chunkOf(fc), chunkOf(fc16), store, nil
}

// Where the CPU has AMX, the emulator runs the AMX kernel to the bits the
// hardware gives, on ragged shapes and operands with extreme values
// (subnormals, infinities, NaN, overflowing products; a NaN compares as
// any NaN: which payload wins among several is not modelled).
func TestAMXEmulatorMatchesHardware(t *testing.T) {
	if !hasAMX() {
		t.Skip("this CPU has no AMX to compare the emulator with (TestGemmBF16AMX runs the kernel emulated)")
	}
	chunk, chunk16, store, err := emuAMXFuncs()
	if err != nil {
		t.Fatal(err)
	}
	defer func(c, c16 amxChunkFunc, s amxStoreFunc) { amxChunk, amxChunk16, amxStore = c, c16, s }(amxChunk, amxChunk16, amxStore)
	r := rand.New(rand.NewPCG(71, 72))
	for _, sh := range [][3]int{{1, 1, 1}, {16, 16, 32}, {33, 40, 70}, {64, 64, 256}, {5, 100, 45}, {17, 64, 64}} {
		M, N, K := sh[0], sh[1], sh[2]
		for _, huge := range []bool{false, true} {
			a, b := bf16Rows(r, M*K, true), bf16Rows(r, N*K, true)
			if huge {
				a, b = bf16Huge(r, M*K), bf16Huge(r, N*K)
			}
			p := amxPanel(a, K, M, K)
			var got [2][]float32
			before := emuSteps.Load()
			for i, emulated := range []bool{false, true} {
				amxChunk, amxChunk16, amxStore = amxChunkBF16, amxChunk16BF16, amxStoreBF16
				if emulated {
					amxChunk, amxChunk16, amxStore = chunk, chunk16, store
				}
				got[i] = make([]float32, M*N)
				gemmBF16(bf16AMX, got[i], N, p, K, b, K, M, N, K)
			}
			if emuSteps.Load() == before {
				t.Fatal("the emulated kernel ran no instruction")
			}
			for i := range got[0] {
				h, e := got[0][i], got[1][i]
				if math.Float32bits(h) != math.Float32bits(e) && !(h != h && e != e) {
					t.Fatalf("%dx%dx%d (huge %v): out[%d] = %#x natively, %#x emulated", M, N, K, huge, i, math.Float32bits(h), math.Float32bits(e))
				}
			}
		}
	}
}

// On a CPU without AMX the kernel runs in the emulator: the bf16 mode picks
// it only while a test asks (AMXAsm), never by itself.
func TestAMXKernelsEmulated(t *testing.T) {
	if hasAMX() {
		t.Skip("this CPU runs the AMX kernel natively")
	}
	if emuAMXErr != nil {
		t.Fatalf("cannot emulate the AMX kernel: %v", emuAMXErr)
	}
	t.Setenv(kernelsEnv, "")
	if set, _ := pickBF16(false); set == bf16AMX {
		t.Fatal("the bf16 mode picked bf16-amx on a CPU without AMX")
	}
	if !AMXAsm(t) {
		t.Fatal("AMXAsm: the emulated kernel is not offered")
	}
	if set, err := pickBF16(false); set != bf16AMX || err != nil {
		t.Fatalf("with AMXAsm the bf16 mode picked %v (%v), want %v", set, err, bf16AMX)
	}
	t.Setenv(kernelsEnv, "avx512")
	if set, _ := pickBF16(false); set == bf16AMX {
		t.Fatalf("%s=avx512: the bf16 mode picked bf16-amx", kernelsEnv)
	}
}

// The AMX kernels touch only what gemmBF16AMX gives them: run in the
// emulator with the memory confined to the weights' rows (b exactly, N
// rows of K with no slack: the tail and edge copies are what reaches past
// K), the panel, out, the tile configuration and the result tiles in use,
// on ragged shapes. One weight too few is caught.
func TestAMXKernelsInBounds(t *testing.T) {
	if emuAMXErr != nil {
		t.Fatal(emuAMXErr)
	}
	fc, err := x86emu.FuncOf(amxChunkBF16)
	if err != nil {
		t.Fatal(err)
	}
	fc16, err := x86emu.FuncOf(amxChunk16BF16)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := x86emu.FuncOf(amxStoreBF16)
	if err != nil {
		t.Fatal(err)
	}
	defer func(c, c16 amxChunkFunc, s amxStoreFunc) { amxChunk, amxChunk16, amxStore = c, c16, s }(amxChunk, amxChunk16, amxStore)
	cfg := region(amxTileConfig[:], false)
	var b, panel []uint16
	var out []float32
	var callErr error
	call := func(f x86emu.Func, fr *x86emu.Frame, regions ...x86emu.Region) {
		m := &x86emu.Machine{Memory: regions}
		if err := m.Call(f, fr.Bytes()); err != nil && callErr == nil {
			callErr = err
		}
	}
	// The weights: b when w points into it, else a padded copy of 32 rows
	// per block, as far as the call's steps reach.
	weights := func(w *uint16, ldw, steps, nfb int) x86emu.Region {
		if p := addr(w); p >= addr(&b[0]) && p < addr(&b[0])+2*uint64(len(b)) {
			return region(b, false)
		}
		return x86emu.Region{Addr: addr(w), Size: uint64(2 * ((32*nfb-1)*ldw + 32*steps))}
	}
	chunkOf := func(f x86emu.Func) amxChunkFunc {
		return func(c *byte, w *uint16, ldw int, x *uint16, xg int, steps int, nfb int, ntb int, acc *float32, first int) {
			var fr x86emu.Frame
			for _, v := range []uint64{addr(c), addr(w), uint64(ldw), addr(x), uint64(xg), uint64(steps), uint64(nfb), uint64(ntb), addr(acc), uint64(first)} {
				fr.PutUint64(v)
			}
			call(f, &fr, cfg, weights(w, ldw, steps, nfb), region(panel, false),
				x86emu.Region{Addr: addr(acc), Size: uint64(4096 * nfb * ntb), Write: true})
		}
	}
	amxChunk, amxChunk16 = chunkOf(fc), chunkOf(fc16)
	amxStore = func(acc *float32, nfb int, ntb int, m int, n int, o *float32, ldo int) {
		var fr x86emu.Frame
		for _, v := range []uint64{addr(acc), uint64(nfb), uint64(ntb), uint64(m), uint64(n), addr(o), uint64(ldo)} {
			fr.PutUint64(v)
		}
		call(fs, &fr, x86emu.Region{Addr: addr(acc), Size: uint64(4096 * nfb * ntb), Write: true}, region(out, true))
	}
	r := rand.New(rand.NewPCG(91, 92))
	run := func(M, N, K int, short bool) error {
		callErr = nil
		a := bf16Rows(r, M*K, false)
		b = bf16Rows(r, N*K, false)
		panel = amxPanel(a, K, M, K)
		out = make([]float32, M*N)
		want := make([]float32, M*N)
		for i := range M {
			for j := range N {
				want[i*N+j] = dotBF16AMXRef(a[i*K:][:K], b[j*K:][:K])
			}
		}
		full := b
		if short {
			b = b[:len(b)-1] // the region: the kernel reads the last weight
		}
		gemmBF16AMX(out, N, panel, full, K, M, N, K)
		if callErr == nil && !short {
			for i := range out {
				if math.Float32bits(out[i]) != math.Float32bits(want[i]) {
					return fmt.Errorf("out[%d] = %g, want %g", i, out[i], want[i])
				}
			}
		}
		return callErr
	}
	for _, sh := range [][3]int{{1, 1, 1}, {5, 7, 33}, {17, 40, 64}, {33, 45, 70}, {64, 64, 512}, {3, 96, 100}} {
		if err := run(sh[0], sh[1], sh[2], false); err != nil {
			t.Errorf("%dx%dx%d: %v", sh[0], sh[1], sh[2], err)
		}
	}
	if err := run(40, 64, 64, true); err == nil || !strings.Contains(err.Error(), "outside the allowed memory") {
		t.Errorf("a weight short: %v, want an access outside the allowed memory", err)
	}
}

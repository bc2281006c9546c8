//go:build amd64 && !purego

package model

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/internal/x86emu"
)

// The row kernels (ops_rows.go) and the bf16 rounding in the emulator: the
// AVX-512 set's row kernels emulated where the CPU lacks AVX-512
// (emulateAVX512), roundBF16AVX512 where it lacks AVX512_BF16
// (emulateBF16), and the harness checkKernels runs them with.

// emuFunc returns a function of type F that runs f, an assembly kernel of
// that signature, in the emulator: its arguments (pointers, ints, float32,
// float64) go into an ABI0 frame, its results (float32, float64) come
// back from it.
func emuFunc[F any](f x86emu.Func) F {
	t := reflect.TypeFor[F]()
	fn := reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		var fr x86emu.Frame
		putArgs(&fr, args)
		offs := make([]int, t.NumOut())
		for i := range offs {
			offs[i] = fr.Result(int(t.Out(i).Size()))
		}
		emuCall(new(x86emu.Machine), f, &fr)
		return results(&fr, t, offs)
	})
	return fn.Interface().(F)
}

// putArgs appends args to fr as ABI0 lays them out.
func putArgs(fr *x86emu.Frame, args []reflect.Value) {
	for _, a := range args {
		switch a.Kind() {
		case reflect.Pointer:
			fr.PutPointer(a.UnsafePointer())
		case reflect.Int:
			fr.PutUint64(uint64(a.Int()))
		case reflect.Float32:
			fr.PutFloat32(math.Float32bits(float32(a.Float())))
		case reflect.Float64:
			fr.PutUint64(math.Float64bits(a.Float()))
		default:
			panic("emuFunc: argument of kind " + a.Kind().String())
		}
	}
}

// results reads the results of function type t at offs of fr.
func results(fr *x86emu.Frame, t reflect.Type, offs []int) []reflect.Value {
	out := make([]reflect.Value, t.NumOut())
	b := fr.Bytes()
	for i, off := range offs {
		v := reflect.New(t.Out(i)).Elem()
		switch v.Kind() {
		case reflect.Float32:
			v.SetFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))))
		case reflect.Float64:
			v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(b[off:])))
		default:
			panic("emuFunc: result of kind " + v.Kind().String())
		}
		out[i] = v
	}
	return out
}

// emuRows returns r's kernels run in the emulator (look finds their code).
func emuRows(look func(any) x86emu.Func, r *vecRowKernels) *vecRowKernels {
	return &vecRowKernels{
		r.lanes,
		emuFunc[func(*float32, int) float64](look(r.sumRow)),
		emuFunc[func(*float32, int, float64) float64](look(r.sumSqDevRow)),
		emuFunc[func(o, x, w *float32, n int, s float32)](look(r.scaleMulRow)),
		emuFunc[func(o, x, w, b *float32, n int, m, s float32)](look(r.normAffineRow)),
		emuFunc[func(x1, x2, c, s *float32, n int)](look(r.rotateRow)),
		emuFunc[func(o *float32, ldo int, v *float32, ldv int, b *float32, rows, n int)](look(r.addBiasRows)),
		emuFunc[func(o *float32, ldo int, v *float32, ldv int, b *float32, rows, n int)](look(r.accBiasRows)),
	}
}

// rowSpec says how the harness calls a row kernel at length n: its int
// arguments in order (nil: n), the length of each pointer argument (nil: n
// each), how many of its first pointer arguments it writes, and which of
// their elements it may write (nil: the first n - n%lanes); the others must
// keep their values.
type rowSpec struct {
	writes  int
	ints    func(n int) []int
	lens    func(n int) []int
	covered func(i, n, lanes int) bool
}

// biasRowsSpec calls the bias kernels on 3 rows with gaps between them.
var biasRowsSpec = rowSpec{
	writes:  1,
	ints:    func(n int) []int { return []int{n + 3, n + 1, 3, n} }, // ldo, ldv, rows, n
	lens:    func(n int) []int { return []int{2*(n+3) + n, 2*(n+1) + n, n} },
	covered: func(i, n, lanes int) bool { return i%(n+3) < n-n%lanes },
}

// rowKernelSpecs are the row kernels by name (without the isa).
var rowKernelSpecs = map[string]rowSpec{
	"sumRow": {}, "sumSqDevRow": {}, "scaleMulRow": {writes: 1}, "normAffineRow": {writes: 1}, "rotateRow": {writes: 2},
	"addBiasRows": biasRowsSpec, "accBiasRows": biasRowsSpec, "roundBF16Row": {writes: 1},
}

// rowKernelsOf lists set's row kernels by name, for the emulator tables.
func rowKernelsOf(r *vecRowKernels, isa string) map[string]any {
	return map[string]any{
		"sumRow" + isa: r.sumRow, "sumSqDevRow" + isa: r.sumSqDevRow, "scaleMulRow" + isa: r.scaleMulRow,
		"normAffineRow" + isa: r.normAffineRow, "rotateRow" + isa: r.rotateRow,
		"addBiasRows" + isa: r.addBiasRows, "accBiasRows" + isa: r.accBiasRows,
	}
}

// unionOf returns the union of the maps.
func unionOf(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// bf16Specials are float32 bits where rounding to bf16 has a rule of its
// own: zeros, subnormals, ties (even and odd), the largest float32 (to
// +Inf), infinities, quiet and signalling NaNs with payloads.
var bf16Specials = []uint32{
	0, 0x80000000, 1, 0x807FFFFF, 0x00400000, 0x00800000, 0x80800001,
	0x3F808000, 0x3F818000, 0x3F817FFF, 0xBF808001, 0x7F7F8000, 0x7F7FFFFF, 0xFF7FFFFF,
	0x7F800000, 0xFF800000, 0x7F800001, 0xFF80FFFF, 0x7FC00000, 0xFFC12345, 0x7FFFFFFF,
}

// checkEmuRowKernel runs a row kernel (name is its name with the isa
// suffix, kernel the function) emulated on operands of exact size, for
// every n up to past two vectors of 16 and a few longer, and, if native,
// natively too, requiring the same bits of every output and result;
// without native the outputs' elements the kernel does not cover (past n -
// n%lanes, or in the gaps between rows) must keep their values.
// roundBF16RowAVX512 is also held to bf16Round, everywhere.
// It reports false for a kernel that is not a row kernel.
func checkEmuRowKernel(t *testing.T, r *rand.Rand, f x86emu.Func, name string, kernel any, lanes int, native bool) bool {
	base := strings.TrimSuffix(strings.TrimSuffix(name, "AVX512"), "AVX2")
	spec, ok := rowKernelSpecs[base]
	if !ok {
		return false
	}
	writes := spec.writes
	if base == "roundBF16Row" {
		native = native && hasBF16Kernels()
	}
	ft := reflect.TypeOf(kernel)
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 41, 64, 100, 768} {
		// Every pointer argument is a row of n elements (or as spec.lens
		// says); the emulated and the native call get copies.
		ints, lens := []int{n}, make([]int, ft.NumIn())
		for i := range lens {
			lens[i] = n
		}
		if spec.ints != nil {
			ints, lens = spec.ints(n), spec.lens(n)
		}
		covered := func(i int) bool { return i < n-n%lanes }
		if spec.covered != nil {
			covered = func(i int) bool { return spec.covered(i, n, lanes) }
		}
		var in [][]float32
		var out16 [2][]uint16
		var args [2][]reflect.Value
		var regions []x86emu.Region
		for i := range ft.NumIn() {
			switch pt := ft.In(i); {
			case pt == reflect.TypeFor[*uint16]():
				for k := range out16 {
					out16[k] = make([]uint16, max(n, 1))
					for j := range out16[k] {
						out16[k][j] = 0x4242
					}
					args[k] = append(args[k], reflect.ValueOf(&out16[k][0]))
				}
				regions = append(regions, region(out16[0][:n], true))
			case pt == reflect.TypeFor[*float32]():
				size := lens[len(in)]
				x := mixedVec(r, max(size, 1))
				if base == "roundBF16Row" {
					for j := range x {
						switch r.IntN(4) {
						case 0:
							x[j] = math.Float32frombits(bf16Specials[r.IntN(len(bf16Specials))])
						case 1:
							x[j] = math.Float32frombits(r.Uint32())
						}
					}
				}
				in = append(in, x)
				for k := range args {
					c := append([]float32(nil), x...)
					args[k] = append(args[k], reflect.ValueOf(&c[0]))
					if k == 0 {
						regions = append(regions, region(c[:size], i < writes))
					}
				}
			case pt.Kind() == reflect.Int:
				v := reflect.ValueOf(ints[0])
				ints = ints[1:]
				args[0], args[1] = append(args[0], v), append(args[1], v)
			case pt.Kind() == reflect.Float32:
				v := reflect.ValueOf(mixed(r))
				args[0], args[1] = append(args[0], v), append(args[1], v)
			case pt.Kind() == reflect.Float64:
				v := reflect.ValueOf(float64(mixed(r)))
				args[0], args[1] = append(args[0], v), append(args[1], v)
			default:
				t.Fatalf("%s: no harness for an argument of type %v", name, pt)
			}
		}
		// Emulated, in args[0] and out16[0].
		var fr x86emu.Frame
		putArgs(&fr, args[0])
		offs := make([]int, ft.NumOut())
		for i := range offs {
			offs[i] = fr.Result(int(ft.Out(i).Size()))
		}
		m := &x86emu.Machine{Memory: regions}
		if err := m.Call(f, fr.Bytes()); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		got := results(&fr, ft, offs)
		if base == "roundBF16Row" {
			for i := range n &^ 15 {
				if want := bf16Round(in[0][i]); out16[0][i] != want {
					t.Fatalf("n=%d: x[%d] = %#08x rounds to %#04x emulated, bf16Round %#04x", n, i, math.Float32bits(in[0][i]), out16[0][i], want)
				}
			}
		}
		if !native {
			for i := range writes {
				if base == "roundBF16Row" {
					for j := range n {
						if !covered(j) && out16[0][j] != 0x4242 {
							t.Fatalf("n=%d: wrote dst[%d], past the last whole vector", n, j)
						}
					}
					continue
				}
				got := unsafe.Slice((*float32)(args[0][i].UnsafePointer()), len(in[i]))
				for j, v := range in[i] {
					if !covered(j) && math.Float32bits(got[j]) != math.Float32bits(v) {
						t.Fatalf("n=%d: wrote argument %d's element %d, outside the whole vectors", n, i, j)
					}
				}
			}
			continue
		}
		want := reflect.ValueOf(kernel).Call(args[1])
		for i := range got {
			if g, w := got[i].Float(), want[i].Float(); math.Float64bits(g) != math.Float64bits(w) {
				t.Errorf("n=%d: result %d emulated %v, native %v", n, i, g, w)
			}
		}
		for i := range writes {
			if base == "roundBF16Row" {
				for j := range n {
					if out16[0][j] != out16[1][j] {
						t.Fatalf("n=%d: dst[%d] (x %#08x) emulated %#04x, native %#04x", n, j, math.Float32bits(in[0][j]), out16[0][j], out16[1][j])
					}
				}
				continue
			}
			g := unsafe.Slice((*float32)(args[0][i].UnsafePointer()), len(in[i]))
			w := unsafe.Slice((*float32)(args[1][i].UnsafePointer()), len(in[i]))
			if j := sameBits(g, w); j >= 0 {
				t.Errorf("n=%d: argument %d's element %d emulated %v, native %v", n, i, j, g[j], w[j])
			}
		}
	}
	return true
}

// The emulated row kernels as emulateAVX512 builds them (emuRows, through
// emuFunc) compute what the AVX-512 set computes natively, and, like every
// set, what the portable kernels compute; the emulated rounding kernel
// gives bf16Round's bits. (Where the CPU lacks AVX-512, the kernel-set tests
// run the emulated set too.)
func TestEmulatedRowKernels(t *testing.T) {
	look := func(fn any) x86emu.Func {
		f, err := x86emu.FuncOf(fn)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	emu := emuRows(look, rowsAVX512).table()
	gen := genericRowKernels
	r := rand.New(rand.NewPCG(81, 82))
	for _, n := range []int{1, 8, 16, 17, 40} {
		x, w, b := mixedVec(r, n), mixedVec(r, n), mixedVec(r, n)
		c, s := mixedVec(r, n), mixedVec(r, n)
		m, sc := mixed(r), mixed(r)
		run := func(k rowKernels) []float32 {
			out := f64Bits(k.sumRow(x))
			out = append(out, f64Bits(k.sumSqDevRow(x, float64(m)))...)
			o := make([]float32, n)
			k.scaleMulRow(o, x, w, sc)
			out = append(out, o...)
			k.normAffineRow(o, x, w, b, m, sc)
			out = append(out, o...)
			x1, x2 := append([]float32(nil), x...), append([]float32(nil), w...)
			k.rotateRow(x1, x2, c, s)
			out = append(append(out, x1...), x2...)
			k.addBiasRows(o, 0, x, 0, b, 1, n)
			out = append(out, o...)
			k.accBiasRows(o, 0, w, 0, b, 1, n)
			return append(out, o...)
		}
		got, want := run(emu), run(gen)
		if i := firstDiff(got, want); i >= 0 {
			t.Errorf("n=%d: output %d emulated %v, portable %v", n, i, got[i], want[i])
		}
		if hasAVX512() {
			if i := firstDiff(got, run(rowsAVX512.table())); i >= 0 {
				t.Errorf("n=%d: output %d emulated and native differ", n, i)
			}
		}
	}
	round := emuFunc[func(dst *uint16, x *float32, n int)](look(roundBF16RowAVX512))
	x := make([]float32, 48)
	for i := range x {
		x[i] = math.Float32frombits(bf16Specials[i%len(bf16Specials)])
	}
	dst := make([]uint16, len(x))
	round(&dst[0], &x[0], len(x))
	for i, v := range x {
		if want := bf16Round(v); dst[i] != want {
			t.Errorf("x[%d] = %#08x: emulated %#04x, bf16Round %#04x", i, math.Float32bits(v), dst[i], want)
		}
	}
}

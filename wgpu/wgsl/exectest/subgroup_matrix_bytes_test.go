package exectest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// byteArray is a WGSL array element type as bytes: its stride, and the
// bytes of each element that hold values (a vec3's last 4 or 2 are padding).
type byteArray struct {
	wgsl         string
	stride, used int
}

var (
	arrU32   = byteArray{"u32", 4, 4}
	arrF32   = byteArray{"f32", 4, 4}
	arrF16   = byteArray{"f16", 2, 2}
	arrVec2H = byteArray{"vec2<f16>", 4, 4}
	arrVec3F = byteArray{"vec3<f32>", 16, 12}
	arrVec3U = byteArray{"vec3<u32>", 16, 12}
	arrVec3H = byteArray{"vec3<f16>", 8, 6}
	arrVec4I = byteArray{"vec4<i32>", 16, 16}
)

// byteMatrix is a subgroup matrix type of a reinterpreting load or store.
type byteMatrix struct {
	role       string // left, right or result
	comp       string // f32, f16, i32, u32, i8 or u8
	cols, rows int
}

func (m byteMatrix) wgsl() string {
	return fmt.Sprintf("subgroup_matrix_%s<%s, %d, %d>", m.role, m.comp, m.cols, m.rows)
}

// size is the bytes of a component in memory.
func (m byteMatrix) size() int {
	switch m.comp {
	case "i8", "u8":
		return 1
	case "f16":
		return 2
	}
	return 4
}

// plain is the array type holding the matrix's shader scalar type, and the
// stride in its elements of a row-major matrix packed there.
func (m byteMatrix) plain() (byteArray, int) {
	switch m.comp {
	case "i8", "u8":
		return byteArray{map[string]string{"i8": "i32", "u8": "u32"}[m.comp], 4, 4}, (m.cols + 3) / 4
	case "f16":
		return arrF16, m.cols
	}
	return byteArray{m.comp, 4, 4}, m.cols
}

// matrixBytes reads (write false) or writes the components of matrix m
// (comps: rows*cols of m.size() bytes each, row-major) in mem, an array of
// a's elements, as the extension lays them out: row (column, colMajor) j
// from byte (off + j*stride)*a.stride, its components packed from there.
// Padding bytes read as zero and are not written.
func matrixBytes(mem []byte, a byteArray, m byteMatrix, colMajor bool, off, stride int, comps []byte, write bool) {
	c := m.size()
	for r := range m.rows {
		for k := range m.cols {
			major, minor := r, k
			if colMajor {
				major, minor = k, r
			}
			base := (off+major*stride)*a.stride + minor*c
			for b := range c {
				at, comp := base+b, (r*m.cols+k)*c+b
				pad := at%a.stride >= a.used
				switch {
				case write && !pad:
					mem[at] = comps[comp]
				case !write && pad:
					comps[comp] = 0
				case !write:
					comps[comp] = mem[at]
				}
			}
		}
	}
}

// valueBytes are n random bytes that make no NaN or infinity of any f32 or
// f16 they are read as (each byte below 0x40 or in 0x80..0xbf: an exponent
// never all ones), and i8 values of both signs.
func valueBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(64)) | byte(rng.IntN(2))<<7
	}
	return b
}

// TestSubgroupMatrixReinterpretLowered runs lowered subgroupMatrixLoad and
// Store in the layout-template form through arrays of other values than
// the matrix's (u32 words holding f16 and u8 components, vec2<f16> elements
// holding f32 and i8 ones, vec3 arrays with padding, vec2<f16> and vec4<i32>
// elements), row- and column-major, against a Go model of the bytes: a
// load's every component must be the bytes at its place (a vec3's padding
// reading as zero), and a store must leave those bytes and no other changed
// (padding untouched), in storage and workgroup memory, also where a row
// ends inside a word that other data shares, for one invocation, a partial
// subgroup and several subgroups.
func TestSubgroupMatrixReinterpretLowered(t *testing.T) {
	// The cases with f16 arrays or components run where the adapter has
	// shader-f16 (not SwiftShader), the others everywhere.
	d := newDevice(t, wgpu.FeatureSubgroups)
	var dh *device
	if adapterHas(wgpu.FeatureShaderF16) {
		dh = newDevice(t, wgpu.FeatureSubgroups, wgpu.FeatureShaderF16)
	}
	devFor := func(t *testing.T, m byteMatrix, a byteArray) (*device, string) {
		t.Helper()
		if m.comp != "f16" && !strings.Contains(a.wgsl, "f16") {
			return d, ""
		}
		if dh == nil {
			t.Skip("the adapter lacks shader-f16")
		}
		return dh, "enable f16;\n"
	}
	rng := rand.New(rand.NewPCG(19, 20))
	type byteCase struct {
		name        string
		m           byteMatrix
		a           byteArray
		colMajor    bool
		off, stride int
	}
	loads := []byteCase{
		{"f16_from_u32", byteMatrix{"left", "f16", 8, 4}, arrU32, false, 3, 5},
		{"f32_from_vec3f", byteMatrix{"right", "f32", 8, 8}, arrVec3F, true, 1, 3},
		{"i8_from_vec2h", byteMatrix{"left", "i8", 8, 8}, arrVec2H, true, 2, 3},
		{"f32_from_vec2h", byteMatrix{"result", "f32", 8, 4}, arrVec2H, false, 5, 9},
		{"u8_from_f32", byteMatrix{"result", "u8", 5, 3}, arrF32, false, 1, 2},
		{"i32_from_vec3h", byteMatrix{"right", "i32", 4, 8}, arrVec3H, false, 0, 3},
	}
	stores := []byteCase{
		{"f16_into_u32", byteMatrix{"left", "f16", 8, 4}, arrU32, false, 2, 5},
		{"f16_into_f32_partial", byteMatrix{"result", "f16", 5, 4}, arrF32, false, 1, 3},
		{"u8_into_vec3u_partial", byteMatrix{"right", "u8", 3, 8}, arrVec3U, false, 1, 2},
		{"f32_into_vec2h", byteMatrix{"result", "f32", 8, 4}, arrVec2H, true, 3, 5},
		{"i8_into_vec4i", byteMatrix{"left", "i8", 8, 8}, arrVec4I, false, 0, 1},
		{"u32_into_vec3h", byteMatrix{"left", "u32", 4, 4}, arrVec3H, true, 1, 3},
	}
	layout := func(cm bool) string {
		if cm {
			return "col_major"
		}
		return "row_major"
	}
	const header = "enable chromium_experimental_subgroup_matrix;\n"
	for _, c := range loads {
		plain, pstride := c.m.plain()
		majors := c.m.rows
		if c.colMajor {
			majors = c.m.cols
		}
		srcLen := (c.off + majors*c.stride + 1) * c.a.stride
		src := valueBytes(rng, srcLen)
		comps := make([]byte, c.m.rows*c.m.cols*c.m.size())
		matrixBytes(src, c.a, c.m, c.colMajor, c.off, c.stride, comps, false)
		want := make([]byte, c.m.rows*pstride*plain.stride+4)
		matrixBytes(want, plain, c.m, false, 0, pstride, comps, true)
		for _, wg := range []int{1, 7, 64} {
			t.Run(fmt.Sprintf("load/%s/wg%d", c.name, wg), func(t *testing.T) {
				d, f16 := devFor(t, c.m, c.a)
				code := f16 + header + fmt.Sprintf(`@group(0) @binding(0) var<storage, read> src: array<%s>;
@group(0) @binding(1) var<storage, read_write> dst: array<%s>;
@compute @workgroup_size(%d)
fn main() {
	let m = subgroupMatrixLoad<%s, %s>(&src, %du, %du);
	subgroupMatrixStore<row_major>(&dst, 0u, m, %du);
}
`, c.a.wgsl, plain.wgsl, wg, c.m.wgsl(), layout(c.colMajor), c.off, c.stride, pstride)
				res := d.run(t, code, nil, nil, [3]uint32{1, 1, 1}, src, make([]byte, len(want)))
				if !bytes.Equal(res[1], want) {
					t.Errorf("loaded %s:\n got %x\nwant %x", c.m.wgsl(), res[1], want)
				}
			})
		}
	}
	for _, c := range stores {
		plain, pstride := c.m.plain()
		comps := valueBytes(rng, c.m.rows*c.m.cols*c.m.size())
		src := make([]byte, c.m.rows*pstride*plain.stride+4)
		matrixBytes(src, plain, c.m, false, 0, pstride, comps, true)
		majors := c.m.rows
		if c.colMajor {
			majors = c.m.cols
		}
		n := (c.off + majors*c.stride + 1) * c.a.stride
		n = (n + 63) / 64 * 64 // whole workgroup-copy rounds of 16 words
		before := valueBytes(rng, n)
		want := bytes.Clone(before)
		matrixBytes(want, c.a, c.m, c.colMajor, c.off, c.stride, comps, true)
		for _, wg := range []int{1, 7, 64} {
			t.Run(fmt.Sprintf("store/%s/wg%d", c.name, wg), func(t *testing.T) {
				d, f16 := devFor(t, c.m, c.a)
				code := f16 + header + fmt.Sprintf(`@group(0) @binding(0) var<storage, read> src: array<%s>;
@group(0) @binding(1) var<storage, read_write> dst: array<%s>;
@compute @workgroup_size(%d)
fn main() {
	let m = subgroupMatrixLoad<%s, row_major>(&src, 0u, %du);
	subgroupMatrixStore<%s>(&dst, %du, m, %du);
}
`, plain.wgsl, c.a.wgsl, wg, c.m.wgsl(), pstride, layout(c.colMajor), c.off, c.stride)
				res := d.run(t, code, nil, nil, [3]uint32{1, 1, 1}, src, bytes.Clone(before))
				if !bytes.Equal(res[1], want) {
					t.Errorf("stored %s:\n got %x\nwant %x", c.m.wgsl(), res[1], want)
				}
			})
		}
	}
	// Workgroup memory: the u8 store with partial words and padding into a
	// workgroup array, copied in from storage before and out after.
	c := stores[2]
	plain, pstride := c.m.plain()
	comps := valueBytes(rng, c.m.rows*c.m.cols*c.m.size())
	src := make([]byte, c.m.rows*pstride*plain.stride+4)
	matrixBytes(src, plain, c.m, false, 0, pstride, comps, true)
	const elems = 32
	before := valueBytes(rng, elems*c.a.stride)
	for e := range elems { // the copy in and out moves the values, not the padding
		clear(before[e*c.a.stride+c.a.used : (e+1)*c.a.stride])
	}
	want := bytes.Clone(before)
	matrixBytes(want, c.a, c.m, c.colMajor, c.off, c.stride, comps, true)
	t.Run("store/workgroup", func(t *testing.T) {
		d, f16 := devFor(t, c.m, c.a)
		code := f16 + header + strings.NewReplacer("ARR", c.a.wgsl, "MT", c.m.wgsl(), "PLAIN", plain.wgsl).Replace(fmt.Sprintf(`@group(0) @binding(0) var<storage, read> src: array<PLAIN>;
@group(0) @binding(1) var<storage, read_write> dst: array<ARR>;
var<workgroup> w: array<ARR, %d>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
	if li < %du { w[li] = dst[li]; }
	workgroupBarrier();
	let m = subgroupMatrixLoad<MT, row_major>(&src, 0u, %du);
	subgroupMatrixStore<%s>(&w, %du, m, %du);
	workgroupBarrier();
	if li < %du { dst[li] = w[li]; }
}
`, elems, elems, pstride, layout(c.colMajor), c.off, c.stride, elems))
		res := d.run(t, code, nil, nil, [3]uint32{1, 1, 1}, src, bytes.Clone(before))
		if !bytes.Equal(res[1], want) {
			t.Errorf("stored %s into workgroup memory:\n got %x\nwant %x", c.m.wgsl(), res[1], want)
		}
	})
}

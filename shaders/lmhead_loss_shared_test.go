package shaders

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// lossSharedGroups is lmhead_loss_shared.wgsl's dispatch: one workgroup per bm
// positions and slice of nt tiles of vt ids of a range of n ids.
func lossSharedGroups(P, n, bm, vt, nt int) [3]uint32 {
	return [3]uint32{uint32(ceilDiv(P, bm)), uint32(ceilDiv(n, vt*nt)), 1}
}

// bitsEqual reports whether a and b hold the same float32 bits.
func bitsEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// lossCase is one set of inputs for TestLossShared.
type lossCase struct {
	P, C, V int
	split   int // first id of wte's second range (a multiple of every VT tried); 0: bound whole
}

// lossOut runs an LM-head kernel whose partials cover vt ids each over wte's
// ranges and then the reduction (nll_combine.wgsl), returning nll; hb is h
// as the kernel reads it (f32, or f16 for lmhead_loss_coop.wgsl), bound
// exactly. part and the target logits (after the ids in the targets
// binding) start as NaN, so that a partial or target logit never written
// shows as a NaN nll, and are followed by guard values that must stay as
// they were, as must the ids.
func lossOut(t *testing.T, d *testDev, lp *Pipeline, red lossReducer, lc lossCase, vt int, hb, wb, tb []byte,
	groups func(n int) [3]uint32) []float32 {
	t.Helper()
	ranges := [][2]int{{0, lc.V}}
	if lc.split > 0 {
		ranges = [][2]int{{0, lc.split}, {lc.split, lc.V - lc.split}}
	}
	last := ranges[len(ranges)-1]
	tiles := last[0]/vt + ceilDiv(last[1], vt)
	nan := func(n int) []byte {
		b := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(b[4*i:], 0x7fc00000)
		}
		return b
	}
	partInit := append(nan(2*tiles*lc.P), f32Bytes(make([]float32, guard))...)
	tgtInit := append(append(append([]byte(nil), tb...), nan(lc.P)...), f32Bytes(make([]float32, guard))...)
	for i := range guard {
		binary.LittleEndian.PutUint32(partInit[8*tiles*lc.P+4*i:], math.Float32bits(guardOut))
		binary.LittleEndian.PutUint32(tgtInit[8*lc.P+4*i:], math.Float32bits(guardOut))
	}
	wsize := uint64(len(wb) / lc.V) // bytes per wte row
	hBuf, wBuf := d.buffer(t, "h", hb), d.buffer(t, "wte", wb)
	part, tgt := d.buffer(t, "part", partInit), d.buffer(t, "targets", tgtInit)
	for _, rg := range ranges {
		d.run(t, lp, map[string]Buf{
			"h": {Buffer: hBuf, Size: uint64(len(hb))}, "wte": {Buffer: wBuf, Offset: uint64(rg[0]) * wsize, Size: uint64(rg[1]) * wsize},
			"targets": {Buffer: tgt, Size: uint64(8 * lc.P)}, "part": {Buffer: part, Size: uint64(8 * tiles * lc.P)},
		}, Params{"P": float64(lc.P), "C": float64(lc.C), "V": float64(rg[1]), "v0": float64(rg[0])}, groups(rg[1]))
	}
	nll := red.run(t, d, Buf{Buffer: part, Size: uint64(8 * tiles * lc.P)}, Buf{Buffer: tgt, Size: uint64(8 * lc.P)}, lc.P, tiles)
	for _, g := range []struct {
		what string
		got  []float32
		n    int
	}{{"part", d.readF32(t, part, 2*tiles*lc.P+guard), 2 * tiles * lc.P}, {"targets", d.readF32(t, tgt, 2*lc.P+guard), 2 * lc.P}} {
		for i, v := range g.got[g.n:] {
			if v != guardOut {
				t.Errorf("%s: guard %d after the end = %v: written out of bounds", g.what, i, v)
			}
		}
	}
	if ids := f32Bytes(d.readF32(t, tgt, len(tb)/4)); string(ids) != string(tb) {
		t.Errorf("targets: the ids were written over")
	}
	return nll
}

// TestLossShared runs lmhead_loss_shared.wgsl then the reduction
// (nll_combine.wgsl) and compares nll with refops.NLL, and with lmhead_loss.wgsl's (through the same
// reduction) on the same inputs, for both weight types and five tilings (the
// default BM 64, VT 128, BK 8, 8 x 8 per invocation, and at BM 32, which
// must give the same bits; 4 x 4, 8 x 4 per invocation, smaller blocks and
// tiles) with slices of 1 to 4 tiles, on sizes
// where P, C and V are multiples of none of the tiles (P 1, 37 and 70, C 24,
// 40 and 36, V 1000, 333 and 270), with wte bound whole and in two ranges
// (second v0 512, 256 or 128: a whole number of slices). Targets include 0,
// V-1 and the first and last id of tiles and of the second range; some slices
// (V 270: the last holds 14 ids) leave invocations without a valid id.
// Tolerance 1e-5 relative to max(1, |want|) for nll (f32 dots of at most 40
// terms, exp and log of sums over up to 1000 tokens), 1e-5 relative for the
// sums, and 1e-5 relative to max(1, |nll|) between the two kernels (both add a
// dot in c order; they differ in where they rescale the sums). A second run
// must give bit-identical nll and sums.
func TestLossShared(t *testing.T) {
	d := newTestDev(t)
	cases := []lossCase{{37, 24, 1000, 0}, {37, 24, 1000, 512}, {70, 40, 333, 0}, {70, 40, 333, 128}, {1, 36, 270, 0}, {37, 36, 270, 256}}
	type tiling struct{ bm, vt, bk, tm, tn, nt int }
	tilings := []tiling{{64, 128, 8, 8, 8, 1}, {64, 128, 8, 8, 8, 2}, {32, 128, 8, 8, 8, 2}, {64, 64, 16, 4, 4, 2}, {16, 32, 8, 4, 4, 4}, {16, 32, 8, 8, 4, 3}}
	// BM 32 is the host's where a device's workgroup memory is below BM 64's
	// (lmSharedRows): the same bits.
	same := [2]tiling{{64, 128, 8, 8, 8, 2}, {32, 128, 8, 8, 8, 2}}
	red := newLossReducer(t, d)
	for ci, lc := range cases {
		h := randF32(uint64(21+ci), lc.P*lc.C, 0, 1)
		r := rand.New(rand.NewPCG(uint64(31+ci), 0x5eed))
		targets := make([]int32, lc.P)
		for i := range targets {
			targets[i] = int32(r.IntN(lc.V))
		}
		edges := []int32{0, int32(lc.V - 1)}
		for _, e := range []int32{31, 32, 63, 64, 127, 128, 255, 256, 511, 512, 959, 960} {
			if int(e) < lc.V {
				edges = append(edges, e)
			}
		}
		copy(targets, edges)
		targets[lc.P-1] = int32(lc.V - 1)
		tb := make([]byte, 4*lc.P)
		for i, v := range targets {
			binary.LittleEndian.PutUint32(tb[4*i:], uint32(v))
		}
		for _, f16 := range d.weightTypes() {
			wte := randF32(uint64(41+ci), lc.V*lc.C, 0, 0.5)
			wb := weightBytes(wte, f16)
			want := refops.NLL(f64(h), f64(wte), targets, lc.P, lc.C, lc.V)
			sharedK, err := NewKernel(d.dev, "lmhead_loss_shared.wgsl", f16)
			if err != nil {
				t.Fatal(err)
			}
			plainK, err := NewKernel(d.dev, "lmhead_loss.wgsl", f16)
			if err != nil {
				t.Fatal(err)
			}
			byTiling := map[tiling][]float32{}
			for _, tl := range tilings {
				if lc.split%(tl.vt*tl.nt) != 0 {
					continue // a range starts at a whole slice
				}
				t.Run(fmt.Sprintf("P=%d/C=%d/V=%d/split=%d/f16=%v/BM=%d,VT=%d,BK=%d,TM=%d,TN=%d,NT=%d", lc.P, lc.C, lc.V, lc.split, f16, tl.bm, tl.vt, tl.bk, tl.tm, tl.tn, tl.nt), func(t *testing.T) {
					lp, err := sharedK.Pipeline(map[string]float64{"BM": float64(tl.bm), "VT": float64(tl.vt), "BK": float64(tl.bk), "TM": float64(tl.tm), "TN": float64(tl.tn), "NT": float64(tl.nt)})
					if err != nil {
						t.Fatal(err)
					}
					groups := func(n int) [3]uint32 { return lossSharedGroups(lc.P, n, tl.bm, tl.vt, tl.nt) }
					var nll []float32
					for run := range 2 {
						again := lossOut(t, d, lp, red, lc, tl.vt*tl.nt, f32Bytes(h), wb, tb, groups)
						if run == 0 {
							nll = again
							checkClose(t, "nll", nll, want, 1e-5)
						} else if !bitsEqual(nll, again) {
							t.Errorf("nll: second run differs from the first: not bit-identical")
						}
					}
					pp, err := plainK.Pipeline(map[string]float64{"VT": float64(tl.vt)})
					if err != nil {
						t.Fatal(err)
					}
					plain := lossOut(t, d, pp, red, lc, tl.vt, f32Bytes(h), wb, tb, func(n int) [3]uint32 {
						return [3]uint32{uint32(ceilDiv(ceilDiv(lc.P, 4), int(pp.WorkgroupSize[0]))), uint32(ceilDiv(n, tl.vt)), 1}
					})
					checkClose(t, "nll vs lmhead_loss.wgsl", nll, f64(plain), 1e-5)
					byTiling[tl] = nll
				})
			}
			if a, b := byTiling[same[0]], byTiling[same[1]]; a != nil && b != nil && !bitsEqual(a, b) {
				t.Errorf("P=%d/C=%d/V=%d/split=%d/f16=%v: BM %d and BM %d give different bits", lc.P, lc.C, lc.V, lc.split, f16, same[0].bm, same[1].bm)
			}
		}
	}
}

// TestGPT2SharedLMHead runs the whole peaked tiny model (C 16, GPT-2's 50257
// ids) with the hardware kernels against the CPU path (mean NLL within 1e-5),
// with lmhead_loss_shared.wgsl's slices of 8 tiles (the default: 50 slices of
// 1024 ids, the last 81) and of 3, wte bound whole and in ranges of 2 and 3
// slices (bindLimit): every binding gives the same sums, bit for bit, as do
// reruns. From the profile, its geometry: one LM-head dispatch per range,
// ceil(P/64) x (the range's slices) workgroups in all, and the reduction over
// ceil(P/256) > 1 workgroups of nll_combine.wgsl.
func TestGPT2SharedLMHead(t *testing.T) {
	d := newTestDev(t)
	ctx := context.Background()
	for _, nt := range []int{sharedSliceTiles, 3} {
		// A model per slice size: its arenas hold the partials of its slices.
		g, seqs, want := newPeakedGPT2(t, d, func(c model.Config) []model.Sequence { return zipfSeqs(24, 20, c.NPositions, c.VocabSize) })
		g.sharedMatmul, g.vt, g.sliceTiles = true, sharedVocabTile, nt // the kernels of hardware GPUs
		profiled := g.SetProfiling(true) == nil
		V, C := g.cfg.VocabSize, g.cfg.NEmbd
		var whole model.LossSums
		for _, k := range []int{0, 2, 3} { // slices per range; 0: wte whole
			g.bindLimit = k * nt * g.vt * C * g.weightBytes()
			ranges := g.wteRanges()
			name := fmt.Sprintf("NT=%d/ranges=%d", nt, len(ranges))
			if k > 0 && len(ranges) != ceilDiv(ceilDiv(V, nt*g.vt), k) {
				t.Fatalf("%s: %d ranges of %d slices for %d ids", name, len(ranges), k, V)
			}
			p, err := g.Submit(ctx, seqs, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			again, err := g.Loss(ctx, seqs)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: mean NLL gpu %.7f, cpu %.7f", name, got.Sum.Float64()/float64(got.Count), want.Sum.Float64()/float64(want.Count))
			switch {
			case got.Count != want.Count || meanDiff(got, want) > 1e-5:
				t.Errorf("%s: %+v, cpu %+v", name, got, want)
			case again != got:
				t.Errorf("%s: rerun %+v, first %+v: not bit-identical", name, again, got)
			case k == 0:
				whole = got
			case got != whole:
				t.Errorf("%s: %+v, wte whole %+v: not bit-identical", name, got, whole)
			}
			if !profiled {
				continue
			}
			P := got.Count
			wantWG := map[string][2]uint64{"nll_combine": {1, uint64(ceilDiv(P, nllCombineWG))}}
			var lm uint64
			for _, r := range ranges {
				lm += uint64(ceilDiv(P, sharedLMHeadRows) * ceilDiv(r[1]-r[0], nt*g.vt))
			}
			wantWG["lmhead_loss_shared"] = [2]uint64{uint64(len(ranges)), lm}
			for _, kt := range p.Profile() {
				if w, ok := wantWG[kt.Kernel]; ok {
					if uint64(kt.Dispatches) != w[0] || kt.Workgroups != w[1] {
						t.Errorf("%s: %s: %d dispatches, %d workgroups; want %d, %d", name, kt.Kernel, kt.Dispatches, kt.Workgroups, w[0], w[1])
					}
					delete(wantWG, kt.Kernel)
				}
			}
			if len(wantWG) != 0 {
				t.Errorf("%s: no profile of %v", name, wantWG)
			}
			if P <= nllCombineWG {
				t.Errorf("%d targets: too few to spread the reduction over workgroups", P)
			}
		}
	}
}

// TestHeadBlock runs include/headblock.wgsl's headBlock, the LM head kernels'
// numbering of their workgroups, on dispatches of one to several groups of
// GX blocks (the default, and the group sizes the autotuner sets), the last
// group whole or not, and one to several slices:
// every (block, slice) of the grid is taken by exactly one workgroup, and
// the workgroups of each group (GX * slices of them in order of their
// linear id) take that group's blocks only.
func TestHeadBlock(t *testing.T) {
	d := newTestDev(t)
	inc, err := sources.ReadFile("include/headblock.wgsl")
	if err != nil {
		t.Fatal(err)
	}
	text := string(inc)
	i := strings.Index(text, "override GX: u32 = ")
	if i < 0 {
		t.Fatal("include/headblock.wgsl: no GX")
	}
	def := 0
	if _, err := fmt.Sscanf(text[i:], "override GX: u32 = %du;", &def); err != nil || def < 2 {
		t.Fatalf("include/headblock.wgsl: GX %d: %v", def, err)
	}
	src := `@group(0) @binding(0) var<storage, read_write> took: array<u32>; // per linear id: block | slice << 16
` + text[i:] + `
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let b = headBlock(wid, nwg);
	took[wid.y * nwg.x + wid.x] = b.x | (b.y << 16u);
}
`
	k, err := compileKernel(d.dev, "headblock.wgsl", wgsl.Expanded{Text: src}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, gx := range []int{def, 2, 3, 8, 32} { // the default, and group sizes the autotuner may set (headGroupSizes)
		consts := constSet{}
		if gx != def {
			consts = consts.with("GX", float64(gx))
		}
		p, err := k.pipeline(consts)
		if err != nil {
			t.Fatal(err)
		}
		checkHeadBlock(t, d, p, gx)
	}
}

// checkHeadBlock runs p, include/headblock.wgsl's numbering with group size
// gx, on grids around gx and checks that each workgroup takes a block of
// its group and every (block, slice) is taken once.
func checkHeadBlock(t *testing.T, d *testDev, p *Pipeline, gx int) {
	t.Helper()
	for _, g := range [][2]int{{1, 1}, {3, 4}, {gx, 1}, {gx, 3}, {gx + 1, 2}, {2*gx + 5, 3}, {3 * gx, 5}, {gx - 1, 7}} {
		nx, ny := g[0], g[1]
		out := d.buffer(t, "took", make([]byte, 4*nx*ny))
		d.run(t, p, map[string]Buf{"took": {Buffer: out}}, nil, [3]uint32{uint32(nx), uint32(ny), 1})
		raw := make([]byte, 4*nx*ny)
		if err := d.dev.Queue().ReadBuffer(out, 0, raw); err != nil {
			t.Fatal(err)
		}
		seen := make([]int, nx*ny)
		for l := range nx * ny {
			v := binary.LittleEndian.Uint32(raw[4*l:])
			x, y := int(v&0xffff), int(v>>16)
			if x >= nx || y >= ny {
				t.Fatalf("GX %d, grid %dx%d: workgroup %d takes (%d, %d), outside", gx, nx, ny, l, x, y)
			}
			seen[y*nx+x]++
			if grp := l / (gx * ny); x/gx != grp {
				t.Errorf("GX %d, grid %dx%d: workgroup %d (group %d) takes block %d", gx, nx, ny, l, grp, x)
			}
		}
		for c, n := range seen {
			if n != 1 {
				t.Errorf("GX %d, grid %dx%d: (%d, %d) taken %d times", gx, nx, ny, c%nx, c/nx, n)
			}
		}
	}
}

// TestLMSharedRows checks lmhead_loss_shared.wgsl's workgroup memory as its
// declarations add it up (hs 2·8·17 vec4s, ws 2·8·33, red BM·16 f32, tgs BM
// u32) and the BM the host picks for a device's limit: 64 where its 17,152
// bytes fit, else 32 (Vulkan's guaranteed 16 KiB).
func TestLMSharedRows(t *testing.T) {
	if got, want := lmSharedBytes(64), 2*8*17*16+2*8*33*16+64*16*4+64*4; got != want || got != 17152 {
		t.Errorf("BM 64: %d bytes, want %d", got, want)
	}
	if got, want := lmSharedBytes(32), 2*8*9*16+2*8*33*16+32*16*4+32*4; got != want {
		t.Errorf("BM 32: %d bytes, want %d", got, want)
	}
	for _, c := range []struct{ limit, bm int }{{16384, 32}, {17151, 32}, {17152, 64}, {32768, 64}, {65536, 64}} {
		if got := lmSharedRows(c.limit); got != c.bm || lmSharedBytes(got) > c.limit {
			t.Errorf("limit %d: BM %d (%d bytes), want %d", c.limit, got, lmSharedBytes(got), c.bm)
		}
	}
}

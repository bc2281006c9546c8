package shaders

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// attnCase is one attention test shape: B sequences of L rows, C query
// channels in H heads, KV key/value heads (0: H, GPT-2's layout), a cache of
// S >= L positions.
type attnCase struct{ B, L, C, H, KV, S int }

// kv is the key/value heads.
func (c attnCase) kv() int { return cmp.Or(c.KV, c.H) }

// ld is the row length of qkv: q | k | v.
func (c attnCase) ld() int { return c.C + 2*c.kv()*c.C/c.H }

var attnCases = []attnCase{
	{B: 2, L: 13, C: 16, H: 2, S: 16},  // hd = 8
	{B: 2, L: 13, C: 128, H: 2, S: 16}, // hd = 64, GPT-2's
}

// gqaCases are grouped-query shapes (the Llama family's): the cache is
// filled on the host, as rope_kv_write.wgsl would write it.
var gqaCases = []attnCase{
	{B: 2, L: 11, C: 48, H: 4, KV: 2, S: 13}, // hd = 12, groups of 2
	{B: 1, L: 9, C: 256, H: 2, KV: 1, S: 9},  // hd = 128, the kernels' maximum
	{B: 2, L: 10, C: 96, H: 6, KV: 3, S: 12}, // hd = 16
	{B: 1, L: 7, C: 64, H: 4, KV: 1, S: 7},   // hd = 16, one key/value head
}

// attnKernels compiles kv_write.wgsl and attention.wgsl for head size hd,
// with their default workgroup size.
func attnKernels(t *testing.T, d *testDev, hd int) (kvw, att *Pipeline) {
	t.Helper()
	for _, x := range []struct {
		name   string
		consts map[string]float64
		p      **Pipeline
	}{{"kv_write.wgsl", nil, &kvw}, {"attention.wgsl", map[string]float64{"HD": float64(hd)}, &att}} {
		k, err := NewKernel(d.dev, x.name, false)
		if err != nil {
			t.Fatal(err)
		}
		if *x.p, err = k.Pipeline(x.consts); err != nil {
			t.Fatal(err)
		}
	}
	return kvw, att
}

// chunkRows is rows pos0 .. pos0+n-1 of every sequence of x (B sequences of L
// rows of w values), as a (B*n, w) matrix.
func chunkRows(x []float32, B, L, w, pos0, n int) []float32 {
	out := make([]float32, 0, B*n*w)
	for b := range B {
		out = append(out, x[(b*L+pos0)*w:(b*L+pos0+n)*w]...)
	}
	return out
}

// attnRun processes qkv (B*L, ld) in chunks of chunk rows per sequence: for
// each, kv_write then attention with pos0 the chunk's first position (for
// grouped heads, the cache is filled on the host first: kv_write.wgsl is
// GPT-2's). It returns out (B*L, C) and the cache kc, vc (B, KV, S, hd).
func attnRun(t *testing.T, d *testDev, kvw, att *Pipeline, c attnCase, qkv []float32, chunk int) (out, kc, vc []float32) {
	return attnRunWith(t, d, kvw, att, func(n int) [3]uint32 {
		return [3]uint32{uint32(ceilDiv(c.B*c.H*n, int(att.WorkgroupSize[0]))), 1, 1}
	}, c, qkv, chunk)
}

// attnRunWith is attnRun with the attention kernel's workgroups for a chunk of
// n rows per sequence given by groups.
func attnRunWith(t *testing.T, d *testDev, kvw, att *Pipeline, groups func(n int) [3]uint32, c attnCase, qkv []float32, chunk int) (out, kc, vc []float32) {
	t.Helper()
	hd, KV, ld := c.C/c.H, c.kv(), c.ld()
	cacheN := c.B * KV * c.S * hd
	kcb := d.buffer(t, "kc", make([]byte, 4*cacheN))
	vcb := d.buffer(t, "vc", make([]byte, 4*cacheN))
	if KV != c.H {
		kh, vh := hostCache(c, qkv)
		d.dev.Queue().WriteBuffer(kcb, 0, f32Bytes(kh))
		d.dev.Queue().WriteBuffer(vcb, 0, f32Bytes(vh))
	}
	out = make([]float32, c.B*c.L*c.C)
	for pos0 := 0; pos0 < c.L; pos0 += chunk {
		n := min(chunk, c.L-pos0)
		qb := d.buffer(t, "qkv", f32Bytes(chunkRows(qkv, c.B, c.L, ld, pos0, n)))
		ob := d.buffer(t, "out", make([]byte, 4*c.B*n*c.C))
		params := Params{"B": float64(c.B), "T": float64(n), "C": float64(c.C), "H": float64(c.H), "S": float64(c.S), "pos0": float64(pos0)}
		if KV == c.H {
			d.run(t, kvw, map[string]Buf{"qkv": {Buffer: qb}, "kc": {Buffer: kcb}, "vc": {Buffer: vcb}}, params,
				[3]uint32{uint32(ceilDiv(c.B*n*c.C/4, int(kvw.WorkgroupSize[0]))), 1, 1})
		}
		params["KV"], params["ld"], params["lscale"] = float64(KV), float64(ld), 1
		d.run(t, att, map[string]Buf{"qkv": {Buffer: qb}, "kc": {Buffer: kcb}, "vc": {Buffer: vcb}, "out": {Buffer: ob}}, params, groups(n))
		got := d.readF32(t, ob, c.B*n*c.C)
		for b := range c.B {
			copy(out[(b*c.L+pos0)*c.C:], got[b*n*c.C:(b+1)*n*c.C])
		}
	}
	return out, d.readF32(t, kcb, cacheN), d.readF32(t, vcb, cacheN)
}

// hostCache is the cache (B, KV, S, hd) of keys and values of qkv (B*L, ld)
// at positions 0 .. L-1, zeros past them.
func hostCache(c attnCase, qkv []float32) (kc, vc []float32) {
	hd, KV, ld := c.C/c.H, c.kv(), c.ld()
	kc, vc = make([]float32, c.B*KV*c.S*hd), make([]float32, c.B*KV*c.S*hd)
	for b := range c.B {
		for s := range c.L {
			row := qkv[(b*c.L+s)*ld:]
			for g := range KV {
				dst := ((b*KV+g)*c.S + s) * hd
				copy(kc[dst:dst+hd], row[c.C+g*hd:])
				copy(vc[dst:dst+hd], row[c.C+(KV+g)*hd:])
			}
		}
	}
	return kc, vc
}

// attnRef is refops.Attention per sequence of qkv (B*L, ld), as (B*L, C):
// with grouped heads, each query head's key/value head repeated (as
// transformers' repeat_kv does).
func attnRef(c attnCase, qkv []float32) []float64 {
	x := f64(qkv)
	hd, KV, ld := c.C/c.H, c.kv(), c.ld()
	want := make([]float64, 0, c.B*c.L*c.C)
	for b := range c.B {
		q, k, v := make([]float64, 0, c.L*c.C), make([]float64, 0, c.L*c.C), make([]float64, 0, c.L*c.C)
		for t := range c.L {
			r := x[(b*c.L+t)*ld:]
			q = append(q, r[:c.C]...)
			for h := range c.H {
				g := h / (c.H / KV)
				k = append(k, r[c.C+g*hd:][:hd]...)
				v = append(v, r[c.C+(KV+g)*hd:][:hd]...)
			}
		}
		want = append(want, refops.Attention(q, k, v, c.L, c.C, c.H)...)
	}
	return want
}

// TestAttention compares kv_write.wgsl + attention.wgsl with refops.Attention,
// per sequence, for the whole window at once (pos0 = 0, T = L) and for a
// chunked prefill of 5 rows per chunk (pos0 = 0, 5, 10), whose results must
// equal the whole window's within 1e-6. Tolerance against float64 2e-5
// relative: f32 dot products of up to 64 terms, exp and an online softmax
// over up to 13 keys.
func TestAttention(t *testing.T) {
	d := newTestDev(t)
	for i, c := range append(slices.Clone(attnCases), gqaCases...) {
		t.Run(fmt.Sprintf("hd=%d,H=%d,KV=%d", c.C/c.H, c.H, c.kv()), func(t *testing.T) {
			kvw, att := attnKernels(t, d, c.C/c.H)
			qkv := randF32(uint64(10+i), c.B*c.L*c.ld(), 0, 1)
			want := attnRef(c, qkv)
			whole, _, _ := attnRun(t, d, kvw, att, c, qkv, c.L)
			checkClose(t, "attention whole", whole, want, 2e-5)
			chunked, _, _ := attnRun(t, d, kvw, att, c, qkv, 5)
			checkClose(t, "attention chunked vs reference", chunked, want, 2e-5)
			checkClose(t, "attention chunked vs whole", chunked, f64(whole), 1e-6)
		})
	}
}

// TestKVWrite checks that chunked kv_write.wgsl puts k and v of every row at
// its position in the cache, exactly, and leaves positions >= L untouched.
func TestKVWrite(t *testing.T) {
	d := newTestDev(t)
	c := attnCases[0]
	hd := c.C / c.H
	kvw, att := attnKernels(t, d, hd)
	qkv := randF32(20, c.B*c.L*3*c.C, 0, 1)
	_, kc, vc := attnRun(t, d, kvw, att, c, qkv, 5)
	wantK, wantV := make([]float64, len(kc)), make([]float64, len(vc))
	for b := range c.B {
		for h := range c.H {
			for s := range c.L {
				for i := range hd {
					dst := ((b*c.H+h)*c.S+s)*hd + i
					src := (b*c.L+s)*3*c.C + h*hd + i
					wantK[dst], wantV[dst] = float64(qkv[src+c.C]), float64(qkv[src+2*c.C])
				}
			}
		}
	}
	checkClose(t, "kc", kc, wantK, 0)
	checkClose(t, "vc", vc, wantV, 0)
}

// TestAttentionShared compares kv_write.wgsl + attention_shared.wgsl and
// attention_shared_subgroup.wgsl (the flash-attention kernels of hardware
// GPUs without matrix units) with refops.Attention, whole and in chunks,
// for blocks of queries and tiles of keys that do not divide the rows
// (several blocks, a partial last tile, masked tiles skipped), at the
// blockings of CPU drivers (softwareAttnTiles) and of GPUs
// (defaultAttnTiles, with one invocation per query and with QS 4, as
// attnTilesFor gives at head sizes 64, 80 and 128), odd ones, and rows
// split over 2 and 4 invocations at every head size that allows it (8 to
// 128; 80 with 5 vec4s an invocation at QS 4; 12 and 20, odd counts of
// vec4s, only whole), and checks that a rerun is bit-identical. The split
// blockings need subgroups whose size QS divides (skipped elsewhere).
// Tolerances as TestAttention's.
func TestAttentionShared(t *testing.T) {
	d := newTestDev(t)
	kvw, _ := attnKernels(t, d, 64)
	kernels := map[string]*Kernel{}
	cases := append(slices.Clone(attnCases),
		attnCase{B: 3, L: 29, C: 48, H: 4, S: 31},  // hd = 12
		attnCase{B: 2, L: 70, C: 24, H: 2, S: 75},  // two blocks of 64 queries, a partial third tile of 32 keys
		attnCase{B: 1, L: 70, C: 160, H: 2, S: 70}, // hd = 80 (Phi's), two blocks of 64 queries
		attnCase{B: 2, L: 9, C: 40, H: 2, S: 11},   // hd = 20
	)
	cases = append(cases, gqaCases...)
	split := attnTiles{BQ: 64, BKV: 32, QS: 4}
	for _, tiles := range []attnTiles{defaultAttnTiles, softwareAttnTiles, {BQ: 8, BKV: 4}, {BQ: 4, BKV: 12}, split, {BQ: 16, BKV: 16, QS: 2}, {BQ: 4, BKV: 12, QS: 4}} {
		for i, c := range cases {
			hd := c.C / c.H
			if hd/4%tiles.qs() != 0 {
				continue
			}
			t.Run(fmt.Sprintf("BQ=%d,BKV=%d,QS=%d/B=%d,L=%d,hd=%d,KV=%d", tiles.BQ, tiles.BKV, tiles.qs(), c.B, c.L, hd, c.kv()), func(t *testing.T) {
				if tiles.sharedBytes(hd) > int(d.dev.Limits().MaxComputeWorkgroupStorageSize) {
					t.Skipf("%d bytes of workgroup memory", tiles.sharedBytes(hd))
				}
				if tiles.invocations() > int(d.dev.Limits().MaxComputeInvocationsPerWorkgroup) {
					t.Skipf("%d invocations", tiles.invocations())
				}
				if sg := int(d.dev.Limits().SubgroupSize); tiles.qs() > 1 && (!d.dev.HasFeature(wgpu.FeatureSubgroups) || sg%tiles.qs() != 0) {
					t.Skipf("QS %d: subgroups %v, of %d", tiles.qs(), d.dev.HasFeature(wgpu.FeatureSubgroups), sg)
				}
				k := kernels[tiles.kernel()]
				if k == nil {
					var err error
					if k, err = NewKernel(d.dev, tiles.kernel(), false); err != nil {
						t.Fatal(err)
					}
					kernels[tiles.kernel()] = k
				}
				att, err := k.Pipeline(tiles.constants(hd))
				if err != nil {
					t.Fatal(err)
				}
				groups := func(n int) [3]uint32 { return grid(tiles.groups(c.B, c.H, n)) }
				qkv := randF32(uint64(30+i), c.B*c.L*c.ld(), 0, 1)
				want := attnRef(c, qkv)
				whole, _, _ := attnRunWith(t, d, kvw, att, groups, c, qkv, c.L)
				checkClose(t, "whole", whole, want, 2e-5)
				again, _, _ := attnRunWith(t, d, kvw, att, groups, c, qkv, c.L)
				checkClose(t, "rerun", again, f64(whole), 0)
				chunked, _, _ := attnRunWith(t, d, kvw, att, groups, c, qkv, 5)
				checkClose(t, "chunked vs reference", chunked, want, 2e-5)
			})
		}
	}
}

// TestAttentionLoopLimit: attention.wgsl and attention_shared.wgsl (at the
// software blocking) over more keys than Mesa's llvmpipe would let an
// invocation loop if the loops over a head's channels were not unrolled
// (1100 keys x (2*32 + 1) at head size 128, 2100 x (2*16 + 1) at 64: above
// 65535 iterations), against refops.Attention (2e-5). On lavapipe this is
// what lets attnPositions be about the loop budget.
func TestAttentionLoopLimit(t *testing.T) {
	d := newTestDev(t)
	shared, err := NewKernel(d.dev, "attention_shared.wgsl", false)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []attnCase{{B: 1, L: 1100, C: 128, H: 1, S: 1100}, {B: 1, L: 2100, C: 64, H: 1, S: 2100}} {
		hd := c.C / c.H
		t.Run(fmt.Sprintf("hd=%d,L=%d", hd, c.L), func(t *testing.T) {
			kvw, att := attnKernels(t, d, hd)
			qkv := randF32(uint64(90+i), c.B*c.L*c.ld(), 0, 1)
			want := attnRef(c, qkv)
			got, _, _ := attnRun(t, d, kvw, att, c, qkv, c.L)
			checkClose(t, "attention.wgsl", got, want, 2e-5)
			if os.Getenv(raceCheckEnv) != "" && c.L > 2000 {
				// Race-checked, every access calls the check, and lavapipe cuts
				// this kernel short (zeros from query 1744 on): its loop limit,
				// hit by the instrumented code. The kernel's own loops, which
				// this test is about, pass unchecked.
				t.Skipf("attention_shared.wgsl at %d keys, race-checked: past lavapipe's loop limit", c.L)
			}
			tiles := softwareAttnTiles
			p, err := shared.Pipeline(tiles.constants(hd))
			if err != nil {
				t.Fatal(err)
			}
			got, _, _ = attnRunWith(t, d, kvw, p, func(n int) [3]uint32 { return grid(tiles.groups(c.B, c.H, n)) }, c, qkv, c.L)
			checkClose(t, "attention_shared.wgsl", got, want, 2e-5)
		})
	}
}

// TestAttnQS checks the invocations per query row attnQS gives: 4 at the
// head sizes of released models (64, 80, 128) on subgroups of 4 or more, 2
// where 4 would leave fewer than 4 vec4s (32, 48) or the subgroup has 2,
// and 1 where the head's vec4s are odd (12, 20), too few (16) or the device
// has no subgroup of 2.
func TestAttnQS(t *testing.T) {
	for _, c := range []struct{ hd, sg, want int }{
		{64, 32, 4}, {64, 64, 4}, {80, 32, 4}, {128, 64, 4}, {128, 4, 4}, {128, 8, 4},
		{32, 32, 2}, {48, 32, 2}, {128, 2, 2}, {64, 6, 2},
		{12, 32, 1}, {20, 32, 1}, {16, 32, 1}, {8, 32, 1}, {128, 1, 1}, {64, 0, 1},
	} {
		if got := attnQS(c.hd, c.sg); got != c.want {
			t.Errorf("attnQS(%d, %d) = %d, want %d", c.hd, c.sg, got, c.want)
		}
	}
}

package model

import (
	"math"
	"slices"
)

// The sampler's selection: rank keys, the top K by a heap, the top-p nucleus
// bounded by a histogram of weights, and the fast exponential they use.

// rankKey is id's key in the sampler's ranking: ascending keys are descending
// logits, the lower id first on a tie. The high half orders the logit's bits
// (-0 as +0, NaN after -Inf, as cmp.Compare ranks them), the low half is the
// id.
func rankKey(v float32, id int32) uint64 {
	b := math.Float32bits(v)
	switch {
	case v != v:
		b = 0
	case v == 0:
		b = 1 << 31
	case b>>31 != 0:
		b = ^b
	default:
		b |= 1 << 31
	}
	return uint64(^b)<<32 | uint64(uint32(id))
}

// keyID is the id of a rank key.
func keyID(k uint64) int32 { return int32(uint32(k)) }

// topKeys returns the rank keys of the k best ids, sorted, in s.keys. One
// pass keeps the best k in a max-heap of keys (the worst kept on top); a
// logit below the worst kept one is skipped without building its key.
func (s *Sampler) topKeys(logits []float32, k int) []uint64 {
	s.keys = grow(s.keys, k)
	h := s.keys[:0]
	var worst float32 // the logit of h[0] once h is full
	for i, v := range logits {
		if len(h) < k {
			h = append(h, rankKey(v, int32(i)))
			for j := len(h) - 1; j > 0 && h[(j-1)/2] < h[j]; j = (j - 1) / 2 { // sift up
				h[j], h[(j-1)/2] = h[(j-1)/2], h[j]
			}
			worst = logits[keyID(h[0])]
			continue
		}
		if v < worst {
			continue
		}
		key := rankKey(v, int32(i))
		if key >= h[0] {
			continue
		}
		h[0] = key
		for j := 0; ; { // sift down
			m, l, r := j, 2*j+1, 2*j+2
			if l < k && h[l] > h[m] {
				m = l
			}
			if r < k && h[r] > h[m] {
				m = r
			}
			if m == j {
				break
			}
			h[j], h[m] = h[m], h[j]
			j = m
		}
		worst = logits[keyID(h[0])]
	}
	slices.Sort(h)
	return h
}

// rankAll returns the rank keys of all ids, sorted, in s.keys.
func (s *Sampler) rankAll(logits []float32) []uint64 {
	s.keys = grow(s.keys, len(logits))
	keys := s.keys
	for i, v := range logits {
		keys[i] = rankKey(v, int32(i))
	}
	slices.Sort(keys)
	return keys
}

// nucleusBuckets is the number of weight buckets of nucleus; bucketsPerNat of
// them span one unit of (max - logit) / temperature, the last one also
// everything beyond.
const (
	nucleusBuckets = 256
	bucketsPerNat  = 8
)

// nucleus draws by top-p from all ids (top-k off) and returns the id with
// Σ e^(logit - mx) (sumExp's sum).
//
// One pass adds every id's weight (by expm) into the total and into the
// histogram bucket of its (mx - logit) / temperature. The buckets hold
// ranges of the ranking, best first, so the shortest run of buckets whose
// weights reach TopP of the total bounds the nucleus: only the ids in it are
// ranked (bucket by bucket) and weighed by math.Exp, as drawRanked does, and
// the draw is the reference's. The total, added in id order by expm, may differ from the
// reference's (in rank order by math.Exp) in the last bits only, so a cut can
// differ only where the running sum meets TopP of the total to within
// rounding. Should the exact running sum of the run fall short of the target
// (such a rounding case), everything is ranked.
func (s *Sampler) nucleus(logits []float32, mx float64) (int32, float64) {
	T, p := s.opt.Temperature, s.opt.TopP
	s.bucket = grow(s.bucket, len(logits))
	bucket := s.bucket
	var mass [nucleusBuckets]float64
	var count [nucleusBuckets]int
	invT, scale := 1/T, bucketsPerNat/T
	var total, sum float64
	for i, v := range logits {
		x := float64(v) - mx
		w := expm(x * invT)
		b := uint8(nucleusBuckets - 1)
		if d := -x * scale; d < nucleusBuckets-1 { // false for NaN
			b = uint8(d)
		}
		bucket[i] = b
		mass[b] += w
		count[b]++
		total += w
		if T != 1 {
			sum += expm(x)
		}
	}
	if T == 1 {
		sum = total
	}
	target := p * total
	var cum float64
	last, n := -1, 0
	for b := range mass {
		cum += mass[b]
		n += count[b]
		if cum >= target {
			last = b
			break
		}
	}
	if last < 0 { // NaN logits, or rounding
		return s.drawRanked(logits, s.rankAll(logits)), sum
	}
	// The run's ids, by bucket (each bucket a range of the ranking), each
	// bucket then sorted on its own.
	s.keys = grow(s.keys, n)
	keys := s.keys
	var next [nucleusBuckets + 1]int // next[b]: where bucket b's next key goes
	for b := range last {
		next[b+1] = next[b] + count[b]
	}
	for i, b := range bucket {
		if int(b) <= last {
			keys[next[b]] = rankKey(logits[i], int32(i))
			next[b]++
		}
	}
	for b := 0; b <= last; b++ {
		slices.Sort(keys[next[b]-count[b] : next[b]])
	}
	s.prob = grow(s.prob, len(keys))
	prob := s.prob
	for i, k := range keys {
		prob[i] = math.Exp((float64(logits[keyID(k)]) - mx) / T)
	}
	n, cum, ok := cutAt(prob, target)
	if !ok {
		return s.drawRanked(logits, s.rankAll(logits)), sum
	}
	return keyID(keys[s.walk(prob[:n], cum)]), sum
}

// expm returns e^x for x <= 0, within 1 ulp (as math.Exp is, and within 2
// of math.Exp: TestSamplerExpm), and 0 for x < -700 (e^x < 1e-304: nothing next to
// the weight 1 of the largest logit). It is small enough to inline, and about
// 3 times faster than math.Exp in the sampler's loops. With x = k ln2/2048 + r,
// k the nearest integer: e^x = 2^(k/2048) e^r, 2^(k/2048) the bits of
// exp2Bits[k mod 2048] with k div 2048 added to the exponent, e^r = 1 + r +
// r²/2 + r³/6 (|r| <= ln2/4096: the first omitted term is below 4e-17).
func expm(x float64) float64 {
	if x < -700 {
		return 0
	}
	k := int(x*(2048/math.Ln2) - 0.5) // nearest (x <= 0: the conversion truncates towards 0)
	kf := float64(k)
	r := (x - kf*expLn2Hi) - kf*expLn2Lo
	tab := math.Float64frombits(exp2Bits[k&2047] + uint64(k>>11)<<52) // 2^(k/2048): the power of two added to the exponent
	return tab + tab*(r+r*r*(0.5+r*(1.0/6)))
}

// ln2/2048 in two parts (Cody and Waite's reduction): expLn2Hi keeps 29
// significant bits, so kf*expLn2Hi is exact for the |k| < 2^21 that
// x >= -700 gives, and expLn2Lo is the rest, from the exact constant math.Ln2.
const (
	expLn2Hi = 0x1.62e42fep-12
	expLn2Lo = math.Ln2/2048 - expLn2Hi
)

// exp2Bits[j] is the bits of 2^(j/2048).
var exp2Bits = func() (t [2048]uint64) {
	for j := range t {
		t[j] = math.Float64bits(math.Exp2(float64(j) / 2048))
	}
	return t
}()

package model

import (
	"errors"
	"math"
	"math/rand/v2"
)

// SampleOptions say how Sampler picks the next token from the logits, in the
// order Hugging Face's generate applies them: temperature, then top-k, then
// top-p (nucleus). The zero value is greedy decoding.
type SampleOptions struct {
	// Temperature divides the logits; 0 is greedy (the most likely token,
	// the lowest id on a tie), and so is a temperature so small (subnormal)
	// that 1/Temperature overflows, the limit.
	Temperature float64 `json:"temperature"`
	// TopK keeps only the K most likely tokens; 0 keeps all.
	TopK int `json:"top_k"`
	// TopP keeps the smallest set of most likely tokens whose probability
	// (after temperature and top-k) reaches TopP; 0 or 1 keeps all.
	TopP float64 `json:"top_p"`
	// Seed seeds the PCG random stream: the same seed, options and logits
	// give the same tokens.
	Seed uint64 `json:"seed"`
}

// Check reports an option out of range.
func (o SampleOptions) Check() error {
	switch {
	case o.Temperature < 0 || math.IsNaN(o.Temperature) || math.IsInf(o.Temperature, 0):
		return errors.New("temperature must be a finite number >= 0")
	case o.TopK < 0:
		return errors.New("top-k must not be negative")
	case o.TopP < 0 || o.TopP > 1 || math.IsNaN(o.TopP):
		return errors.New("top-p must be between 0 and 1")
	}
	return nil
}

// Sampler picks tokens from next-token logits on the host, in float64. It is
// not safe for concurrent use.
//
// The candidates are ranked by logit, the lower id first on a tie; their
// weights are e^((logit - max) / temperature). Top-k keeps the first K, top-p
// the shortest prefix of the ranking whose weights reach TopP of the total,
// and a uniform draw u in [0, total kept) picks the first candidate at which
// the running sum of weights passes u. Without top-k and top-p the candidates
// are all ids in id order.
//
// A Sampler ranks only the candidates that can matter: the top K by a heap,
// the top-p nucleus bounded by a histogram of the weights before any of it is
// sorted (sample_select.go). Ranked candidates are weighed by math.Exp and
// summed in rank order, as a sampler that sorts everything would; weights of
// every id (the total of top-p, temperature alone) come from expm, within an
// ulp of math.Exp, so a draw could only differ from that sampler's where u or
// the top-p cut falls within rounding of a boundary. TestSamplerMatchesReference
// checks tens of thousands of draws against such a sampler.
type Sampler struct {
	opt    SampleOptions
	rng    *rand.Rand
	keys   []uint64  // candidates' rank keys (rankKey); sorted: best first
	prob   []float64 // candidates' weights, in the order drawn
	bucket []uint8   // top-p: each id's weight bucket (nucleus)
}

// NewSampler returns a sampler with its own random stream seeded by opt.Seed.
func NewSampler(opt SampleOptions) (*Sampler, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	return &Sampler{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 0x5851f42d4c957f2d))}, nil
}

// Sample picks the next token from logits (V) and returns it with its
// log-probability under the model (log-softmax at temperature 1, whatever the
// sampling options, as LogSoftmax computes it). It allocates nothing once its
// buffers have grown to the vocabulary.
func (s *Sampler) Sample(logits []float32) (int32, float64) {
	o, V := s.opt, len(logits)
	arg, mx := maxLogit(logits)
	var id int32
	var sum float64 // Σ e^(logit - max), in id order (sumExp)
	switch {
	case o.Temperature == 0 || math.IsInf(1/o.Temperature, 1): // greedy, or its limit where 1/T overflows
		id, sum = arg, sumExp(logits, mx)
	case o.TopK > 0 && o.TopK < V:
		id, sum = s.topK(logits, o.TopK), sumExp(logits, mx)
	case o.TopP > 0 && o.TopP < 1:
		id, sum = s.nucleus(logits, mx)
	default:
		id, sum = s.all(logits, mx)
	}
	return id, float64(logits[id]) - mx - math.Log(sum)
}

// LogSoftmax returns ln softmax(logits)[id] in float64: logit - max -
// ln Σ e^(logit - max), the exponentials by expm (within an ulp, as
// math.Exp) added in id order.
func LogSoftmax(logits []float32, id int32) float64 {
	_, mx := maxLogit(logits)
	return float64(logits[id]) - mx - math.Log(sumExp(logits, mx))
}

// Argmax is the id of the largest logit, the lowest on a tie.
func Argmax(logits []float32) int32 {
	id, _ := maxLogit(logits)
	return id
}

// maxLogit returns the id of the largest logit (the lowest on a tie) and
// that logit.
func maxLogit(logits []float32) (int32, float64) {
	best, arg := logits[0], 0
	for i, v := range logits {
		if v > best {
			best, arg = v, i
		}
	}
	return int32(arg), float64(best)
}

// sumExp returns Σ e^(logit - mx) over logits, added in id order.
func sumExp(logits []float32, mx float64) float64 {
	var sum float64
	for _, v := range logits {
		sum += expm(float64(v) - mx)
	}
	return sum
}

// topK draws from the opt.TopK best ids (then top-p among them, if set).
func (s *Sampler) topK(logits []float32, k int) int32 {
	if k <= len(logits)/4 {
		return s.drawRanked(logits, s.topKeys(logits, k))
	}
	return s.drawRanked(logits, s.rankAll(logits)[:k]) // a heap of most of the vocabulary gains nothing
}

// drawRanked draws from the candidates keys (sorted, best first) as the
// reference does: weights by math.Exp in rank order, their total added in that
// order, top-p's cut, then the draw. The results are the reference's, bit for
// bit.
func (s *Sampler) drawRanked(logits []float32, keys []uint64) int32 {
	T := s.opt.Temperature
	s.prob = grow(s.prob, len(keys))
	prob := s.prob
	mx := float64(logits[keyID(keys[0])])
	var total float64
	for i, k := range keys {
		prob[i] = math.Exp((float64(logits[keyID(k)]) - mx) / T)
		total += prob[i]
	}
	if p := s.opt.TopP; p > 0 && p < 1 {
		if n, cum, ok := cutAt(prob, p*total); ok {
			prob, total = prob[:n], cum
		}
	}
	return keyID(keys[s.walk(prob, total)])
}

// all draws from every id in id order (temperature only), and returns the
// id with Σ e^(logit - mx) (sumExp's sum).
func (s *Sampler) all(logits []float32, mx float64) (int32, float64) {
	T := s.opt.Temperature
	invT := 1 / T
	s.prob = grow(s.prob, len(logits))
	prob := s.prob
	var total, sum float64
	for i, v := range logits {
		x := float64(v) - mx
		prob[i] = expm(x * invT)
		total += prob[i]
		if T != 1 {
			sum += expm(x)
		}
	}
	if T == 1 {
		sum = total // the same terms in the same order
	}
	return int32(s.walk(prob, total)), sum
}

// cutAt returns the shortest prefix of prob whose running sum reaches target,
// and that sum; ok is false when the whole of prob falls short.
func cutAt(prob []float64, target float64) (n int, cum float64, ok bool) {
	for i, w := range prob {
		cum += w
		if cum >= target {
			return i + 1, cum, true
		}
	}
	return len(prob), cum, false
}

// walk draws u uniform in [0, total) and returns the first index at which the
// running sum of prob passes u (the last one if rounding leaves u unspent).
// It takes exactly one number from the random stream.
func (s *Sampler) walk(prob []float64, total float64) int {
	u := s.rng.Float64() * total
	for i, w := range prob {
		u -= w
		if u < 0 {
			return i
		}
	}
	return len(prob) - 1
}

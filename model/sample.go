package model

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
)

// SampleOptions say how Sampler picks the next token from the logits, in the
// order Hugging Face's generate applies them: temperature, then top-k, then
// top-p (nucleus). The zero value is greedy decoding.
type SampleOptions struct {
	// Temperature divides the logits; 0 is greedy (the most likely token,
	// the lowest id on a tie).
	Temperature float64
	// TopK keeps only the K most likely tokens; 0 keeps all.
	TopK int
	// TopP keeps the smallest set of most likely tokens whose probability
	// (after temperature and top-k) reaches TopP; 0 or 1 keeps all.
	TopP float64
	// Seed seeds the PCG random stream: the same seed, options and logits
	// give the same tokens.
	Seed uint64
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
type Sampler struct {
	opt   SampleOptions
	rng   *rand.Rand
	order []int32   // token ids, sorted by logit when top-k or top-p is on
	prob  []float64 // scratch: weights of the candidates
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
// sampling options).
func (s *Sampler) Sample(logits []float32) (int32, float64) {
	id := s.pick(logits)
	return id, LogSoftmax(logits, id)
}

// LogSoftmax returns ln softmax(logits)[id] in float64.
func LogSoftmax(logits []float32, id int32) float64 {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = max(mx, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - mx)
	}
	return float64(logits[id]) - mx - math.Log(sum)
}

// Argmax is the id of the largest logit, the lowest on a tie.
func Argmax(logits []float32) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int32(best)
}

func (s *Sampler) pick(logits []float32) int32 {
	o := s.opt
	if o.Temperature == 0 {
		return Argmax(logits)
	}
	V := len(logits)
	if cap(s.order) < V {
		s.order = make([]int32, V)
		s.prob = make([]float64, V)
	}
	order, prob := s.order[:V], s.prob[:V]
	for i := range order {
		order[i] = int32(i)
	}
	n := V
	if (o.TopK > 0 && o.TopK < V) || (o.TopP > 0 && o.TopP < 1) {
		slices.SortFunc(order, func(a, b int32) int {
			return cmp.Or(cmp.Compare(logits[b], logits[a]), cmp.Compare(a, b))
		})
		if o.TopK > 0 {
			n = min(n, o.TopK)
		}
	}
	mx := math.Inf(-1)
	for _, id := range order[:n] {
		mx = max(mx, float64(logits[id]))
	}
	var total float64
	for i, id := range order[:n] {
		prob[i] = math.Exp((float64(logits[id]) - mx) / o.Temperature)
		total += prob[i]
	}
	if o.TopP > 0 && o.TopP < 1 { // order is sorted: keep the shortest prefix reaching TopP
		var cum float64
		for i := range n {
			cum += prob[i]
			if cum >= o.TopP*total {
				n, total = i+1, cum
				break
			}
		}
	}
	u := s.rng.Float64() * total
	for i := range n {
		u -= prob[i]
		if u < 0 {
			return order[i]
		}
	}
	return order[n-1] // u was within rounding of total
}

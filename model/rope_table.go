package model

// RopeTable is the rotary embedding's table of a Llama-family cfg for
// positions 0 .. n-1: cos[p*half+i] and sin[p*half+i] of the angle
// p·invFreq[i], i < HeadDim/2, with rope_scaling applied (yarn's
// amplitude too: both multiplied by RopeScaling.Amplitude), computed in
// float64 and rounded once to float32. These are the values the CPU forward
// rotates with; a backend that uploads the table (the GPU's
// rope_kv_write.wgsl) gets the same ones, so both rotate alike.
func RopeTable(cfg Config, n int) (cos, sin []float32) {
	half := cfg.HeadDim() / 2
	c, s := newRope(cfg).table(n)
	return c[: n*half : n*half], s[: n*half : n*half]
}

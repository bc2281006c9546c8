package shaders

import (
	"fmt"
	"strconv"
	"strings"
)

// maxConsts bounds the override constants one pipeline is created with
// (matmul_coop.wgsl's are the most: 7 of its tiling with WT, VEC and EPI).
const maxConsts = 9

// constSet is the override constants of a pipeline, sorted by name. It is
// comparable, so that it keys a kernel's pipelines without a string or a map
// made per dispatch; the zero value is no constants.
type constSet struct {
	n  int
	kv [maxConsts]constKV
}

// constKV is one override constant.
type constKV struct {
	name string
	v    float64
}

// consts is the set of the one constant name = v; with adds more.
func consts(name string, v float64) constSet { return constSet{}.with(name, v) }

// with is s with name set to v (added in order, or replaced). Past maxConsts
// it panics: the kernels have fewer.
func (s constSet) with(name string, v float64) constSet {
	i := 0
	for i < s.n && s.kv[i].name < name {
		i++
	}
	if i < s.n && s.kv[i].name == name {
		s.kv[i].v = v
		return s
	}
	if s.n == maxConsts {
		panic(fmt.Sprintf("shaders: more than %d override constants", maxConsts))
	}
	copy(s.kv[i+1:s.n+1], s.kv[i:s.n])
	s.kv[i] = constKV{name, v}
	s.n++
	return s
}

// constsOf is the set of the constants in m; more than maxConsts is an error.
func constsOf(m map[string]float64) (constSet, error) {
	if len(m) > maxConsts {
		return constSet{}, fmt.Errorf("%d override constants, at most %d", len(m), maxConsts)
	}
	var s constSet
	for k, v := range m {
		s = s.with(k, v)
	}
	return s, nil
}

// value is the value of name, if set.
func (s constSet) value(name string) (float64, bool) {
	for _, c := range s.kv[:s.n] {
		if c.name == name {
			return c.v, true
		}
	}
	return 0, false
}

// Map is the set as the map a pipeline descriptor takes (nil when empty).
func (s constSet) Map() map[string]float64 {
	if s.n == 0 {
		return nil
	}
	m := make(map[string]float64, s.n)
	for _, c := range s.kv[:s.n] {
		m[c.name] = c.v
	}
	return m
}

// String spells the set as "BK=8,BM=128": by name, for labels.
func (s constSet) String() string {
	var b strings.Builder
	for i, c := range s.kv[:s.n] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c.name + "=" + strconv.FormatFloat(c.v, 'g', -1, 64))
	}
	return b.String()
}

package wgsl

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// sgmStricterThanTint lists the subgroup matrix programs this compiler
// rejects on purpose though Tint (webgpu@0.6.2) accepts them, each with why.
var sgmStricterThanTint = map[string]string{
	"too_many_columns": "dimensions are at most 64: the lowered code holds whole matrices in every invocation",
	"float_shape":      "the proposal makes the dimensions integer expressions; Tint converts 8.0",
}

// sgmBeyondTint lists the valid subgroup matrix programs Tint rejects, each
// with why we accept them.
var sgmBeyondTint = map[string]string{
	"uniformity_rule_off": "the proposal's diagnostic chromium_experimental.subgroup_matrix_uniformity switches the uniformity check off; Tint 0.6.2 ignores it",
}

// TestTintOracleSubgroupMatrix checks the subgroup matrix programs against
// Tint with chromium-experimental-subgroup-matrix enabled: Tint must accept
// every program of sgmValid and reject every one of sgmInvalid, except the
// sgmBeyondTint and sgmStricterThanTint cases.
func TestTintOracleSubgroupMatrix(t *testing.T) {
	node, mods := prereq.Tint(t)
	type item = oracleItem
	var corpus []item
	for _, p := range sgmValid {
		corpus = append(corpus, item{p.name, p.src, true})
	}
	for _, p := range sgmInvalid {
		corpus = append(corpus, item{p.name, p.src, false})
	}
	res := runTintOracle(t, node, mods, corpus, len(corpus), "ORACLE_SUBGROUP_MATRIX=1")
	for i, r := range res {
		c := corpus[i]
		tintOK := len(r.Errors) == 0
		switch {
		case c.valid && tintOK && sgmBeyondTint[c.Name] != "":
			t.Errorf("%s: listed as beyond Tint, but Tint accepts it", c.Name)
		case c.valid && !tintOK && sgmBeyondTint[c.Name] == "":
			t.Errorf("%s: we accept it, Tint rejects it: %+v", c.Name, r.Errors)
		case !c.valid && tintOK && sgmStricterThanTint[c.Name] == "":
			t.Errorf("%s: we reject it, Tint accepts it", c.Name)
		case !c.valid && !tintOK && sgmStricterThanTint[c.Name] != "":
			t.Errorf("%s: listed as stricter than Tint, but Tint rejects it too: %+v", c.Name, r.Errors)
		}
	}
}

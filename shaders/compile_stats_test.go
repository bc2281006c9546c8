package shaders

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// compileStatsEnv turns TestCompileStatistics on: "-" to log its table, or
// the path of a JSON file to write it to as well.
const compileStatsEnv = "WGPU_TEST_COMPILE_STATS"

// TestKernelsCompileOnVulkanCompilers runs TestCompileStatistics once per
// compile-only driver $WGPU_TEST_VULKAN_COMPILERS lists (CI: Mesa 25's RADV
// on null hardware as an RX 7900 XTX, navi31, whose matrix units run the
// coop kernels, as an RX 6900, navi21, which has none, and as GCN's
// vega10 and polaris10, subgroups of 64), each in a child
// process that sees that driver only. So every kernel, and every tiling the
// autotuners offer, goes through a real GPU's shader compiler (AMD's ACO)
// on every run, not only the CPU drivers' and the validator: a module that
// spirv-val accepts can still be one a driver mistranslates or refuses.
func TestKernelsCompileOnVulkanCompilers(t *testing.T) {
	prereq.RunOnVulkanCompilers(t, compileStatsEnv, "-", "^TestCompileStatistics$", 10*time.Minute, "--- PASS: TestCompileStatistics")
}

// compileJob is a pipeline TestCompileStatistics compiles: a kernel and its
// constants, and whether it must not spill registers (every kernel at the
// constants the forward pass starts from: the defaults, which TuneOff
// keeps; the autotuners' other candidates may, since their timing decides).
type compileJob struct {
	label   string
	k       *Kernel
	consts  constSet
	noSpill bool
}

// compileRow is one pipeline's line of TestCompileStatistics's table: the
// driver's statistics by name, or why the pipeline failed.
type compileRow struct {
	Label      string         `json:"label"`
	NoSpill    bool           `json:"no_spill"`
	Statistics map[string]any `json:"statistics,omitempty"`
	Err        string         `json:"error,omitempty"`
}

// TestCompileStatistics compiles, for the adapter (WGPU_ADAPTER picks one),
// every kernel file at its default constants in both weight types, the
// _rows norm kernels with MAXV for rows of 768, 2048 and 4096 channels, the
// weight matmul at every autotuner tiling with every epilogue, and, where
// the device has matrix units, the coop matmul, LM head and attention at
// every tiling their autotuners offer (the GPT-2 124M shape, and head size
// 128 for attention), reads the driver's statistics of each
// (VK_KHR_pipeline_executable_properties) and logs them as a table (and
// writes them as JSON where $WGPU_TEST_COMPILE_STATS names a file). It
// fails when a pipeline cannot be created, or when one the forward pass
// starts from, or attention_coop.wgsl at head size 64 at any tiling,
// reports registers spilled to memory (a statistic whose name says
// "spill", as Mesa's drivers report it) but for attnSpills, or when any
// pipeline but scratchArrays' uses scratch memory without spilling (a
// register array left in memory). It needs
// $WGPU_TEST_COMPILE_STATS: compiling everything takes a real GPU's driver
// a minute or more, so only its parent test and device checks ask for it.
//
// The device is never closed: on RADV's null hardware, which can compile
// but not run, waiting for the device to be idle calls a function the
// driver does not have; the process ends right after.
func TestCompileStatistics(t *testing.T) {
	out := os.Getenv(compileStatsEnv)
	if out == "" {
		t.Skipf("set $%s to - (log) or a JSON path: compiles every kernel and tiling for the adapter and reports the driver's statistics", compileStatsEnv)
	}
	// Without the validation layer: Debian 12's predates the cooperative-matrix
	// SPIR-V these pipelines carry (the modules are validated by spirv-val in
	// the compiler's tests), and nothing here runs.
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{})
	if err != nil {
		prereq.Missing(t, "vulkan", err)
	}
	ad, err := inst.RequestAdapter(os.Getenv("WGPU_ADAPTER"))
	if err != nil {
		prereq.Missing(t, "vulkan", err)
	}
	info := ad.Info()
	t.Logf("adapter %s, driver %s %s", info.Name, info.DriverName, info.DriverInfo)
	if !ad.HasFeature(wgpu.FeaturePipelineStatistics) {
		t.Fatalf("%s: the driver reports no pipeline statistics (%s)", info.Name, wgpu.FeaturePipelineStatistics)
	}
	var feats []wgpu.FeatureName
	for _, f := range []wgpu.FeatureName{wgpu.FeaturePipelineStatistics, wgpu.FeatureShaderF16, wgpu.FeatureSubgroups,
		wgpu.FeatureSubgroupSizeControl, wgpu.FeatureCooperativeMatrix} {
		if ad.HasFeature(f) {
			feats = append(feats, f)
		}
	}
	dev, err := ad.RequestDevice(&wgpu.DeviceDescriptor{RequiredFeatures: feats, PipelineCacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	jobs := compileJobs(t, dev)
	rows := compileAll(jobs)
	logCompileTable(t, info.Name, rows)
	if out != "-" {
		b, err := json.MarshalIndent(map[string]any{"adapter": info, "pipelines": rows}, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rows {
		switch {
		case r.Err != "":
			t.Errorf("%s: %s", r.Label, r.Err)
		case r.NoSpill && spills(r.Statistics) != "":
			t.Errorf("%s: %s, at constants the forward pass starts from", r.Label, spills(r.Statistics))
		case spills(r.Statistics) == "" && scratch(r.Statistics) != "" && !slices.ContainsFunc(scratchArrays, func(k string) bool { return strings.HasPrefix(r.Label, k) }):
			t.Errorf("%s: %s without spills: a register array left in memory (an index the driver could not make constant)", r.Label, scratch(r.Statistics))
		}
	}
}

// compileJobs lists what TestCompileStatistics compiles on dev.
func compileJobs(t *testing.T, dev *wgpu.Device) []compileJob {
	t.Helper()
	var jobs []compileJob
	kernel := func(name string, f16 bool) *Kernel {
		k, err := NewKernel(dev, name, f16)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	f16s := []bool{false}
	if dev.HasFeature(wgpu.FeatureShaderF16) {
		f16s = append(f16s, true)
	}
	names, err := fs.Glob(sources, "*.wgsl")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_coop.wgsl") { // their tilings are written into the text: below
			continue
		}
		src, err := Source(name, false)
		if err != nil {
			t.Fatal(err)
		}
		if !dev.HasFeature(wgpu.FeatureSubgroups) && strings.Contains(src, "enable subgroups;") {
			continue
		}
		// A kernel of f16 arithmetic whatever the weights (to_f16.wgsl, which
		// only the matrix units' path runs) needs shader-f16, which GCN before
		// Vega lacks (polaris10): wgpu refuses its pipeline there.
		if !dev.HasFeature(wgpu.FeatureShaderF16) && regexp.MustCompile(`(?m)^enable f16;`).MatchString(src) {
			continue
		}
		for _, f16 := range f16s {
			k := kernel(name, f16)
			jobs = append(jobs, compileJob{label: k.Name(), k: k, noSpill: true})
		}
	}

	// The _rows norm kernels as the forward pass compiles them (newRowsKernel:
	// MAXV for the width), at GPT-2 124M's 768 channels, Llama 3.2 1B's 2048
	// and Llama 3 8B's 4096, where the row fits; held to no spills.
	wg := min(256, int(dev.Limits().MaxComputeInvocationsPerWorkgroup))
	if dev.HasFeature(wgpu.FeatureSubgroups) {
		for _, C := range []int{768, 2048, 4096} {
			for _, name := range []string{"layernorm_rows.wgsl", "rmsnorm_rows.wgsl"} {
				for _, f16 := range f16s {
					k, err := newRowsKernel(dev, name, f16, C)
					if err != nil {
						t.Fatal(err)
					}
					if k == nil {
						continue
					}
					cs := consts("WG", float64(wg))
					jobs = append(jobs, compileJob{label: fmt.Sprintf("%s{%s} C %d", k.k.Name(), cs, C), k: k.k, consts: cs, noSpill: true})
				}
			}
		}
	}

	// The weight matmul's autotuner tilings, with every epilogue.
	for _, f16 := range f16s {
		k := kernel("matmul_shared.wgsl", f16)
		for i, tl := range matmulCandidates {
			if tl.fits(dev) != nil {
				continue
			}
			for _, e := range slices.Sorted(maps.Keys(epilogueNames)) {
				cs := tl.constSet().with("EPI", float64(e))
				jobs = append(jobs, compileJob{label: k.Name() + "{" + cs.String() + "}", k: k, consts: cs, noSpill: i == 0})
			}
		}
	}

	// The SIMT attention of devices without matrix units, at the head sizes
	// released models use (64: GPT-2, Qwen2.5 0.5B, Llama 3.2 1B; 128: Llama
	// 2/3 8B, Llama 3.2 3B, Mistral, Qwen2.5 7B) and one between (80: the
	// kernel takes any multiple of 4), with its blocking for the device
	// (attnTilesFor: attention_shared_subgroup.wgsl with QS 4 where the
	// device has subgroups, as every AMD GPU does), held to no spills.
	for _, hd := range []int{64, 80, 128} {
		tl := attnTilesFor(dev, hd)
		k := kernel(tl.kernel(), false)
		cs := tl.constSet(hd)
		label := k.Name() + "{" + cs.String() + "}"
		jobs = append(jobs, compileJob{label: label, k: k, consts: cs, noSpill: true})
	}

	// The matrix units' kernels, at the tilings their autotuners offer for
	// GPT-2 124M (and attention at head size 128 too: Llama's).
	cfg, ok := pickMatrixConfig(deviceMatrixConfigs(dev))
	if !ok || !dev.HasFeature(wgpu.FeatureShaderF16) || !dev.HasFeature(wgpu.FeatureSubgroups) {
		t.Logf("%s: no matrix units the coop kernels can use", dev.AdapterInfo().Name)
		return jobs
	}
	mc := synth.GPT2Shape(12, 12, 768)
	g := &GPT2{dev: dev, cfg: mc, f16: true, sharedMatmul: true, vt: sharedVocabTile, positions: mc.NPositions}
	g.mu.Lock()
	defer g.mu.Unlock()
	ck, err := g.newCoopKernels(cfg)
	if err != nil {
		t.Fatal(err)
	}
	coop := func(tl coopTiles, def bool, cs constSet) {
		k, err := g.coopKernelFor(ck, tl)
		if err != nil {
			t.Fatalf("%v: %v", tl, err)
		}
		jobs = append(jobs, compileJob{label: k.Name() + "{" + cs.String() + "}", k: k, consts: cs, noSpill: def})
	}
	for i, tl := range g.coopCandidates(ck, mc.NEmbd) {
		for _, e := range slices.Sorted(maps.Keys(epilogueNames)) {
			coop(tl, i == 0, tl.constSet().with("EPI", float64(e)))
		}
	}
	for i, tl := range g.coopHeadCandidates(ck) {
		coop(tl, i == 0, tl.constSet())
	}
	// Attention: the autotuner's tilings at head sizes 64 (GPT-2, Qwen2.5,
	// Llama 3.2 1B) and 128 (Llama 2/3 8B, Mistral); at 64 every one must
	// compile without spills but those of attnSpills, at 128 the default.
	// And the defaults of head sizes 80 and 128 within NVIDIA's 48 KiB.
	for _, hd := range []int{64, 128} {
		def, err := attnCoopTilesFor(cfg, ck.mm.SGS, hd, dev.Limits())
		if err != nil {
			t.Logf("attention_coop.wgsl at head size %d: %v", hd, err)
			continue
		}
		for i, tl := range g.attnCoopCandidates(def) {
			jobs = append(jobs, attnJob(t, dev, tl, hd == 64 || i == 0))
		}
	}
	nvidia := wgpu.Limits{MaxComputeWorkgroupStorageSize: 48 << 10, MaxComputeInvocationsPerWorkgroup: 1024}
	for _, hd := range []int{80, 128} {
		if tl, err := attnCoopTilesFor(cfg, ck.mm.SGS, hd, nvidia); err == nil && tl.fits(dev.Limits()) == nil {
			jobs = append(jobs, attnJob(t, dev, tl, true))
		}
	}
	return jobs
}

// attnSpills are attention_coop.wgsl's tilings (attnCoopLabel) that AMD's
// compiler, ACO, spills registers of on RDNA3 (16x16x16, subgroups of 32)
// although they are held to none, and why:
//   - HD64 FM2 BKV64 SG2 PF0 keeps Q in registers (QW 0: with Q in
//     workgroup memory its block needs 54272 bytes, past NVIDIA's 48 KiB),
//     64 f16 values an invocation that ACO counts a register each while it
//     plans, beside 64 f32 of output and 64 scores; kept among the
//     autotuner's tilings since on NVIDIA Q takes half the registers.
//   - HD128 FM1 BKV32 SG4 PF1, the default where a device has 64 KiB of
//     workgroup memory (AMD's), uses 56 KiB and cannot also hold Q (77
//     VGPRs spilled); the autotuner times it against the rest and
//     attention_shared.wgsl.
var attnSpills = []string{"attention_coop[16x16x16 HD64 FM2 BKV64 SG2 PF0]", "attention_coop[16x16x16 HD128 FM1 BKV32 SG4 PF1]"}

// attnJob is attention_coop.wgsl with tiling tl as a compile job, held to
// no spills where noSpill and tl is not one of attnSpills.
func attnJob(t *testing.T, dev *wgpu.Device, tl attnCoopTiles, noSpill bool) compileJob {
	t.Helper()
	k, err := newAttnCoopKernel(dev, tl)
	if err != nil {
		t.Fatalf("%v: %v", tl, err)
	}
	return compileJob{label: k.Name(), k: k, noSpill: noSpill && !slices.Contains(attnSpills, attnCoopLabel(tl))}
}

// compileAll creates the pipelines of jobs (as many at once as Go has
// processors, as the autotuners do) and reads their statistics.
func compileAll(jobs []compileJob) []compileRow {
	rows := make([]compileRow, len(jobs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, j := range jobs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r := compileRow{Label: j.label, NoSpill: j.noSpill}
			p, err := j.k.pipeline(j.consts)
			if err == nil {
				r.Statistics, err = pipelineStats(p)
			}
			if err != nil {
				r.Err = err.Error()
			}
			rows[i] = r
		})
	}
	wg.Wait()
	return rows
}

// pipelineStats is the driver's statistics of p by name (every executable's).
func pipelineStats(p *Pipeline) (map[string]any, error) {
	st, err := p.cp.Statistics()
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	for _, e := range st.Executables {
		for _, s := range e.Statistics {
			m[s.Name] = s.Value
		}
	}
	return m, nil
}

// spills says which statistics of st report registers spilled to memory
// ("Spilled VGPRs 36"), "" for none.
func spills(st map[string]any) string { return nonZero(st, "spill") }

// scratch says which statistics of st report scratch (private) memory
// ("Scratch size 65536"), "" for none: spilled registers, or a
// function-scope array the driver kept in memory because an index into it
// is not a constant once its loops are unrolled (every access then a
// memory round trip).
func scratch(st map[string]any) string { return nonZero(st, "scratch") }

// nonZero lists the statistics of st whose names contain word (in any case)
// and whose values are not 0 or false, as "name value", "" for none.
func nonZero(st map[string]any, word string) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(st)) {
		if v := fmt.Sprint(st[name]); strings.Contains(strings.ToLower(name), word) && v != "0" && v != "false" {
			out = append(out, name+" "+v)
		}
	}
	return strings.Join(out, ", ")
}

// scratchArrays are the kernels (labels' prefixes) whose register arrays
// are indexed at run time by design, and so may live in scratch memory:
// topk_logits*.wgsl keep each invocation's candidates sorted in an array
// (insertion at a rank found at run time); they run for top-k output and
// generation, once per position, not in the scored forward pass.
var scratchArrays = []string{"topk_logits"}

// logCompileTable logs rows, a pipeline a line: the statistics that say
// most about a kernel's fit on the machine (registers, spills, workgroup
// memory, occupancy, instructions) where the driver reports them by these
// names (Mesa's), then every statistic.
func logCompileTable(t *testing.T, adapter string, rows []compileRow) {
	t.Helper()
	key := []string{"VGPRs", "Spilled VGPRs", "SGPRs", "Spilled SGPRs", "LDS size", "Scratch size", "Subgroups per SIMD", "Instructions"}
	var b strings.Builder
	fmt.Fprintf(&b, "%d pipelines on %s:\n", len(rows), adapter)
	nSpill := 0
	for _, r := range rows {
		if r.Err != "" {
			fmt.Fprintf(&b, "  %s: ERROR %s\n", r.Label, r.Err)
			continue
		}
		fmt.Fprintf(&b, "  %s:", r.Label)
		shown := false
		for _, k := range key {
			if v, ok := r.Statistics[k]; ok {
				fmt.Fprintf(&b, " %s=%v", k, v)
				shown = true
			}
		}
		if !shown {
			for _, k := range slices.Sorted(maps.Keys(r.Statistics)) {
				fmt.Fprintf(&b, " %s=%v", k, r.Statistics[k])
			}
		}
		if s := spills(r.Statistics); s != "" {
			nSpill++
			b.WriteString("  SPILLS")
			if !r.NoSpill {
				b.WriteString(" (not held to none: an autotuner candidate, whose timing decides, or one of attnSpills)")
			}
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%d of %d spill registers", nSpill, len(rows))
	t.Log(b.String())
}

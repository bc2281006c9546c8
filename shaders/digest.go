package shaders

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"runtime"
	"strings"
	"sync"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// kernelsDigest identifies the GPU code of this build: a hash of the SPIR-V
// the compiler makes of every embedded kernel, for f32 and f16 weights, the
// kernels with subgroup matrices both lowered and native, the matmul
// kernels with and without the KV cache bindings, loops over
// register arrays unrolled as a GPU's modules have them (UnrollRegisters:
// the tuning and verdict files are a GPU's), workgroup memory started as
// workgroupInit says. The tuning and verdict files carry it, and
// a file of another digest is not used: its tile choices and self-check
// verdicts were about other code (a compiler change alone, such as how
// workgroup memory is zeroed, can turn which tiling is fastest).
var kernelsDigest = sync.OnceValue(func() string {
	type unit struct {
		name string
		text string
		opt  wgsl.Options
		out  []byte
	}
	var units []*unit
	wi, _ := workgroupInit()               // an error fails every kernel's compile instead
	names, _ := fs.Glob(sources, "*.wgsl") // sorted
	for _, name := range names {
		for _, f16 := range []bool{false, true} {
			for _, replace := range []map[string]string{nil, kvFreeIncludes} {
				x, err := loadReplacing(name, f16, replace)
				if err != nil {
					units = append(units, &unit{name: name, out: []byte(err.Error())})
					continue
				}
				if replace != nil && !x.Spliced(kvFreeInclude) {
					continue // the same text as without
				}
				units = append(units, &unit{name: name, text: x.Text, opt: wgsl.Options{UnrollRegisters: true, WorkgroupInit: wi}})
				if strings.Contains(x.Text, "chromium_experimental_subgroup_matrix") {
					units = append(units, &unit{name: name, text: x.Text, opt: wgsl.Options{CooperativeMatrix: true, UnrollRegisters: true, WorkgroupInit: wi}})
				}
			}
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, u := range units {
		if u.text == "" {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			m, err := wgsl.Compile(u.name, u.text, u.opt)
			switch {
			case err != nil:
				u.out = []byte(err.Error())
			case m.SPIRV == nil:
				u.out = []byte(m.NoSPIRV)
			default:
				for _, w := range m.SPIRV {
					u.out = binary.LittleEndian.AppendUint32(u.out, w)
				}
			}
		})
	}
	wg.Wait()
	h := sha256.New()
	for _, u := range units {
		h.Write([]byte(u.name))
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(u.out))))
		h.Write(u.out)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
})

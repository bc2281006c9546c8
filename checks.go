package wgpueval

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// checkMatrixUnits refuses MatrixUnitsOn, as an *OptionError, where the
// adapter the device spec picks (every one, for "all") shows in its
// features that it cannot multiply on matrix units (in the words of the
// backend's own refusal, "matrix units required, but ..."): Open sees that before
// anything is loaded. What the features cannot show (the self-check against
// the ordinary kernels) is decided when the weights are on the device, as
// before. Errors of Vulkan itself are left to CheckDevice and the backend.
func checkMatrixUnits(spec backend.DeviceSpec, prec Precision, mu MatrixUnits) error {
	if mu != MatrixUnitsOn || spec.Kind == "cpu" {
		return nil // the cpu is Options.Check's
	}
	infos, err := backend.Devices()
	if err != nil && !(spec.Kind == "auto" && wgpu.Unavailable(err)) {
		return nil
	}
	var picked []wgpu.AdapterInfo
	switch {
	case spec.Kind == "auto" || spec.Kind == "all":
		for _, info := range infos { // best first, as the backend picks
			if info.DeviceType != "cpu" && hasMemory(info) {
				picked = append(picked, info)
				if spec.Kind == "auto" {
					break
				}
			}
		}
		if len(picked) == 0 && spec.Kind == "auto" {
			return &OptionError{"MatrixUnits", "on", fmt.Sprintf("matrix units required, but device auto runs on the cpu here (no hardware GPU among %d Vulkan adapters), which has none", len(infos))}
		}
	case spec.Index >= 0 && spec.Index < len(infos):
		picked = infos[spec.Index : spec.Index+1]
	case spec.Index < 0 && len(infos) > 0:
		picked = infos[:1]
		for i, info := range infos { // the first that can run, as the backend picks
			if hasMemory(info) {
				picked = infos[i : i+1]
				break
			}
		}
	}
	for _, info := range picked {
		if why := noMatrixUnits(info, prec); why != "" {
			return &OptionError{"MatrixUnits", "on", fmt.Sprintf("matrix units required, but device %s (%s) %s", spec, info.Name, why)}
		}
	}
	return nil
}

// hasMemory reports whether an adapter has memory: one without is a driver's
// compile-only stand-in (Mesa's null hardware), which the backend never picks
// for auto, all or gpu.
func hasMemory(info wgpu.AdapterInfo) bool {
	for _, h := range info.MemoryHeaps {
		if h.Size > 0 {
			return true
		}
	}
	return false
}

// noMatrixUnits says why the adapter info describes cannot run the
// matrix-unit kernels with weights of precision prec, "" where its features
// allow them.
func noMatrixUnits(info wgpu.AdapterInfo, prec Precision) string {
	f := info.Features
	switch {
	case info.DeviceType == "cpu":
		return "is a CPU implementation of Vulkan, which has no matrix units (its software kernel set runs there)"
	case !f.ShaderF16:
		return fmt.Sprintf("has no shader-f16, so its weights are f32 (precision %s); the matrix units multiply f16", cmp.Or(string(prec), "auto"))
	case !f.Subgroups:
		return "has no subgroup operations, which the matrix-unit kernels use"
	case !f.CooperativeMatrix:
		return "offers no matrix units to Vulkan (no VK_KHR_cooperative_matrix)"
	}
	for _, c := range f.CooperativeMatrixConfigs {
		if c.SubgroupMatrix && c.AType == wgpu.ComponentF16 && c.ResultType == wgpu.ComponentF32 &&
			smallTile(c.M) && smallTile(c.N) && smallTile(c.K) {
			return ""
		}
	}
	return "offers no f16 x f16 -> f32 subgroup-matrix configuration of 8 or 16, which the kernels are built for"
}

func smallTile(n uint32) bool { return n == 8 || n == 16 }

// checkOutputs refuses, as an *OptionError of its field, an output file of
// opt (Checkpoint, PerToken, PerDocument, JSON) that is "-" (standard
// output, which the CLI gives only --json), whose folder does not
// exist, is not a folder or cannot be written in (a read-only file system,
// no permission), or which is a folder itself, and a checkpoint
// path where something other than a regular file is (a FIFO or a device,
// whose read back would block or never end): EvalOptions.Check makes these
// checks, before the corpus is read and the weights load, rather than
// failing to write the file after the run.
func checkOutputs(opt EvalOptions) error {
	for _, o := range []struct{ option, path string }{
		{"Checkpoint", opt.Checkpoint}, {"PerToken", opt.PerToken}, {"PerDocument", opt.PerDocument}, {"JSON", opt.JSON},
	} {
		if o.path == "" {
			continue
		}
		if o.path == "-" { // the CLI's --json - is its own; here it would name a file "-"
			return badString(o.option, o.path, "standard output cannot take this output; name a file (a FIFO or /dev/fd/N pipes it)")
		}
		dir := filepath.Dir(o.path)
		st, err := os.Stat(dir)
		switch {
		case err != nil && os.IsNotExist(err):
			return badString(o.option, o.path, "the folder %s does not exist", infile.Quote(dir))
		case err != nil:
			return badString(o.option, o.path, "its folder: %v", err)
		case !st.IsDir():
			return badString(o.option, o.path, "%s is not a folder", infile.Quote(dir))
		}
		if st, err := os.Stat(o.path); err == nil && st.IsDir() {
			return badString(o.option, o.path, "is a folder; name a file")
		}
		if err := atomicfile.Check(o.path); err != nil { // a read-only folder: before the run, not after it
			return badString(o.option, o.path, "%v", err)
		}
		if _, err := infile.Check(o.path); o.option == "Checkpoint" && err != nil && !errors.Is(err, fs.ErrNotExist) {
			return badString(o.option, o.path, "%v", err)
		}
	}
	return nil
}

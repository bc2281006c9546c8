package pipeline

import "time"

// RunConfig is every option of a run that changes its numbers, as the run
// was given them (Result.Config).
type RunConfig struct {
	Mode   string `json:"mode"`
	Ctx    int    `json:"ctx"`
	Stride int    `json:"stride"`
	// BOSEachWindow: every window starts with the tokenizer's BOS (or
	// <|endoftext|>) as context (--bos-each-window).
	BOSEachWindow bool   `json:"bos_each_window"`
	MaxTokens     int    `json:"max_tokens"`
	Split         string `json:"split"`
	Separator     string `json:"separator"`
	Device        string `json:"device"`       // as asked: auto, cpu, gpu:N, all
	Precision     string `json:"precision"`    // weights on the device: f16 or f32 (the CPU: f32, or bf16 in its bf16 mode)
	Threads       int    `json:"threads"`      // CPU goroutines (0 on GPUs)
	BatchTokens   int    `json:"batch_tokens"` // padded tokens per batch asked for; 0: the device's budget
}

// Provenance says what a result came from (Result.Provenance).
type Provenance struct {
	Tool      string           `json:"tool"`    // "wgpu-eval"
	Version   string           `json:"version"` // module version or "devel"
	Commit    string           `json:"commit"`  // VCS revision of the build, when known
	GoVersion string           `json:"go_version"`
	Model     ModelProvenance  `json:"model"`
	Corpus    CorpusProvenance `json:"corpus"`
	Tokenizer string           `json:"tokenizer"` // the tokenizer's identity (its files' hash, or the built-in GPT-2)
	Device    DeviceInfo       `json:"device"`
	Start     time.Time        `json:"start"`
}

// ModelProvenance identifies the model.
type ModelProvenance struct {
	ID            string `json:"id"`                   // as given: a hub id, a folder or a file
	Type          string `json:"model_type,omitempty"` // config.json's model_type: "gpt2", "llama", "mistral", "qwen2", "qwen3"
	Revision      string `json:"revision"`             // the hub commit of the snapshot, when from the hub cache
	Path          string `json:"path"`
	StoredDType   string `json:"stored_dtype"`   // F32, F16, BF16 or mixed
	WeightsSHA256 string `json:"weights_sha256"` // of the weight files' bytes, in order
}

// CorpusProvenance identifies the corpus.
type CorpusProvenance struct {
	Name   string `json:"name"`   // as given
	SHA256 string `json:"sha256"` // of its content after the split
	Format string `json:"format"` // text, jsonl or tokens
}

// DeviceInfo names the device precisely.
type DeviceInfo struct {
	Kind       string `json:"kind"`                  // "cpu" or "gpu"
	Name       string `json:"name"`                  // Backend.Name()
	Adapter    string `json:"adapter,omitempty"`     // GPU: adapter name
	Vendor     string `json:"vendor,omitempty"`      // GPU
	Driver     string `json:"driver,omitempty"`      // GPU: driver name, info and version
	APIVersion string `json:"api_version,omitempty"` // GPU: Vulkan version
	CPUModel   string `json:"cpu_model,omitempty"`   // CPU
	Kernels    string `json:"kernels,omitempty"`     // CPU: kernel set (generic, avx2, avx512, neon; in the bf16 mode with its products', e.g. avx512+bf16-amx); GPU: software or hardware
	// MatmulTiles is, on a GPU with the hardware kernels, matmul_shared.wgsl's
	// tiles (BMxBNxBK/TMxTN) by matmul shape as the autotuner chose them, and
	// under "default" those of shapes it did not tune; with the matrix units
	// the coop tilings, and the attention kernel, by the tuning file's keys
	// (shaders.GPT2.MatmulTiles). A result's is taken as the run ended.
	MatmulTiles map[string]string `json:"matmul_tiles,omitempty"`
	// MatrixUnits is, on a GPU, whether its weight matmuls and LM head ran
	// on the matrix units (tensor cores) and why.
	MatrixUnits *MatrixUnitsInfo `json:"matrix_units,omitempty"`
	// Parts are, on several devices (--device all), each one's description;
	// the fields above are then theirs where they agree, else each part's
	// joined with " + " in order.
	Parts []DeviceInfo `json:"parts,omitempty"`
}

// MatrixUnitsInfo says whether a GPU multiplied on its matrix units (tensor
// cores, through subgroup matrices) and why.
type MatrixUnitsInfo struct {
	Mode   string `json:"mode"`             // auto, off or on (--matrix-units)
	Used   bool   `json:"used"`             // the matrix-unit kernels ran
	Config string `json:"config,omitempty"` // their subgroup-matrix shape, M x N x K, when one was tried
	Reason string `json:"reason"`           // why they ran or not
	// Lowered: a test forced the matrix-unit kernels on a device without
	// matrix units, where the compiler lowers them to invocation code.
	Lowered bool `json:"lowered,omitempty"`
	// Attention is the attention kernel they bring (attention_coop.wgsl,
	// where the autotuner finds it faster) or why attention_shared.wgsl
	// stays; "" when they are not used.
	Attention string `json:"attention,omitempty"`
}

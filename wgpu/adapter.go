package wgpu

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// FeatureName names an optional capability a device can be required to have (WebGPU's names where they exist).
type FeatureName string

const (
	// FeatureShaderF16: f16 arithmetic in shaders and f16 (16-bit) values in storage buffers.
	FeatureShaderF16 FeatureName = "shader-f16"
	// FeatureStorage16Bit: 16-bit values (f16 loaded as f32, i16, u16) in storage buffers, without f16 arithmetic.
	FeatureStorage16Bit FeatureName = "storage-16bit"
	// FeatureSubgroups: subgroup operations (basic and arithmetic at least) in compute shaders.
	FeatureSubgroups FeatureName = "subgroups"
	// FeatureSubgroupSizeControl: ComputePipelineDescriptor.RequiredSubgroupSize may be set.
	FeatureSubgroupSizeControl FeatureName = "subgroup-size-control"
	// FeatureTimestampQuery: QuerySets of timestamps and ComputePassDescriptor.TimestampWrites.
	FeatureTimestampQuery FeatureName = "timestamp-query"
	// FeatureCooperativeMatrix: the matrix units through VK_KHR_cooperative_matrix. WGSL subgroup matrices
	// (chromium_experimental_subgroup_matrix) compile to SPV_KHR_cooperative_matrix on a device with it, and to
	// ordinary invocation code on any other, so it decides speed, not which shaders are valid: hence a name for
	// what the device enables rather than Dawn's "chromium-experimental-subgroup-matrix", whose feature gates the
	// WGSL extension itself. See Adapter.CooperativeMatrixConfigs and the doc of CooperativeMatrixConfig's file
	// (coopmat.go) for what pipelines must set.
	FeatureCooperativeMatrix FeatureName = "cooperative-matrix"
	// FeaturePipelineStatistics: the driver's statistics of every compute pipeline the device compiles (register
	// counts, spills, instruction counts: whatever the driver reports, under its names), through
	// VK_KHR_pipeline_executable_properties; see ComputePipeline.Statistics and Device.PipelineStatistics. Pipelines
	// are then compiled asking for them, which some drivers do without their own shader cache: a diagnostic.
	FeaturePipelineStatistics FeatureName = "pipeline-statistics"
)

// AdapterInfo describes an adapter: what `wgpu-eval devices` prints.
type AdapterInfo struct {
	Name              string       `json:"name"`
	Vendor            string       `json:"vendor"`
	VendorID          uint32       `json:"vendor_id"`
	DeviceID          uint32       `json:"device_id"`
	DeviceType        string       `json:"device_type"` // discrete-gpu, integrated-gpu, virtual-gpu, cpu, other
	DriverName        string       `json:"driver_name"`
	DriverInfo        string       `json:"driver_info"`
	DriverVersion     string       `json:"driver_version"` // decoded the vendor's way
	DriverVersionRaw  uint32       `json:"driver_version_raw"`
	APIVersion        string       `json:"api_version"` // Vulkan version the driver supports
	DeviceUUID        string       `json:"device_uuid"`
	PipelineCacheUUID string       `json:"pipeline_cache_uuid"`
	MemoryHeaps       []MemoryHeap `json:"memory_heaps"`
	Limits            Limits       `json:"limits"`
	Features          Features     `json:"features"`
	// Extensions are the device extensions the driver offers, sorted (what a feature it lacks would need, or
	// one this package does not use yet).
	Extensions []string `json:"extensions"`
}

// MemoryHeap is one Vulkan memory heap.
type MemoryHeap struct {
	Size        uint64 `json:"size"`
	DeviceLocal bool   `json:"device_local"`
}

// Limits are the adapter's (or, for RequiredLimits, the wanted) compute limits. In DeviceDescriptor.RequiredLimits
// a zero field means "no requirement".
type Limits struct {
	MaxStorageBufferBindingSize       uint64  `json:"max_storage_buffer_binding_size"`
	MaxBufferSize                     uint64  `json:"max_buffer_size"`
	MaxComputeWorkgroupStorageSize    uint32  `json:"max_compute_workgroup_storage_size"`
	MaxComputeInvocationsPerWorkgroup uint32  `json:"max_compute_invocations_per_workgroup"`
	MaxComputeWorkgroupSizeX          uint32  `json:"max_compute_workgroup_size_x"`
	MaxComputeWorkgroupSizeY          uint32  `json:"max_compute_workgroup_size_y"`
	MaxComputeWorkgroupSizeZ          uint32  `json:"max_compute_workgroup_size_z"`
	MaxComputeWorkgroupsPerDimension  uint32  `json:"max_compute_workgroups_per_dimension"`
	MaxStorageBuffersPerShaderStage   uint32  `json:"max_storage_buffers_per_shader_stage"`
	MaxBindGroups                     uint32  `json:"max_bind_groups"`
	MaxPushConstantSize               uint32  `json:"max_push_constant_size"`
	MinStorageBufferOffsetAlignment   uint32  `json:"min_storage_buffer_offset_alignment"`
	MinUniformBufferOffsetAlignment   uint32  `json:"min_uniform_buffer_offset_alignment"`
	SubgroupSize                      uint32  `json:"subgroup_size"`
	MinSubgroupSize                   uint32  `json:"min_subgroup_size"`
	MaxSubgroupSize                   uint32  `json:"max_subgroup_size"`
	TimestampPeriod                   float32 `json:"timestamp_period_ns"` // ns per timestamp tick
}

// Features lists the adapter's optional capabilities.
type Features struct {
	ShaderF16           bool     `json:"shader_f16"`    // f16 arithmetic (shaderFloat16)
	Storage16Bit        bool     `json:"storage_16bit"` // 16-bit values in storage buffers
	Subgroups           bool     `json:"subgroups"`     // compute-stage subgroups with basic + arithmetic ops
	SubgroupOperations  []string `json:"subgroup_operations"`
	SubgroupSizeControl bool     `json:"subgroup_size_control"`
	TimestampQuery      bool     `json:"timestamp_query"`
	// CooperativeMatrix: VK_KHR_cooperative_matrix with its cooperativeMatrix feature, in compute shaders, with at
	// least one configuration (FeatureCooperativeMatrix).
	CooperativeMatrix bool `json:"cooperative_matrix"`
	// CooperativeMatrixConfigs are the configurations vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR lists, every
	// scope (those with SubgroupMatrix set serve WGSL); empty without the feature.
	CooperativeMatrixConfigs []CooperativeMatrixConfig `json:"cooperative_matrix_configs"`
	// UniformStandardLayout: uniformBufferStandardLayout, enabled on every device of the adapter, so WGSL
	// uniform buffers may take the storage layout (arrays of f32 or vec2, arrays and structs at any offset).
	UniformStandardLayout bool `json:"uniform_standard_layout"`
	// PipelineStatistics: VK_KHR_pipeline_executable_properties with pipelineExecutableInfo
	// (FeaturePipelineStatistics).
	PipelineStatistics bool `json:"pipeline_statistics"`
}

// extCooperativeMatrix is the extension behind FeatureCooperativeMatrix, and coopMatrixHeader the Vulkan header
// version that brought it (1.3.255): a validation layer written for an older header reports its structures as
// unknown, so the adapter does not use it under such a layer.
const (
	extCooperativeMatrix = "VK_KHR_cooperative_matrix"
	coopMatrixHeader     = 1<<22 | 3<<12 | 255
)

// extPipelineStatistics is the extension behind FeaturePipelineStatistics.
const extPipelineStatistics = "VK_KHR_pipeline_executable_properties"

// Adapter is a physical device.
type Adapter struct {
	inst       *Instance
	pd         vk.PhysicalDevice
	info       AdapterInfo
	apiVersion uint32
	family     uint32
	tsBits     uint32
	memProps   vk.PhysicalDeviceMemoryProperties
	exts       map[string]bool
	memModel   bool   // vulkanMemoryModel supported
	memScope   bool   // vulkanMemoryModelDeviceScope supported (Device-scope atomics and barriers)
	uniform16  bool   // uniformAndStorageBuffer16BitAccess supported (f16 in uniform buffers)
	extTypes   bool   // shaderSubgroupExtendedTypes supported
	stdUniform bool   // uniformBufferStandardLayout supported (WGSL's storage layout in uniform buffers)
	fullGroups bool   // computeFullSubgroups supported (pipelines may require whole subgroups)
	int8       bool   // shaderInt8 supported (8-bit integers in shaders: i8 and u8 subgroup matrices)
	coopWhy    string // why FeatureCooperativeMatrix is absent ("" when present)
}

// Info describes the adapter.
func (a *Adapter) Info() AdapterInfo { return a.info }

// HasFeature reports whether the adapter supports a feature.
func (a *Adapter) HasFeature(f FeatureName) bool {
	ft := a.info.Features
	switch f {
	case FeatureShaderF16:
		return ft.ShaderF16 && ft.Storage16Bit
	case FeatureStorage16Bit:
		return ft.Storage16Bit
	case FeatureSubgroups:
		return ft.Subgroups
	case FeatureSubgroupSizeControl:
		return ft.SubgroupSizeControl
	case FeatureTimestampQuery:
		return ft.TimestampQuery
	case FeatureCooperativeMatrix:
		return ft.CooperativeMatrix
	case FeaturePipelineStatistics:
		return ft.PipelineStatistics
	}
	return false
}

// missingReason says why the adapter lacks a feature, for RequestDevice's error ("" when nothing more is known).
func (a *Adapter) missingReason(f FeatureName) string {
	switch f {
	case FeatureCooperativeMatrix:
		return a.coopWhy
	case FeaturePipelineStatistics:
		if !a.exts[extPipelineStatistics] {
			return "no " + extPipelineStatistics
		}
		return extPipelineStatistics + " without its pipelineExecutableInfo feature"
	}
	return ""
}

// has reports whether a Vulkan feature set is available: core in apiVersion or through extension ext.
func (a *Adapter) has(major, minor uint32, ext string) bool {
	return a.apiVersion >= vk.MakeAPIVersion(major, minor, 0) || a.exts[ext]
}

func newAdapter(inst *Instance, pd vk.PhysicalDevice) (*Adapter, error) {
	fn := inst.fn
	a := &Adapter{inst: inst, pd: pd, family: ^uint32(0)}
	var props vk.PhysicalDeviceProperties
	fn.GetPhysicalDeviceProperties(pd, &props)
	a.apiVersion = min(props.ApiVersion, inst.apiVersion)
	if a.apiVersion < vk.MakeAPIVersion(1, 1, 0) {
		return nil, nil // too old for this package
	}
	var err error
	if a.exts, err = deviceExtensions(fn, pd); err != nil {
		return nil, err
	}
	var n uint32
	fn.GetPhysicalDeviceQueueFamilyProperties(pd, &n, nil)
	qf := make([]vk.QueueFamilyProperties, n)
	if n > 0 {
		fn.GetPhysicalDeviceQueueFamilyProperties(pd, &n, &qf[0])
	}
	for i, q := range qf[:n] { // prefer a compute family; the graphics+compute one comes first on most drivers
		if q.QueueFlags&vk.QueueComputeBit != 0 && q.QueueCount > 0 {
			a.family, a.tsBits = uint32(i), q.TimestampValidBits
			break
		}
	}
	if a.family == ^uint32(0) {
		return nil, nil
	}
	fn.GetPhysicalDeviceMemoryProperties(pd, &a.memProps)

	var ar vk.Arena
	defer ar.Release()
	p2 := vk.New[vk.PhysicalDeviceProperties2](&ar)
	sg := vk.New[vk.PhysicalDeviceSubgroupProperties](&ar)
	id := vk.New[vk.PhysicalDeviceIDProperties](&ar)
	m3 := vk.New[vk.PhysicalDeviceMaintenance3Properties](&ar)
	p2.PNext, sg.PNext, id.PNext = unsafe.Pointer(sg), unsafe.Pointer(id), unsafe.Pointer(m3)
	var drv *vk.PhysicalDeviceDriverProperties
	var sgc *vk.PhysicalDeviceSubgroupSizeControlProperties
	if a.has(1, 2, "VK_KHR_driver_properties") {
		drv = vk.New[vk.PhysicalDeviceDriverProperties](&ar)
		drv.PNext, p2.PNext = p2.PNext, unsafe.Pointer(drv)
	}
	if a.has(1, 3, "VK_EXT_subgroup_size_control") {
		sgc = vk.New[vk.PhysicalDeviceSubgroupSizeControlProperties](&ar)
		sgc.PNext, p2.PNext = p2.PNext, unsafe.Pointer(sgc)
	}
	var cmp *vk.PhysicalDeviceCooperativeMatrixPropertiesKHR
	layerWhy := layerPredatesCoopMatrix(inst.validation, inst.validationSpec)
	if a.exts[extCooperativeMatrix] && layerWhy == "" {
		cmp = vk.New[vk.PhysicalDeviceCooperativeMatrixPropertiesKHR](&ar)
		cmp.PNext, p2.PNext = p2.PNext, unsafe.Pointer(cmp)
	}
	fn.GetPhysicalDeviceProperties2(pd, p2)

	f2 := vk.New[vk.PhysicalDeviceFeatures2](&ar)
	s16 := vk.New[vk.PhysicalDevice16BitStorageFeatures](&ar)
	f2.PNext = unsafe.Pointer(s16)
	var f16 *vk.PhysicalDeviceShaderFloat16Int8Features
	var sgcf *vk.PhysicalDeviceSubgroupSizeControlFeatures
	var mm *vk.PhysicalDeviceVulkanMemoryModelFeatures
	var et *vk.PhysicalDeviceShaderSubgroupExtendedTypesFeatures
	var ul *vk.PhysicalDeviceUniformBufferStandardLayoutFeatures
	if a.has(1, 2, "VK_KHR_shader_float16_int8") {
		f16 = vk.New[vk.PhysicalDeviceShaderFloat16Int8Features](&ar)
		f16.PNext, f2.PNext = f2.PNext, unsafe.Pointer(f16)
	}
	if sgc != nil {
		sgcf = vk.New[vk.PhysicalDeviceSubgroupSizeControlFeatures](&ar)
		sgcf.PNext, f2.PNext = f2.PNext, unsafe.Pointer(sgcf)
	}
	if a.has(1, 2, "VK_KHR_vulkan_memory_model") {
		mm = vk.New[vk.PhysicalDeviceVulkanMemoryModelFeatures](&ar)
		mm.PNext, f2.PNext = f2.PNext, unsafe.Pointer(mm)
	}
	if a.has(1, 2, "VK_KHR_shader_subgroup_extended_types") {
		et = vk.New[vk.PhysicalDeviceShaderSubgroupExtendedTypesFeatures](&ar)
		et.PNext, f2.PNext = f2.PNext, unsafe.Pointer(et)
	}
	if a.has(1, 2, "VK_KHR_uniform_buffer_standard_layout") {
		ul = vk.New[vk.PhysicalDeviceUniformBufferStandardLayoutFeatures](&ar)
		ul.PNext, f2.PNext = f2.PNext, unsafe.Pointer(ul)
	}
	var cmf *vk.PhysicalDeviceCooperativeMatrixFeaturesKHR
	if cmp != nil {
		cmf = vk.New[vk.PhysicalDeviceCooperativeMatrixFeaturesKHR](&ar)
		cmf.PNext, f2.PNext = f2.PNext, unsafe.Pointer(cmf)
	}
	var pef *vk.PhysicalDevicePipelineExecutablePropertiesFeaturesKHR
	if a.exts[extPipelineStatistics] {
		pef = vk.New[vk.PhysicalDevicePipelineExecutablePropertiesFeaturesKHR](&ar)
		pef.PNext, f2.PNext = f2.PNext, unsafe.Pointer(pef)
	}
	fn.GetPhysicalDeviceFeatures2(pd, f2)

	p := &p2.Properties
	l := &p.Limits
	info := AdapterInfo{
		Name: vk.BytesString(p.DeviceName[:]), VendorID: p.VendorID, DeviceID: p.DeviceID,
		Vendor: vendorName(p.VendorID), DeviceType: deviceTypeName(p.DeviceType),
		DriverVersion: driverVersion(p.VendorID, p.DriverVersion), DriverVersionRaw: p.DriverVersion,
		APIVersion: vk.VersionString(p.ApiVersion), DeviceUUID: uuidString(id.DeviceUUID),
		PipelineCacheUUID: uuidString(p.PipelineCacheUUID),
		Extensions:        slices.Sorted(maps.Keys(a.exts)),
	}
	if drv != nil {
		info.DriverName, info.DriverInfo = vk.BytesString(drv.DriverName[:]), vk.BytesString(drv.DriverInfo[:])
	}
	for _, h := range a.memProps.MemoryHeaps[:a.memProps.MemoryHeapCount] {
		info.MemoryHeaps = append(info.MemoryHeaps, MemoryHeap{Size: h.Size, DeviceLocal: h.Flags&vk.MemoryHeapDeviceLocalBit != 0})
	}
	info.Limits = Limits{
		MaxStorageBufferBindingSize:       uint64(l.MaxStorageBufferRange),
		MaxBufferSize:                     m3.MaxMemoryAllocationSize,
		MaxComputeWorkgroupStorageSize:    l.MaxComputeSharedMemorySize,
		MaxComputeInvocationsPerWorkgroup: l.MaxComputeWorkGroupInvocations,
		MaxComputeWorkgroupSizeX:          l.MaxComputeWorkGroupSize[0],
		MaxComputeWorkgroupSizeY:          l.MaxComputeWorkGroupSize[1],
		MaxComputeWorkgroupSizeZ:          l.MaxComputeWorkGroupSize[2],
		MaxComputeWorkgroupsPerDimension:  min(l.MaxComputeWorkGroupCount[0], l.MaxComputeWorkGroupCount[1], l.MaxComputeWorkGroupCount[2]),
		MaxStorageBuffersPerShaderStage:   l.MaxPerStageDescriptorStorageBuffers,
		MaxBindGroups:                     l.MaxBoundDescriptorSets,
		MaxPushConstantSize:               l.MaxPushConstantsSize,
		MinStorageBufferOffsetAlignment:   uint32(l.MinStorageBufferOffsetAlignment),
		MinUniformBufferOffsetAlignment:   uint32(l.MinUniformBufferOffsetAlignment),
		SubgroupSize:                      sg.SubgroupSize,
		MinSubgroupSize:                   sg.SubgroupSize,
		MaxSubgroupSize:                   sg.SubgroupSize,
		TimestampPeriod:                   timestampPeriod(l.TimestampPeriod),
	}
	ft := &info.Features
	ft.Storage16Bit = s16.StorageBuffer16BitAccess != 0
	ft.ShaderF16 = f16 != nil && f16.ShaderFloat16 != 0
	a.int8 = f16 != nil && f16.ShaderInt8 != 0
	ops := []struct {
		bit  vk.SubgroupFeatureFlags
		name string
	}{{vk.SubgroupFeatureBasicBit, "basic"}, {vk.SubgroupFeatureVoteBit, "vote"}, {vk.SubgroupFeatureArithmeticBit, "arithmetic"},
		{vk.SubgroupFeatureBallotBit, "ballot"}, {vk.SubgroupFeatureShuffleBit, "shuffle"},
		{vk.SubgroupFeatureShuffleRelativeBit, "shuffle-relative"}, {vk.SubgroupFeatureClusteredBit, "clustered"},
		{vk.SubgroupFeatureQuadBit, "quad"}}
	if sg.SupportedStages&vk.ShaderStageComputeBit != 0 {
		for _, op := range ops {
			if sg.SupportedOperations&op.bit != 0 {
				ft.SubgroupOperations = append(ft.SubgroupOperations, op.name)
			}
		}
		need := vk.SubgroupFeatureBasicBit | vk.SubgroupFeatureArithmeticBit
		ft.Subgroups = sg.SupportedOperations&need == need
	}
	if sgcf != nil && sgcf.SubgroupSizeControl != 0 && sgc.RequiredSubgroupSizeStages&vk.ShaderStageComputeBit != 0 {
		ft.SubgroupSizeControl = true
		info.Limits.MinSubgroupSize, info.Limits.MaxSubgroupSize = sgc.MinSubgroupSize, sgc.MaxSubgroupSize
	}
	ft.TimestampQuery = a.tsBits > 0 && info.Limits.TimestampPeriod > 0
	a.memModel = mm != nil && mm.VulkanMemoryModel != 0
	a.memScope = a.memModel && mm.VulkanMemoryModelDeviceScope != 0
	a.stdUniform = ul != nil && ul.UniformBufferStandardLayout != 0
	ft.UniformStandardLayout = a.stdUniform
	ft.PipelineStatistics = pef != nil && pef.PipelineExecutableInfo != 0
	a.uniform16 = s16.UniformAndStorageBuffer16BitAccess != 0
	a.extTypes = et != nil && et.ShaderSubgroupExtendedTypes != 0
	a.fullGroups = ft.SubgroupSizeControl && sgcf.ComputeFullSubgroups != 0
	ft.CooperativeMatrixConfigs = []CooperativeMatrixConfig{}
	switch {
	case a.exts[extCooperativeMatrix] && layerWhy != "":
		a.coopWhy = layerWhy
	case cmp == nil:
		a.coopWhy = "no " + extCooperativeMatrix
	case cmf.CooperativeMatrix == 0:
		a.coopWhy = extCooperativeMatrix + " without its cooperativeMatrix feature"
	case cmp.CooperativeMatrixSupportedStages&vk.ShaderStageComputeBit == 0:
		a.coopWhy = extCooperativeMatrix + " not for compute shaders"
	case !a.memModel: // SPV_KHR_cooperative_matrix requires the Vulkan memory model in shaders
		a.coopWhy = extCooperativeMatrix + " without vulkanMemoryModel, which SPV_KHR_cooperative_matrix requires"
	default:
		configs, err := queryCooperativeMatrix(func(n *uint32, p *vk.CooperativeMatrixPropertiesKHR) vk.Result {
			return fn.GetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, n, p)
		})
		switch {
		case err != nil: // the adapter stays usable without the feature
			a.coopWhy = err.Error()
		case len(configs) == 0:
			a.coopWhy = extCooperativeMatrix + " with no configuration"
		default:
			ft.CooperativeMatrixConfigs = configs
		}
	}
	ft.CooperativeMatrix = a.coopWhy == ""
	a.info = info
	return a, nil
}

func deviceExtensions(fn *vk.InstanceFuncs, pd vk.PhysicalDevice) (map[string]bool, error) {
	var n uint32
	if err := check("vkEnumerateDeviceExtensionProperties", fn.EnumerateDeviceExtensionProperties(pd, nil, &n, nil)); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	if n == 0 {
		return out, nil
	}
	props := make([]vk.ExtensionProperties, n)
	r := fn.EnumerateDeviceExtensionProperties(pd, nil, &n, &props[0])
	if r != vk.Success && r != vk.Incomplete {
		return nil, check("vkEnumerateDeviceExtensionProperties", r)
	}
	for _, p := range props[:n] {
		out[vk.BytesString(p.ExtensionName[:])] = true
	}
	return out, nil
}

func vendorName(id uint32) string {
	switch id {
	case 0x10de:
		return "NVIDIA"
	case 0x1002, 0x1022:
		return "AMD"
	case 0x8086:
		return "Intel"
	case 0x106b:
		return "Apple"
	case 0x13b5:
		return "ARM"
	case 0x5143:
		return "Qualcomm"
	case 0x10005:
		return "Mesa"
	}
	return fmt.Sprintf("0x%04x", id)
}

func deviceTypeName(t vk.PhysicalDeviceType) string {
	switch t {
	case vk.PhysicalDeviceTypeDiscreteGpu:
		return "discrete-gpu"
	case vk.PhysicalDeviceTypeIntegratedGpu:
		return "integrated-gpu"
	case vk.PhysicalDeviceTypeVirtualGpu:
		return "virtual-gpu"
	case vk.PhysicalDeviceTypeCpu:
		return "cpu"
	}
	return "other"
}

// driverVersion decodes driverVersion as the vendor encodes it.
func driverVersion(vendor, v uint32) string {
	switch vendor {
	case 0x10de: // NVIDIA: 10.8.8.6
		return fmt.Sprintf("%d.%d.%d.%d", v>>22, v>>14&0xff, v>>6&0xff, v&0x3f)
	case 0x8086: // Intel on Windows: 18.14; elsewhere Mesa's standard encoding
		return vk.VersionString(v)
	}
	return vk.VersionString(v)
}

// StateKey names the device in the names and contents of files kept per
// device (the pipeline cache, the shaders package's tuning and self-check
// files): its DeviceUUID, or, where the driver reports the all-zero UUID
// (which names no device: two GPUs of different models would share their
// files), the vendor and device ids and a digest of the name.
func (a AdapterInfo) StateKey() string {
	if strings.Trim(strings.ReplaceAll(a.DeviceUUID, "-", ""), "0") != "" {
		return a.DeviceUUID
	}
	sum := sha256.Sum256([]byte(a.Name))
	return fmt.Sprintf("%04x-%04x-%x", a.VendorID, a.DeviceID, sum[:6])
}

func uuidString(u [vk.UuidSize]uint8) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// layerPredatesCoopMatrix says why VK_KHR_cooperative_matrix is not used under a validation layer written for a
// Vulkan header older than the extension (spec, its specVersion): such a layer reports the extension's structures
// in the feature and property chains as errors. "" without validation or with a layer that knows the extension.
func layerPredatesCoopMatrix(validation bool, spec uint32) string {
	if !validation || spec >= coopMatrixHeader {
		return ""
	}
	return fmt.Sprintf("%s not used under the validation layer, which predates it (written for Vulkan %s; the extension came with %s): "+
		"without validation, or with a newer layer, the device has it", extCooperativeMatrix, vk.VersionString(spec), vk.VersionString(coopMatrixHeader))
}

// timestampPeriod is a driver's timestampPeriod (ns per tick) where it is a
// finite positive number, else 0: no usable timestamps. RADV on null
// hardware (RADV_FORCE_FAMILY, compile only) reports +Inf, which no
// timing can use and JSON cannot hold (AdapterInfo failed to marshal).
func timestampPeriod(p float32) float32 {
	if p > 0 && !math.IsInf(float64(p), 1) { // false for NaN too
		return p
	}
	return 0
}

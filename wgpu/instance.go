package wgpu

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// ValidationLayer is the Khronos validation layer enabled by InstanceDescriptor.Validation.
const ValidationLayer = "VK_LAYER_KHRONOS_validation"

// InstanceDescriptor configures CreateInstance. The zero value is usable.
type InstanceDescriptor struct {
	// Validation enables ValidationLayer and a debug messenger, if the layer is installed (see
	// Instance.ValidationEnabled), with synchronization validation (missing barriers are reported) where the
	// layer offers VK_EXT_validation_features. Meant for tests and debugging; it slows everything down.
	Validation bool
	// OnMessage receives the warnings and errors the validation layer or driver reports. It may be called from
	// any goroutine, during any Vulkan call (with package locks held): it must not call into this package. Nil
	// drops them.
	OnMessage func(Message)
}

// Message is one diagnostic from the validation layer or driver.
type Message struct {
	Severity string // "error", "warning", "info" or "verbose"
	Type     string // "validation", "performance" or "general"
	ID       string // the message ID name, e.g. "VUID-vkCmdDispatch-None-02697"
	Text     string
}

// String formats the message on one line.
func (m Message) String() string {
	return fmt.Sprintf("%s %s: %s: %s", m.Type, m.Severity, m.ID, m.Text)
}

// Instance is a Vulkan instance: the entry point that enumerates adapters.
type Instance struct {
	loader     *vk.Loader
	h          vk.Instance
	fn         *vk.InstanceFuncs
	apiVersion uint32
	validation bool
	// validationSpec is the Vulkan header version the validation layer was
	// written for: extensions newer than it are not used under it.
	validationSpec uint32
	messenger      vk.DebugUtilsMessengerEXT
	cbID           uintptr
	closed         bool
}

// CreateInstance loads Vulkan and creates an instance. Without a loader it fails with an error for which
// Unavailable is true.
func CreateInstance(desc *InstanceDescriptor) (*Instance, error) {
	if desc == nil {
		desc = &InstanceDescriptor{}
	}
	l, err := vk.Load()
	if err != nil {
		return nil, err
	}
	var loaderVersion uint32
	if err := check("vkEnumerateInstanceVersion", l.Global.EnumerateInstanceVersion(&loaderVersion)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLoader, err)
	}
	if loaderVersion < vk.MakeAPIVersion(1, 1, 0) {
		return nil, fmt.Errorf("%w: loader supports Vulkan %s, 1.1 needed", ErrNoLoader, vk.VersionString(loaderVersion))
	}
	inst := &Instance{loader: l, apiVersion: min(loaderVersion, vk.MakeAPIVersion(1, 3, 0))}
	exts, err := instanceExtensions(l, "")
	if err != nil {
		return nil, err
	}
	var enableExts, layers []string
	var flags vk.InstanceCreateFlags
	syncValidation := false
	if exts["VK_KHR_portability_enumeration"] {
		enableExts = append(enableExts, "VK_KHR_portability_enumeration")
		flags |= vk.InstanceCreateEnumeratePortabilityBitKHR
	}
	if desc.Validation {
		if ok, spec, err := hasLayer(l, ValidationLayer); err != nil {
			return nil, err
		} else if ok {
			layers = append(layers, ValidationLayer)
			inst.validation, inst.validationSpec = true, spec
			lexts, err := instanceExtensions(l, ValidationLayer)
			if err != nil {
				return nil, err
			}
			if !exts["VK_EXT_debug_utils"] && !lexts["VK_EXT_debug_utils"] {
				return nil, errorf(ErrMissingFeature, "validation layer without VK_EXT_debug_utils")
			}
			enableExts = append(enableExts, "VK_EXT_debug_utils")
			syncValidation = lexts["VK_EXT_validation_features"]
			if syncValidation {
				enableExts = append(enableExts, "VK_EXT_validation_features")
			}
		}
	}
	var a vk.Arena
	defer a.Release()
	app := vk.New[vk.ApplicationInfo](&a)
	app.PApplicationName = a.CString("wgpu-eval")
	app.PEngineName = a.CString("wgpu-eval/wgpu")
	app.ApiVersion = inst.apiVersion
	ci := vk.New[vk.InstanceCreateInfo](&a)
	ci.Flags = flags
	ci.PApplicationInfo = app
	ci.EnabledLayerCount, ci.PpEnabledLayerNames = uint32(len(layers)), a.CStrings(layers)
	ci.EnabledExtensionCount, ci.PpEnabledExtensionNames = uint32(len(enableExts)), a.CStrings(enableExts)
	var mci *vk.DebugUtilsMessengerCreateInfoEXT
	if inst.validation {
		inst.cbID = registerCallback(desc.OnMessage)
		mci = vk.New[vk.DebugUtilsMessengerCreateInfoEXT](&a)
		mci.MessageSeverity = vk.DebugUtilsMessageSeverityWarningBitEXT | vk.DebugUtilsMessageSeverityErrorBitEXT
		mci.MessageType = vk.DebugUtilsMessageTypeGeneralBitEXT | vk.DebugUtilsMessageTypeValidationBitEXT |
			vk.DebugUtilsMessageTypePerformanceBitEXT
		mci.PfnUserCallback = messengerCallback()
		*(*uintptr)(unsafe.Pointer(&mci.PUserData)) = inst.cbID // an ID, not a pointer
		ci.PNext = unsafe.Pointer(mci)                          // also covers vkCreateInstance itself
		if syncValidation {
			vf := vk.New[vk.ValidationFeaturesEXT](&a)
			enable := vk.NewSlice[vk.ValidationFeatureEnableEXT](&a, 1)
			enable[0] = vk.ValidationFeatureEnableSynchronizationValidationEXT
			vf.EnabledValidationFeatureCount, vf.PEnabledValidationFeatures = 1, &enable[0]
			vf.PNext, mci.PNext = mci.PNext, unsafe.Pointer(vf)
		}
	}
	if err := check("vkCreateInstance", l.Global.CreateInstance(ci, nil, &inst.h)); err != nil {
		unregisterCallback(inst.cbID)
		return nil, err
	}
	if inst.fn, err = l.LoadInstance(inst.h); err != nil {
		inst.Close()
		return nil, err
	}
	if mci != nil {
		mci.PNext = nil // the validation features were for vkCreateInstance only
		if err := check("vkCreateDebugUtilsMessengerEXT", inst.fn.CreateDebugUtilsMessengerEXT(inst.h, mci, nil, &inst.messenger)); err != nil {
			inst.Close()
			return nil, err
		}
	}
	return inst, nil
}

// ValidationEnabled reports whether the validation layer is active (requested and installed).
func (i *Instance) ValidationEnabled() bool { return i.validation }

// APIVersion is the Vulkan version the instance was created for, e.g. "1.3.0".
func (i *Instance) APIVersion() string { return vk.VersionString(i.apiVersion) }

// Close destroys the instance. Devices created from it must be closed first.
func (i *Instance) Close() error {
	if i.closed {
		return nil
	}
	i.closed = true
	if i.fn != nil && i.fn.HasDestroyInstance() {
		if i.messenger != 0 {
			i.fn.DestroyDebugUtilsMessengerEXT(i.h, i.messenger, nil)
		}
		i.fn.DestroyInstance(i.h, nil)
	}
	unregisterCallback(i.cbID)
	return nil
}

// EnumerateAdapters lists every physical device, best first (discrete, integrated, virtual, CPU). No device at
// all is ErrNoDriver.
func (i *Instance) EnumerateAdapters() ([]*Adapter, error) {
	if i.closed {
		return nil, ErrClosed
	}
	var n uint32
	if err := check("vkEnumeratePhysicalDevices", i.fn.EnumeratePhysicalDevices(i.h, &n, nil)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDriver, err)
	}
	if n == 0 {
		return nil, ErrNoDriver
	}
	pds := make([]vk.PhysicalDevice, n)
	if err := check("vkEnumeratePhysicalDevices", i.fn.EnumeratePhysicalDevices(i.h, &n, &pds[0])); err != nil {
		return nil, err
	}
	var out []*Adapter
	for _, pd := range pds[:n] {
		a, err := newAdapter(i, pd)
		if err != nil {
			return nil, err
		}
		if a != nil {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no device with a compute queue and Vulkan 1.1", ErrNoDriver)
	}
	sort.SliceStable(out, func(x, y int) bool { return typeRank[out[x].info.DeviceType] < typeRank[out[y].info.DeviceType] })
	return out, nil
}

var typeRank = map[string]int{"discrete-gpu": 0, "integrated-gpu": 1, "virtual-gpu": 2, "other": 3, "cpu": 4}

// RequestAdapter returns the best adapter for want == "", the adapter at that index of EnumerateAdapters' order
// for a decimal want ("0", "1"), or else the first whose name contains want (case-insensitive).
func (i *Instance) RequestAdapter(want string) (*Adapter, error) {
	as, err := i.EnumerateAdapters()
	if err != nil {
		return nil, err
	}
	if k, err := strconv.Atoi(want); err == nil {
		if k < 0 || k >= len(as) {
			return nil, fmt.Errorf("%w: adapter index %d, have %d adapters", ErrNoDriver, k, len(as))
		}
		return as[k], nil
	}
	nameContains := want
	for _, a := range as {
		if nameContains == "" || strings.Contains(strings.ToLower(a.info.Name), strings.ToLower(nameContains)) {
			return a, nil
		}
	}
	return nil, fmt.Errorf("%w: no adapter named like %q", ErrNoDriver, nameContains)
}

// EnumerateAdapters creates a temporary instance and returns the info of every adapter, best first: what
// `wgpu-eval devices` prints.
func EnumerateAdapters() ([]AdapterInfo, error) {
	inst, err := CreateInstance(nil)
	if err != nil {
		return nil, err
	}
	defer inst.Close()
	as, err := inst.EnumerateAdapters()
	if err != nil {
		return nil, err
	}
	out := make([]AdapterInfo, len(as))
	for k, a := range as {
		out[k] = a.Info()
	}
	return out, nil
}

func instanceExtensions(l *vk.Loader, layer string) (map[string]bool, error) {
	var a vk.Arena
	defer a.Release()
	var lp *byte
	if layer != "" {
		lp = a.CString(layer)
	}
	var n uint32
	if err := check("vkEnumerateInstanceExtensionProperties", l.Global.EnumerateInstanceExtensionProperties(lp, &n, nil)); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	if n == 0 {
		return out, nil
	}
	props := vk.NewSlice[vk.ExtensionProperties](&a, int(n))
	r := l.Global.EnumerateInstanceExtensionProperties(lp, &n, &props[0])
	if r != vk.Success && r != vk.Incomplete {
		return nil, check("vkEnumerateInstanceExtensionProperties", r)
	}
	for _, p := range props[:n] {
		out[vk.BytesString(p.ExtensionName[:])] = true
	}
	return out, nil
}

// hasLayer reports whether the instance layer name is installed, and the
// Vulkan header version it was written for (its specVersion).
func hasLayer(l *vk.Loader, name string) (ok bool, spec uint32, err error) {
	var n uint32
	if err := check("vkEnumerateInstanceLayerProperties", l.Global.EnumerateInstanceLayerProperties(&n, nil)); err != nil || n == 0 {
		return false, 0, err
	}
	props := make([]vk.LayerProperties, n)
	r := l.Global.EnumerateInstanceLayerProperties(&n, &props[0])
	if r != vk.Success && r != vk.Incomplete {
		return false, 0, check("vkEnumerateInstanceLayerProperties", r)
	}
	for _, p := range props[:n] {
		if vk.BytesString(p.LayerName[:]) == name {
			return true, p.SpecVersion, nil
		}
	}
	return false, 0, nil
}

// The debug messenger callback is one C function pointer for the whole process (purego callbacks cannot be
// freed); instances are told apart by an ID passed as pUserData.
var callbacks struct {
	sync.Mutex
	fn   uintptr
	next uintptr
	m    map[uintptr]func(Message)
}

func registerCallback(f func(Message)) uintptr {
	callbacks.Lock()
	defer callbacks.Unlock()
	if callbacks.m == nil {
		callbacks.m = map[uintptr]func(Message){}
	}
	callbacks.next++
	callbacks.m[callbacks.next] = f
	return callbacks.next
}

func unregisterCallback(id uintptr) {
	callbacks.Lock()
	delete(callbacks.m, id)
	callbacks.Unlock()
}

func messengerCallback() uintptr {
	callbacks.Lock()
	defer callbacks.Unlock()
	if callbacks.fn == 0 {
		callbacks.fn = vk.NewCallback(onMessage)
	}
	return callbacks.fn
}

// onMessage is PFN_vkDebugUtilsMessengerCallbackEXT.
func onMessage(severity, types, data, user uintptr) uintptr {
	callbacks.Lock()
	f := callbacks.m[user]
	callbacks.Unlock()
	if f == nil || data == 0 {
		return 0
	}
	d := vk.CallbackData(data)
	m := Message{ID: vk.GoString(d.PMessageIdName), Text: vk.GoString(d.PMessage), Severity: "verbose", Type: "general"}
	switch s := vk.DebugUtilsMessageSeverityFlagsEXT(uint32(severity)); {
	case s&vk.DebugUtilsMessageSeverityErrorBitEXT != 0:
		m.Severity = "error"
	case s&vk.DebugUtilsMessageSeverityWarningBitEXT != 0:
		m.Severity = "warning"
	case s&vk.DebugUtilsMessageSeverityInfoBitEXT != 0:
		m.Severity = "info"
	}
	switch t := vk.DebugUtilsMessageTypeFlagsEXT(uint32(types)); {
	case t&vk.DebugUtilsMessageTypeValidationBitEXT != 0:
		m.Type = "validation"
	case t&vk.DebugUtilsMessageTypePerformanceBitEXT != 0:
		m.Type = "performance"
	}
	f(m)
	return 0
}

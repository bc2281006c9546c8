package wgpu

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// The pipeline cache file: pipelineCacheMagic, the SHA-256 of the driver's
// data, then the data (what vkGetPipelineCacheData gives, which starts
// with Vulkan's pipeline cache header). A driver is handed only data that
// passes pipelineCacheData's checks: a damaged or foreign file then costs a
// cold cache, never whatever a driver does with bytes it did not write.

// pipelineCacheMagic starts a pipeline cache file.
const pipelineCacheMagic = "wgpu-eval pipeline cache 1\n"

// pipelineCacheHeaderOne is Vulkan's VK_PIPELINE_CACHE_HEADER_VERSION_ONE,
// whose header (VkPipelineCacheHeaderVersionOne) is: header size, version,
// vendor ID, device ID (uint32s in the host's byte order) and the pipeline
// cache UUID (16 bytes).
const (
	pipelineCacheHeaderOne     = 1
	pipelineCacheHeaderOneSize = 32
)

// pipelineCacheFile is the file's contents for the driver's data.
func pipelineCacheFile(data []byte) []byte {
	sum := sha256.Sum256(data)
	out := make([]byte, 0, len(pipelineCacheMagic)+len(sum)+len(data))
	out = append(out, pipelineCacheMagic...)
	out = append(out, sum[:]...)
	return append(out, data...)
}

// errCacheFormat is pipelineCacheData's error for a file that does not
// start with pipelineCacheMagic: an older wgpu-eval's (the driver's data
// alone), which a new build simply replaces.
var errCacheFormat = errors.New("not a wgpu-eval pipeline cache of this version")

// pipelineCacheData is the driver's data in a pipeline cache file's
// contents, or why there is none to use: not a file of this format
// (errCacheFormat), a checksum that does not match (a truncated or altered
// file), or data whose Vulkan header is not the device's (size and version,
// then the vendor and device IDs and the pipeline cache UUID of info, where
// the header is of version one).
func pipelineCacheData(file []byte, info AdapterInfo) ([]byte, error) {
	rest, ok := bytes.CutPrefix(file, []byte(pipelineCacheMagic))
	if !ok {
		return nil, errCacheFormat
	}
	if len(rest) < sha256.Size {
		return nil, fmt.Errorf("truncated: %d bytes", len(file))
	}
	data := rest[sha256.Size:]
	if sum := sha256.Sum256(data); !bytes.Equal(sum[:], rest[:sha256.Size]) {
		return nil, errors.New("its checksum does not match (a truncated or damaged file)")
	}
	if len(data) < pipelineCacheHeaderOneSize {
		return nil, fmt.Errorf("%d bytes of data, shorter than Vulkan's pipeline cache header", len(data))
	}
	ne := binary.NativeEndian // Vulkan's header is in the host's byte order
	size, version := ne.Uint32(data[0:]), ne.Uint32(data[4:])
	if size < pipelineCacheHeaderOneSize || uint64(size) > uint64(len(data)) {
		return nil, fmt.Errorf("a header of %d bytes in %d of data", size, len(data))
	}
	if version != pipelineCacheHeaderOne {
		return data, nil // another header version (Vulkan SC's): the checksum vouches for the bytes, the driver for the rest
	}
	var uuid [16]byte
	copy(uuid[:], data[16:32])
	vendor, device := ne.Uint32(data[8:]), ne.Uint32(data[12:])
	if vendor != info.VendorID || device != info.DeviceID || uuidString(uuid) != info.PipelineCacheUUID {
		return nil, fmt.Errorf("data of another device or driver (vendor %#x, device %#x, cache UUID %s; this one %#x, %#x, %s)",
			vendor, device, uuidString(uuid), info.VendorID, info.DeviceID, info.PipelineCacheUUID)
	}
	return data, nil
}

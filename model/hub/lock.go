package hub

import "github.com/wgpu-eval/wgpu-eval/internal/download"

// lockFile takes the lock of one blob's download (download.LockFile).
var lockFile = download.LockFile

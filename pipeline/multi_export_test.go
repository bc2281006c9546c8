package pipeline

// NewMultiForTest is what OpenBackend gives for --device all, over parts of
// the caller's choosing (such as two devices on one software adapter, which
// all never picks), for the external tests.
func NewMultiForTest(parts ...Backend) Backend { return &multi{parts: parts} }

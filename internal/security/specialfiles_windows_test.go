package security

// makeFIFO does nothing: Windows has no named pipes in the file system, so
// the fixture simply lacks the entry (which is then unreadable anyway).
func makeFIFO(string) error { return nil }

// makeCharDevice does nothing on Windows (no device nodes).
func makeCharDevice(string) {}

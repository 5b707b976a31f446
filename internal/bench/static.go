package bench

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
)

// dynamicELF reports whether the file at path is an ELF executable linked
// against a dynamic loader (it has a PT_INTERP header): a Go binary built
// with cgo, which maps libc and ld.so into every process. A file that is
// not ELF (a macOS or Windows binary) is not.
func dynamicELF(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) || errors.Is(err, io.EOF) {
			return false, nil // not an ELF file
		}
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true, nil
		}
	}
	return false, nil
}

// checkCompare refuses a -compare binary that cannot be compared with the
// runtime this run builds (CGO_ENABLED=0, a static binary): a cgo build
// maps libc and ld.so, which measured 1.3–2 MiB more peak RSS and ~10%
// slower to its initialize answer for the same source.
func checkCompare(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("-compare: %w", err)
	}
	dyn, err := dynamicELF(path)
	if err != nil {
		return fmt.Errorf("-compare: %w", err)
	}
	if dyn {
		return fmt.Errorf("-compare %s is dynamically linked (built with cgo); build it as this run builds the runtime, "+
			"CGO_ENABLED=0 go build -o BIN ./cmd/interop-runtime, or its memory and start-up include libc's", path)
	}
	return nil
}

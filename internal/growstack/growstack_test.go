package growstack

import (
	"runtime"
	"testing"
)

// stackInUse runs f on a new goroutine and returns how many more bytes of
// goroutine stack are in use while that goroutine is parked after f.
func stackInUse(t *testing.T, f func()) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	parked, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	runtime.GC()
	runtime.ReadMemStats(&before)
	go func() {
		defer close(done)
		f()
		close(parked)
		<-release
	}()
	<-parked
	runtime.ReadMemStats(&after)
	close(release)
	<-done
	if after.StackInuse < before.StackInuse {
		return 0
	}
	return after.StackInuse - before.StackInuse
}

func TestGrowGivesTheGoroutineRoom(t *testing.T) {
	// Another goroutine of the test binary may start or end between the
	// two reads; the grown stack (128 KiB) is far above that noise (a new
	// goroutine's stack is a few KiB), so the smallest of a few tries is
	// compared.
	least := func(f func()) uint64 {
		m := ^uint64(0)
		for range 5 {
			m = min(m, stackInUse(t, f))
		}
		return m
	}
	plain := least(func() {})
	grown := least(Grow)
	if grown < Room {
		t.Fatalf("after Grow the goroutine's stack grew by %d bytes; want at least Room (%d); without Grow %d", grown, Room, plain)
	}
	if plain >= Room {
		t.Fatalf("a goroutine that did not call Grow holds %d bytes of stack: the measure cannot tell Grow apart", plain)
	}
}

func TestGrowOnAGrownStackKeepsIt(t *testing.T) {
	twice := stackInUse(t, func() { Grow(); Grow() })
	if twice >= 4*Room {
		t.Fatalf("Grow twice: stack grew by %d bytes; the second Grow should have found room", twice)
	}
}

func BenchmarkGrowOnAGrownStack(b *testing.B) {
	Grow()
	for b.Loop() {
		Grow()
	}
}

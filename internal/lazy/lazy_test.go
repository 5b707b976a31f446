package lazy

import (
	"sync"
	"testing"
)

var (
	calls   int
	counted = Value[int]{New: func() int { calls++; return 42 }}
	word    = Regexp{Expr: `^[a-z]+$`}
	broken  = Regexp{Expr: `(`}
	failing = Value[string]{New: func() string { panic("no") }}
)

func TestValueIsBuiltOnceOnFirstUse(t *testing.T) {
	if calls != 0 {
		t.Fatalf("New ran %d times before the first Get", calls)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := counted.Get(); got != 42 {
				t.Errorf("Get() = %d, want 42", got)
			}
		})
	}
	wg.Wait()
	if calls != 1 {
		t.Fatalf("New ran %d times, want 1", calls)
	}
}

func TestRegexp(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{{"abc", true}, {"ab1", false}, {"", false}}
	for _, tt := range tests {
		if got := word.Get().MatchString(tt.in); got != tt.want {
			t.Errorf("MatchString(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if first, second := word.Get(), word.Get(); first != second {
		t.Error("Get compiled the expression twice")
	}
}

// TestPanicsRepeat checks that a value whose construction panicked panics
// on every Get, as sync.OnceValue does, instead of returning a zero value.
func TestPanicsRepeat(t *testing.T) {
	tests := []struct {
		name string
		get  func()
	}{
		{"regexp", func() { broken.Get() }},
		{"value", func() { failing.Get() }},
	}
	for _, tt := range tests {
		for i := range 2 {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: Get %d did not panic", tt.name, i+1)
					}
				}()
				tt.get()
			}()
		}
	}
}

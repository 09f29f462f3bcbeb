// Package limit rate-limits clients of the gateway with fixed windows.
package limit

import (
	"sync"
	"time"
)

// Clock tells the time; tests pass a fake one.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

type window struct {
	start time.Time
	count int
}

// Limiter allows at most Rate requests per client in each window of length Per.
type Limiter struct {
	Rate  int
	Per   time.Duration
	clock Clock

	mu      sync.Mutex
	windows map[string]*window
}

// NewLimiter returns a limiter on the system clock.
func NewLimiter(rate int, per time.Duration) *Limiter {
	return NewLimiterWithClock(rate, per, systemClock{})
}

// NewLimiterWithClock returns a limiter reading time from clock.
func NewLimiterWithClock(rate int, per time.Duration, clock Clock) *Limiter {
	return &Limiter{Rate: rate, Per: per, clock: clock, windows: make(map[string]*window)}
}

// Allow reports whether client may make a request now, and counts it if so.
func (l *Limiter) Allow(client string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	w, ok := l.windows[client]
	if !ok {
		w = &window{start: now}
		l.windows[client] = w
	}
	if w.count >= l.Rate {
		return false
	}
	w.count++
	return true
}

// Forget drops the state of clients idle for longer than one window.
func (l *Limiter) Forget() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	dropped := 0
	for id, w := range l.windows {
		if now.Sub(w.start) > l.Per {
			delete(l.windows, id)
			dropped++
		}
	}
	return dropped
}

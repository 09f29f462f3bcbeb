// Package queue holds the gateway's per-topic message queues.
package queue

import (
	"errors"
	"sync"
)

// ErrFull is returned by Push when the queue is at capacity.
var ErrFull = errors.New("queue: full")

// Message is what the gateway queues: a topic, a sequence number and a body.
type Message struct {
	Topic    string
	Sequence uint64
	Body     []byte
}

// Queue is a bounded FIFO queue safe for concurrent use.
type Queue struct {
	mu       sync.Mutex
	items    []Message
	capacity int
}

// New returns an empty queue holding at most capacity messages.
func New(capacity int) *Queue {
	if capacity <= 0 {
		capacity = 1
	}
	return &Queue{capacity: capacity}
}

// Push appends m, or returns ErrFull.
func (q *Queue) Push(m Message) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) >= q.capacity {
		return ErrFull
	}
	q.items = append(q.items, m)
	return nil
}

// Pop removes and returns the oldest message; ok is false when the queue is empty.
func (q *Queue) Pop() (m Message, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	m = q.items[0]
	q.items = q.items[1:]
	return m, true
}

// Len reports how many messages are queued.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Drain removes and returns every queued message, oldest first.
func (q *Queue) Drain() []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out
}

// Command relayd runs the relay gateway: it accepts messages over HTTP, queues
// them per topic and rate-limits publishers.
package main

import (
	"io"
	"log"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/navbench/relay/gateway/limit"
	"github.com/navbench/relay/gateway/queue"
)

type server struct {
	mu      sync.Mutex
	queues  map[string]*queue.Queue
	limiter *limit.Limiter
	seq     uint64
}

func newServer() *server {
	return &server{queues: make(map[string]*queue.Queue), limiter: limit.NewLimiter(100, time.Minute)}
}

func (s *server) queueFor(topic string) *queue.Queue {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.queues[topic]
	if !ok {
		q = queue.New(1024)
		s.queues[topic] = q
	}
	return q
}

func (s *server) publish(w http.ResponseWriter, r *http.Request) {
	if !s.limiter.Allow(r.RemoteAddr) {
		http.Error(w, "rate limited", http.StatusTooManyRequests)
		return
	}
	topic := strings.TrimPrefix(r.URL.Path, "/publish/")
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	if err := s.queueFor(topic).Push(queue.Message{Topic: topic, Sequence: seq, Body: body}); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (s *server) next(w http.ResponseWriter, r *http.Request) {
	topic := strings.TrimPrefix(r.URL.Path, "/next/")
	m, ok := s.queueFor(topic).Pop()
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Write(m.Body)
}

func main() {
	s := newServer()
	http.HandleFunc("/publish/", s.publish)
	http.HandleFunc("/next/", s.next)
	log.Fatal(http.ListenAndServe(":8080", nil))
}

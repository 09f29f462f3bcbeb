//! The stdio guard: everything a server writes to its stdout passes through
//! [`StdoutGuard`] before rmcp reads it, and everything we write to its stdin through
//! [`StdinWatch`], so that the ways a server can break the MCP stdio transport are
//! noticed at once and named, instead of surfacing as a call that times out:
//!
//! - a line that is not a JSON-RPC message (a banner, a `print`, a torn object) — rmcp
//!   itself skips such lines silently;
//! - a message longer than [`MAX_MESSAGE_BYTES`] (e.g. a 50 MB result): it is cut, not
//!   buffered, so memory stays bounded;
//! - a response whose `id` matches no request in flight (the ids of our requests are
//!   read from what we write to stdin).
//!
//! The first such [`Incident`] is published on a `watch` channel; the session waits on
//! it beside every response and then kills the server. Whole, valid lines are passed
//! on unchanged.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;

/// The largest message accepted from a server. A tool result this big is far beyond
/// what an agent's context could take, so a bigger one is a broken server: the message
/// is cut and the call fails instead of the harness buffering it.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// How much of an offending line an incident quotes.
const QUOTE_BYTES: usize = 200;

/// How a server broke the stdio transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incident {
    /// What happened, quoting the offending output.
    pub message: String,
    /// Bytes of the offending message received before it was cut (oversized
    /// messages); 0 otherwise.
    pub bytes: usize,
}

/// State shared by both directions of one session's guard.
#[derive(Debug)]
struct Shared {
    incident: watch::Sender<Option<Incident>>,
    /// Ids (as compact JSON) of the requests we sent that have no response yet.
    in_flight: Mutex<HashSet<String>>,
}

impl Shared {
    fn report(&self, incident: Incident) {
        self.incident.send_if_modified(|slot| {
            if slot.is_some() {
                return false;
            }
            tracing::warn!("MCP server broke the stdio transport: {}", incident.message);
            *slot = Some(incident);
            true
        });
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Wraps a server's stdout and stdin; returns them with the receiver of incidents.
pub fn guard<R, W>(
    stdout: R,
    stdin: W,
) -> (
    StdoutGuard<R>,
    StdinWatch<W>,
    watch::Receiver<Option<Incident>>,
) {
    let (tx, rx) = watch::channel(None);
    let shared = Arc::new(Shared {
        incident: tx,
        in_flight: Mutex::new(HashSet::new()),
    });
    let out = StdoutGuard {
        inner: stdout,
        shared: shared.clone(),
        chunk: vec![0; 64 * 1024],
        line: Vec::new(),
        discarding: None,
        ready: Vec::new(),
        ready_pos: 0,
    };
    let input = StdinWatch {
        inner: stdin,
        shared,
        pending: Vec::new(),
    };
    (out, input, rx)
}

/// The parts of a JSON-RPC message the guard looks at; parsing into it also checks
/// that the whole line is one JSON object.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

fn quote(line: &[u8]) -> String {
    let cut = &line[..line.len().min(QUOTE_BYTES)];
    let mut q = String::from_utf8_lossy(cut).into_owned();
    if line.len() > QUOTE_BYTES {
        q.push('…');
    }
    format!("{q:?}")
}

/// A server's stdout, passing on only whole, valid JSON-RPC lines.
pub struct StdoutGuard<R> {
    inner: R,
    shared: Arc<Shared>,
    chunk: Vec<u8>,
    /// The line being received (never longer than [`MAX_MESSAGE_BYTES`]).
    line: Vec<u8>,
    /// Bytes of an oversized line dropped so far, until its newline.
    discarding: Option<usize>,
    /// Checked lines not yet handed to the reader.
    ready: Vec<u8>,
    ready_pos: usize,
}

impl<R> StdoutGuard<R> {
    /// Takes in bytes read from the server.
    fn take_in(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|b| *b == b'\n');
            let (seg, rest) = match newline {
                Some(i) => (&bytes[..i], &bytes[i + 1..]),
                None => (bytes, &[][..]),
            };
            bytes = rest;
            if let Some(dropped) = &mut self.discarding {
                *dropped += seg.len();
                if newline.is_some() {
                    self.discarding = None;
                }
                continue;
            }
            if self.line.len() + seg.len() > MAX_MESSAGE_BYTES {
                let received = self.line.len() + seg.len();
                self.shared.report(Incident {
                    message: format!(
                        "the server sent a message of more than {MAX_MESSAGE_BYTES} bytes (the limit); it was cut after {received} bytes, starting {}",
                        quote(&self.line)
                    ),
                    bytes: received,
                });
                self.line = Vec::new();
                if newline.is_none() {
                    self.discarding = Some(received);
                }
                continue;
            }
            self.line.extend_from_slice(seg);
            if newline.is_some() {
                let line = std::mem::take(&mut self.line);
                self.check(&line);
                self.ready.extend_from_slice(&line);
                self.ready.push(b'\n');
            }
        }
    }

    /// Checks one whole line from the server.
    fn check(&self, line: &[u8]) {
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            return;
        }
        let probe = match serde_json::from_slice::<Probe>(trimmed) {
            Ok(p) => p,
            Err(e) => {
                self.shared.report(Incident {
                    message: format!(
                        "the server wrote a line to stdout that is not a JSON-RPC message ({e}): {}; over stdio, stdout may carry only MCP messages (logs belong on stderr)",
                        quote(trimmed)
                    ),
                    bytes: 0,
                });
                return;
            }
        };
        if probe.method.is_none()
            && let Some(id) = probe.id
        {
            let key = id.to_string();
            if !self.shared.in_flight().remove(&key) {
                self.shared.report(Incident {
                    message: format!(
                        "the server answered with id {key}, which matches no request in flight (a response must carry its request's id): {}",
                        quote(trimmed)
                    ),
                    bytes: 0,
                });
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for StdoutGuard<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.ready_pos < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.ready_pos);
                buf.put_slice(&this.ready[this.ready_pos..this.ready_pos + n]);
                this.ready_pos += n;
                if this.ready_pos == this.ready.len() {
                    this.ready.clear();
                    this.ready_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            let mut chunk = std::mem::take(&mut this.chunk);
            let mut rb = ReadBuf::new(&mut chunk);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut rb);
            let n = rb.filled().len();
            let result = match polled {
                Poll::Pending => Some(Poll::Pending),
                Poll::Ready(Err(e)) => Some(Poll::Ready(Err(e))),
                // End of stream: a line without its newline is not a message.
                Poll::Ready(Ok(())) if n == 0 => Some(Poll::Ready(Ok(()))),
                Poll::Ready(Ok(())) => {
                    this.take_in(&chunk[..n]);
                    None
                }
            };
            this.chunk = chunk;
            if let Some(r) = result {
                return r;
            }
        }
    }
}

/// A server's stdin, noting the id of every request written to it.
pub struct StdinWatch<W> {
    inner: W,
    shared: Arc<Shared>,
    /// The start of a line whose end has not been written yet.
    pending: Vec<u8>,
}

impl<W> StdinWatch<W> {
    /// Registers the ids of the requests in the lines `buf` completes, before they are
    /// written, so a fast response can never arrive before its id is known.
    fn register(&self, buf: &[u8]) {
        let mut start = 0;
        let mut first = true;
        for (i, b) in buf.iter().enumerate() {
            if *b != b'\n' {
                continue;
            }
            let parsed = if first && !self.pending.is_empty() {
                let mut line = self.pending.clone();
                line.extend_from_slice(&buf[..i]);
                serde_json::from_slice::<Probe>(&line).ok()
            } else {
                serde_json::from_slice::<Probe>(&buf[start..i]).ok()
            };
            first = false;
            start = i + 1;
            if let Some(Probe {
                id: Some(id),
                method: Some(_),
            }) = parsed
            {
                self.shared.in_flight().insert(id.to_string());
            }
        }
    }

    /// Keeps the unfinished end of what was written.
    fn written(&mut self, bytes: &[u8]) {
        match bytes.iter().rposition(|b| *b == b'\n') {
            Some(i) => {
                self.pending.clear();
                self.pending.extend_from_slice(&bytes[i + 1..]);
            }
            None => self.pending.extend_from_slice(bytes),
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for StdinWatch<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.register(buf);
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &polled {
            this.written(&buf[..*n]);
        }
        polled
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// Feeds `server_output` through a guard (after `sent` went to stdin) and returns
    /// what rmcp would read and the incident, if any.
    async fn run(sent: &[u8], server_output: &[u8]) -> (Vec<u8>, Option<Incident>) {
        let (mut out, mut input, rx) = guard(server_output, Vec::new());
        input.write_all(sent).await.unwrap();
        let mut passed = Vec::new();
        out.read_to_end(&mut passed).await.unwrap();
        let incident = rx.borrow().clone();
        (passed, incident)
    }

    #[tokio::test]
    async fn valid_lines_pass_unchanged() {
        let sent = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}\n";
        let got = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n";
        let (passed, incident) = run(sent, got).await;
        assert_eq!(incident, None);
        assert_eq!(passed, got);
    }

    #[tokio::test]
    async fn non_json_wrong_ids_and_huge_messages_are_incidents() {
        let sent = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}\n";
        let (_, i) = run(sent, b"Server ready!\n").await;
        let msg = i.expect("incident").message;
        assert!(
            msg.contains("not a JSON-RPC message") && msg.contains("Server ready!"),
            "{msg}"
        );

        let (_, i) = run(sent, b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n").await;
        let msg = i.expect("incident").message;
        assert!(
            msg.contains("id 7") && msg.contains("no request in flight"),
            "{msg}"
        );
        let (_, i) = run(sent, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await;
        assert_eq!(i, None);

        let mut huge = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"".to_vec();
        huge.resize(MAX_MESSAGE_BYTES + 10, b'x');
        huge.extend_from_slice(b"\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        let (passed, i) = run(sent, &huge).await;
        let i = i.expect("incident");
        assert!(
            i.message.contains("more than") && i.bytes > MAX_MESSAGE_BYTES,
            "{i:?}"
        );
        // Only the line after the cut one is passed on.
        assert_eq!(passed, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    }
}

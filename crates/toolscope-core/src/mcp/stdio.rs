//! toolscope's stdio transport for MCP: JSON-RPC messages one per line on a server's stdin and
//! stdout, as rmcp's own transport frames them, but with toolscope's size limit and with every
//! line it cannot use reported as what it is.
//!
//! rmcp's `AsyncRwTransport` drops a line over its limit (16 MiB) and a line that is not JSON
//! with only a log record, so the call that waited for it ends, much later, as a timeout. Here:
//!
//! - a message over the limit ([`super::McpOptions::max_message`]) fails the call it answers at
//!   once, naming the limit: its id is read from the start of the line, which is kept; without
//!   a readable id every call waiting fails;
//! - a line that starts like JSON but does not parse (a cut message) fails the call it answers
//!   the same way, quoting the parse error and the start of the line;
//! - JSON that is not a message toolscope can read fails the call it answers (the server's
//!   request of that kind is answered with an error, as rmcp does);
//! - a line that is not JSON at all (a banner, a log line printed on stdout) fails nothing, and
//!   is said through the note sink, as is anything dropped that answers no waiting call.
//!
//! A failed call gets a JSON-RPC error response made here, so rmcp's service ends it as if the
//! server had answered with that error; such errors carry [`TRANSPORT_MARK`] in their `data`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::{ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// The `data` of the error responses this transport makes for a call it failed itself.
pub(super) const TRANSPORT_MARK: &str = "toolscope-stdio-transport";

/// How much of a line is quoted in a message about it.
const QUOTE_CHARS: usize = 160;

/// How much of an oversize line is kept to find its id.
const HEAD_BYTES: usize = 4096;

/// Where the transport says what it dropped that failed no call: one line of text.
pub(super) type NoteSink = Arc<dyn Fn(&str) + Send + Sync>;

/// A size in bytes for people: `256 MiB`, `1.5 MiB`, `900 KiB`, `12 bytes`.
pub(super) fn human_size(n: usize) -> String {
    const KIB: f64 = 1024.0;
    let f = n as f64;
    if f >= KIB * KIB {
        let mib = f / (KIB * KIB);
        if mib.fract() == 0.0 {
            format!("{mib:.0} MiB")
        } else {
            format!("{mib:.1} MiB")
        }
    } else if f >= KIB {
        format!("{:.0} KiB", f / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// The start of `bytes` as text to quote: at most [`QUOTE_CHARS`] characters, with `…` when
/// there is more.
pub(super) fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(QUOTE_CHARS * 4)]);
    let mut out: String = text
        .chars()
        .take(QUOTE_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if out.len() < bytes.len() {
        out.push('…');
    }
    out
}

// ---- lines, bounded ----

/// What [`LineReader::next`] read.
pub(super) enum LineRead {
    /// A whole line (without its `\n`) is in [`LineReader::line`].
    Line,
    /// A line went over the limit: it is dropped (the rest of it is skipped by the next calls)
    /// and its first bytes are given.
    Oversize(Vec<u8>),
    /// The stream ended (a last line without `\n` is dropped: a message cut by the exit).
    Eof,
    /// Reading failed.
    Io(std::io::Error),
}

/// Reads `\n`-ended lines of at most `max` bytes without ever holding more. Cancel-safe: a
/// read dropped half-way keeps what it read for the next call.
pub(super) struct LineReader<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    max: usize,
    /// Skipping the rest of a line that went over the limit.
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(super) fn new(read: R, max: usize) -> Self {
        LineReader {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            max: max.max(1),
            discarding: false,
        }
    }

    /// The line the last [`LineRead::Line`] read, with its `\n`.
    pub(super) fn line(&self) -> &[u8] {
        &self.line
    }

    /// Makes room for the next line; a buffer a big line grew is given back.
    fn reset(&mut self) {
        if self.line.capacity() > 1024 * 1024 {
            self.line = Vec::new();
        } else {
            self.line.clear();
        }
    }

    pub(super) async fn next(&mut self) -> LineRead {
        // The last line is done with.
        if self.line.last() == Some(&b'\n') {
            self.reset();
        }
        loop {
            let available = match self.read.fill_buf().await {
                Ok(a) => a,
                Err(e) => return LineRead::Io(e),
            };
            if available.is_empty() {
                self.reset();
                return LineRead::Eof;
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            if self.discarding {
                self.read.consume(take);
                if newline.is_some() {
                    self.discarding = false;
                }
                continue;
            }
            // The line without its `\n` must fit.
            let body = take - usize::from(newline.is_some());
            if self.line.len() + body > self.max {
                let mut head = std::mem::take(&mut self.line);
                head.truncate(HEAD_BYTES);
                let more = HEAD_BYTES.saturating_sub(head.len()).min(take);
                head.extend_from_slice(&available[..more]);
                self.read.consume(take);
                self.reset();
                self.discarding = newline.is_none();
                return LineRead::Oversize(head);
            }
            // The line keeps its `\n`, which marks it done for the next call.
            self.line.extend_from_slice(&available[..take]);
            self.read.consume(take);
            if newline.is_some() {
                return LineRead::Line;
            }
        }
    }
}

/// The line the last [`LineRead::Line`] read, without its `\n` (and a `\r` before it).
fn strip_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

// ---- the start of a message ----

/// What the start of a JSON-RPC message says about it, read without parsing it whole (it may be
/// cut, or too big to keep).
#[derive(Debug, Default, PartialEq)]
pub(super) struct Head {
    pub id: Option<RequestId>,
    /// It has a `method`: a request or a notification from the server.
    pub method: bool,
}

/// Reads the top-level members of the JSON object `bytes` starts with, as far as they go.
pub(super) fn scan_head(bytes: &[u8]) -> Head {
    let mut head = Head::default();
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return head;
    }
    at += 1;
    loop {
        at = skip_ws(bytes, at);
        if bytes.get(at) != Some(&b'"') {
            return head;
        }
        let Some(end) = string_end(bytes, at) else {
            return head;
        };
        let key = &bytes[at..end];
        at = skip_ws(bytes, end);
        if bytes.get(at) != Some(&b':') {
            return head;
        }
        at = skip_ws(bytes, at + 1);
        let Some(value_end) = value_end(bytes, at) else {
            return head;
        };
        let value = &bytes[at..value_end];
        match key {
            b"\"id\"" => {
                head.id = match serde_json::from_slice::<Value>(value) {
                    Ok(Value::Number(n)) => n.as_i64().map(RequestId::Number),
                    Ok(Value::String(s)) => Some(RequestId::String(s.into())),
                    _ => None,
                }
            }
            b"\"method\"" => head.method = true,
            _ => {}
        }
        at = skip_ws(bytes, value_end);
        match bytes.get(at) {
            Some(b',') => at += 1,
            _ => return head,
        }
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
        at += 1;
    }
    at
}

/// Where the string starting at `at` (on its `"`) ends, after its closing `"`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Where the JSON value starting at `at` ends; `None` when it is not complete in `bytes`.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let end = bytes[at..]
                .iter()
                .position(|&b| b == b',' || b == b'}' || b == b']' || b.is_ascii_whitespace())
                .map(|p| at + p)?;
            Some(end)
        }
    }
}

// ---- the transport ----

/// The requests sent and not answered yet, by id, with their method.
type Pending = Arc<Mutex<HashMap<RequestId, String>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// JSON-RPC over a server's stdout (`R`) and stdin (`W`), one message per line.
pub(super) struct StdioTransport<R, W> {
    lines: LineReader<R>,
    write: Arc<tokio::sync::Mutex<Option<W>>>,
    pending: Pending,
    /// Messages made here (errors for failed calls), given before reading on.
    ready: VecDeque<RxJsonRpcMessage<RoleClient>>,
    max: usize,
    /// How the limit is set, for the message about a line over it.
    limit_hint: String,
    note: NoteSink,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// `max`: the largest message read, in bytes; `limit_hint` says how to raise it.
    pub(super) fn new(read: R, write: W, max: usize, limit_hint: &str, note: NoteSink) -> Self {
        StdioTransport {
            lines: LineReader::new(read, max),
            write: Arc::new(tokio::sync::Mutex::new(Some(write))),
            pending: Arc::new(Mutex::new(HashMap::new())),
            ready: VecDeque::new(),
            max,
            limit_hint: limit_hint.to_string(),
            note,
        }
    }

    /// Ends the calls `ids` with `message` (the error rmcp gives the caller).
    fn fail(&mut self, ids: Vec<RequestId>, message: &str) {
        let mut pending = lock(&self.pending);
        for id in ids {
            pending.remove(&id);
            let error = json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32700, "message": message, "data": TRANSPORT_MARK},
            });
            match serde_json::from_value(error) {
                Ok(m) => self.ready.push_back(m),
                Err(e) => (self.note)(&format!("toolscope: {message} ({e})")),
            }
        }
    }

    /// A message that cannot be used: fails the call it answers (by the id at its start), or
    /// every waiting call when it has no readable id, or says so when it answers none.
    fn unusable(&mut self, start: &[u8], what: &str) {
        let head = scan_head(start);
        if head.method {
            (self.note)(&format!(
                "toolscope: dropped a request or notification from the server: {what}"
            ));
            if let Some(id) = head.id {
                self.refuse(id, what);
            }
            return;
        }
        let ids: Vec<RequestId> = {
            let pending = lock(&self.pending);
            match &head.id {
                Some(id) if pending.contains_key(id) => vec![id.clone()],
                Some(_) => Vec::new(),
                None => pending.keys().cloned().collect(),
            }
        };
        if ids.is_empty() {
            (self.note)(&format!(
                "toolscope: dropped a message from the server that answers no waiting call: {what}"
            ));
        } else {
            self.fail(ids, what);
        }
    }

    /// Answers the server's request `id` with an error (it could not be read).
    fn refuse(&self, id: RequestId, why: &str) {
        let answer = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32600, "message": format!("Invalid request: {why}")},
        });
        let mut line = answer.to_string().into_bytes();
        line.push(b'\n');
        let write = Arc::clone(&self.write);
        tokio::spawn(async move {
            if let Some(w) = write.lock().await.as_mut() {
                let _ = w.write_all(&line).await;
                let _ = w.flush().await;
            }
        });
    }

    /// One whole line: a message, or nothing (what it was is said or failed a call).
    fn read_message(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let line = strip_line(self.lines.line());
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let e = match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) {
            Ok(message) => {
                match &message {
                    JsonRpcMessage::Response(r) => {
                        lock(&self.pending).remove(&r.id);
                    }
                    JsonRpcMessage::Error(e) => {
                        if let Some(id) = &e.id {
                            lock(&self.pending).remove(id);
                        }
                    }
                    _ => {}
                }
                return Some(message);
            }
            Err(e) => e,
        };
        let line = line.to_vec();
        let first = line.iter().find(|b| !b.is_ascii_whitespace()).copied();
        match e.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof
                if !matches!(first, Some(b'{') | Some(b'[')) =>
            {
                // Not JSON at all: something printed on stdout by mistake. It answers nothing.
                (self.note)(&format!(
                    "toolscope: the server wrote a line that is not JSON on stdout (ignored): {}",
                    quote(&line)
                ));
            }
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                let what = format!(
                    "the server sent a message that is not valid JSON ({e}): {}",
                    quote(&line)
                );
                self.unusable(&line, &what);
            }
            _ => {
                let value: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
                let method = value.get("method").and_then(Value::as_str);
                let has_id = value.get("id").is_some_and(|v| !v.is_null());
                let answer_like = value.get("result").is_some() || value.get("error").is_some();
                match (method, has_id) {
                    (Some(m), false) => (self.note)(&format!(
                        "toolscope: ignored a notification \"{m}\" from the server that toolscope cannot read: {e}"
                    )),
                    // JSON, but nothing that answers or asks anything (`42`, `[]`, `{}`).
                    (None, false) if !answer_like => (self.note)(&format!(
                        "toolscope: ignored JSON from the server that is not a JSON-RPC message: {}",
                        quote(&line)
                    )),
                    _ => {
                        let what = match method {
                            Some(m) => format!("\"{m}\" cannot be read: {e}"),
                            None => format!(
                                "the server's answer cannot be read ({e}): {}",
                                quote(&line)
                            ),
                        };
                        self.unusable(&line, &what);
                    }
                }
            }
        }
        None
    }

    fn oversize(&mut self, head: &[u8]) {
        let what = format!(
            "the server sent a message larger than the limit of {} ({}); it was dropped",
            human_size(self.max),
            self.limit_hint
        );
        self.unusable(head, &what);
    }
}

impl<R, W> Transport<RoleClient> for StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            JsonRpcMessage::Request(r) => {
                lock(&self.pending).insert(r.id.clone(), r.request.method().to_string());
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    lock(&self.pending).remove(id);
                }
            }
            _ => {}
        }
        let line = serde_json::to_vec(&item).map(|mut l| {
            l.push(b'\n');
            l
        });
        let write = Arc::clone(&self.write);
        async move {
            let line = line.map_err(std::io::Error::other)?;
            let mut guard = write.lock().await;
            let Some(w) = guard.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the connection is closed",
                ));
            };
            w.write_all(&line).await?;
            w.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if let Some(m) = self.ready.pop_front() {
                return Some(m);
            }
            match self.lines.next().await {
                LineRead::Line => {
                    if let Some(m) = self.read_message() {
                        return Some(m);
                    }
                }
                LineRead::Oversize(head) => self.oversize(&head),
                LineRead::Eof => return None,
                LineRead::Io(e) => {
                    (self.note)(&format!("toolscope: reading from the server failed: {e}"));
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing the server's stdin asks it to exit.
        if let Some(mut w) = self.write.lock().await.take() {
            let _ = w.shutdown().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_gives_the_id_of_a_cut_or_huge_answer() {
        let h = scan_head(
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"abc"#,
        );
        assert_eq!(
            h,
            Head {
                id: Some(RequestId::Number(7)),
                method: false
            }
        );
        let h = scan_head(br#" { "result" : {"a":[1,{"id":3}]}, "id" : "x-1" }"#);
        assert_eq!(h.id, Some(RequestId::String("x-1".into())));
        let h = scan_head(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"#);
        assert_eq!(
            h,
            Head {
                id: None,
                method: true
            }
        );
        // An id after a member that is cut is not reached; text is not an object.
        assert_eq!(scan_head(br#"{"result":{"id":4"#).id, None);
        assert_eq!(scan_head(b"hello"), Head::default());
        assert_eq!(scan_head(br#"{"id":"unterminated"#).id, None);
        assert_eq!(scan_head(br#"{"id":12"#).id, None);
        assert_eq!(scan_head(br#"{"id":12,"#).id, Some(RequestId::Number(12)));
    }

    #[test]
    fn sizes_and_quotes_read_plainly() {
        assert_eq!(human_size(256 * 1024 * 1024), "256 MiB");
        assert_eq!(human_size(1536 * 1024), "1.5 MiB");
        assert_eq!(human_size(2048), "2 KiB");
        assert_eq!(human_size(12), "12 bytes");
        let long = "é".repeat(500);
        let q = quote(long.as_bytes());
        assert_eq!(q.chars().count(), QUOTE_CHARS + 1);
        assert!(q.ends_with('…'));
        assert_eq!(quote(b"a\tb"), "a b");
    }

    async fn read_all(input: &[u8], max: usize) -> Vec<String> {
        let mut r = LineReader::new(input, max);
        let mut out = Vec::new();
        loop {
            match r.next().await {
                LineRead::Line => out.push(String::from_utf8_lossy(r.line()).into_owned()),
                LineRead::Oversize(head) => {
                    out.push(format!("OVER {}", String::from_utf8_lossy(&head)))
                }
                LineRead::Eof => return out,
                LineRead::Io(e) => panic!("{e}"),
            }
        }
    }

    #[tokio::test]
    async fn lines_over_the_limit_are_cut_out_and_the_next_ones_read() {
        let input = b"short\n0123456789abc\nok\r\n\n0123456789\ncut";
        let lines = read_all(input, 10).await;
        assert_eq!(
            lines,
            [
                "short\n",
                "OVER 0123456789abc\n",
                "ok\r\n",
                "\n",
                "0123456789\n"
            ]
        );
    }

    #[tokio::test]
    async fn a_line_longer_than_the_read_buffer_is_read_whole_or_cut_at_the_limit() {
        let big = "y".repeat(200_000);
        let input = format!("{big}\n{big}\nafter\n");
        let whole = read_all(input.as_bytes(), 300_000).await;
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[0].len(), 200_001);
        let cut = read_all(input.as_bytes(), 100_000).await;
        assert_eq!(
            cut.len(),
            3,
            "{:?}",
            cut.iter().map(String::len).collect::<Vec<_>>()
        );
        assert_eq!(cut[0], format!("OVER {}", &big[..HEAD_BYTES]));
        assert_eq!(cut[2], "after\n");
    }

    /// The transport over in-memory pipes: what the server side writes, the client reads.
    struct Wire {
        transport: StdioTransport<tokio::io::DuplexStream, tokio::io::DuplexStream>,
        server_out: tokio::io::DuplexStream,
        _server_in: tokio::io::DuplexStream,
        notes: Arc<Mutex<Vec<String>>>,
    }

    fn wire(max: usize) -> Wire {
        let (client_read, server_out) = tokio::io::duplex(1 << 20);
        let (client_write, server_in) = tokio::io::duplex(1 << 20);
        let notes = Arc::new(Mutex::new(Vec::new()));
        let sink: NoteSink = {
            let notes = Arc::clone(&notes);
            Arc::new(move |t: &str| lock(&notes).push(t.to_string()))
        };
        Wire {
            transport: StdioTransport::new(client_read, client_write, max, "the hint", sink),
            server_out,
            _server_in: server_in,
            notes,
        }
    }

    async fn request(w: &mut Wire, id: i64, method: &str) {
        let m: TxJsonRpcMessage<RoleClient> = serde_json::from_value(json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": {"name": "t", "arguments": {}}
        }))
        .unwrap();
        w.transport.send(m).await.unwrap();
    }

    /// The next message as JSON.
    async fn next(w: &mut Wire) -> Value {
        serde_json::to_value(w.transport.receive().await.expect("a message")).unwrap()
    }

    #[tokio::test]
    async fn a_broken_or_oversize_answer_fails_only_the_call_it_answers() {
        let mut w = wire(1000);
        request(&mut w, 1, "tools/call").await;
        request(&mut w, 2, "tools/call").await;
        let big = "z".repeat(2000);
        let lines = format!(
            "banner text\n42\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"content\":[{{\"text\":\"cu\n\
             {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"text\":\"{big}\"}}}}\n"
        );
        w.server_out.write_all(lines.as_bytes()).await.unwrap();
        let first = next(&mut w).await;
        assert_eq!(first["id"], 2);
        let message = first["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("not valid JSON (EOF while parsing"),
            "{message}"
        );
        assert_eq!(first["error"]["data"], TRANSPORT_MARK);
        let second = next(&mut w).await;
        assert_eq!(second["id"], 1);
        assert_eq!(
            second["error"]["message"],
            "the server sent a message larger than the limit of 1000 bytes (the hint); it was dropped"
        );
        // Nothing waits now: a broken line without an id fails nothing and is noted.
        w.server_out.write_all(b"{\"jsonrpc\": oops\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n").await.unwrap();
        let third = next(&mut w).await;
        assert_eq!(third["method"], "notifications/tools/list_changed");
        let notes = lock(&w.notes).clone();
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].contains("not JSON on stdout (ignored): banner text"),
            "{notes:?}"
        );
        assert!(notes[1].contains("not a JSON-RPC message: 42"), "{notes:?}");
        assert!(notes[2].contains("answers no waiting call"), "{notes:?}");
    }

    #[tokio::test]
    async fn a_broken_answer_without_an_id_fails_every_waiting_call() {
        let mut w = wire(1000);
        request(&mut w, 5, "tools/call").await;
        request(&mut w, 6, "tools/list").await;
        w.server_out
            .write_all(b"{\"result\": nope\n")
            .await
            .unwrap();
        let mut ids = vec![
            next(&mut w).await["id"].clone(),
            next(&mut w).await["id"].clone(),
        ];
        ids.sort_by_key(|v| v.as_i64());
        assert_eq!(ids, [json!(5), json!(6)]);
        drop(w.server_out);
        assert!(
            w.transport.receive().await.is_none(),
            "the end of the stream ends it"
        );
    }
}

//! A loopback HTTP/1.1 server for tests: it answers with scripted replies, records each request,
//! and can cut a stream or hold it open and report when the client goes away. Hand-written on
//! tokio so that tests control exactly which bytes leave and when the connection ends.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Everything the client sent, as text (to look for leaked keys).
    pub fn all_text(&self) -> String {
        let mut s = format!("{} {}\n", self.method, self.path);
        for (n, v) in &self.headers {
            s.push_str(&format!("{n}: {v}\n"));
        }
        s.push_str(&String::from_utf8_lossy(&self.body));
        s
    }
}

/// How a streamed reply ends.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    /// The terminating empty chunk: a normal end.
    Clean,
    /// The connection is closed in the middle of the body.
    Cut,
    /// The connection is held open until the client closes it.
    Hang,
}

#[derive(Clone, Debug)]
pub enum Reply {
    /// A body with a content length.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A chunked body, one write per chunk.
    Chunked {
        status: u16,
        headers: Vec<(String, String)>,
        chunks: Vec<Vec<u8>>,
        end: End,
    },
    /// Read the request, then close without answering.
    Close,
}

impl Reply {
    pub fn json(status: u16, body: &Value) -> Reply {
        Reply::Full {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    pub fn sse(chunks: Vec<Vec<u8>>, end: End) -> Reply {
        Reply::Chunked {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
            end,
        }
    }

    /// SSE `data:` events from JSON values (strings are sent as they are, e.g. `[DONE]`).
    pub fn sse_data(events: &[Value], end: End) -> Reply {
        let chunks = events
            .iter()
            .map(|e| {
                let data = match e {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                format!("data: {data}\n\n").into_bytes()
            })
            .collect();
        Reply::sse(chunks, end)
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        match &mut self {
            Reply::Full { headers, .. } | Reply::Chunked { headers, .. } => {
                headers.push((name.to_ascii_lowercase(), value.to_string()))
            }
            Reply::Close => {}
        }
        self
    }
}

pub struct MockServer {
    pub addr: SocketAddr,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    /// One message each time a held-open (`End::Hang`) connection is closed by the client.
    pub client_closed: mpsc::UnboundedReceiver<()>,
    /// One message per request received (to wait for a request without sleeping).
    pub requests: mpsc::UnboundedReceiver<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockServer {
    pub async fn start(replies: Vec<Reply>) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let (closed_tx, closed_rx) = mpsc::unbounded_channel();
        let (req_tx, req_rx) = mpsc::unbounded_channel();
        let (r, rec) = (replies.clone(), recorded.clone());
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (r, rec, closed_tx, req_tx) =
                    (r.clone(), rec.clone(), closed_tx.clone(), req_tx.clone());
                tokio::spawn(serve(socket, r, rec, closed_tx, req_tx));
            }
        });
        MockServer {
            addr,
            replies,
            recorded,
            client_closed: closed_rx,
            requests: req_rx,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.recorded.lock().unwrap().clone()
    }

    pub fn push(&self, reply: Reply) {
        self.replies.lock().unwrap().push_back(reply);
    }
}

/// An address where nothing listens: connecting is refused.
pub async fn refused_addr() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    addr
}

async fn serve(
    mut socket: TcpStream,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    closed_tx: mpsc::UnboundedSender<()>,
    req_tx: mpsc::UnboundedSender<()>,
) {
    let mut buf = Vec::new();
    loop {
        let Some(req) = read_request(&mut socket, &mut buf).await else {
            return;
        };
        recorded.lock().unwrap().push(req);
        let _ = req_tx.send(());
        let reply = replies.lock().unwrap().pop_front().unwrap_or_else(|| {
            Reply::json(
                500,
                &serde_json::json!({"error": {"message": "the mock has no more replies"}}),
            )
        });
        match reply {
            Reply::Close => return,
            Reply::Full {
                status,
                headers,
                body,
            } => {
                let mut head = reply_head(status, &headers);
                head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
                if socket.write_all(head.as_bytes()).await.is_err()
                    || socket.write_all(&body).await.is_err()
                {
                    return;
                }
            }
            Reply::Chunked {
                status,
                headers,
                chunks,
                end,
            } => {
                let mut head = reply_head(status, &headers);
                head.push_str("transfer-encoding: chunked\r\n\r\n");
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for c in chunks.iter().filter(|c| !c.is_empty()) {
                    let mut frame = format!("{:x}\r\n", c.len()).into_bytes();
                    frame.extend_from_slice(c);
                    frame.extend_from_slice(b"\r\n");
                    if socket.write_all(&frame).await.is_err() {
                        return;
                    }
                    let _ = socket.flush().await;
                }
                match end {
                    End::Clean => {
                        if socket.write_all(b"0\r\n\r\n").await.is_err() {
                            return;
                        }
                    }
                    End::Cut => {
                        // Half a chunk, then close: the client sees a broken body.
                        let _ = socket.write_all(b"40\r\ndata: {\"cho").await;
                        let _ = socket.flush().await;
                        return;
                    }
                    End::Hang => {
                        // Wait for the client to close (a read of 0 bytes, or an error).
                        let mut sink = [0u8; 1024];
                        loop {
                            match socket.read(&mut sink).await {
                                Ok(0) | Err(_) => break,
                                Ok(_) => {}
                            }
                        }
                        let _ = closed_tx.send(());
                        return;
                    }
                }
            }
        }
    }
}

/// The status line and the headers of a reply, without the line that ends them.
fn reply_head(status: u16, headers: &[(String, String)]) -> String {
    let mut head = status_line(status);
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head
}

fn status_line(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    format!("HTTP/1.1 {status} {reason}\r\n")
}

/// Reads one request (headers, then a content-length body). `None` when the client closed.
async fn read_request(socket: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Recorded> {
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buf.len() < body_start + len {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body = buf[body_start..body_start + len].to_vec();
    buf.drain(..body_start + len);
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

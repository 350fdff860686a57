//! What the MCP tests share: the demo tools served in-process over streamable HTTP on
//! 127.0.0.1, stopped when dropped; a client connected with its server's stderr on a channel,
//! and a wait for a line there.

#![allow(dead_code)]

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use toolscope_core::mcp::{CancellationToken, McpClient, McpServerSpec, StderrSink};
use toolscope_demo::mcp::{DemoMcp, DemoMcpOptions};

/// Long enough for a loaded machine; reached only when something hangs.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// A sink that forwards the server's stderr lines (and toolscope's notes about the server) to
/// a channel.
pub fn stderr_channel() -> (StderrSink, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let sink: StderrSink = Arc::new(move |_server: &str, line: &str| {
        let _ = tx.send(line.to_string());
    });
    (sink, rx)
}

/// Connects to the server `spec` starts, its stderr lines going to the channel returned.
pub async fn connect(spec: &McpServerSpec) -> (McpClient, mpsc::UnboundedReceiver<String>) {
    let (sink, rx) = stderr_channel();
    let client = tokio::time::timeout(DEADLINE, McpClient::connect(spec, sink))
        .await
        .expect("connect in time")
        .expect("connect");
    (client, rx)
}

/// Waits for a stderr line containing `needle`.
pub async fn wait_line(rx: &mut mpsc::UnboundedReceiver<String>, needle: &str) -> String {
    tokio::time::timeout(DEADLINE, async {
        loop {
            match rx.recv().await {
                Some(l) if l.contains(needle) => return l,
                Some(_) => {}
                None => panic!("stderr closed before \"{needle}\""),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no stderr line with \"{needle}\""))
}

/// The demo tools over streamable HTTP on 127.0.0.1; records each request's Authorization
/// header.
pub struct HttpServer {
    pub url: String,
    pub seen_auth: Arc<Mutex<HashSet<String>>>,
    stop: CancellationToken,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

pub async fn http_server() -> HttpServer {
    http_server_with(false).await
}

/// [`http_server`], with the demo server's test tools (`test_tools`) or without.
pub async fn http_server_with(test_tools: bool) -> HttpServer {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let folder = std::env::temp_dir().join(format!("toolscope-mcp-http-{}", std::process::id()));
    let stop = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = stop.child_token();
    let service = Arc::new(StreamableHttpService::new(
        move || {
            Ok(DemoMcp::new(
                DemoMcpOptions {
                    page_size: Some(1),
                    test_tools,
                },
                folder.clone(),
            ))
        },
        Arc::new(LocalSessionManager::default()),
        config,
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen_auth = Arc::new(Mutex::new(HashSet::new()));
    let seen = seen_auth.clone();
    let stopped = stop.clone();
    tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                s = listener.accept() => match s { Ok((s, _)) => s, Err(_) => return },
                _ = stopped.cancelled() => return,
            };
            let (service, seen) = (service.clone(), seen.clone());
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let (service, seen) = (service.clone(), seen.clone());
                        async move {
                            if let Some(v) = req.headers().get("authorization") {
                                seen.lock()
                                    .unwrap()
                                    .insert(v.to_str().unwrap_or("").to_string());
                            }
                            Ok::<_, Infallible>(service.handle(req).await)
                        }
                    },
                );
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, handler)
                    .await;
            });
        }
    });
    HttpServer {
        url,
        seen_auth,
        stop,
    }
}

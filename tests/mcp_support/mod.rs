//! What the MCP tests share: the demo tools served in-process over streamable HTTP on
//! 127.0.0.1, stopped when dropped.

#![allow(dead_code)]

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use toolscope_core::mcp::CancellationToken;
use toolscope_demo::mcp::{DemoMcp, DemoMcpOptions};

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

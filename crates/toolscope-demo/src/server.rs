//! The demo model's HTTP server: a loopback OpenAI Chat Completions endpoint.
//!
//! [`serve`] binds, spawns an accept loop on the current tokio runtime and returns a
//! [`DemoServer`] handle. Each connection is served by hyper (HTTP/1.1) in a task owned by the
//! accept loop, so stopping the loop (on [`DemoServer::shutdown`] or when the handle is dropped)
//! aborts every open connection and the streams they are writing.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};

use crate::persona::Persona;
use crate::routes;
use crate::state::{DemoOptions, DemoStats, Shared};

/// A running demo server. Dropping it stops the server.
pub struct DemoServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// Starts the demo server on `listener_addr` (port 0 picks a free port). Must be called from a
/// tokio runtime, which then runs the server.
pub async fn serve(listener_addr: SocketAddr, options: DemoOptions) -> io::Result<DemoServer> {
    serve_persona(listener_addr, options, None).await
}

/// [`serve`] with a server fault switched on (see [`Persona`]).
pub async fn serve_persona(
    listener_addr: SocketAddr,
    options: DemoOptions,
    persona: Option<Persona>,
) -> io::Result<DemoServer> {
    let listener = TcpListener::bind(listener_addr).await?;
    let addr = listener.local_addr()?;
    let (stats, _) = watch::channel(DemoStats::default());
    let shared = Arc::new(Shared {
        options,
        persona,
        stats,
    });
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared), stopped));
    Ok(DemoServer {
        addr,
        shared,
        stop: Some(stop),
        task: Some(task),
    })
}

impl DemoServer {
    /// The bound address (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL for an OpenAI client: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The statistics now.
    pub fn stats(&self) -> DemoStats {
        *self.shared.stats.borrow()
    }

    /// A receiver that sees every change of the statistics (tests wait on it with
    /// `wait_for` instead of sleeping).
    pub fn watch_stats(&self) -> watch::Receiver<DemoStats> {
        self.shared.stats.subscribe()
    }

    /// Stops accepting, aborts open connections, and waits until the server is gone.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        // Dropping the sender wakes the accept loop, which then aborts its connections. If the
        // runtime is already gone, aborting the task is all that is left to do.
        self.stop.take();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stopped: oneshot::Receiver<()>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(stream, Arc::clone(&shared)));
                }
                // Out of file descriptors and the like: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    // Aborting the connection tasks drops the bodies they were writing.
    connections.shutdown().await;
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    // Streamed chunks are small and paced: send each at once.
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |request| {
        let shared = Arc::clone(&shared);
        async move { Ok::<_, Infallible>(routes::handle(request, shared).await) }
    });
    // A connection error (the client went away, a `#cut` body) ends only this connection.
    let _ = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

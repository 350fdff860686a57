//! The built-in demo model as a provider: served on a loopback port with the OpenAI wire for
//! the length of a run, and talked to with the OpenAI adapter like any compatible server.
//!
//! INTEGRATION(demo): the model itself lives in `crate::core::demo` (another branch). Wire it in
//! [`DemoServer::start`] and [`DemoServer::serve`]: start its in-process server on `addr`, keep
//! its handle in the struct so that dropping the `DemoServer` stops it.

use std::net::SocketAddr;

use crate::core::error::{ErrorCategory, ProviderError};

/// A running demo server. Dropping it stops the server.
#[derive(Debug)]
pub struct DemoServer {
    addr: SocketAddr,
}

impl DemoServer {
    /// Starts the demo model on a free loopback port.
    pub async fn start() -> Result<DemoServer, ProviderError> {
        Self::serve(SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Starts the demo model on `addr` (port 0 picks a free one).
    pub async fn serve(addr: SocketAddr) -> Result<DemoServer, ProviderError> {
        // INTEGRATION(demo): `let (addr, handle) = crate::core::demo::serve(addr, options).await?;`
        let _ = addr;
        Err(ProviderError::new(
            ErrorCategory::ProviderUnavailable,
            "the demo model is not built into this version of toolscope yet",
        ))
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The OpenAI base URL of the server, e.g. `http://127.0.0.1:4321/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

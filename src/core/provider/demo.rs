//! The built-in demo model as a provider: served on a free loopback port with the OpenAI wire
//! for the length of one run (by [`crate::core::demo::serve`]), and talked to with the OpenAI
//! adapter like any compatible server, so the demo exercises the real HTTP path. With a base
//! URL, a run talks to an already running `toolscope serve-demo` instead.

use std::net::SocketAddr;

use crate::core::demo::{self, DemoOptions, DemoServer};
use crate::core::error::{ErrorCategory, ProviderError};

/// A demo server started for one run; dropping it stops the server.
pub(crate) struct LocalDemo {
    server: DemoServer,
}

impl LocalDemo {
    /// Starts the demo model on a free loopback port, at its usual (realistic) pace.
    pub(crate) async fn start() -> Result<LocalDemo, ProviderError> {
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let server = demo::serve(addr, DemoOptions::default())
            .await
            .map_err(|e| {
                ProviderError::new(
                    ErrorCategory::ProviderUnavailable,
                    format!("cannot start the demo model: {e}"),
                )
            })?;
        Ok(LocalDemo { server })
    }

    /// The OpenAI base URL of the server, e.g. `http://127.0.0.1:4321/v1`.
    pub(crate) fn base_url(&self) -> String {
        self.server.base_url()
    }
}

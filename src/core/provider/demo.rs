//! The built-in demo model as a provider: served on a free loopback port with the OpenAI wire
//! for the length of one run, and talked to with the OpenAI adapter like any compatible server.
//! (With a base URL, a run talks to an already running `toolscope serve-demo` instead.)
//!
//! INTEGRATION(demo): the model lives in `crate::core::demo` (branch `demo`), whose
//! `serve(addr, DemoOptions) -> io::Result<DemoServer>` starts it in-process. Once it is on main,
//! replace the body of [`LocalDemo::start`] with:
//!
//! ```ignore
//! let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
//! let server = crate::core::demo::serve(addr, crate::core::demo::DemoOptions::default())
//!     .await
//!     .map_err(|e| ProviderError::new(
//!         ErrorCategory::ProviderUnavailable,
//!         format!("cannot start the demo model: {e}"),
//!     ))?;
//! Ok(LocalDemo { base_url: server.base_url(), _server: server })
//! ```
//!
//! and add the field `_server: crate::core::demo::DemoServer` (dropping it stops the server).

use crate::core::error::{ErrorCategory, ProviderError};

/// A demo server started for one run; dropping it stops the server.
#[derive(Debug)]
pub(crate) struct LocalDemo {
    base_url: String,
}

impl LocalDemo {
    /// Starts the demo model on a free loopback port.
    pub(crate) async fn start() -> Result<LocalDemo, ProviderError> {
        // INTEGRATION(demo): see the module documentation.
        Err(ProviderError::new(
            ErrorCategory::ProviderUnavailable,
            "the demo model is not built into this version of toolscope yet",
        ))
    }

    /// The OpenAI base URL of the server, e.g. `http://127.0.0.1:4321/v1`.
    pub(crate) fn base_url(&self) -> String {
        self.base_url.clone()
    }
}

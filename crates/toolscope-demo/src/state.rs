//! What the demo server's parts share: its options, its statistics, the state every connection
//! sees, and the body type of every response. The server (accepting connections), the routes
//! (answering requests) and the streams (pacing bodies) all depend on this module and on nothing
//! above them, so the dependencies go one way: server → routes → stream → state.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use tokio::sync::watch;

/// The body type of every response.
pub type Body = UnsyncBoxBody<Bytes, io::Error>;

/// How the server behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoOptions {
    /// The delay between two streamed chunks (and between the halves of a cut response).
    pub pace: Duration,
}

impl DemoOptions {
    /// The default pace: about forty pieces a second, like a fast hosted model.
    pub const DEFAULT_PACE: Duration = Duration::from_millis(25);

    /// No delay at all (tests).
    pub fn instant() -> DemoOptions {
        DemoOptions {
            pace: Duration::ZERO,
        }
    }
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            pace: Self::DEFAULT_PACE,
        }
    }
}

/// What the server has done so far. Streams end in exactly one of finished, cut (the `#cut`
/// demo) or cancelled (the client went away, or the server shut down, before the end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DemoStats {
    /// Chat-completion requests received (valid or not).
    pub requests: u64,
    pub streams_started: u64,
    pub streams_finished: u64,
    pub streams_cut: u64,
    pub streams_cancelled: u64,
}

/// What the connections share.
pub struct Shared {
    pub options: DemoOptions,
    /// The server fault switched on, if any.
    pub persona: Option<crate::persona::Persona>,
    pub stats: watch::Sender<DemoStats>,
}

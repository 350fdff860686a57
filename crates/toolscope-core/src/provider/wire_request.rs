//! The request on the wire: what a [`Request`] becomes for its provider's wire, before the key
//! is added ([`WireRequest`]).

use serde_json::Value;

use super::plan::Plan;
use super::request::Request;
use super::secret_url;
use super::wires::WireRequest;

/// The request that `request` becomes against `base_url` (pre-send checks are not run; see
/// [`Request::validate`]): what a user interface can show before sending.
pub fn wire_request(request: &Request, base_url: &str) -> WireRequest {
    build_wire(request, &Plan::of(request), base_url.trim_end_matches('/'))
}

/// The URL and wire body of [`wire_request`].
pub fn wire_body(request: &Request, base_url: &str) -> (String, Value) {
    let w = wire_request(request, base_url);
    (w.url, w.body)
}

/// The request on the wire of its provider. A query on the base URL (a key some servers take
/// there) goes after the endpoint's path, not before it.
pub(crate) fn build_wire(req: &Request, plan: &Plan, base: &str) -> WireRequest {
    let (base, query) = secret_url::split_query(base);
    let base = base.as_str();
    let mut wire = req.provider.wire().format().build(req, plan, base);
    wire.url = secret_url::with_query(std::mem::take(&mut wire.url), query.as_deref());
    wire
}

//! The playground's MCP servers: which are connected, the tools each lists, and the tools a
//! request offers (the user's and every ready server's, merged by the core's [`Catalog`]).
//!
//! The state machine never talks to a server itself: it asks the driver to connect, list, call
//! and cancel ([`super::Effect`]), and hears back through [`super::Message`]s. A server that
//! fails to start, fails a listing or dies stays in the list with its error; nothing else stops.
//! Which tools are offered is recomputed when the user's tools pass a new check or a server's
//! listing changes ([`McpState::sync`]), never while drawing.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use toolscope_core::mcp::{Catalog, McpRoute, McpServerSpec};
use toolscope_core::part::{FinishReason, Part};
use toolscope_core::tool::ToolSet;

use super::fuzzy::ListFilter;

/// Identifies a server for the lifetime of the playground (positions change as servers go).
pub type ServerId = u64;
/// Identifies one `tools/call` in flight.
pub type CallId = u64;

/// How many lines of a server's stderr are kept to show with it.
pub const STDERR_LINES: usize = 40;
/// How long one tool call may take before it is cancelled.
pub const DEFAULT_CALL_TIMEOUT_MS: u64 = 60_000;
/// The most model turns an automatic loop sends (F12), unless `--max-steps` says otherwise.
pub const DEFAULT_MAX_STEPS: usize = 8;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerState {
    /// Starting (stdio) or reaching (HTTP) the server, and listing its tools.
    Connecting,
    /// Connected; its tools are listed.
    Ready,
    /// It could not start, failed its listing, or died; the message says why.
    Failed(String),
}

/// One MCP server of the playground.
#[derive(Clone, Debug)]
pub struct Server {
    pub id: ServerId,
    pub spec: McpServerSpec,
    /// The name the server gave in `initialize` (before that: its program or host).
    pub name: String,
    pub state: ServerState,
    /// Its `tools/list` entries (`{name, description, inputSchema}`), as last listed.
    pub tools: Vec<Value>,
    /// The name each of `tools` is offered under (`None`: not offered, the server not ready),
    /// as of the last [`McpState::sync`].
    pub offered_as: Vec<Option<String>>,
    /// The last lines it wrote on stderr (a stdio server), oldest first.
    pub stderr: VecDeque<String>,
}

/// A row of the MCP list in the Tools pane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Row {
    /// Server `i` of [`McpState::servers`].
    Server(usize),
    /// Tool `t` of server `i`, offered as `exposed` (`None` while the server is not ready).
    Tool {
        server: usize,
        tool: usize,
        exposed: Option<String>,
    },
}

/// Calls being executed on their servers, for the answer whose result fields they fill.
#[derive(Clone, Debug)]
pub struct Execution {
    pub calls: Vec<Running>,
    /// Send the next turn once every result field is filled (Ctrl+G on all, and the loop).
    pub send_after: bool,
}

/// One call in flight (or finished) of an [`Execution`].
#[derive(Clone, Debug)]
pub struct Running {
    pub call: CallId,
    /// The server that runs it.
    pub server: ServerId,
    /// Its position among the answer's pending calls (its result field).
    pub index: usize,
    pub tool_call_id: String,
    /// The name the model called.
    pub tool_name: String,
    /// The name on the server.
    pub original: String,
    pub arguments: Value,
    pub done: bool,
}

/// A step of an MCP loop as it happened, kept so that saving the session records the loop.
#[derive(Clone, Debug)]
pub enum TrailStep {
    /// A model turn: the run as a session of its own, and the id of its run view.
    Turn {
        run: super::RunId,
        session: Box<toolscope_core::session::Session>,
    },
    /// A `tools/call` and what came back, as a session records it, but timed from the call's
    /// own start (`at_ms` 0, `ended_at_ms` its duration) until the loop is saved on one clock;
    /// and the server that ran it.
    Call {
        call: Box<toolscope_core::session::RecordedCall>,
        server: toolscope_core::session::McpServerRecord,
    },
}

/// The automatic loop (F12): answer → execute → send, up to `max` model turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoLoop {
    /// The model turn running or last run, from 1.
    pub step: usize,
    pub max: usize,
}

pub struct McpState {
    pub servers: Vec<Server>,
    /// The user's tools and every ready server's, as a request offers them.
    pub catalog: Catalog,
    /// The server of each ready position of the catalog (its `McpRoute::server`).
    catalog_ids: Vec<ServerId>,
    /// What the catalog was built from: the user's tools' check, and the servers' generation.
    built_for: Option<(u64, u64)>,
    /// Bumped whenever a server's state or tools change.
    generation: u64,
    /// The MCP list's `/` filter (fuzzy, by server or tool name and description; the names'
    /// letters marked) and its selected row (of [`McpState::rows`]).
    pub list: ListFilter,
    pub call_timeout_ms: u64,
    pub max_steps: usize,
    pub execution: Option<Execution>,
    pub auto: Option<AutoLoop>,
    next_server: ServerId,
    next_call: CallId,
}

impl Default for McpState {
    fn default() -> Self {
        McpState {
            servers: Vec::new(),
            catalog: Catalog::default(),
            catalog_ids: Vec::new(),
            built_for: None,
            generation: 0,
            list: ListFilter::on_slash(),
            call_timeout_ms: DEFAULT_CALL_TIMEOUT_MS,
            max_steps: DEFAULT_MAX_STEPS,
            execution: None,
            auto: None,
            next_server: 1,
            next_call: 1,
        }
    }
}

impl McpState {
    /// No servers yet; loops send at most `max_steps` turns, calls take at most `timeout_ms`.
    pub fn new(max_steps: usize, timeout_ms: u64) -> Self {
        McpState {
            max_steps: max_steps.max(1),
            call_timeout_ms: timeout_ms.max(1),
            ..McpState::default()
        }
    }

    /// Adds a server (connecting); returns its id.
    pub fn add(&mut self, spec: McpServerSpec) -> ServerId {
        let id = self.next_server;
        self.next_server += 1;
        self.servers.push(Server {
            id,
            name: spec.fallback_name(),
            spec,
            state: ServerState::Connecting,
            tools: Vec::new(),
            offered_as: Vec::new(),
            stderr: VecDeque::new(),
        });
        self.changed();
        id
    }

    /// Removes server `id`; returns it.
    pub fn remove(&mut self, id: ServerId) -> Option<Server> {
        let at = self.servers.iter().position(|s| s.id == id)?;
        let s = self.servers.remove(at);
        self.changed();
        Some(s)
    }

    pub fn server(&self, id: ServerId) -> Option<&Server> {
        self.servers.iter().find(|s| s.id == id)
    }

    pub fn server_mut(&mut self, id: ServerId) -> Option<&mut Server> {
        self.servers.iter_mut().find(|s| s.id == id)
    }

    /// A fresh call id.
    pub fn next_call(&mut self) -> CallId {
        let c = self.next_call;
        self.next_call += 1;
        c
    }

    /// Server `id` listed its tools (as `name`).
    pub fn listed(&mut self, id: ServerId, name: String, tools: Vec<Value>) {
        if let Some(s) = self.server_mut(id) {
            s.name = name;
            s.tools = tools;
            s.state = ServerState::Ready;
            self.changed();
        }
    }

    /// Server `id` failed (or died): its tools are no longer offered.
    pub fn failed(&mut self, id: ServerId, why: String) {
        if let Some(s) = self.server_mut(id) {
            s.state = ServerState::Failed(why);
            self.changed();
        }
    }

    /// A line the server wrote on stderr.
    pub fn stderr_line(&mut self, id: ServerId, line: String) {
        if let Some(s) = self.server_mut(id) {
            if s.stderr.len() == STDERR_LINES {
                s.stderr.pop_front();
            }
            s.stderr.push_back(line);
        }
    }

    fn changed(&mut self) {
        self.generation += 1;
        self.relist();
    }

    /// The filter's items again (the rows or the names they are offered under changed).
    fn relist(&mut self) {
        let items = self.rows().iter().map(|r| self.haystack(r)).collect();
        self.list.set_items(items);
    }

    /// Rebuilds the offered tools when `user` (checked at `user_rev`) or a server changed.
    /// Returns a problem the servers' tools have (a definition that cannot be read), if any.
    pub fn sync(&mut self, user: &ToolSet, user_rev: u64) -> Option<String> {
        let key = (user_rev, self.generation);
        if self.built_for == Some(key) {
            return None;
        }
        self.built_for = Some(key);
        if self.servers.is_empty() {
            // Nothing to merge: the offered tools are the user's (see `App::offered`), and
            // building a catalog would only check them all a second time.
            self.catalog = Catalog::default();
            self.catalog_ids.clear();
            return None;
        }
        let problem = match build(user, &self.servers) {
            Ok((catalog, ids)) => {
                self.catalog = catalog;
                self.catalog_ids = ids;
                None
            }
            Err(e) => {
                // The user's tools still go out; the servers' are named as the problem.
                self.catalog = Catalog::build(user, &[]).unwrap_or_default();
                self.catalog_ids = Vec::new();
                Some(e)
            }
        };
        // The name each server's tool is offered under, for the list (drawn every frame).
        let mut offered: HashMap<(ServerId, &str), &str> = HashMap::new();
        for (exposed, r) in self.catalog.routes() {
            if let Some(id) = self.catalog_ids.get(r.server) {
                offered.insert((*id, r.original.as_str()), exposed);
            }
        }
        for s in &mut self.servers {
            s.offered_as = s
                .tools
                .iter()
                .map(|t| {
                    let name = t.get("name").and_then(Value::as_str)?;
                    offered.get(&(s.id, name)).map(|e| e.to_string())
                })
                .collect();
        }
        self.relist();
        problem
    }

    /// The tools a request offers now, once a server is added (without servers the offered
    /// tools are the user's own: `App::offered`).
    pub fn offered(&self) -> &ToolSet {
        self.catalog.tools()
    }

    /// The server and the name there of the tool the model calls `exposed`, if a ready server
    /// serves it.
    pub fn route(&self, exposed: &str) -> Option<(ServerId, &McpRoute)> {
        let r = self.catalog.route(exposed)?;
        Some((*self.catalog_ids.get(r.server)?, r))
    }

    /// The rows of the MCP list: each server, then its tools.
    pub fn rows(&self) -> Vec<Row> {
        let mut out = Vec::new();
        for (i, s) in self.servers.iter().enumerate() {
            out.push(Row::Server(i));
            for t in 0..s.tools.len() {
                out.push(Row::Tool {
                    server: i,
                    tool: t,
                    exposed: s.offered_as.get(t).cloned().flatten(),
                });
            }
        }
        out
    }

    /// What the filter matches for a row: a server's name and how it is reached, a tool's
    /// name (as offered and on the server) and description (the shown name's letters marked).
    fn haystack(&self, row: &Row) -> (String, usize) {
        match row {
            Row::Server(i) => {
                let s = &self.servers[*i];
                (format!("{} {}", s.name, s.spec), s.name.chars().count())
            }
            Row::Tool {
                server,
                tool,
                exposed,
            } => {
                // The name the list shows first: the one the model sees it by.
                let entry = &self.servers[*server].tools[*tool];
                let text = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or("");
                let name = exposed.as_deref().unwrap_or(text("name"));
                (
                    format!("{name} {} {}", text("name"), text("description")),
                    name.chars().count(),
                )
            }
        }
    }

    /// The rows the filter leaves, best first (every row, in order, without one), each with
    /// its name's matched letters.
    pub fn shown(&self) -> Vec<(Row, &[usize])> {
        let rows = self.rows();
        self.list
            .shown()
            .filter_map(|(i, marks)| Some((rows.get(i)?.clone(), marks)))
            .collect()
    }

    /// The selected row.
    pub fn selected_row(&self) -> Option<Row> {
        self.rows().get(self.list.chosen()?).cloned()
    }

    /// Selects row `i` of [`McpState::rows`] (the filter is dropped when it hides the row).
    pub fn select_row(&mut self, i: usize) {
        if !self.list.shown().any(|(k, _)| k == i) {
            self.list.typing = false;
            self.list.set_query(String::new());
        }
        self.list.select_item(i);
    }

    /// The server of the selected row.
    pub fn selected_server(&self) -> Option<&Server> {
        match self.selected_row()? {
            Row::Server(i) | Row::Tool { server: i, .. } => self.servers.get(i),
        }
    }

    /// The `tools/list` entry of the selected row, when it is a tool.
    pub fn selected_tool(&self) -> Option<&Value> {
        match self.selected_row()? {
            Row::Tool { server, tool, .. } => self.servers.get(server)?.tools.get(tool),
            Row::Server(_) => None,
        }
    }

    /// Whether a call is being executed.
    pub fn executing(&self) -> bool {
        self.execution
            .as_ref()
            .is_some_and(|e| e.calls.iter().any(|c| !c.done))
    }
}

/// The catalog of `user` and every ready server, and the server id of each of its positions.
fn build(user: &ToolSet, servers: &[Server]) -> Result<(Catalog, Vec<ServerId>), String> {
    let ready: Vec<&Server> = servers
        .iter()
        .filter(|s| s.state == ServerState::Ready)
        .collect();
    let listed: Vec<(String, Vec<Value>)> = ready
        .iter()
        .map(|s| (s.name.clone(), s.tools.clone()))
        .collect();
    let catalog = Catalog::build(user, &listed).map_err(|e| e.to_string())?;
    Ok((catalog, ready.iter().map(|s| s.id).collect()))
}

/// `spec` with `toolscope` as its program meaning this toolscope (`exe`), so that
/// `--mcp 'toolscope serve-mcp-demo'` works without toolscope on the PATH and talks to the same
/// build. The command as typed stays for messages and sessions.
pub fn this_toolscope(spec: McpServerSpec, exe: Option<&std::path::Path>) -> McpServerSpec {
    match (spec, exe) {
        (McpServerSpec::Stdio { command, mut argv }, Some(exe))
            if argv.first().is_some_and(|p| p == "toolscope") =>
        {
            argv[0] = exe.to_string_lossy().into_owned();
            McpServerSpec::Stdio { command, argv }
        }
        (spec, _) => spec,
    }
}

/// A `tools/list` entry as a tool of the Tools pane: `{name, description, parameters}`.
pub fn as_user_tool(entry: &Value) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(n) = entry.get("name") {
        out.insert("name".into(), n.clone());
    }
    if let Some(d) = entry.get("description").filter(|d| !d.is_null()) {
        out.insert("description".into(), d.clone());
    }
    let schema = entry
        .get("inputSchema")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({"type": "object"}));
    out.insert("parameters".into(), schema);
    Value::Object(out)
}

/// Where to insert `tool` into the Tools text `text` so that it joins the array as its last
/// element, and what to insert: `(line, byte column, text)`. The user's text is otherwise left
/// as it is. `None` when the text is not a JSON array of tools (nothing is inserted then).
pub fn insertion(text: &str, tool: &Value) -> Option<(usize, usize, String)> {
    let pretty = serde_json::to_string_pretty(tool).ok()?;
    let indented = pretty.replace('\n', "\n  ");
    if text.trim().is_empty() {
        let lines = text.split('\n').count();
        let last = text.split('\n').next_back().unwrap_or("");
        let lead = if text.is_empty() { "" } else { "\n" };
        return Some((lines - 1, last.len(), format!("{lead}[\n  {indented}\n]")));
    }
    match serde_json::from_str::<Value>(text).ok()? {
        Value::Array(items) => {
            let close = text.rfind(']')?;
            // After the last element (or the `[`), before the blanks that lead to `]`.
            let body_end = text[..close].trim_end().len();
            let sep = if items.is_empty() { "\n  " } else { ",\n  " };
            // The `]` goes on a line of its own unless it already is.
            let tail = if text[body_end..close].contains('\n') {
                ""
            } else {
                "\n"
            };
            let (line, col) = line_col(text, body_end);
            Some((line, col, format!("{sep}{indented}{tail}")))
        }
        _ => None,
    }
}

/// The line and byte column of byte `at` of `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count();
    let col = at - before.rfind('\n').map_or(0, |i| i + 1);
    (line, col)
}

/// The finish reason of an answer that was cut (the token limit, or the provider's filter):
/// its calls may be partial, so a loop that executes calls (the playground's, `run --execute`)
/// runs none of them.
pub fn cut_reason(parts: &[Part]) -> Option<FinishReason> {
    parts.iter().rev().find_map(|p| match p {
        Part::Finish { finish_reason, .. }
            if matches!(
                finish_reason,
                FinishReason::Length | FinishReason::ContentFilter
            ) =>
        {
            Some(*finish_reason)
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> McpServerSpec {
        McpServerSpec::stdio("demo-server --flag").unwrap()
    }

    fn entry(name: &str) -> Value {
        json!({"name": name, "description": "d", "inputSchema": {"type": "object"}})
    }

    fn insert(text: &str, tool: &Value) -> Option<String> {
        let (line, col, s) = insertion(text, tool)?;
        let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let l = &mut lines[line];
        l.insert_str(col, &s);
        Some(lines.join("\n"))
    }

    #[test]
    fn servers_join_the_offered_tools_when_ready_and_leave_when_they_fail() {
        let mut m = McpState::default();
        let user = ToolSet::from_json_text(r#"[{"name":"get_weather","parameters":{}}]"#).unwrap();
        let a = m.add(spec());
        assert_eq!(m.server(a).unwrap().name, "demo-server");
        m.sync(&user, 1);
        assert_eq!(m.offered().len(), 1, "a connecting server offers nothing");
        m.listed(
            a,
            "demo".into(),
            vec![entry("get_weather"), entry("search")],
        );
        m.sync(&user, 1);
        let names: Vec<&str> = m.offered().iter().map(|t| t.name()).collect();
        assert_eq!(names, ["get_weather", "demo__get_weather", "search"]);
        let (id, route) = m.route("demo__get_weather").unwrap();
        assert_eq!((id, route.original.as_str()), (a, "get_weather"));
        assert!(m.route("get_weather").is_none(), "the user's own tool");
        assert_eq!(
            m.rows(),
            [
                Row::Server(0),
                Row::Tool {
                    server: 0,
                    tool: 0,
                    exposed: Some("demo__get_weather".into())
                },
                Row::Tool {
                    server: 0,
                    tool: 1,
                    exposed: Some("search".into())
                },
            ]
        );
        m.select_row(2);
        assert_eq!(m.selected_tool().unwrap()["name"], "search");
        m.failed(a, "exited".into());
        m.sync(&user, 1);
        assert_eq!(m.offered().len(), 1);
        assert!(m.route("search").is_none());
        // A second server; removing the first keeps the second's routes right.
        let b = m.add(spec());
        m.listed(b, "other".into(), vec![entry("lookup")]);
        m.remove(a);
        m.sync(&user, 1);
        assert_eq!(m.route("lookup").unwrap().0, b);
        assert_eq!(
            m.list.selected, 1,
            "the selection stays on a row that exists"
        );
    }

    #[test]
    fn toolscope_as_the_program_is_this_binary_and_nothing_else_changes() {
        let exe = std::path::Path::new("/opt/bin/toolscope-dev");
        let spec = McpServerSpec::stdio("toolscope serve-mcp-demo --flag").unwrap();
        let McpServerSpec::Stdio { command, argv } = this_toolscope(spec, Some(exe)) else {
            panic!()
        };
        assert_eq!(
            command, "toolscope serve-mcp-demo --flag",
            "shown and saved as typed"
        );
        assert_eq!(argv, ["/opt/bin/toolscope-dev", "serve-mcp-demo", "--flag"]);
        let other = McpServerSpec::stdio("/usr/bin/toolscope x").unwrap();
        assert_eq!(this_toolscope(other.clone(), Some(exe)), other);
        let empty = McpServerSpec::Stdio {
            command: String::new(),
            argv: Vec::new(),
        };
        assert_eq!(this_toolscope(empty.clone(), Some(exe)), empty);
    }

    #[test]
    fn a_copied_tool_joins_the_array_and_the_rest_of_the_text_stays() {
        let tool = as_user_tool(&json!({"name": "f", "inputSchema": {"type": "object"}}));
        assert_eq!(tool, json!({"name": "f", "parameters": {"type": "object"}}));
        let out = insert("[\n  {\"name\": \"a\"}\n]", &tool).unwrap();
        assert_eq!(
            out,
            "[\n  {\"name\": \"a\"},\n  {\n    \"name\": \"f\",\n    \"parameters\": {\n      \"type\": \"object\"\n    }\n  }\n]"
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 2);
        for text in ["[]", "[ ]", "[\n]", "", "  ", "[{\"name\":\"a\"}]  \n"] {
            let out = insert(text, &tool).unwrap();
            let v: Value =
                serde_json::from_str(&out).unwrap_or_else(|e| panic!("{text:?}: {e}\n{out}"));
            assert_eq!(v.as_array().unwrap().last().unwrap(), &tool, "{text:?}");
        }
        assert!(insert("{\"name\": \"a\"}", &tool).is_none(), "not an array");
        assert!(insert("[1,", &tool).is_none(), "not valid");
    }
}

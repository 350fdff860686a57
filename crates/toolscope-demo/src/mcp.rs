//! The demo MCP server (`toolscope serve-mcp-demo`): the playground's example tools
//! (`get_weather`, `search_web`, `write_file`, with the same names and schemas) served over MCP
//! with deterministic results, so that a whole tool loop runs with no key and no network.
//!
//! - `get_weather` answers for a fixed list of cities ([`CITIES`]), the figures worked out from
//!   the name; another city is a tool error (`isError`).
//! - `search_web` makes up `limit` results (3 by default) from the query; an empty query is a
//!   tool error.
//! - `write_file` writes into a folder it creates under the system's temporary folder (said on
//!   stderr at start, and in each result); an absolute path or one that leaves the folder
//!   (`..`) is a tool error.
//!
//! Test hooks ([`DemoMcpOptions`]): `tools/list` pages of a given size, and extra tools that
//! add a tool and notify `notifications/tools/list_changed` (`add_tool`), wait until the call
//! is cancelled (`hang`), or end the server mid-call (`exit_now`); and, not listed, `big_text`
//! (`{size}`: a text of that many bytes, for the message-size limits).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

/// The example tools, shared with the playground's Tools pane.
pub const TOOLS_JSON: &str = include_str!("../../../examples/tools.json");

/// The cities `get_weather` knows.
pub const CITIES: &[&str] = &[
    "Amsterdam",
    "Berlin",
    "Buenos Aires",
    "Cairo",
    "Lisbon",
    "London",
    "Madrid",
    "Mumbai",
    "New York",
    "Paris",
    "Rome",
    "San Francisco",
    "Seoul",
    "Sydney",
    "Tokyo",
    "Toronto",
];

/// What the server offers beyond the example tools, for tests.
#[derive(Clone, Debug, Default)]
pub struct DemoMcpOptions {
    /// Tools per `tools/list` page (`None`: all on one page).
    pub page_size: Option<usize>,
    /// Offer the test tools `add_tool`, `hang` and `exit_now`.
    pub test_tools: bool,
}

/// The server's state: one per connection.
#[derive(Clone)]
pub struct DemoMcp {
    options: DemoMcpOptions,
    folder: Arc<PathBuf>,
    /// `add_tool` was called: `late_tool` is listed.
    added: Arc<AtomicBool>,
}

impl DemoMcp {
    /// A server writing files under `folder` (created when the first file is written).
    pub fn new(options: DemoMcpOptions, folder: PathBuf) -> Self {
        DemoMcp {
            options,
            folder: Arc::new(folder),
            added: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The folder `write_file` writes into.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Every tool listed now, as MCP `{name, description, inputSchema}` JSON.
    pub fn tool_list(&self) -> Vec<Value> {
        let examples: Vec<Value> = serde_json::from_str(TOOLS_JSON).unwrap_or_default();
        let mut tools: Vec<Value> = examples
            .into_iter()
            .map(|t| {
                json!({
                    "name": t["name"],
                    "description": t["description"],
                    "inputSchema": t["parameters"],
                })
            })
            .collect();
        if self.options.test_tools {
            let empty = json!({"type": "object", "properties": {}});
            tools.push(json!({"name": "add_tool", "description": "Test hook: lists late_tool from now on and says the tool list changed.", "inputSchema": empty}));
            tools.push(json!({"name": "hang", "description": "Test hook: never answers; ends when the call is cancelled.", "inputSchema": empty}));
            tools.push(json!({"name": "exit_now", "description": "Test hook: the server exits in the middle of the call.", "inputSchema": empty}));
        }
        if self.added.load(Ordering::SeqCst) {
            tools.push(json!({"name": "late_tool", "description": "Echoes its text; listed after add_tool.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}));
        }
        tools
    }

    /// Runs one call; `Err` is a protocol error (an unknown tool), a tool's own failure is a
    /// result with `isError`.
    pub async fn call(
        &self,
        name: &str,
        args: &Map<String, Value>,
        context: Option<&RequestContext<RoleServer>>,
    ) -> Result<Value, ErrorData> {
        let test = self.options.test_tools;
        match name {
            "get_weather" => Ok(weather(args)),
            "search_web" => Ok(search(args)),
            "write_file" => Ok(write_file(&self.folder, args)),
            "late_tool" if self.added.load(Ordering::SeqCst) => Ok(text_result(
                args.get("text").and_then(Value::as_str).unwrap_or(""),
                false,
            )),
            "add_tool" if test => {
                self.added.store(true, Ordering::SeqCst);
                if let Some(ctx) = context {
                    let _ = ctx.peer.notify_tool_list_changed().await;
                }
                Ok(text_result("late_tool added", false))
            }
            "hang" if test => {
                eprintln!("hang: waiting to be cancelled");
                match context {
                    Some(ctx) => ctx.ct.cancelled().await,
                    None => std::future::pending::<()>().await,
                }
                eprintln!("hang: cancelled");
                Ok(text_result("cancelled", true))
            }
            "exit_now" if test => {
                eprintln!("exit_now: exiting mid-call");
                std::process::exit(3);
            }
            // Not listed (so the demo model never picks it): tests call it by name.
            "big_text" if test => {
                let size = args.get("size").and_then(Value::as_u64).unwrap_or(0);
                let size = usize::try_from(size).unwrap_or(0).min(1 << 30);
                Ok(text_result(&"b".repeat(size), false))
            }
            _ => Err(ErrorData::invalid_params(
                format!("no tool named \"{name}\""),
                None,
            )),
        }
    }
}

impl ServerHandler for DemoMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            "toolscope-demo",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let all = self.tool_list();
        let start = match request.and_then(|r| r.cursor) {
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|&n| n <= all.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("bad cursor \"{c}\""), None))?,
            None => 0,
        };
        let size = self.options.page_size.unwrap_or(all.len()).max(1);
        let end = (start + size).min(all.len());
        let mut page = json!({"tools": all[start..end]});
        if end < all.len() {
            page["nextCursor"] = json!(end.to_string());
        }
        serde_json::from_value(page).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let value = self.call(&request.name, &args, Some(&context)).await?;
        let result: CallToolResult = serde_json::from_value(value)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(CallToolResponse::Complete(result))
    }
}

/// Serves the demo MCP server on stdin and stdout until the client closes the connection.
/// `write_file`'s folder is said on stderr first.
pub async fn serve_stdio(options: DemoMcpOptions) -> Result<(), String> {
    let folder = std::env::temp_dir().join(format!("toolscope-mcp-demo-{}", std::process::id()));
    eprintln!("write_file writes under {}", folder.display());
    let server = DemoMcp::new(options, folder);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP session did not start: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| format!("the MCP session failed: {e}"))?;
    Ok(())
}

fn text_result(text: &str, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
}

/// A result with `value` as its structured content and as the JSON text of its content.
fn json_result(value: Value) -> Value {
    json!({"content": [{"type": "text", "text": value.to_string()}], "structuredContent": value, "isError": false})
}

/// A number from a text, the same every run (FNV-1a).
fn seed(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

const CONDITIONS: &[&str] = &["sunny", "cloudy", "rainy", "windy", "foggy", "snowy"];

fn weather(args: &Map<String, Value>) -> Value {
    let Some(asked) = args.get("city").and_then(Value::as_str) else {
        return text_result("get_weather needs a city (a string)", true);
    };
    let Some(city) = CITIES.iter().find(|c| c.eq_ignore_ascii_case(asked.trim())) else {
        return text_result(
            &format!(
                "unknown city \"{asked}\"; the demo knows {}",
                CITIES.join(", ")
            ),
            true,
        );
    };
    let fahrenheit = args.get("unit").and_then(Value::as_str) == Some("fahrenheit");
    let days = args
        .get("days")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .clamp(1, 7);
    let day = |n: u64| {
        let s = seed(&format!("{city}/{n}"));
        let celsius = (s % 36) as i64 - 5;
        let t = if fahrenheit {
            celsius * 9 / 5 + 32
        } else {
            celsius
        };
        (t, CONDITIONS[(s / 36 % CONDITIONS.len() as u64) as usize])
    };
    let (temperature, condition) = day(0);
    let forecast: Vec<Value> = (1..=days)
        .map(|n| {
            let (t, c) = day(n);
            json!({"day": n, "temperature": t, "condition": c})
        })
        .collect();
    json_result(json!({
        "city": city,
        "temperature": temperature,
        "unit": if fahrenheit { "fahrenheit" } else { "celsius" },
        "condition": condition,
        "forecast": forecast,
    }))
}

fn search(args: &Map<String, Value>) -> Value {
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim();
    if query.is_empty() {
        return text_result("search_web needs a query that is not empty", true);
    }
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(3)
        .clamp(1, 20);
    let slug: String = query
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let results: Vec<Value> = (1..=limit)
        .map(|n| {
            json!({
                "title": format!("{query} — result {n}"),
                "url": format!("https://example.com/{slug}/{n}"),
                "snippet": format!("What the demo index says about {query} ({n} of {limit})."),
            })
        })
        .collect();
    json_result(json!({"query": query, "results": results}))
}

fn write_file(folder: &Path, args: &Map<String, Value>) -> Value {
    let (Some(path), Some(content)) = (
        args.get("path").and_then(Value::as_str),
        args.get("content").and_then(Value::as_str),
    ) else {
        return text_result("write_file needs a path and a content (strings)", true);
    };
    let rel = Path::new(path);
    let inside = !path.is_empty()
        && rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return text_result(
            &format!(
                "invalid path \"{path}\": give a relative path inside {}",
                folder.display()
            ),
            true,
        );
    }
    let append = args
        .get("options")
        .and_then(|o| o.get("append"))
        .and_then(Value::as_bool)
        == Some(true);
    let full = folder.join(rel);
    let written = (|| -> std::io::Result<()> {
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&full)?;
        std::io::Write::write_all(&mut f, content.as_bytes())
    })();
    match written {
        Ok(()) => json_result(json!({
            "path": full.display().to_string(),
            "bytes": content.len(),
            "appended": append,
        })),
        Err(e) => text_result(&format!("cannot write {}: {e}", full.display()), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    /// The weather of `city` for two days.
    async fn two_days(s: &DemoMcp, city: &str) -> Value {
        let two_days = args(json!({"city": city, "days": 2}));
        s.call("get_weather", &two_days, None).await.unwrap()
    }

    fn server(dir: &Path) -> DemoMcp {
        DemoMcp::new(DemoMcpOptions::default(), dir.to_path_buf())
    }

    #[tokio::test]
    async fn weather_is_the_same_for_a_city_every_time_and_an_unknown_city_is_an_error() {
        let s = server(&std::env::temp_dir());
        let a = two_days(&s, "paris").await;
        let b = two_days(&s, "Paris").await;
        assert_eq!(a, b);
        assert_eq!(a["structuredContent"]["city"], "Paris");
        assert_eq!(
            a["structuredContent"]["forecast"].as_array().unwrap().len(),
            2
        );
        let bad = s
            .call("get_weather", &args(json!({"city": "Atlantis"})), None)
            .await
            .unwrap();
        assert_eq!(bad["isError"], true);
        assert!(
            bad["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("Atlantis")
        );
    }

    #[tokio::test]
    async fn write_file_stays_in_its_folder() {
        let dir = std::env::temp_dir().join(format!("toolscope-mcp-unit-{}", std::process::id()));
        let s = server(&dir);
        let ok = s
            .call(
                "write_file",
                &args(json!({"path": "a/b.txt", "content": "hi\n"})),
                None,
            )
            .await
            .unwrap();
        assert_eq!(ok["isError"], false, "{ok}");
        assert_eq!(
            std::fs::read_to_string(dir.join("a/b.txt")).unwrap(),
            "hi\n"
        );
        for bad in ["/etc/passwd", "../x", "a/../../x", ""] {
            let r = s
                .call(
                    "write_file",
                    &args(json!({"path": bad, "content": "x"})),
                    None,
                )
                .await
                .unwrap();
            assert_eq!(r["isError"], true, "{bad}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_tools_are_the_playgrounds_examples() {
        let s = server(&std::env::temp_dir());
        let names: Vec<String> = s
            .tool_list()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, ["get_weather", "search_web", "write_file"]);
        assert!(s.tool_list()[0]["inputSchema"]["properties"]["city"].is_object());
    }
}

//! The tools of several MCP servers and the user's own, as one [`ToolSet`] a request can offer:
//! every name unique and acceptable to every provider API, and each MCP tool remembering its
//! server and its name there.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::tool::{ToolDef, ToolSet, ToolsError};

use super::McpError;

/// The longest tool name the provider APIs accept.
pub(crate) const MAX_TOOL_NAME: usize = 64;

/// Where a tool offered to the model is served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpRoute {
    /// The server's position in the list given to [`Catalog::build`].
    pub server: usize,
    /// The server's name.
    pub server_name: String,
    /// The tool's name on its server, which `tools/call` must use.
    pub original: String,
}

/// A tool offered under another name than its server gives it, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rename {
    /// The server's name.
    pub server_name: String,
    /// The name on the server.
    pub original: String,
    /// The name the model sees.
    pub exposed: String,
    /// Why, as one phrase.
    pub reason: String,
}

impl std::fmt::Display for Rename {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MCP tool \"{}\" of server \"{}\" is offered as \"{}\" ({})",
            self.original, self.server_name, self.exposed, self.reason
        )
    }
}

/// The user's tools and every server's, merged.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    tools: ToolSet,
    routes: HashMap<String, McpRoute>,
    renames: Vec<Rename>,
    warnings: Vec<String>,
}

impl Catalog {
    /// Merges `user` (kept as they are, first) with each server's `tools/list` entries
    /// (`{name, description, inputSchema}` JSON), given as `(server name, entries)`.
    ///
    /// A name that two servers share, or a server shares with a user tool, is offered as
    /// `SERVER__NAME` for each MCP tool that has it (the user's keeps its name); a name with
    /// characters or a length the provider APIs refuse (`^[a-zA-Z0-9_-]{1,64}$`) is made into
    /// one. Each change is a [`Rename`]. An entry that cannot be read as a tool (not an object,
    /// no name) is left out with a warning naming the server, the entry and the problem; the
    /// server's other tools stay.
    pub fn build(user: &ToolSet, servers: &[(String, Vec<Value>)]) -> Result<Catalog, McpError> {
        let mut warnings = Vec::new();
        let mut per_server: Vec<Vec<ToolDef>> = Vec::with_capacity(servers.len());
        for (name, entries) in servers {
            let set = match ToolSet::from_json(&Value::Array(entries.clone())) {
                Ok(set) => set,
                Err(_) => {
                    // Some entry is unusable: each is read on its own, and the bad ones left out.
                    let mut usable = Vec::with_capacity(entries.len());
                    for (index, entry) in entries.iter().enumerate() {
                        match ToolSet::from_json(&Value::Array(vec![entry.clone()])) {
                            Ok(_) => usable.push(entry.clone()),
                            Err(e) => warnings.push(format!(
                                "MCP server \"{name}\": {} is left out: {}",
                                describe_entry(index, entry),
                                problem(&e)
                            )),
                        }
                    }
                    ToolSet::from_json(&Value::Array(usable)).map_err(|e| {
                        McpError::Protocol(format!(
                            "server \"{name}\" listed tools toolscope cannot read: {e}"
                        ))
                    })?
                }
            };
            warnings.extend(
                set.warnings()
                    .iter()
                    .map(|w| format!("MCP server \"{name}\": {w}")),
            );
            per_server.push(set.defs());
        }

        // How many places offer each name: the user's tools and each server once.
        let mut count: HashMap<String, usize> = HashMap::new();
        for t in user.iter() {
            *count.entry(t.name().to_string()).or_default() += 1;
        }
        for defs in &per_server {
            for d in defs {
                *count.entry(d.name.clone()).or_default() += 1;
            }
        }

        let mut taken: HashSet<String> = user.iter().map(|t| t.name().to_string()).collect();
        let mut defs: Vec<ToolDef> = user.defs();
        let mut routes = HashMap::new();
        let mut renames = Vec::new();
        for (server, server_defs) in per_server.into_iter().enumerate() {
            let server_name = &servers[server].0;
            for mut def in server_defs {
                let original = def.name.clone();
                let (wanted, reason) = if count.get(original.as_str()).copied().unwrap_or(0) > 1 {
                    (
                        format!("{}__{}", sanitize(server_name), sanitize(&original)),
                        "another tool has the same name".to_string(),
                    )
                } else if sanitize(&original) != original {
                    (
                        sanitize(&original),
                        "provider APIs accept only letters, digits, _ and - up to 64 characters"
                            .to_string(),
                    )
                } else {
                    (original.clone(), String::new())
                };
                let exposed = unique(&wanted, &taken);
                taken.insert(exposed.clone());
                if exposed != original {
                    renames.push(Rename {
                        server_name: server_name.clone(),
                        original: original.clone(),
                        exposed: exposed.clone(),
                        reason: if reason.is_empty() {
                            "another tool has the same name".into()
                        } else {
                            reason
                        },
                    });
                }
                def.name = exposed.clone();
                routes.insert(
                    exposed,
                    McpRoute {
                        server,
                        server_name: server_name.clone(),
                        original,
                    },
                );
                defs.push(def);
            }
        }
        let tools = ToolSet::new(defs).map_err(|e| McpError::Protocol(e.to_string()))?;
        Ok(Catalog {
            tools,
            routes,
            renames,
            warnings,
        })
    }

    /// Every tool: the user's first, then each server's in order, under the names the model
    /// sees.
    pub fn tools(&self) -> &ToolSet {
        &self.tools
    }

    /// The server and original name of the tool the model calls `exposed`; `None` for the
    /// user's own tools and unknown names.
    pub fn route(&self, exposed: &str) -> Option<&McpRoute> {
        self.routes.get(exposed)
    }

    /// The server of each MCP tool, by the name the model sees.
    pub fn routes(&self) -> impl Iterator<Item = (&str, &McpRoute)> {
        self.routes.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Each MCP tool offered, in the order of [`Catalog::tools`], as a session records it: its
    /// server, its name there and the name the model sees.
    pub fn tool_records(&self) -> Vec<crate::session::McpToolRecord> {
        self.tools
            .iter()
            .filter_map(|t| {
                let route = self.routes.get(t.name())?;
                Some(crate::session::McpToolRecord {
                    server: route.server_name.clone(),
                    name: route.original.clone(),
                    offered_as: t.name().to_string(),
                })
            })
            .collect()
    }

    /// The MCP tools offered under another name than their server's.
    pub fn renames(&self) -> &[Rename] {
        &self.renames
    }

    /// What the servers' definitions had read differently (see [`ToolSet::warnings`]), one
    /// line each, naming the server.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// `tool 3 ("name")`, or `tool 3` when it has no name: `index` counts from 0, as in
/// [`ToolsError::BadEntry`].
fn describe_entry(index: usize, entry: &Value) -> String {
    match entry.get("name").and_then(Value::as_str) {
        Some(n) => format!(
            "tool {index} (\"{}\")",
            n.chars().take(80).collect::<String>()
        ),
        None => format!("tool {index}"),
    }
}

/// What is wrong with one entry, without the entry's position (which is given apart).
fn problem(e: &ToolsError) -> String {
    match e {
        ToolsError::BadEntry { problem, .. } => problem.clone(),
        other => other.to_string(),
    }
}

/// `s` with every character outside `[a-zA-Z0-9_-]` made `_`, cut to [`MAX_TOOL_NAME`].
fn sanitize(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOOL_NAME)
        .collect();
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// `wanted`, or `wanted` with `_2`, `_3`, … (cut to fit) when it is taken.
fn unique(wanted: &str, taken: &HashSet<String>) -> String {
    let wanted = cut(wanted, MAX_TOOL_NAME);
    if !taken.contains(&wanted) {
        return wanted;
    }
    (2..)
        .map(|n| {
            let suffix = format!("_{n}");
            format!("{}{suffix}", cut(&wanted, MAX_TOOL_NAME - suffix.len()))
        })
        .find(|c| !taken.contains(c))
        .unwrap_or(wanted)
}

fn cut(s: &str, max: usize) -> String {
    // Names are ASCII here (sanitised), so bytes are characters.
    s.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(name: &str) -> Value {
        json!({"name": name, "description": format!("{name} tool"), "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}})
    }

    fn names(c: &Catalog) -> Vec<String> {
        c.tools().iter().map(|t| t.name().to_string()).collect()
    }

    #[test]
    fn distinct_names_stay_and_route_to_their_server() {
        let user = ToolSet::from_json_text(r#"[{"name":"mine"}]"#).unwrap();
        let c = Catalog::build(
            &user,
            &[
                ("a".into(), vec![entry("one")]),
                ("b".into(), vec![entry("two")]),
            ],
        )
        .unwrap();
        assert_eq!(names(&c), ["mine", "one", "two"]);
        assert!(c.renames().is_empty());
        assert_eq!(c.route("two").unwrap().server, 1);
        assert_eq!(c.route("two").unwrap().original, "two");
        assert!(c.route("mine").is_none());
        // The MCP `inputSchema` became the parameters.
        assert_eq!(
            c.tools().get("one").unwrap().schema()["properties"]["x"]["type"],
            "string"
        );
    }

    #[test]
    fn a_shared_name_is_prefixed_with_each_server_and_the_users_tool_keeps_it() {
        let user = ToolSet::from_json_text(r#"[{"name":"get_weather"}]"#).unwrap();
        let c = Catalog::build(
            &user,
            &[
                (
                    "weather".into(),
                    vec![entry("get_weather"), entry("search")],
                ),
                ("web search".into(), vec![entry("search")]),
            ],
        )
        .unwrap();
        assert_eq!(
            names(&c),
            [
                "get_weather",
                "weather__get_weather",
                "weather__search",
                "web_search__search"
            ]
        );
        let r = c.route("web_search__search").unwrap();
        assert_eq!((r.server, r.original.as_str()), (1, "search"));
        assert_eq!(c.renames().len(), 3);
        assert!(
            c.renames()[0]
                .to_string()
                .contains("\"weather__get_weather\"")
        );
    }

    #[test]
    fn names_the_apis_refuse_are_made_valid_and_unique() {
        let long = "x".repeat(80);
        let c = Catalog::build(
            &ToolSet::empty(),
            &[
                ("s".into(), vec![entry("files.read"), entry(&long)]),
                ("s".into(), vec![entry("files.read")]),
            ],
        )
        .unwrap();
        let n = names(&c);
        assert_eq!(n[0], "s__files_read");
        assert_eq!(n[1], "x".repeat(64));
        assert_eq!(n[2], "s__files_read_2");
        let valid = |s: &str| {
            (1..=64).contains(&s.len())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        assert!(n.iter().all(|s| valid(s)), "{n:?}");
        assert_eq!(c.route(&"x".repeat(64)).unwrap().original, long);
    }

    #[test]
    fn an_unreadable_entry_is_left_out_with_a_warning_and_the_others_stay() {
        let c = Catalog::build(
            &ToolSet::empty(),
            &[(
                "srv".into(),
                vec![
                    entry("first"),
                    json!({"nope": 1}),
                    json!({"name": ["not", "a", "string"]}),
                    json!("not an object"),
                    entry("last"),
                ],
            )],
        )
        .unwrap();
        assert_eq!(names(&c), ["first", "last"]);
        assert_eq!(c.route("last").unwrap().original, "last");
        let w = c.warnings();
        assert_eq!(w.len(), 3, "{w:?}");
        assert_eq!(
            w[0],
            "MCP server \"srv\": tool 1 is left out: missing \"name\""
        );
        assert!(
            w[1].contains("tool 2") && w[1].contains("must be a string"),
            "{w:?}"
        );
        assert!(
            w[2].contains("tool 3") && w[2].contains("expected an object"),
            "{w:?}"
        );
    }
}

//! The OpenArmature llm-provider conformance fixtures, run against loopback servers.
//!
//! Every case of every fixture YAML in `$TOOLSCOPE_CONFORMANCE_DIR` (default: the workspace's
//! `../shared/conformance/openarmature` when it is there, else the copy kept in
//! `tests/data/conformance/openarmature`) runs through the real provider path:
//! a mock server answers as the fixture says and records the request; the wire body is compared
//! key by key with `expected_wire_request` (key order is not significant), and the parts are
//! mapped back to the spec's response (`message`, `finish_reason`, `usage`, `raw`) or error
//! category. Cases that need image input are skipped with the reason; every other case must
//! pass. Without the folder the test is skipped, unless `CI` is set.
//!
//! Mapping notes: the spec's `complete()` has no defaults, so a request is built with exactly the
//! fixture's `config` (toolscope's own default Anthropic `max_tokens` is applied by
//! `Request::new`, which the command line and the TUI use, not by the wire mapping). A tool list
//! that cannot be built (duplicate names) is refused before sending, as
//! `provider_invalid_request`.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};
use support::{End, MockServer, Reply};
use toolscope_core::part::{FinishReason, Part, ToolCall};
use toolscope_core::provider::{Keys, Message, ProviderKind, Request, Run, RunEvent, Sampling};
use toolscope_core::tool::{ToolChoice, ToolDef, ToolSet};
use yaml_rust2::{Yaml, YamlLoader};

fn fixtures_dir() -> PathBuf {
    match std::env::var_os("TOOLSCOPE_CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let here = Path::new(env!("CARGO_MANIFEST_DIR"));
            let shared = here.join("../../../shared/conformance/openarmature");
            if shared.is_dir() {
                shared
            } else {
                here.join("tests/data/conformance/openarmature")
            }
        }
    }
}

fn to_json(y: &Yaml) -> Value {
    match y {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::String(s.clone()), Value::Number),
        Yaml::Integer(i) => json!(i),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(a) => Value::Array(a.iter().map(to_json).collect()),
        Yaml::Hash(h) => Value::Object(
            h.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s.clone(),
                        Yaml::Integer(i) => i.to_string(),
                        Yaml::Boolean(b) => b.to_string(),
                        other => format!("{other:?}"),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Yaml::Null | Yaml::BadValue | Yaml::Alias(_) => Value::Null,
    }
}

/// One `complete()` call and what it must produce.
struct Call {
    call: Value,
    wire: Option<Value>,
    checks: Option<Value>,
    expected: Value,
}

struct Case {
    name: String,
    mapping: String,
    responses: Vec<Value>,
    calls: Vec<Call>,
}

fn cases_of(doc: &Value, file: &str) -> Vec<Case> {
    let mapping = doc["mapping"].as_str().unwrap_or("openai").to_string();
    let top_responses = doc["mock_provider"]["responses"].as_array().cloned();
    if let Some(cases) = doc["cases"].as_array() {
        return cases
            .iter()
            .map(|c| Case {
                name: format!("{file}::{}", c["name"].as_str().unwrap_or("?")),
                mapping: mapping.clone(),
                responses: c["mock_provider"]["responses"]
                    .as_array()
                    .cloned()
                    .or(top_responses.clone())
                    .unwrap_or_default(),
                calls: vec![Call {
                    call: c["call"].clone(),
                    wire: c.get("expected_wire_request").cloned(),
                    checks: c.get("expected_wire_request_checks").cloned(),
                    expected: c["expected"].clone(),
                }],
            })
            .collect();
    }
    let calls = doc["calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| Call {
                    call: c.clone(),
                    wire: c.get("expected_wire_request").cloned(),
                    checks: c.get("expected_wire_request_checks").cloned(),
                    expected: c["expected"].clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    vec![Case {
        name: file.to_string(),
        mapping,
        responses: top_responses.unwrap_or_default(),
        calls,
    }]
}

/// Why a case cannot run here, if it cannot.
fn skip_reason(case: &Case, doc_case: &Value) -> Option<String> {
    let images = case.calls.iter().any(|c| {
        c.call["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| {
                m["content"]
                    .as_array()
                    .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "image"))
            })
    });
    (images || doc_case["mock_provider"]["capabilities"]["supports_image_input"] == true)
        .then(|| "needs image input, which toolscope does not send".to_string())
}

fn reply_of(r: &Value) -> Reply {
    if r["connection_failure"] == true {
        return Reply::Close;
    }
    let status = r["status"].as_u64().unwrap_or(200) as u16;
    let mut reply = match r.get("stream_body").and_then(Value::as_array) {
        Some(events) => Reply::sse_data(events, End::Clean),
        None => Reply::json(status, &r["body"]),
    };
    if let Some(h) = r["headers"].as_object() {
        for (n, v) in h {
            reply = reply.with_header(n, v.as_str().unwrap_or(&v.to_string()));
        }
    }
    reply
}

/// The request a fixture call describes, or the pre-send failure of building it.
fn request_of(mapping: &str, call: &Call, base: &str) -> Result<Request, String> {
    let (provider, model) = match mapping {
        "anthropic" => (ProviderKind::ANTHROPIC, "claude-test"),
        "gemini" => (ProviderKind::GEMINI, "gemini-test"),
        _ => (ProviderKind::OPENAI, "test-model"),
    };
    let c = &call.call;
    let model = call
        .wire
        .as_ref()
        .and_then(|w| w["model"].as_str())
        .unwrap_or(model);
    let mut r = Request::new(provider, model);
    r.base_url = Some(base.to_string());
    r.stream = c["stream"] == true;
    let cfg = &c["config"];
    r.sampling = Sampling {
        temperature: cfg["temperature"].as_f64(),
        max_tokens: cfg["max_tokens"].as_u64().map(|m| m as u32),
        top_p: cfg["top_p"].as_f64(),
        seed: cfg["seed"].as_i64(),
        ..Sampling::default()
    };
    for m in c["messages"].as_array().into_iter().flatten() {
        let text = m["content"].as_str().map(str::to_string);
        r.messages.push(match m["role"].as_str().unwrap_or("") {
            "system" => Message::system(text.unwrap_or_default()),
            "user" => Message::user(text.unwrap_or_default()),
            "assistant" => Message::assistant(
                text,
                m["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|tc| ToolCall {
                        tool_call_id: tc["id"].as_str().unwrap_or("").into(),
                        tool_name: tc["name"].as_str().unwrap_or("").into(),
                        input: tc["arguments"].clone(),
                        coercions: vec![],
                        invalid: vec![],
                        ..Default::default()
                    })
                    .collect(),
            ),
            "tool" => Message::tool_result(
                m["tool_call_id"].as_str().unwrap_or(""),
                text.unwrap_or_default(),
            ),
            other => return Err(format!("unknown role {other}")),
        });
    }
    let defs: Vec<ToolDef> = c["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            ToolDef::new(
                t["name"].as_str().unwrap_or(""),
                t["description"].as_str().unwrap_or(""),
                t["parameters"].clone(),
            )
        })
        .collect();
    r.tools = ToolSet::new(defs).map_err(|e| e.to_string())?;
    r.tool_choice = match &c["tool_choice"] {
        Value::Null => None,
        Value::String(s) => Some(ToolChoice::parse(s)?),
        Value::Object(o) => Some(ToolChoice::Tool(
            o.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        )),
        other => return Err(format!("bad tool_choice {other}")),
    };
    Ok(r)
}

fn spec_finish(r: FinishReason) -> &'static str {
    match r {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Error => "error",
        FinishReason::Other | FinishReason::Unknown => "other",
    }
}

/// The spec's Response, rebuilt from the parts.
fn response_of(events: &[RunEvent]) -> Result<Value, String> {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    let mut finish = None;
    for e in events {
        match e {
            RunEvent::Part(Part::TextDelta { delta, .. }) => text.push_str(delta),
            RunEvent::Part(Part::ReasoningDelta { delta, .. }) => reasoning.push_str(delta),
            RunEvent::Part(Part::ToolCall(c)) => calls.push(json!({
                "id": &*c.tool_call_id, "name": c.tool_name, "arguments": c.input,
            })),
            RunEvent::Part(Part::Error(err)) => match (&err.category, &err.reason) {
                (Some(cat), _) => return Err(format!("{cat}: {}", err.message)),
                // A call whose arguments do not parse keeps its place, arguments null.
                (None, Some(r)) if r == "malformed-tool-call" => calls.push(json!({
                    "id": err.tool_call_id.as_deref(), "name": err.tool_name, "arguments": null,
                })),
                _ => {}
            },
            RunEvent::Part(Part::Finish {
                finish_reason,
                usage,
            }) => finish = Some((*finish_reason, usage.as_deref().copied())),
            _ => {}
        }
    }
    let (reason, usage) = finish.ok_or("no finish part")?;
    let content = if !reasoning.is_empty() {
        json!([{"type": "thinking", "text": reasoning}, {"type": "text", "text": text}])
    } else if text.is_empty() {
        Value::Null
    } else {
        json!(text)
    };
    let mut r = json!({
        "message": {
            "role": "assistant",
            "content": content,
            "tool_calls": if calls.is_empty() { Value::Null } else { Value::Array(calls) },
        },
        "finish_reason": spec_finish(reason),
    });
    if let Some(u) = usage {
        r["usage"] = json!({
            "prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
            "total_tokens": u.total_tokens,
        });
    }
    Ok(r)
}

/// Differences between `want` and `got`, key by key; keys in `got` that `want` lacks count.
fn diff(path: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                match g.get(k) {
                    Some(gv) => diff(&format!("{path}.{k}"), wv, gv, out),
                    None => out.push(format!("{path}.{k}: missing, want {wv}")),
                }
            }
            for k in g.keys().filter(|k| !w.contains_key(*k)) {
                out.push(format!("{path}.{k}: not expected, got {}", g[k]));
            }
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                diff(&format!("{path}[{i}]"), wv, gv, out);
            }
        }
        (Value::Number(w), Value::Number(g)) if w.as_f64() == g.as_f64() => {}
        _ if want == got => {}
        _ => out.push(format!("{path}: want {want}, got {got}")),
    }
}

/// Differences in the keys `want` names only (a subset check, for responses).
fn diff_subset(path: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                let gv = g.get(k).unwrap_or(&Value::Null);
                diff_subset(&format!("{path}.{k}"), wv, gv, out);
            }
        }
        _ => diff(path, want, got, out),
    }
}

fn raw_objects(events: &[RunEvent]) -> Vec<Map<String, Value>> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Raw(r) => serde_json::from_str::<Value>(&r.data).ok(),
            _ => None,
        })
        .filter_map(|v| match v {
            Value::Object(o) => Some(o),
            _ => None,
        })
        .collect()
}

async fn run_call(
    case: &Case,
    call: &Call,
    server: &MockServer,
    sent_before: usize,
    response_mock: Option<&Value>,
) -> Result<(), String> {
    let request = match request_of(&case.mapping, call, &server.url()) {
        Ok(r) => r,
        Err(problem) => {
            // Refused before sending, as the spec's pre-send validation.
            return match call.expected["raises"]["category"].as_str() {
                Some("provider_invalid_request") => Ok(()),
                _ => Err(format!("the request could not be built: {problem}")),
            };
        }
    };
    let events = tokio::time::timeout(
        Duration::from_secs(30),
        Run::start(request, Keys::default()).collect(),
    )
    .await
    .map_err(|_| "the run did not end".to_string())?;
    let sent = server.recorded();
    let mut problems = Vec::new();

    if let Some(raises) = call.expected.get("raises") {
        let want = raises["category"].as_str().unwrap_or("");
        match events.iter().rev().find_map(|e| match e.as_part() {
            Some(Part::Error(err)) if err.category.is_some() => Some(err.clone()),
            _ => None,
        }) {
            Some(err) => {
                if err.category_name() != Some(want) {
                    problems.push(format!("raised {:?}, want {want}", err.category));
                }
                if let Some(secs) = raises["retry_after_seconds"].as_f64()
                    && err.retry_after != Some(secs)
                {
                    problems.push(format!("retry_after {:?}, want {secs}", err.retry_after));
                }
            }
            None => problems.push(format!("no error raised, want {want}")),
        }
        if want == "provider_invalid_request" && response_mock.is_none() && sent.len() > sent_before
        {
            problems.push("a request was sent although validation must stop it".into());
        }
    }

    if let Some(wire) = &call.wire {
        match sent.get(sent_before) {
            None => problems.push("no request was sent".into()),
            Some(rec) => {
                let mut got = rec.json();
                if case.mapping == "gemini" {
                    // The model is the URL path segment on Gemini.
                    let model = rec
                        .path
                        .split("/models/")
                        .nth(1)
                        .and_then(|s| s.split(':').next())
                        .unwrap_or("");
                    got["model"] = json!(model);
                }
                diff("wire", wire, &got, &mut problems);
            }
        }
    }
    if let Some(checks) = &call.checks
        && checks["tool_choice_absent"] == true
        && let Some(rec) = sent.get(sent_before)
    {
        let body = rec.json();
        if body.get("tool_choice").is_some() || body.get("toolConfig").is_some() {
            problems.push("tool_choice must be absent from the wire".into());
        }
    }

    if let Some(want) = call.expected.get("response") {
        match response_of(&events) {
            Err(e) => problems.push(format!("no response: {e}")),
            Ok(got) => {
                let mut want = want.clone();
                let raw_check = want.as_object_mut().and_then(|o| o.remove("raw_check"));
                diff_subset("response", &want, &got, &mut problems);
                if let Some(keys) = raw_check
                    .as_ref()
                    .and_then(|r| r["required_keys"].as_array())
                {
                    let raws = raw_objects(&events);
                    for k in keys.iter().filter_map(Value::as_str) {
                        match raws.iter().find_map(|o| o.get(k)) {
                            None => problems.push(format!("raw lacks {k}")),
                            Some(v) => {
                                // A whole body must carry the mock's value verbatim.
                                if let Some(body) = response_mock.and_then(|m| m.get("body"))
                                    && body.get(k) != Some(v)
                                {
                                    problems.push(format!("raw.{k} differs from the body"));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n    "))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openarmature_fixtures() {
    let dir = fixtures_dir();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) => {
            if std::env::var_os("CI").is_some() {
                panic!(
                    "the conformance fixtures are missing at {}: {e}",
                    dir.display()
                );
            }
            println!(
                "skipped: no conformance fixtures at {} ({e})",
                dir.display()
            );
            return;
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());

    let (mut passed, mut skipped, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let doc = to_json(&docs[0]);
        let doc_cases: Vec<Value> = doc["cases"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec![doc.clone()]);
        for (case, doc_case) in cases_of(&doc, &file).into_iter().zip(doc_cases) {
            if let Some(reason) = skip_reason(&case, &doc_case) {
                skipped.push(format!("{} ({reason})", case.name));
                continue;
            }
            let server = MockServer::start(case.responses.iter().map(reply_of).collect()).await;
            let mut result = Ok(());
            for (i, call) in case.calls.iter().enumerate() {
                let before = server.recorded().len();
                if let Err(e) = run_call(&case, call, &server, before, case.responses.get(i)).await
                {
                    result = Err(format!("call {}: {e}", i + 1));
                    break;
                }
            }
            match result {
                Ok(()) => passed.push(case.name),
                Err(e) => failed.push(format!("{}\n    {e}", case.name)),
            }
        }
    }
    println!(
        "conformance: {} passed, {} skipped, {} failed",
        passed.len(),
        skipped.len(),
        failed.len()
    );
    for s in &skipped {
        println!("  skipped {s}");
    }
    for f in &failed {
        println!("  FAILED {f}");
    }
    assert!(
        failed.is_empty(),
        "{} conformance cases failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

//! The demo model as a provider: started in-process on a free loopback port by `attach`, and
//! talked to over HTTP by the core's OpenAI adapter like any compatible server.

use std::time::Duration;

use serde_json::json;
use toolscope_core::part::{Collapsed, FinishReason, Part};
use toolscope_core::protocol::Protocol;
use toolscope_core::provider::{Keys, Message, ProviderKind, Request, Run, RunEvent};
use toolscope_core::tool::{ToolChoice, ToolDef, ToolSet};

/// One tool, `get_weather(city)`.
fn tools() -> ToolSet {
    let city = json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]});
    let tool = ToolDef::new("get_weather", "Weather for a city", city);
    ToolSet::new(vec![tool]).unwrap()
}

async fn run(mut r: Request) -> Vec<RunEvent> {
    let _server = toolscope_demo::attach(&mut r).await.unwrap();
    tokio::time::timeout(
        Duration::from_secs(20),
        Run::start(r, Keys::default()).collect(),
    )
    .await
    .expect("the run ends")
}

fn finish(parts: &[Part]) -> FinishReason {
    match parts.last() {
        Some(Part::Finish { finish_reason, .. }) => *finish_reason,
        other => panic!("expected a finish part last, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_provider_runs_in_process_in_every_mode() {
    for protocol in [None, Some("hermes"), Some("morph-xml")] {
        for choice in [
            ToolChoice::Auto,
            ToolChoice::Required,
            ToolChoice::None,
            ToolChoice::Tool("get_weather".into()),
        ] {
            for stream in [true, false] {
                let mut r = Request::new(toolscope_demo::provider(), "demo");
                r.messages = vec![Message::user("What's the weather in Paris?")];
                r.tools = tools();
                r.tool_choice = Some(choice.clone());
                r.protocol = protocol.map(|p| Protocol::from_name(p).unwrap());
                r.stream = stream;
                let parts: Vec<Part> = run(r)
                    .await
                    .iter()
                    .filter_map(|e| e.as_part().cloned())
                    .collect();
                let c = Collapsed::of(&parts);
                let case = format!("{protocol:?} {choice:?} stream={stream}: {parts:?}");
                if choice == ToolChoice::None {
                    assert!(c.calls.is_empty() && !c.text.is_empty(), "{case}");
                    assert_eq!(finish(&parts), FinishReason::Stop, "{case}");
                } else {
                    assert_eq!(c.calls.len(), 1, "{case}");
                    assert_eq!(c.calls[0].0, "get_weather", "{case}");
                    assert_eq!(finish(&parts), FinishReason::ToolCalls, "{case}");
                }
            }
        }
    }
}

/// The same model on the Responses wire: the core's `openai-responses` adapter against the demo
/// server's `/v1/responses`, every tool-choice mode, native and emulated (`text.format`),
/// streamed and not; the answers keep the wire's rules (no lint warning).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_answers_on_the_responses_wire_in_every_mode() {
    let server = toolscope_demo::start_local(toolscope_demo::DemoOptions::instant())
        .await
        .unwrap();
    for protocol in [None, Some("hermes")] {
        for choice in [
            ToolChoice::Auto,
            ToolChoice::Required,
            ToolChoice::None,
            ToolChoice::Tool("get_weather".into()),
        ] {
            for stream in [true, false] {
                let mut r = Request::new(ProviderKind::OPENAI_RESPONSES, "demo-1");
                r.base_url = Some(server.base_url());
                r.messages = vec![Message::user("What's the weather in Paris?")];
                r.tools = tools();
                r.tool_choice = Some(choice.clone());
                r.protocol = protocol.map(|p| Protocol::from_name(p).unwrap());
                r.stream = stream;
                let parts: Vec<Part> = run(r)
                    .await
                    .iter()
                    .filter_map(|e| e.as_part().cloned())
                    .collect();
                let c = Collapsed::of(&parts);
                let case = format!("{protocol:?} {choice:?} stream={stream}: {parts:?}");
                assert!(
                    !parts.iter().any(|p| matches!(p, Part::Warning(_))),
                    "{case}"
                );
                if choice == ToolChoice::None {
                    assert!(c.calls.is_empty() && !c.text.is_empty(), "{case}");
                    assert_eq!(finish(&parts), FinishReason::Stop, "{case}");
                } else {
                    assert_eq!(c.calls.len(), 1, "{case}");
                    assert_eq!(c.calls[0].0, "get_weather", "{case}");
                    assert_eq!(finish(&parts), FinishReason::ToolCalls, "{case}");
                }
                match parts.last() {
                    Some(Part::Finish { usage: Some(u), .. }) => {
                        assert!(u.input_tokens.is_some() && u.output_tokens.is_some())
                    }
                    other => panic!("{case}: usage expected, got {other:?}"),
                }
            }
        }
    }
    // `#cut` breaks the stream off: what came stays, an error ends it.
    let mut r = Request::new(ProviderKind::OPENAI_RESPONSES, "demo-1");
    r.base_url = Some(server.base_url());
    r.messages = vec![Message::user("#cut Tell me about the weather in Rome.")];
    let parts: Vec<Part> = run(r)
        .await
        .iter()
        .filter_map(|e| e.as_part().cloned())
        .collect();
    assert!(matches!(parts.last(), Some(Part::Error(_))), "{parts:?}");
    assert!(!Collapsed::of(&parts).text.is_empty());
}

#[tokio::test]
async fn a_demo_request_without_a_server_is_not_sent() {
    // Without `attach`, the core has no address for the demo: refused before sending.
    let mut r = Request::new(toolscope_demo::provider(), "demo");
    r.messages = vec![Message::user("hi")];
    let events = Run::start(r, Keys::default()).collect().await;
    let last = events.iter().rev().find_map(RunEvent::as_part);
    match last {
        Some(Part::Error(e)) => {
            assert_eq!(e.category_name(), Some("provider_invalid_request"));
            assert!(e.message.contains("base URL"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
}

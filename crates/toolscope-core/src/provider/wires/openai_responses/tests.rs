//! The Responses wire: requests, and answers streamed and whole.

use serde_json::{Value, json};

use super::METADATA_KEY;
use super::decode::Decoder;
use super::request::tool_choice;
use crate::lint;
use crate::part::ToolCall;
use crate::protocol::Protocol;
use crate::provider::assemble::Delta;
use crate::provider::wires::WireDecoder;
use crate::provider::{Message, ProviderKind, ReasoningEffort, Request, wire_request};
use crate::tool::{ToolChoice, ToolDef, ToolSet};

fn request(choice: Option<ToolChoice>) -> Request {
    let mut r = Request::new(ProviderKind::OPENAI_RESPONSES, "gpt-5-mini");
    r.system = Some("Be brief.".into());
    r.messages = vec![Message::user("Weather in Paris?")];
    r.tools = ToolSet::new(vec![
        ToolDef::new(
            "get_weather",
            "Weather for a city",
            json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}),
        ),
        ToolDef::new("get_time", "", json!({"type":"object","properties":{}})),
    ])
    .unwrap();
    r.tool_choice = choice;
    r.stream = false;
    r
}

fn body(r: &Request) -> Value {
    let w = wire_request(r, "http://h/v1");
    assert_eq!(w.url, "http://h/v1/responses");
    w.body
}

#[test]
fn tool_choice_maps_as_the_design_table_says() {
    let cases = [
        (None, None),
        (Some(ToolChoice::Auto), Some(json!("auto"))),
        (Some(ToolChoice::Required), Some(json!("required"))),
        (Some(ToolChoice::None), Some(json!("none"))),
        (
            Some(ToolChoice::Tool("get_time".into())),
            Some(json!({"type":"function","name":"get_time"})),
        ),
    ];
    for (choice, want) in cases {
        let b = body(&request(choice.clone()));
        assert_eq!(b.get("tool_choice"), want.as_ref(), "{choice:?}");
        assert_eq!(
            b["tools"][0],
            json!({"name":"get_weather","description":"Weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"type":"function","strict":false})
        );
        assert!(b["tools"][1].get("description").is_none());
        assert_eq!(b["instructions"], "Be brief.");
        assert_eq!(
            b["input"],
            json!([{"role":"user","content":"Weather in Paris?"}])
        );
        assert!(b.get("stream").is_none() && b.get("text").is_none());
    }
}

#[test]
fn emulated_choices_use_text_format_and_no_native_tools() {
    let hermes = Protocol::from_name("hermes").unwrap();
    for choice in [ToolChoice::Required, ToolChoice::Tool("get_weather".into())] {
        let mut r = request(Some(choice.clone()));
        r.protocol = Some(hermes.clone());
        let b = body(&r);
        assert!(b.get("tools").is_none() && b.get("tool_choice").is_none());
        let format = &b["text"]["format"];
        assert_eq!(format["type"], "json_schema", "{choice:?}");
        assert_eq!(format["name"], "tool_call");
        assert_eq!(format["strict"], false);
        assert!(format["schema"].is_object());
        assert!(b["instructions"].as_str().unwrap().contains("<tools>"));
    }
    let forced = {
        let mut r = request(Some(ToolChoice::Tool("get_weather".into())));
        r.protocol = Some(hermes.clone());
        body(&r)
    };
    assert_eq!(
        forced["text"]["format"]["schema"]["properties"]["name"]["const"],
        "get_weather"
    );
    let mut r = request(Some(ToolChoice::None));
    r.protocol = Some(hermes);
    let b = body(&r);
    assert!(b.get("tools").is_none() && b.get("text").is_none());
    assert_eq!(b["instructions"], "Be brief.");
}

#[test]
fn sampling_parallel_calls_and_reasoning() {
    let mut r = request(Some(ToolChoice::Auto));
    r.sampling.parallel_tool_calls = Some(false);
    r.sampling.reasoning_effort = Some(ReasoningEffort::Minimal);
    r.sampling.max_tokens = Some(300);
    r.sampling.temperature = Some(0.2);
    r.sampling.seed = Some(7);
    r.sampling.stop = vec!["END".into()];
    r.stream = true;
    let b = body(&r);
    assert_eq!(b["parallel_tool_calls"], false);
    assert_eq!(b["reasoning"], json!({"effort":"minimal","summary":"auto"}));
    assert_eq!(b["max_output_tokens"], 300);
    assert_eq!(b["temperature"], 0.2);
    assert_eq!(b["stream"], true);
    // Responses has no seed and no stop sequences.
    assert!(b.get("seed").is_none() && b.get("stop").is_none());
    // Allowed tools restrict the calls and keep the list.
    r.sampling.allowed_tools = vec!["get_time".into()];
    let b = body(&r);
    assert_eq!(b["tools"].as_array().unwrap().len(), 2);
    assert_eq!(b["tool_choice"]["type"], "allowed_tools");
    assert_eq!(b["tool_choice"]["mode"], "auto");
}

#[test]
fn history_is_input_items_with_reasoning_sent_back() {
    let mut r = request(None);
    let call = ToolCall {
        tool_call_id: "call_1".into(),
        tool_name: "get_weather".into(),
        input: json!({"city":"Paris"}),
        ..ToolCall::default()
    };
    let item = json!({"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Think."}],"encrypted_content":"enc"});
    r.messages = vec![
        Message::user("Weather in Paris?"),
        Message::Assistant {
            content: Some("Checking.".into()),
            tool_calls: vec![call],
            reasoning: vec![crate::provider::Reasoning {
                text: "Think.".into(),
                redacted: false,
                provider_metadata: Some(json!({METADATA_KEY: {"item": item}})),
            }],
        },
        Message::tool_result("call_1", "sunny"),
    ];
    let b = body(&r);
    assert_eq!(
        b["input"],
        json!([
            {"role":"user","content":"Weather in Paris?"},
            item,
            {"role":"assistant","content":"Checking."},
            {"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
            {"type":"function_call_output","call_id":"call_1","output":"sunny"},
        ])
    );
}

fn events(stream: &[Value]) -> Vec<Delta> {
    let mut d = Decoder::new(true);
    let mut out = Vec::new();
    for e in stream {
        d.push(&e.to_string(), &mut out);
    }
    out
}

/// The message of the first warning.
fn first_warning(deltas: &[Delta]) -> String {
    deltas
        .iter()
        .find_map(|d| match d {
            Delta::Warning(w) => Some(w.message.clone()),
            _ => None,
        })
        .unwrap()
}

fn warnings(deltas: &[Delta]) -> Vec<String> {
    deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Warning(w) => Some(w.code.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn events_in_order_lint_clean_and_out_of_order_do_not() {
    let good = [
        json!({"type":"response.created","sequence_number":0,"response":{"status":"in_progress"}}),
        json!({"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"m1"}}),
        json!({"type":"response.content_part.added","sequence_number":2,"output_index":0,"item_id":"m1","content_index":0,"part":{"type":"output_text","text":""}}),
        json!({"type":"response.output_text.delta","sequence_number":3,"output_index":0,"item_id":"m1","content_index":0,"delta":"Hi"}),
        json!({"type":"response.output_item.done","sequence_number":4,"output_index":0,"item":{"type":"message","id":"m1"}}),
        json!({"type":"response.completed","sequence_number":5,"response":{"status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}}),
    ];
    assert!(warnings(&events(&good)).is_empty());
    // A delta before its item, a gap in the numbering, an end with an item open.
    let cases: Vec<Vec<Value>> = vec![
        vec![good[0].clone(), good[3].clone()],
        vec![good[0].clone(), good[1].clone(), good[5].clone()],
        vec![good[1].clone()],
        vec![good[0].clone(), good[1].clone(), good[3].clone()],
    ];
    for stream in cases {
        assert_eq!(
            warnings(&events(&stream)),
            [lint::EVENT_ORDER],
            "{stream:?}"
        );
    }
    let strange = [
        good[0].clone(),
        json!({"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"hologram_call","id":"h1"}}),
    ];
    assert_eq!(warnings(&events(&strange)), [lint::UNKNOWN_BLOCK]);
}

/// llama-server's events carry neither `output_index` nor `sequence_number`: the item
/// events name the item by `item.id`, the part and delta events by `item_id`. That order is
/// good; an event naming an item that is not open is still a finding, and says which.
#[test]
fn items_named_only_by_their_id_are_found() {
    let item = json!({"type":"message","id":"msg_7","role":"assistant","content":[]});
    let good = [
        json!({"type":"response.created","response":{"status":"in_progress"}}),
        json!({"type":"response.output_item.added","item":item}),
        json!({"type":"response.content_part.added","item_id":"msg_7","part":{"type":"output_text","text":""}}),
        json!({"type":"response.output_text.delta","item_id":"msg_7","delta":"Sunny."}),
        json!({"type":"response.output_text.done","item_id":"msg_7","text":"Sunny."}),
        json!({"type":"response.output_item.done","item":item}),
        json!({"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}}),
    ];
    let out = events(&good);
    assert!(warnings(&out).is_empty(), "{out:?}");
    assert!(
        out.iter()
            .any(|d| matches!(d, Delta::Text(t) if t == "Sunny."))
    );

    // The same item done twice: the second names it by its id and says it is not open.
    let twice = [&good[..6], &good[5..]].concat();
    let out = events(&twice);
    assert_eq!(warnings(&out), [lint::EVENT_ORDER]);
    let message = first_warning(&out);
    assert!(message.contains("item msg_7"), "{message}");
    // An item named by neither an index nor an id: said as it is.
    let nameless = [
        good[0].clone(),
        json!({"type":"response.output_item.done","item":{"type":"message"}}),
    ];
    let out = events(&nameless);
    let message = first_warning(&out);
    assert!(
        message.contains("names no output_index and no item id"),
        "{message}"
    );
}

#[test]
fn allowed_tools_keep_the_list_and_restrict_the_calls() {
    let allowed = vec!["get_time".to_string()];
    assert_eq!(
        tool_choice(&ToolChoice::Required, &allowed),
        json!({"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"get_time"}]})
    );
    assert_eq!(tool_choice(&ToolChoice::Required, &[]), json!("required"));
    assert_eq!(
        tool_choice(&ToolChoice::Tool("x".into()), &allowed),
        json!({"type":"function","name":"x"})
    );
}

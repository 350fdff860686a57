//! Wire mapping of every provider under every tool-choice mode, and decoding edge cases. The
//! OpenArmature fixtures (tests/conformance.rs) pin the OpenAI, Anthropic and Gemini wires
//! further; recorded transcripts (tests/transcripts.rs) pin whole answers.

use serde_json::{Value, json};

use super::*;
use crate::part::{Collapsed, FinishReason, Part, ToolCall, Usage};
use crate::protocol::{Protocol, Span};
use crate::provider::wires::anthropic::ANTHROPIC_DEFAULT_MAX_TOKENS;
use crate::tool::{ToolChoice, ToolDef, ToolSet};

fn tools() -> ToolSet {
    ToolSet::new(vec![
        ToolDef::new(
            "get_weather",
            "Weather for a city",
            json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}),
        ),
        ToolDef::new("get_time", "", json!({"type":"object","properties":{}})),
    ])
    .unwrap()
}

fn request(provider: ProviderKind, choice: Option<ToolChoice>) -> Request {
    let mut r = Request::new(provider, "m");
    r.messages = vec![Message::user("Weather in Paris?")];
    r.tools = tools();
    r.tool_choice = choice;
    r.stream = false;
    r
}

fn body(r: &Request) -> Value {
    wire_body(r, "http://h").1
}

fn all_choices() -> Vec<Option<ToolChoice>> {
    vec![
        None,
        Some(ToolChoice::Auto),
        Some(ToolChoice::Required),
        Some(ToolChoice::None),
        Some(ToolChoice::Tool("get_time".into())),
    ]
}

#[test]
fn openai_tool_choice_mapping() {
    let want = [
        None,
        Some(json!("auto")),
        Some(json!("required")),
        Some(json!("none")),
        Some(json!({"type":"function","function":{"name":"get_time"}})),
    ];
    for (choice, want) in all_choices().into_iter().zip(want) {
        let b = body(&request(ProviderKind::OPENAI, choice.clone()));
        assert_eq!(b.get("tool_choice"), want.as_ref(), "{choice:?}");
        assert_eq!(b["tools"][0]["function"]["name"], "get_weather");
        assert_eq!(b["tools"][1]["function"].get("description"), None);
        assert!(b.get("stream").is_none());
    }
}

#[test]
fn anthropic_tool_choice_mapping() {
    let want = [
        None,
        Some(json!({"type":"auto"})),
        Some(json!({"type":"any"})),
        Some(json!({"type":"none"})),
        Some(json!({"type":"tool","name":"get_time"})),
    ];
    for (choice, want) in all_choices().into_iter().zip(want) {
        let b = body(&request(ProviderKind::ANTHROPIC, choice.clone()));
        assert_eq!(b.get("tool_choice"), want.as_ref(), "{choice:?}");
        assert_eq!(b["tools"][0]["input_schema"]["required"], json!(["city"]));
        assert_eq!(b["max_tokens"], ANTHROPIC_DEFAULT_MAX_TOKENS);
    }
}

#[test]
fn gemini_tool_choice_mapping_and_urls() {
    let want = [
        None,
        Some(json!({"functionCallingConfig":{"mode":"AUTO"}})),
        Some(json!({"functionCallingConfig":{"mode":"ANY"}})),
        Some(json!({"functionCallingConfig":{"mode":"NONE"}})),
        Some(json!({"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_time"]}})),
    ];
    for (choice, want) in all_choices().into_iter().zip(want) {
        let b = body(&request(ProviderKind::GEMINI, choice.clone()));
        assert_eq!(b.get("toolConfig"), want.as_ref(), "{choice:?}");
        assert_eq!(
            b["tools"][0]["functionDeclarations"][0]["parameters"]["required"],
            json!(["city"])
        );
    }
    let mut r = request(ProviderKind::GEMINI, None);
    r.model = "models/gemini-2.5-flash".into();
    assert_eq!(
        wire_body(&r, "http://h/").0,
        "http://h/v1beta/models/gemini-2.5-flash:generateContent"
    );
    r.stream = true;
    assert_eq!(
        wire_body(&r, "http://h").0,
        "http://h/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
}

#[test]
fn ollama_tool_choice_is_tools_or_no_tools_or_a_format() {
    for choice in [None, Some(ToolChoice::Auto)] {
        let b = body(&request(ProviderKind::OLLAMA, choice));
        assert_eq!(b["tools"][0]["function"]["name"], "get_weather");
        assert!(b.get("format").is_none());
        assert_eq!(b["stream"], false);
        assert_eq!(b["messages"][0]["role"], "user");
    }
    let b = body(&request(ProviderKind::OLLAMA, Some(ToolChoice::None)));
    assert!(b.get("tools").is_none() && b.get("format").is_none());
    for choice in [ToolChoice::Required, ToolChoice::Tool("get_time".into())] {
        let b = body(&request(ProviderKind::OLLAMA, Some(choice.clone())));
        assert!(b.get("tools").is_none(), "{choice:?}");
        assert_eq!(b["format"]["required"], json!(["name", "arguments"]));
        assert_eq!(b["messages"][0]["role"], "system");
        assert!(
            b["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("get_weather")
        );
    }
}

#[test]
fn sampling_options_land_where_each_provider_wants_them() {
    let sampling = Sampling {
        temperature: Some(0.5),
        max_tokens: Some(100),
        top_p: Some(0.9),
        seed: Some(7),
        stop: vec!["END".into()],
        ..Sampling::default()
    };
    let with = |p| {
        let mut r = request(p, None);
        r.sampling = sampling.clone();
        body(&r)
    };
    let o = with(ProviderKind::OPENAI);
    assert_eq!(
        (
            &o["temperature"],
            &o["max_tokens"],
            &o["top_p"],
            &o["seed"],
            &o["stop"]
        ),
        (
            &json!(0.5),
            &json!(100),
            &json!(0.9),
            &json!(7),
            &json!(["END"])
        )
    );
    let a = with(ProviderKind::ANTHROPIC);
    assert_eq!(
        (&a["max_tokens"], &a["stop_sequences"]),
        (&json!(100), &json!(["END"]))
    );
    assert!(a.get("seed").is_none());
    let g = with(ProviderKind::GEMINI);
    assert_eq!(
        g["generationConfig"],
        json!({"maxOutputTokens":100,"temperature":0.5,"topP":0.9,"seed":7,"stopSequences":["END"]})
    );
    let l = with(ProviderKind::OLLAMA);
    assert_eq!(
        l["options"],
        json!({"temperature":0.5,"top_p":0.9,"seed":7,"num_predict":100,"stop":["END"]})
    );
}

#[test]
fn parallel_calls_and_reasoning_effort_map_per_wire() {
    let with = |p, parallel: Option<bool>, effort: Option<ReasoningEffort>, choice| {
        let mut r = request(p, choice);
        r.sampling.parallel_tool_calls = parallel;
        r.sampling.reasoning_effort = effort;
        body(&r)
    };
    let high = Some(ReasoningEffort::High);
    let o = with(ProviderKind::OPENAI, Some(false), high, None);
    assert_eq!(
        (&o["parallel_tool_calls"], &o["reasoning_effort"]),
        (&json!(false), &json!("high"))
    );
    let o = with(ProviderKind::OPENAI, None, None, None);
    assert!(o.get("parallel_tool_calls").is_none() && o.get("reasoning_effort").is_none());
    // Anthropic: inside the tool choice (auto when none was chosen); a budget below max_tokens.
    let a = with(ProviderKind::ANTHROPIC, Some(false), high, None);
    assert_eq!(
        a["tool_choice"],
        json!({"type":"auto","disable_parallel_tool_use":true})
    );
    assert_eq!(
        a["thinking"],
        json!({"type":"enabled","budget_tokens": ANTHROPIC_DEFAULT_MAX_TOKENS - 1})
    );
    let a = with(
        ProviderKind::ANTHROPIC,
        Some(false),
        Some(ReasoningEffort::Low),
        Some(ToolChoice::Tool("get_time".into())),
    );
    assert_eq!(
        a["tool_choice"],
        json!({"type":"tool","name":"get_time","disable_parallel_tool_use":true})
    );
    assert_eq!(a["thinking"]["budget_tokens"], json!(2048));
    let g = with(ProviderKind::GEMINI, Some(false), high, None);
    assert_eq!(
        g["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget":24576,"includeThoughts":true})
    );
    assert!(!g.to_string().contains("parallel"));
    let l = with(ProviderKind::OLLAMA, None, high, None);
    assert_eq!(l["think"], json!(true));
    // No room for a thinking budget: refused before sending.
    let mut r = request(ProviderKind::ANTHROPIC, None);
    r.sampling.max_tokens = Some(1000);
    r.sampling.reasoning_effort = high;
    assert_eq!(
        r.validate().unwrap_err().category,
        crate::error::ErrorCategory::ProviderInvalidRequest
    );
}

fn history() -> Vec<Message> {
    let call = |id: &str, city: &str| ToolCall {
        tool_call_id: id.into(),
        tool_name: "get_weather".into(),
        input: json!({"city": city}),
        coercions: vec![],
        invalid: vec![],
        ..Default::default()
    };
    vec![
        Message::system("Be brief."),
        Message::user("Weather in Paris and Oslo?"),
        Message::assistant(
            Some("Checking.".into()),
            vec![call("c1", "Paris"), call("c2", "Oslo")],
        ),
        Message::tool_result("c1", "sunny"),
        Message::tool_result("c2", "rain"),
    ]
}

#[test]
fn multi_turn_history_on_each_wire() {
    let with = |p| {
        let mut r = request(p, None);
        r.messages = history();
        body(&r)
    };
    let o = with(ProviderKind::OPENAI);
    assert_eq!(
        o["messages"][0],
        json!({"role":"system","content":"Be brief."})
    );
    assert_eq!(o["messages"][2]["content"], "Checking.");
    assert_eq!(
        o["messages"][2]["tool_calls"][1]["function"]["arguments"],
        "{\"city\":\"Oslo\"}"
    );
    assert_eq!(
        o["messages"][4],
        json!({"role":"tool","content":"rain","tool_call_id":"c2"})
    );
    let a = with(ProviderKind::ANTHROPIC);
    assert_eq!(a["system"], "Be brief.");
    assert_eq!(
        a["messages"][1]["content"][0],
        json!({"type":"text","text":"Checking."})
    );
    assert_eq!(a["messages"][1]["content"][2]["id"], "c2");
    // Both results in one user turn.
    assert_eq!(a["messages"].as_array().unwrap().len(), 3);
    assert_eq!(a["messages"][2]["content"][1]["tool_use_id"], "c2");
    let g = with(ProviderKind::GEMINI);
    assert_eq!(
        g["systemInstruction"],
        json!({"parts":[{"text":"Be brief."}]})
    );
    assert_eq!(g["contents"][1]["role"], "model");
    assert_eq!(
        g["contents"][2]["parts"][1],
        json!({"functionResponse":{"name":"get_weather","id":"c2","response":{"result":"rain"}}})
    );
    let l = with(ProviderKind::OLLAMA);
    assert_eq!(
        l["messages"][2]["tool_calls"][0],
        json!({"function":{"name":"get_weather","arguments":{"city":"Paris"}}})
    );
    assert_eq!(
        l["messages"][4],
        json!({"role":"tool","content":"rain","tool_name":"get_weather"})
    );
}

#[test]
fn emulated_mode_sends_no_native_tools_and_writes_history_as_protocol_text() {
    let hermes = Protocol::from_name("hermes").unwrap();
    for p in [
        ProviderKind::OPENAI,
        ProviderKind::ANTHROPIC,
        ProviderKind::GEMINI,
        ProviderKind::OLLAMA,
    ] {
        let mut r = request(p, Some(ToolChoice::Auto));
        r.messages = history();
        r.protocol = Some(hermes.clone());
        let b = body(&r);
        let text = b.to_string();
        assert!(b.get("tools").is_none(), "{p}");
        assert!(
            b.get("tool_choice").is_none() && b.get("toolConfig").is_none(),
            "{p}"
        );
        assert!(
            text.contains("<tools>"),
            "{p}: the tool prompt is in the system text"
        );
        assert!(text.contains("Be brief."), "{p}");
        assert!(
            text.contains("<tool_call>"),
            "{p}: past calls are protocol text"
        );
        assert!(
            text.contains("<tool_response>"),
            "{p}: results are protocol text"
        );
        assert!(
            !text.contains("tool_call_id") && !text.contains("functionResponse"),
            "{p}"
        );
    }
}

#[test]
fn emulated_none_sends_no_tool_prompt() {
    let mut r = request(ProviderKind::OPENAI, Some(ToolChoice::None));
    r.protocol = Some(Protocol::from_name("morph-xml").unwrap());
    let b = body(&r);
    assert_eq!(b["messages"].as_array().unwrap().len(), 1);
    assert!(b.get("tools").is_none() && b.get("response_format").is_none());
}

#[test]
fn emulated_forced_choices_add_a_response_format() {
    let forced = ToolChoice::Tool("get_weather".into());
    let with = |p| {
        let mut r = request(p, Some(forced.clone()));
        r.protocol = Some(Protocol::from_name("hermes").unwrap());
        body(&r)
    };
    let o = with(ProviderKind::OPENAI);
    assert_eq!(o["response_format"]["type"], "json_schema");
    assert_eq!(o["response_format"]["json_schema"]["name"], "tool_call");
    assert_eq!(
        o["response_format"]["json_schema"]["schema"]["properties"]["name"]["const"],
        "get_weather"
    );
    let g = with(ProviderKind::GEMINI);
    assert_eq!(
        g["generationConfig"]["responseMimeType"],
        "application/json"
    );
    assert!(g["generationConfig"]["responseJsonSchema"].is_object());
    let l = with(ProviderKind::OLLAMA);
    assert!(l["format"].is_object());
    let a = with(ProviderKind::ANTHROPIC);
    assert!(a.get("response_format").is_none());
    assert!(
        a["system"].as_str().unwrap().contains("single JSON object"),
        "Anthropic is told in the prompt"
    );
}

/// Decodes a whole wire body through framer and decoder, in chunks of `size` bytes.
fn decode(r: &Request, bytes: &[u8], size: usize) -> Vec<RunEvent> {
    let mut framer = WireFramer::new(r);
    let mut decoder = Decoder::new(r);
    let mut out = Vec::new();
    for chunk in bytes.chunks(size.max(1)) {
        for e in framer.push(chunk) {
            out.extend(decoder.push(&e));
        }
    }
    for e in framer.finish() {
        out.extend(decoder.push(&e));
    }
    out.extend(decoder.finish());
    out
}

fn spans_of(events: &[RunEvent]) -> Vec<&Span> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Span(s) => Some(s),
            _ => None,
        })
        .collect()
}

fn parts(events: &[RunEvent]) -> Vec<Part> {
    events.iter().filter_map(|e| e.as_part().cloned()).collect()
}

fn finish_of(parts: &[Part]) -> (FinishReason, Option<Usage>) {
    match parts.last() {
        Some(Part::Finish {
            finish_reason,
            usage,
        }) => (*finish_reason, usage.as_deref().copied()),
        other => panic!("no finish part at the end: {other:?}"),
    }
}

/// The ids of the reasoning and text blocks, in the order they open.
fn block_starts(p: &[Part]) -> Vec<&str> {
    p.iter()
        .filter_map(|p| match p {
            Part::ReasoningStart { id, .. } | Part::TextStart { id } => Some(id.as_str()),
            _ => None,
        })
        .collect()
}

/// That the answer reads `text` and makes the one call `get_weather({"city": city})`, finishing
/// for it.
fn assert_weather_call(p: &[Part], text: &str, city: &str) {
    let c = Collapsed::of(p);
    assert_eq!(c.text, text);
    assert_eq!(c.calls, vec![("get_weather".into(), json!({"city": city}))]);
    assert_eq!(finish_of(p).0, FinishReason::ToolCalls);
}

#[test]
fn openai_stream_equals_whole_body_and_forced_stop_is_tool_calls() {
    let stream = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Sure. \"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\": \\\"Pa\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"ris\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        ": keep-alive\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7,\"total_tokens\":12}}\n\n",
        "data: [DONE]\n\n",
    );
    let whole = json!({"choices":[{"index":0,"message":{"role":"assistant","content":"Sure. ","tool_calls":[
        {"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},
        {"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
        "finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}})
    .to_string();
    let mut r = request(ProviderKind::OPENAI, Some(ToolChoice::Required));
    let want_calls = vec![
        ("get_weather".to_string(), json!({"city":"Paris"})),
        ("get_time".to_string(), json!({})),
    ];
    let whole_parts = parts(&decode(&r, whole.as_bytes(), usize::MAX));
    r.stream = true;
    for size in [1, 2, 3, 7, 64, usize::MAX] {
        let p = parts(&decode(&r, stream.as_bytes(), size));
        let c = Collapsed::of(&p);
        assert_eq!(c.text, "Sure. ");
        assert_eq!(c.calls, want_calls, "chunks of {size}");
        assert_eq!(c, Collapsed::of(&whole_parts));
        let (reason, usage) = finish_of(&p);
        assert_eq!(reason, FinishReason::ToolCalls);
        assert_eq!(usage.unwrap().total_tokens, Some(12));
        assert_eq!(finish_of(&whole_parts), (reason, usage));
    }
}

#[test]
fn deltas_of_each_call_add_up_to_its_input() {
    let mut r = request(ProviderKind::ANTHROPIC, None);
    r.stream = true;
    let stream = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"ci\"}}\n\n",
        "event: ping\ndata: {\"type\":\"ping\"}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ty\\\": \\\"Oslo\\\"}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":11}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let p = parts(&decode(&r, stream.as_bytes(), 5));
    let deltas: String = p
        .iter()
        .filter_map(|p| match p {
            Part::ToolInputDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    let input = p
        .iter()
        .find_map(|p| match p {
            Part::ToolCall(c) => Some(c.input.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(serde_json::from_str::<Value>(&deltas).unwrap(), input);
    assert_eq!(input, json!({"city":"Oslo"}));
    let (reason, usage) = finish_of(&p);
    assert_eq!(reason, FinishReason::ToolCalls);
    assert_eq!(
        usage,
        Some(Usage {
            input_tokens: Some(9),
            output_tokens: Some(11),
            total_tokens: Some(20),
            ..Usage::default()
        })
    );
}

#[test]
fn a_cut_stream_keeps_what_came_and_ends_with_an_error() {
    let mut r = request(ProviderKind::OPENAI, None);
    r.stream = true;
    let stream =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"choi";
    let p = parts(&decode(&r, stream.as_bytes(), 4));
    assert_eq!(Collapsed::of(&p).text, "Hel");
    let Some(Part::Error(e)) = p.last() else {
        panic!("{p:?}")
    };
    // The half event is flushed by the framer at the end and fails to parse.
    assert_eq!(e.category_name(), Some("provider_invalid_response"));
    assert!(matches!(p[p.len() - 2], Part::TextEnd { .. }));
    // A clean end without a finish reason is a cut too.
    let cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n";
    let p = parts(&decode(&r, cut.as_bytes(), 4));
    let Some(Part::Error(e)) = p.last() else {
        panic!("{p:?}")
    };
    assert_eq!(e.category_name(), Some("provider_unavailable"));
}

#[test]
fn errors_inside_streams_are_categorised() {
    let cases = [
        (
            ProviderKind::OPENAI,
            "data: {\"error\":{\"type\":\"server_error\",\"message\":\"boom\"}}\n\n",
            "provider_unavailable",
        ),
        (
            ProviderKind::ANTHROPIC,
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
            "provider_unavailable",
        ),
        (
            ProviderKind::GEMINI,
            "data: {\"error\":{\"code\":429,\"status\":\"RESOURCE_EXHAUSTED\",\"message\":\"quota\"}}\n\n",
            "provider_rate_limit",
        ),
        (
            ProviderKind::OLLAMA,
            "{\"error\":\"model 'x' not found\"}\n",
            "provider_unavailable",
        ),
    ];
    for (provider, wire, want) in cases {
        let mut r = request(provider, None);
        r.stream = true;
        let p = parts(&decode(&r, wire.as_bytes(), 3));
        let Some(Part::Error(e)) = p.last() else {
            panic!("{provider}: {p:?}")
        };
        assert_eq!(e.category_name(), Some(want), "{provider}");
    }
}

#[test]
fn gemini_and_ollama_whole_calls_get_ids_and_tool_calls_finish() {
    let mut r = request(ProviderKind::GEMINI, None);
    r.stream = true;
    let wire = concat!(
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hm\",\"thought\":true},{\"text\":\"On it.\"}]}}]}\n\n",
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"get_weather\",\"args\":{\"city\":\"Rome\"}}},{\"functionCall\":{\"name\":\"get_time\",\"args\":{}}}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":4,\"totalTokenCount\":7}}\n\n",
    );
    let p = parts(&decode(&r, wire.as_bytes(), 9));
    let ids: Vec<String> = p
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some(c.tool_call_id.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["call-1", "call-2"]);
    assert!(matches!(&p[0], Part::ReasoningStart { .. }));
    assert_eq!(finish_of(&p).0, FinishReason::ToolCalls);

    let mut r = request(ProviderKind::OLLAMA, None);
    r.stream = true;
    let wire = concat!(
        "{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Rome\"}}}]},\"done\":false}\r\n",
        "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":10,\"eval_count\":5}\n",
    );
    let p = parts(&decode(&r, wire.as_bytes(), 1));
    let c = Collapsed::of(&p);
    assert_eq!(
        c.calls,
        vec![("get_weather".into(), json!({"city":"Rome"}))]
    );
    let (reason, usage) = finish_of(&p);
    assert_eq!(reason, FinishReason::ToolCalls);
    assert_eq!(usage.unwrap().total_tokens, Some(15));
}

#[test]
fn malformed_and_unknown_native_calls_are_reported_not_dropped() {
    let r = request(ProviderKind::OPENAI, None);
    let whole = json!({"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
        {"id":"a","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Lon"}},
        {"id":"b","type":"function","function":{"name":"launch","arguments":"{}"}}]},
        "finish_reason":"tool_calls"}]})
    .to_string();
    let p = parts(&decode(&r, whole.as_bytes(), usize::MAX));
    let errors: Vec<(Option<String>, Option<String>)> = p
        .iter()
        .filter_map(|p| match p {
            Part::Error(e) => Some((
                e.reason.clone(),
                e.tool_call_id.as_deref().map(str::to_string),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        errors,
        vec![
            (Some("malformed-tool-call".into()), Some("a".into())),
            (Some("unknown-tool".into()), Some("b".into())),
        ]
    );
    let Some(Part::Error(e)) = p.iter().find(|p| matches!(p, Part::Error(_))) else {
        unreachable!()
    };
    assert!(
        e.message.contains("{\"city\": \"Lon"),
        "the raw text is kept: {}",
        e.message
    );
    assert_eq!(finish_of(&p).0, FinishReason::ToolCalls);
}

#[test]
fn emulated_output_is_parsed_by_the_protocol() {
    let mut r = request(ProviderKind::OPENAI, Some(ToolChoice::Auto));
    r.protocol = Some(Protocol::from_name("hermes").unwrap());
    r.stream = true;
    let answer = "Let me look.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}</tool_call>";
    let mut wire = String::new();
    for piece in answer.as_bytes().chunks(5) {
        let piece = std::str::from_utf8(piece).unwrap();
        wire.push_str(&format!(
            "data: {}\n\n",
            json!({"choices":[{"index":0,"delta":{"content":piece}}]})
        ));
    }
    wire.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    let events = decode(&r, wire.as_bytes(), 11);
    let output: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Output(o) if o.tool_call_id.is_none() => Some(o.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(output, answer);
    let spans = spans_of(&events);
    assert_eq!(spans.len(), 1);
    assert_eq!(&answer[spans[0].start..spans[0].end], &answer[12..]);
    assert_weather_call(&parts(&events), "Let me look.", "Lima");
}

/// Reasoning in an emulated answer is one block however the wire cuts it, and native reasoning
/// (a server's `reasoning_content`) shares the answer's ids and never overlaps its text.
#[test]
fn emulated_reasoning_is_one_block_across_wire_events() {
    let mut r = request(ProviderKind::OPENAI, Some(ToolChoice::Auto));
    r.protocol = Some(Protocol::from_name("hermes").unwrap());
    r.stream = true;
    let answer = "<think>The user wants Lima.</think>Sure.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}</tool_call>";
    let mut wire = format!(
        "data: {}\n\n",
        json!({"choices":[{"index":0,"delta":{"reasoning_content":"Native first."}}]})
    );
    for piece in answer.as_bytes().chunks(3) {
        let piece = std::str::from_utf8(piece).unwrap();
        wire.push_str(&format!(
            "data: {}\n\n",
            json!({"choices":[{"index":0,"delta":{"content":piece}}]})
        ));
    }
    wire.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    let p = parts(&decode(&r, wire.as_bytes(), 7));
    let starts = block_starts(&p);
    // The native reasoning and the parsed reasoning run on in one block, then the text: one
    // count, nothing reopened per wire event.
    assert_eq!(starts, ["reasoning-1", "text-1"]);
    let c = Collapsed::of(&p);
    assert_eq!(c.reasoning, "Native first.The user wants Lima.");
    assert_eq!(c.text, "Sure.");
    assert_eq!(c.calls.len(), 1);
}

/// An OpenAI-compatible SSE stream of `content` pieces of `size` bytes, after optional native
/// reasoning, ending with `stop`.
fn content_stream(reasoning: Option<&str>, answer: &str, size: usize) -> String {
    let mut wire = String::new();
    if let Some(r) = reasoning {
        wire.push_str(&format!(
            "data: {}\n\n",
            json!({"choices":[{"index":0,"delta":{"reasoning_content":r}}]})
        ));
    }
    let mut rest = answer;
    while !rest.is_empty() {
        let mut n = size.min(rest.len());
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        wire.push_str(&format!(
            "data: {}\n\n",
            json!({"choices":[{"index":0,"delta":{"content":&rest[..n]}}]})
        ));
        rest = &rest[n..];
    }
    wire.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    wire
}

fn detected(events: &[RunEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Detected { protocol, reason } => Some((protocol.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

/// A native request read with detection: the tools go natively (the server's template teaches
/// them), and markup the server left in the text is read by the protocol its markers name.
#[test]
fn detected_output_is_read_by_the_protocol_its_markers_name() {
    let mut r = request(ProviderKind::OPENAI, Some(ToolChoice::Auto));
    r.detect_protocol = true;
    r.stream = true;
    let b = body(&r);
    assert!(b.get("tools").is_some(), "{b}");
    assert_eq!(b["tool_choice"], json!("auto"));
    let system = b["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(!system.contains("<tool_call>"), "no protocol prompt: {b}");

    let answer = "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nLima\n</parameter>\n</function>\n</tool_call>";
    for size in [1, 5, 64] {
        let events = decode(&r, content_stream(None, answer, size).as_bytes(), 13);
        let d = detected(&events);
        assert_eq!(d.len(), 1, "{size}: {d:?}");
        assert_eq!(d[0].0, "qwen3-coder");
        assert!(d[0].1.contains("<function="), "{}", d[0].1);
        let spans = spans_of(&events);
        // The markup, from its first byte to the last, is the call's.
        assert_eq!(spans.first().map(|s| s.start), answer.find("<tool_call>"));
        assert_eq!(spans.last().map(|s| s.end), Some(answer.len()));
        assert!(
            spans
                .iter()
                .all(|s| s.kind == crate::protocol::SpanKind::ToolCall)
        );
        assert_weather_call(&parts(&events), "Checking.\n", "Lima");
    }
}

/// Text with no marker is text (the choice is made at the end, and says there was no marker);
/// `detect_protocol` beside a protocol changes nothing.
#[test]
fn detection_without_markers_reads_text_and_a_protocol_wins_over_it() {
    let mut r = request(ProviderKind::OPENAI, Some(ToolChoice::Auto));
    r.detect_protocol = true;
    r.stream = true;
    let events = decode(
        &r,
        content_stream(None, "Sunny, 21 degrees.", 4).as_bytes(),
        9,
    );
    let d = detected(&events);
    assert_eq!(d.len(), 1);
    assert!(d[0].1.contains("no call or reasoning marker"), "{}", d[0].1);
    let p = parts(&events);
    assert_eq!(Collapsed::of(&p).text, "Sunny, 21 degrees.");
    assert_eq!(finish_of(&p).0, FinishReason::Stop);

    r.protocol = Some(Protocol::from_name("hermes").unwrap());
    let events = decode(&r, content_stream(None, "Sunny.", 4).as_bytes(), 9);
    assert!(detected(&events).is_empty());
    assert!(body(&r).get("tools").is_none());
}

/// Reasoning the wire keeps apart (a server's reasoning parser) means the text does not start
/// inside reasoning, even for a family whose template opens it (minimax-m2); the native
/// reasoning and the parsed parts share one count of ids.
#[test]
fn detection_after_native_reasoning_reads_the_text_outside_reasoning() {
    let mut r = request(ProviderKind::OPENAI, Some(ToolChoice::Auto));
    r.detect_protocol = true;
    r.stream = true;
    let answer = "Let me check.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Lima</parameter>\n</invoke>\n</minimax:tool_call>";
    let events = decode(
        &r,
        content_stream(Some("The user wants Lima."), answer, 3).as_bytes(),
        11,
    );
    assert_eq!(detected(&events)[0].0, "minimax-m2");
    let p = parts(&events);
    let starts = block_starts(&p);
    assert_eq!(starts, ["reasoning-1", "text-1"]);
    let c = Collapsed::of(&p);
    assert_eq!(c.reasoning, "The user wants Lima.");
    assert_eq!(c.text, "Let me check.\n");
    assert_eq!(
        c.calls,
        vec![("get_weather".into(), json!({"city":"Lima"}))]
    );

    // Without native reasoning the family's default stands: minimax-m2 starts inside it.
    let events = decode(
        &r,
        content_stream(None, &format!("Hm.</think>{answer}"), 3).as_bytes(),
        11,
    );
    let c = Collapsed::of(&parts(&events));
    assert_eq!(c.reasoning, "Hm.");
    assert_eq!(c.calls.len(), 1);
}

/// A call still open when the output ends is recovered at the end, and its span reaches the Raw
/// pane like any other.
#[test]
fn a_call_recovered_at_the_end_keeps_its_span() {
    let mut r = request(ProviderKind::OPENAI, Some(ToolChoice::Auto));
    r.protocol = Some(Protocol::from_name("hermes").unwrap());
    r.stream = true;
    let answer = "Sure.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}";
    let events = decode(&r, content_stream(None, answer, 4).as_bytes(), 9);
    assert_eq!(Collapsed::of(&parts(&events)).calls.len(), 1);
    let spans = spans_of(&events);
    assert_eq!(spans.len(), 1, "{events:?}");
    assert_eq!(spans[0].start, 5);
}

/// An emulated answer the token limit cut inside a call (`finish_reason: length`): the call is
/// unfinished, never a finished call with what the cut left (`city: "<param"`, or `Paris` with
/// the rest of the arguments missing), and the same answer ending with `stop` recovers what
/// its tolerances allow.
#[test]
fn a_call_the_token_limit_cut_is_unfinished_not_finished() {
    let mut r = request(ProviderKind::OPENAI, Some(ToolChoice::Auto));
    r.stream = true;
    let cases = [
        (
            "qwen3-coder",
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<param",
        ),
        ("qwen3-coder", "<tool_call>\n<function=get_weather>\n<param"),
        (
            "glm-4.7",
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_ke",
        ),
        (
            "minimax-m2",
            "</think>\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n",
        ),
        (
            "deepseek-dsml",
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜param",
        ),
        ("morph-xml", "<get_weather>\n<city>Paris</city>\n"),
        ("yaml-xml", "<get_weather>\ncity: Paris\ndays: 3"),
    ];
    for (protocol, answer) in cases {
        r.protocol = Some(Protocol::from_name(protocol).unwrap());
        let wire = content_stream(None, answer, 7).replace("\"stop\"", "\"length\"");
        let got = parts(&decode(&r, wire.as_bytes(), 5));
        let c = Collapsed::of(&got);
        assert!(
            c.calls.is_empty(),
            "{protocol}: {answer:?} gave {:?}",
            c.calls
        );
        assert!(
            got.iter().any(|p| matches!(p, Part::Error(e)
                if e.reason.as_deref() == Some("unfinished-tool-call"))),
            "{protocol}: no unfinished-tool-call in {got:?}"
        );
        assert_eq!(finish_of(&got).0, FinishReason::Length, "{protocol}");
        // Nothing lost: the markup is the answer's text.
        assert!(
            c.text.contains(answer.trim_start_matches("</think>\n")),
            "{protocol}: {:?}",
            c.text
        );
    }
    // A missing close at a natural end is forgiven, as before.
    r.protocol = Some(Protocol::from_name("morph-xml").unwrap());
    let wire = content_stream(None, "<get_weather>\n<city>Paris</city>\n", 7);
    let c = Collapsed::of(&parts(&decode(&r, wire.as_bytes(), 5)));
    assert_eq!(c.calls.len(), 1);
}

#[test]
fn emulated_forced_answer_becomes_a_tool_call() {
    for provider in [ProviderKind::ANTHROPIC, ProviderKind::OLLAMA] {
        let mut r = request(provider, Some(ToolChoice::Tool("get_weather".into())));
        if provider == ProviderKind::ANTHROPIC {
            r.protocol = Some(Protocol::from_name("qwen3-coder").unwrap());
        }
        let body = match provider.wire() {
            Wire::Anthropic => {
                json!({"content":[{"type":"text","text":"{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Kyiv\"}}"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}})
            }
            _ => {
                json!({"message":{"role":"assistant","content":"{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Kyiv\"}}"},"done":true,"done_reason":"stop"})
            }
        };
        let p = parts(&decode(&r, body.to_string().as_bytes(), usize::MAX));
        let c = Collapsed::of(&p);
        assert_eq!(
            c.calls,
            vec![("get_weather".into(), json!({"city":"Kyiv"}))],
            "{provider}"
        );
        assert_eq!(finish_of(&p).0, FinishReason::ToolCalls, "{provider}");
    }
}

#[test]
fn run_events_round_trip_through_json() {
    let events = vec![
        RunEvent::Raw(RawEvent {
            at_ms: 12,
            data: "{\"a\":1}".into(),
            ..RawEvent::default()
        }),
        RunEvent::Raw(RawEvent {
            at_ms: 3,
            data: "{}".into(),
            status: Some(429),
            retry_after: Some(2.5),
        }),
        RunEvent::Output(OutputText {
            text: "hi".into(),
            tool_call_id: None,
        }),
        RunEvent::Part(Part::TextDelta {
            id: "text-0".into(),
            delta: "hi".into(),
        }),
        RunEvent::Part(Part::Finish {
            finish_reason: FinishReason::Stop,
            usage: None,
        }),
    ];
    for e in events {
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(
            serde_json::from_str::<RunEvent>(&text).unwrap(),
            e,
            "{text}"
        );
    }
    let v = serde_json::to_value(RunEvent::Part(Part::TextEnd { id: "t".into() })).unwrap();
    assert_eq!(v, json!({"event":"part","type":"text-end","id":"t"}));
}

#[test]
fn garbage_never_panics() {
    let garbage: [&[u8]; 5] = [
        b"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":99999999999}]}}]}\n\n",
        b"data: [1,2,3]\n\ndata: null\n\n",
        b"\xff\xfe\x00data: \xc3\n\n",
        b"{\"message\":42}\n{\"done\":true}\n",
        b"data: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":null}}\n\n",
    ];
    for provider in ProviderKind::all() {
        for stream in [true, false] {
            for g in garbage {
                let mut r = request(provider, None);
                r.stream = stream;
                let p = parts(&decode(&r, g, 3));
                assert!(
                    matches!(p.last(), Some(Part::Finish { .. } | Part::Error(_))),
                    "{provider} {stream}: {p:?}"
                );
            }
        }
    }
}

#[test]
fn allowed_tools_restrict_the_calls_natively_or_by_what_is_declared() {
    let with = |p, choice| {
        let mut r = request(p, choice);
        r.sampling.allowed_tools = vec!["get_time".into()];
        r
    };
    let o = body(&with(ProviderKind::OPENAI, Some(ToolChoice::Required)));
    assert_eq!(
        o["tool_choice"],
        json!({"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"get_time"}}]}})
    );
    assert_eq!(o["tools"].as_array().unwrap().len(), 2);
    // Without a choice, `auto` carries the restriction.
    let o = body(&with(ProviderKind::OPENAI, None));
    assert_eq!(o["tool_choice"]["allowed_tools"]["mode"], "auto");
    // The other wires are sent only the allowed tools…
    let a = body(&with(ProviderKind::ANTHROPIC, Some(ToolChoice::Auto)));
    assert_eq!(a["tools"].as_array().unwrap().len(), 1);
    assert_eq!(a["tools"][0]["name"], "get_time");
    let g = body(&with(ProviderKind::GEMINI, None));
    assert_eq!(g["tools"][0]["functionDeclarations"][0]["name"], "get_time");
    // …except when a forced tool names its own.
    let a = body(&with(
        ProviderKind::ANTHROPIC,
        Some(ToolChoice::Tool("get_weather".into())),
    ));
    assert_eq!(a["tools"].as_array().unwrap().len(), 2);
    // An allowed tool must be among the tools.
    let mut r = with(ProviderKind::OPENAI, None);
    r.sampling.allowed_tools = vec!["nope".into()];
    assert!(r.validate().is_err());
}

/// Call ids minted for calls read from text continue after those the conversation already used
/// (issue 28: every answer of a tool loop restarted at `call-1`), and a provider's own ids in the
/// history count for nothing.
#[test]
fn minted_call_ids_continue_after_the_conversations_earlier_calls() {
    let call = |id: &str| ToolCall {
        tool_call_id: id.into(),
        tool_name: "get_weather".into(),
        input: json!({"city": "Paris"}),
        ..Default::default()
    };
    let mut r = request(ProviderKind::OPENAI, Some(ToolChoice::Auto));
    r.protocol = Some(Protocol::from_name("hermes").unwrap());
    r.stream = true;
    r.messages = vec![
        Message::user("Weather?"),
        Message::assistant(None, vec![call("call-1"), call("call-2")]),
        Message::tool_result("call-1", "sunny"),
        Message::tool_result("call-2", "rain"),
        Message::assistant(None, vec![call("call_77")]),
        Message::tool_result("call_77", "fog"),
        Message::user("And Lima?"),
    ];
    let answer =
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}</tool_call>";
    let wire = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"choices":[{"index":0,"delta":{"content":answer}}]}),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})
    );
    let ids: Vec<String> = parts(&decode(&r, wire.as_bytes(), 7))
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(call) => Some(call.tool_call_id.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, vec!["call-3".to_string()]);
}

#[test]
fn arguments_streamed_as_empty_then_sent_whole_read_as_the_whole_ones() {
    let chunk = |args: &str| {
        format!(
            "data: {}\n\n",
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":args}}]}}]})
        )
    };
    let start = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}}]}\n\n";
    let end = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let mut r = request(ProviderKind::OPENAI, None);
    r.stream = true;
    let stream = format!(
        "{start}{}{}{end}",
        chunk("{}"),
        chunk("{\"city\": \"Paris\"}")
    );
    for size in [1, 7, usize::MAX] {
        let p = parts(&decode(&r, stream.as_bytes(), size));
        let c = Collapsed::of(&p);
        assert_eq!(
            c.calls,
            vec![("get_weather".into(), json!({"city":"Paris"}))]
        );
        let codes: Vec<&str> = p
            .iter()
            .filter_map(|p| match p {
                Part::Warning(w) if w.code != crate::lint::USAGE_MISSING => Some(w.code.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            codes,
            [crate::lint::EMPTY_ARGS_STREAMED],
            "chunks of {size}"
        );
        assert!(!p.iter().any(|p| matches!(p, Part::Error(_))));
    }
    // `{}` alone is the arguments; `{}` followed by something else is not JSON, as before.
    r.tools = ToolSet::new(vec![ToolDef::new("get_time", "", json!({"type":"object"}))]).unwrap();
    let alone = format!(
        "{}{}{end}",
        start.replace("get_weather", "get_time"),
        chunk("{}")
    );
    let p = parts(&decode(&r, alone.as_bytes(), 3));
    assert_eq!(
        Collapsed::of(&p).calls,
        vec![("get_time".into(), json!({}))]
    );
    assert!(!p.iter().any(|p| matches!(p, Part::Error(_))));
    assert!(
        !p.iter()
            .any(|p| matches!(p, Part::Warning(w) if w.code == crate::lint::EMPTY_ARGS_STREAMED))
    );
    let junk = format!(
        "{}{}{}{end}",
        start.replace("get_weather", "get_time"),
        chunk("{}"),
        chunk("x")
    );
    let p = parts(&decode(&r, junk.as_bytes(), usize::MAX));
    assert!(p.iter().any(|p| matches!(p, Part::Error(_))));
}

/// The warning codes of an answer, usage aside.
fn codes_of(p: &[Part]) -> Vec<String> {
    p.iter()
        .filter_map(|p| match p {
            Part::Warning(w) if w.code != crate::lint::USAGE_MISSING => Some(w.code.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_lint_finds_markup_leaked_calls_in_reasoning_and_types_sent_wrong() {
    let mut r = request(ProviderKind::OPENAI, None);
    r.tools = ToolSet::new(vec![ToolDef::new(
        "get_weather",
        "Weather for a city",
        json!({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}),
    )])
    .unwrap();
    r.stream = true;
    let sse = |delta: Value, finish: Option<&str>| {
        format!(
            "data: {}\n\n",
            json!({"choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
        )
    };
    // Call markup in the text, finish stop: the server's parser let it through.
    let leaked = [
        sse(
            json!({"content":"<tool_call>\n{\"name\": \"get_weather\", "}),
            None,
        ),
        sse(
            json!({"content":"\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}),
            None,
        ),
        sse(json!({}), Some("stop")),
    ]
    .concat();
    let p = parts(&decode(&r, leaked.as_bytes(), 5));
    assert_eq!(codes_of(&p), [crate::lint::MARKUP_LEAK]);
    // A special token in plain text is a leak too.
    let token = [
        sse(json!({"content":"Sure.<|tool_call_begin|>"}), None),
        sse(json!({}), Some("stop")),
    ]
    .concat();
    assert_eq!(
        codes_of(&parts(&decode(&r, token.as_bytes(), 64))),
        [crate::lint::MARKUP_LEAK]
    );
    // A call left inside the reasoning.
    let hidden = [
        sse(json!({"reasoning_content":"I will call it.\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>"}), None),
        sse(json!({}), Some("stop")),
    ]
    .concat();
    assert_eq!(
        codes_of(&parts(&decode(&r, hidden.as_bytes(), 7))),
        [crate::lint::CALL_IN_REASONING]
    );
    // A number sent as a string: coerced, and said.
    let quoted = [
        sse(json!({"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\", \"days\": \"3\"}"}}]}), None),
        sse(json!({}), Some("tool_calls")),
    ]
    .concat();
    let p = parts(&decode(&r, quoted.as_bytes(), 64));
    assert_eq!(codes_of(&p), [crate::lint::TYPE_MISMATCH]);
    assert_eq!(
        Collapsed::of(&p).calls,
        vec![("get_weather".into(), json!({"city":"Paris","days":3}))]
    );
    // Plain text, reasoning without calls, and right types: nothing.
    let clean = [
        sse(json!({"reasoning_content":"Paris is in France."}), None),
        sse(
            json!({"content":"It is sunny; tags like <b> are fine."}),
            None,
        ),
        sse(json!({}), Some("stop")),
    ]
    .concat();
    assert!(codes_of(&parts(&decode(&r, clean.as_bytes(), 3))).is_empty());
    // Markup in the text of an answer that did end for its calls is not this rule's business.
    let beside = [
        sse(json!({"content":"<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>"}), None),
        sse(json!({"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]}), None),
        sse(json!({}), Some("tool_calls")),
    ]
    .concat();
    assert!(codes_of(&parts(&decode(&r, beside.as_bytes(), 64))).is_empty());
}

//! Tests of the demo model's decisions, without HTTP: which tool for which prompt under each
//! tool-choice mode, the arguments, parallel calls, answers after tool results, structured
//! output, the failure triggers, determinism, and emulated mode.

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::model::{respond, respond_to_body};
use crate::reply::{Fault, Finish, Reply};
use crate::request::DemoRequest;
use toolscope_core::part::Part;
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::ToolSet;

fn tools_json() -> Value {
    json!([
        {"type":"function","function":{
            "name":"get_weather",
            "description":"Current weather and forecast for a city",
            "parameters":{"type":"object","properties":{
                "city":{"type":"string","description":"City name"},
                "units":{"type":"string","enum":["celsius","fahrenheit"]},
                "days":{"type":"integer","minimum":1,"maximum":14}
            },"required":["city"]}
        }},
        {"type":"function","function":{
            "name":"search_web",
            "description":"Search the internet for pages about a topic",
            "parameters":{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer","minimum":1,"maximum":10}},"required":["query","max_results"]}
        }},
        {"type":"function","function":{
            "name":"get_time",
            "description":"The local time in a city",
            "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}
        }}
    ])
}

fn body(prompt: &str, tool_choice: Option<Value>) -> Value {
    let mut b = json!({"model":"demo-1","messages":[{"role":"user","content":prompt}],"tools":tools_json()});
    if let Some(c) = tool_choice {
        b["tool_choice"] = c;
    }
    b
}

fn reply(body: &Value) -> Reply {
    match respond_to_body(body) {
        Ok(r) => r,
        Err(e) => panic!("request refused: {e}"),
    }
}

/// The calls of a reply as (name, parsed arguments).
fn calls(r: &Reply) -> Vec<(String, Value)> {
    r.tool_calls()
        .into_iter()
        .map(|c| {
            (
                c.name,
                serde_json::from_str(&c.arguments).unwrap_or(Value::Null),
            )
        })
        .collect()
}

fn forced(name: &str) -> Option<Value> {
    Some(json!({"type":"function","function":{"name":name}}))
}

#[test]
fn which_tool_for_which_prompt_per_tool_choice() {
    let weather = "What's the weather in Paris?";
    let poem = "Write me a poem about autumn";
    let cases: Vec<(&str, Option<Value>, Option<&str>)> = vec![
        (weather, None, Some("get_weather")),
        (weather, Some(json!("auto")), Some("get_weather")),
        (
            "search for rust tutorials",
            Some(json!("auto")),
            Some("search_web"),
        ),
        (
            "What time is it in Tokyo?",
            Some(json!("auto")),
            Some("get_time"),
        ),
        (poem, Some(json!("auto")), None),
        (poem, Some(json!("required")), Some("get_weather")),
        (
            "find pages about sourdough",
            Some(json!("required")),
            Some("search_web"),
        ),
        (weather, forced("get_time"), Some("get_time")),
        (poem, forced("search_web"), Some("search_web")),
        (weather, Some(json!("none")), None),
        (poem, Some(json!("none")), None),
    ];
    for (prompt, choice, want) in cases {
        let label = format!("{prompt:?} with {choice:?}");
        let r = reply(&body(prompt, choice));
        match want {
            Some(name) => {
                let got = calls(&r);
                assert_eq!(got.len(), 1, "{label}: {got:?}");
                assert_eq!(got[0].0, name, "{label}");
                assert_eq!(r.finish, Finish::ToolCalls, "{label}");
                assert_eq!(r.content(), None, "{label}");
            }
            None => {
                assert!(r.tool_calls().is_empty(), "{label}");
                assert_eq!(r.finish, Finish::Stop, "{label}");
                assert!(r.content().is_some_and(|t| t.len() > 40), "{label}");
            }
        }
    }
}

#[test]
fn text_answers_say_why_no_tool_was_called() {
    let none = reply(&body("What's the weather in Paris?", Some(json!("none"))))
        .content()
        .unwrap_or_default();
    assert!(none.contains("get_weather would have fitted"), "{none}");
    let no_match = reply(&body("Write me a poem", None))
        .content()
        .unwrap_or_default();
    assert!(
        no_match.contains("get_weather, search_web, get_time"),
        "{no_match}"
    );
    let no_tools = reply(&json!({"messages":[{"role":"user","content":"hello"}]}))
        .content()
        .unwrap_or_default();
    assert!(no_tools.contains("No tools were given"), "{no_tools}");
    let no_user = reply(&json!({"messages":[{"role":"system","content":"be brief"}]}))
        .content()
        .unwrap_or_default();
    assert!(no_user.contains("no user message"), "{no_user}");
}

#[test]
fn arguments_come_from_the_prompt_and_the_schema() {
    let cases = [
        (
            "Weather in Tokyo for 5 days in fahrenheit",
            json!({"city":"Tokyo","units":"fahrenheit","days":5}),
        ),
        (
            "What's the weather in New York?",
            json!({"city":"New York"}),
        ),
        (
            "weather for the next 30 days in Oslo",
            json!({"city":"Oslo","days":14}),
        ),
        ("what's the weather like", json!({"city":"Paris"})),
    ];
    for (prompt, want) in cases {
        assert_eq!(
            calls(&reply(&body(prompt, None))),
            [("get_weather".to_string(), want)],
            "{prompt}"
        );
    }
    let search = calls(&reply(&body(
        "Search the web for rust async tutorials",
        None,
    )));
    assert_eq!(
        search,
        [(
            "search_web".to_string(),
            json!({"query":"rust async tutorials","max_results":3})
        )]
    );
}

#[test]
fn lists_make_parallel_calls_unless_parallel_is_off() {
    let b = body("What's the weather in Paris and Tokyo?", None);
    let r = reply(&b);
    assert_eq!(
        calls(&r),
        [
            ("get_weather".to_string(), json!({"city":"Paris"})),
            ("get_weather".to_string(), json!({"city":"Tokyo"})),
        ]
    );
    let ids: Vec<String> = r.tool_calls().into_iter().map(|c| c.id).collect();
    assert_ne!(ids[0], ids[1]);
    assert!(ids.iter().all(|id| id.starts_with("call_")));

    let mut serial = b.clone();
    serial["parallel_tool_calls"] = json!(false);
    assert_eq!(
        calls(&reply(&serial)),
        [("get_weather".to_string(), json!({"city":"Paris"}))]
    );
}

#[test]
fn tool_results_are_answered_in_text() {
    let b = json!({
        "messages":[
            {"role":"user","content":"What's the weather in Paris and Tokyo?"},
            {"role":"assistant","content":null,"tool_calls":[
                {"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
                {"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Tokyo\"}"}}
            ]},
            {"role":"tool","tool_call_id":"call_a","content":"{\"temperature\":18,\"condition\":\"cloudy\"}"},
            {"role":"tool","tool_call_id":"call_b","content":"{\"temperature\":25,\"condition\":\"sunny\"}"}
        ],
        "tools": tools_json()
    });
    let r = reply(&b);
    assert!(r.tool_calls().is_empty());
    let text = r.content().unwrap_or_default();
    assert!(
        text.contains(
            "The weather in Paris is temperature 18, condition cloudy, according to get_weather."
        ),
        "{text}"
    );
    assert!(
        text.contains("The weather in Tokyo is temperature 25, condition sunny"),
        "{text}"
    );

    // A new question after the answer is decided afresh.
    let mut next = b.clone();
    if let Some(messages) = next["messages"].as_array_mut() {
        messages.push(json!({"role":"assistant","content":text}));
        messages.push(json!({"role":"user","content":"And the time in Lima?"}));
    }
    assert_eq!(
        calls(&reply(&next)),
        [("get_time".to_string(), json!({"city":"Lima"}))]
    );
}

#[test]
fn the_same_request_gets_the_same_reply() {
    for prompt in [
        "What's the weather in Paris and Tokyo?",
        "Write me a poem",
        "search for rust",
    ] {
        let b = body(prompt, None);
        assert_eq!(reply(&b), reply(&b), "{prompt}");
        let mut streamed = b.clone();
        streamed["stream"] = json!(true);
        assert_eq!(
            reply(&b),
            reply(&streamed),
            "{prompt}: streaming changes nothing"
        );
    }
    let a = reply(&body("Write me a poem", None)).content();
    let b = reply(&body("Write me a story", None)).content();
    assert_ne!(a, b);
}

#[test]
fn failure_triggers() {
    assert_eq!(
        reply(&body("weather in Paris #429", None)).fault,
        Some(Fault::RateLimit)
    );
    assert_eq!(
        reply(&body("#500 weather in Paris", None)).fault,
        Some(Fault::ServerError)
    );
    let cut = reply(&body("weather in Paris #cut", None));
    assert_eq!(cut.fault, Some(Fault::Cut));
    assert_eq!(
        calls(&cut),
        [("get_weather".to_string(), json!({"city":"Paris"}))],
        "the trigger is not an argument"
    );
    let malformed = reply(&body("weather in Paris #malformed", None));
    let args = &malformed.tool_calls()[0].arguments;
    assert!(serde_json::from_str::<Value>(args).is_err(), "{args}");
    assert!(args.contains("Paris"));
    // Only the latest user prompt counts.
    let b = json!({"messages":[
        {"role":"user","content":"#429"},
        {"role":"assistant","content":"rate limited"},
        {"role":"user","content":"hello again"}
    ]});
    assert_eq!(reply(&b).fault, None);
}

#[test]
fn max_tokens_cuts_with_length() {
    let mut b = body("Write me a poem", None);
    b["max_tokens"] = json!(3);
    let r = reply(&b);
    assert_eq!(r.finish, Finish::Length);
    assert_eq!(r.completion_tokens(), 3);
}

#[test]
fn usage_is_approximate_but_plausible() {
    let short = reply(&json!({"messages":[{"role":"user","content":"hi"}]}));
    let long = reply(&body(&"word ".repeat(200), None));
    assert!(
        short.prompt_tokens >= 1 && short.prompt_tokens < 20,
        "{}",
        short.prompt_tokens
    );
    assert!(long.prompt_tokens > 200, "{}", long.prompt_tokens);
    assert!(short.completion_tokens() > 10);
}

fn forced_schema() -> Value {
    json!({"type":"object","properties":{
        "name":{"const":"get_time"},
        "arguments":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}
    },"required":["name","arguments"]})
}

fn required_schema() -> Value {
    let branch = |name: &str, args: Value| json!({"properties":{"name":{"const":name},"arguments":args},"required":["name","arguments"]});
    let city = json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]});
    let query =
        json!({"type":"object","properties":{"query":{"type":"string"}},"required":["query"]});
    json!({
        "type":"object",
        "if":{"properties":{"name":{"const":"get_weather"}}},
        "then": branch("get_weather", city),
        "else":{
            "if":{"properties":{"name":{"const":"search_web"}}},
            "then": branch("search_web", query),
            "else": false
        }
    })
}

fn schema_body(prompt: &str, schema: Value) -> Value {
    json!({
        "messages":[{"role":"user","content":prompt}],
        "response_format":{"type":"json_schema","json_schema":{"name":"tool_call","schema":schema}}
    })
}

#[test]
fn tool_choice_emulation_answers_with_name_and_arguments() {
    let cases = [
        (
            "What's the weather in Paris?",
            forced_schema(),
            json!({"name":"get_time","arguments":{"city":"Paris"}}),
        ),
        (
            "What's the weather in Lima?",
            required_schema(),
            json!({"name":"get_weather","arguments":{"city":"Lima"}}),
        ),
        (
            "search for rust",
            required_schema(),
            json!({"name":"search_web","arguments":{"query":"rust"}}),
        ),
        (
            "Write a poem",
            required_schema(),
            json!({"name":"get_weather","arguments":{"city":"Paris"}}),
        ),
        // One call only, even for a list.
        (
            "weather in Rome and Oslo",
            required_schema(),
            json!({"name":"get_weather","arguments":{"city":"Rome"}}),
        ),
    ];
    for (prompt, schema, want) in cases {
        let r = reply(&schema_body(prompt, schema));
        let text = r.content().unwrap_or_default();
        let got: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert_eq!(got, want, "{prompt}: {text}");
        assert!(r.tool_calls().is_empty());
    }
    let broken = reply(&schema_body("weather in Paris #malformed", forced_schema()))
        .content()
        .unwrap_or_default();
    assert!(serde_json::from_str::<Value>(&broken).is_err(), "{broken}");
    assert!(broken.starts_with("{\"name\": \"get_time\""), "{broken}");
}

#[test]
fn structured_output_fills_other_schemas() {
    let schema = json!({"type":"object","properties":{"city":{"type":"string"},"population":{"type":"integer"}},"required":["city","population"]});
    let text = reply(&schema_body(
        "How many people live in Berlin? About 3700000",
        schema,
    ))
    .content()
    .unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<Value>(&text).ok(),
        Some(json!({"city":"Berlin","population":3700000}))
    );

    let json_object = json!({"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}});
    let text = reply(&json_object).content().unwrap_or_default();
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    assert!(
        v["answer"].as_str().is_some_and(|a| !a.is_empty()),
        "{text}"
    );
}

fn weather_set() -> ToolSet {
    match ToolSet::from_json(&tools_json()) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    }
}

proptest! {
    /// Whatever the prompt says, a native call names a known tool and its arguments are a JSON
    /// object that validates against that tool's schema.
    #[test]
    fn native_arguments_always_validate(prompt in "\\PC{0,120}", choice in 0usize..3) {
        let choice = [json!("auto"), json!("required"), json!({"type":"function","function":{"name":"search_web"}})][choice].clone();
        let r = reply(&body(&prompt.replace('#', ""), Some(choice)));
        let set = weather_set();
        for c in r.tool_calls() {
            let tool = set.get(&c.name);
            prop_assert!(tool.is_some(), "unknown tool {}", c.name);
            let args: Value = serde_json::from_str(&c.arguments).unwrap_or(Value::Null);
            prop_assert!(args.is_object(), "{}", c.arguments);
            let violations = tool.map(|t| t.validate(&args)).unwrap_or_default();
            prop_assert!(violations.is_empty(), "{prompt:?}: {args} {violations:?}");
        }
    }

    /// No request body makes the model panic: it answers or refuses.
    #[test]
    fn no_body_panics(content in "\\PC{0,60}", role in "(user|system|assistant|tool|x)", extra in 0usize..6) {
        let extra_field = [
            json!(null), json!({"tools": "x"}), json!({"tool_choice": {"type":"function"}}),
            json!({"response_format": {"type":"json_schema","json_schema":{"schema":{"$ref":"#"}}}}),
            json!({"response_format": {"type":"json_schema","json_schema":{"schema":{"type":"array","minItems":100000}}}}),
            json!({"messages": [{"role":"tool","tool_call_id":"zz","content":content.clone()}]}),
        ][extra].clone();
        let mut b = json!({"messages":[{"role":role,"content":content,"tool_call_id":"c"}]});
        if let (Some(o), Some(e)) = (b.as_object_mut(), extra_field.as_object()) {
            for (k, v) in e {
                o.insert(k.clone(), v.clone());
            }
        }
        let _ = respond_to_body(&b);
    }
}

// Emulated mode: the system prompt is a protocol's tool prompt, and there are no native tools.

fn emulated_body(protocol: &Protocol, prompt: &str) -> Value {
    json!({"messages":[
        {"role":"system","content":protocol.system_prompt(&weather_set())},
        {"role":"user","content":prompt}
    ]})
}

fn parsed_calls(protocol: &Protocol, text: &str) -> (Vec<(String, Value)>, Vec<Part>) {
    let parsed = protocol.parse_generated(&weather_set(), text.as_bytes());
    (calls_of(&parsed.parts), parsed.parts)
}

/// Each tool call of `parts`: its name and input.
pub(crate) fn calls_of(parts: &[Part]) -> Vec<(String, Value)> {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some((c.tool_name.clone(), c.input.clone())),
            _ => None,
        })
        .collect()
}

/// The demo's answer to the weather in Paris and Tokyo: a call for each, in that order.
#[track_caller]
pub(crate) fn assert_paris_then_tokyo(protocol: &Protocol, calls: &[(String, Value)]) {
    assert_eq!(
        calls,
        [
            ("get_weather".to_string(), json!({"city":"Paris"})),
            ("get_weather".to_string(), json!({"city":"Tokyo"}))
        ],
        "{}",
        protocol.name()
    );
}

#[test]
fn emulated_calls_are_written_in_the_prompt_protocol() {
    for protocol in Protocol::all() {
        let b = emulated_body(&protocol, "What's the weather in Paris and Tokyo?");
        let r = reply(&b);
        assert!(
            r.tool_calls().is_empty(),
            "{}: no native calls in emulated mode",
            protocol.name()
        );
        let text = r.content().unwrap_or_default();
        let (paris, tokyo) = (json!({"city":"Paris"}), json!({"city":"Tokyo"}));
        let both = protocol.format_calls(&[("get_weather", &paris), ("get_weather", &tokyo)]);
        assert!(text.contains(&both), "{}: {text}", protocol.name());
        let (calls, _) = parsed_calls(&protocol, &text);
        assert_paris_then_tokyo(&protocol, &calls);
        // A family that reasons in text thinks first, in its own form (markers, or harmony's
        // analysis channel).
        let parsed = protocol.parse_generated(&weather_set(), text.as_bytes());
        let reasoning = toolscope_core::part::Collapsed::of(&parsed.parts).reasoning;
        assert_eq!(
            reasoning.contains("get_weather fits"),
            protocol.format_reasoning("x").is_some(),
            "{}: {text}",
            protocol.name()
        );
        // Streamed in small pieces: the call's markup arrives split over several of them.
        assert!(r.pieces.len() > 10, "{}", protocol.name());

        let none = reply(&{
            let mut b = b.clone();
            b["tool_choice"] = json!("none");
            b
        });
        assert!(
            parsed_calls(&protocol, &none.content().unwrap_or_default())
                .0
                .is_empty()
        );
    }
}

/// `--protocol auto` picks every registered protocol from what the demo model writes in it,
/// whole and as the demo streams it.
#[test]
fn auto_picks_every_protocol_from_its_demo_output() {
    for protocol in Protocol::all() {
        let r = reply(&emulated_body(
            &protocol,
            "What's the weather in Paris and Tokyo?",
        ));
        let text = r.content().unwrap_or_default();
        let whole = Protocol::detect(&weather_set(), text.as_bytes());
        assert_eq!(
            whole.protocol.name(),
            protocol.name(),
            "{}: {} ({text})",
            protocol.name(),
            whole.reason
        );
        let mut auto = toolscope_core::protocol::AutoParser::new(&weather_set(), None);
        let mut parts = Vec::new();
        let mut chosen = Vec::new();
        for piece in &r.pieces {
            if let crate::reply::Piece::Text(t) = piece {
                chosen.extend(auto.push(t.as_bytes(), &mut parts));
            }
        }
        chosen.extend(auto.finish(&mut parts));
        assert_eq!(
            chosen.len(),
            1,
            "{}: the choice is made once",
            protocol.name()
        );
        assert_eq!(chosen[0].protocol.name(), protocol.name());
        // Parsed exactly as that protocol parses it.
        let direct = protocol.parse_generated(&weather_set(), text.as_bytes());
        assert_eq!(
            toolscope_core::part::Collapsed::of(&parts),
            toolscope_core::part::Collapsed::of(&direct.parts),
            "{}",
            protocol.name()
        );
    }
}

#[test]
fn emulated_malformed_calls_are_reported_by_the_parsers() {
    for protocol in Protocol::all() {
        let r = reply(&emulated_body(
            &protocol,
            "What's the weather in Paris? #malformed",
        ));
        let text = r.content().unwrap_or_default();
        let (calls, parts) = parsed_calls(&protocol, &text);
        assert!(calls.is_empty(), "{}: {text}", protocol.name());
        assert!(
            parts.iter().any(|p| matches!(p, Part::Error(_))),
            "{}: {text}",
            protocol.name()
        );
    }
}

#[test]
fn emulated_tool_results_are_answered_in_text() {
    for protocol in Protocol::all() {
        let call = protocol.format_call("get_weather", &json!({"city":"Paris"}));
        let result = protocol.format_result("get_weather", "{\"temperature\": 18}");
        let b = json!({"messages":[
            {"role":"system","content":protocol.system_prompt(&weather_set())},
            {"role":"user","content":"What's the weather in Paris?"},
            {"role":"assistant","content":call},
            {"role":"user","content":result}
        ]});
        let text = reply(&b).content().unwrap_or_default();
        assert!(
            text.contains("The weather in Paris is temperature 18"),
            "{}: {text}",
            protocol.name()
        );
    }
}

#[test]
fn emulation_is_detected_from_the_prompt() {
    for protocol in Protocol::all() {
        let b = emulated_body(&protocol, "hi");
        let request = DemoRequest::from_json(&b).map_err(|e| e.to_string());
        let detected = request.as_ref().ok().and_then(crate::emulated::detect);
        assert_eq!(detected.map(|e| e.protocol), Some(protocol.clone()));
        let _ = request.map(|r| respond(&r));
    }
}

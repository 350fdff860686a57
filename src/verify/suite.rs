//! The battery of scenarios `toolscope verify` runs: a TOML file (the bundled one is
//! `src/verify/suite.toml`, documented at its top), or the user's own with `--suite FILE`.
//!
//! A scenario names the prompt (or a conversation), the tools offered, the tool choice, and what
//! must hold of the answer: which tools are called, which arguments each call must have and of
//! which JSON type, optionally substrings a string argument must keep (markup, emoji) and a
//! least length; or that the answer is text. Never the exact words.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use toolscope_core::provider::{Message, ReasoningEffort, Request};
use toolscope_core::tool::{ToolChoice, ToolDef, ToolSet};

/// The bundled suite.
pub const BUNDLED: &str = include_str!("suite.toml");

/// The name the bundled suite is reported under.
pub const BUNDLED_NAME: &str = "toolscope-default";

/// A suite, read and checked.
#[derive(Clone, Debug)]
pub struct Suite {
    pub name: String,
    pub scenarios: Vec<Scenario>,
}

/// One scenario, ready to send.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub about: String,
    pub tools: ToolSet,
    pub tool_choice: ToolChoice,
    pub system: Option<String>,
    /// The conversation sent: the history, then the prompt (with its block) as a user message.
    pub messages: Vec<Message>,
    pub reasoning: Option<ReasoningEffort>,
    pub parallel: Option<bool>,
    pub max_tokens: Option<u32>,
    pub expect: Expect,
}

/// What must hold of an answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Expect {
    /// The calls expected, in any order (empty: no call).
    pub calls: Vec<ExpectedCall>,
    /// A text answer (non-empty) is expected.
    pub text: bool,
}

/// A call that must be made.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectedCall {
    pub tool: String,
    /// Argument name → JSON type (`string`, `integer`, `number`, `boolean`, `object`, `array`).
    pub args: BTreeMap<String, String>,
    /// Argument name → substrings its string value must hold.
    pub contains: BTreeMap<String, Vec<String>>,
    /// Argument name → the least length of its value (characters of a string, items of an
    /// array).
    pub min_length: BTreeMap<String, usize>,
}

/// The JSON types an expected argument may name.
pub const TYPES: &[&str] = &["string", "integer", "number", "boolean", "object", "array"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    tools: Vec<ToolDef>,
    #[serde(default, rename = "scenario")]
    scenarios: Vec<RawScenario>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    #[serde(default)]
    about: String,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    block: Option<String>,
    #[serde(default)]
    block_repeat: Option<usize>,
    #[serde(default)]
    system: Option<String>,
    #[serde(default)]
    history: Vec<Value>,
    #[serde(default)]
    tools: Option<Vec<String>>,
    #[serde(default)]
    tool_choice: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    parallel: Option<bool>,
    #[serde(default)]
    max_tokens: Option<u32>,
    #[serde(default)]
    expect: RawExpect,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    #[serde(default)]
    calls: Vec<RawCall>,
    #[serde(default)]
    text: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCall {
    tool: String,
    #[serde(default)]
    args: BTreeMap<String, String>,
    #[serde(default)]
    contains: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    min_length: BTreeMap<String, usize>,
}

impl Suite {
    /// The bundled suite.
    pub fn bundled() -> Suite {
        Suite::parse(BUNDLED, BUNDLED_NAME).expect("the bundled suite is valid")
    }

    /// Reads a suite file; the error is one line naming the file.
    pub fn load(path: &Path) -> Result<Suite, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the suite: {e}", path.display()))?;
        let stem = path
            .file_stem()
            .map_or("suite".into(), |s| s.to_string_lossy().into_owned());
        Suite::parse(&text, &stem).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads a suite from its TOML text; `default_name` names it when the file does not.
    pub fn parse(text: &str, default_name: &str) -> Result<Suite, String> {
        let file: File = toml::from_str(text).map_err(|e| {
            let message = e.message().to_string();
            match e.span() {
                Some(span) => {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}: {message}")
                }
                None => message,
            }
        })?;
        let all = ToolSet::new(file.tools.clone()).map_err(|e| format!("tools: {e}"))?;
        if file.scenarios.is_empty() {
            return Err("no [[scenario]] in the suite".into());
        }
        let mut scenarios = Vec::with_capacity(file.scenarios.len());
        for raw in file.scenarios {
            if scenarios.iter().any(|s: &Scenario| s.name == raw.name) {
                return Err(format!("scenario \"{}\" is defined twice", raw.name));
            }
            let name = raw.name.clone();
            scenarios.push(
                scenario(raw, &file.tools, &all)
                    .map_err(|e| format!("scenario \"{name}\": {e}"))?,
            );
        }
        Ok(Suite {
            name: file.name.unwrap_or_else(|| default_name.to_string()),
            scenarios,
        })
    }

    /// The request of `scenario` on the target `template` (provider, model, base URL, protocol,
    /// sampling, timeouts), streamed or not.
    pub fn request(scenario: &Scenario, template: &Request, stream: bool) -> Request {
        let mut r = template.clone();
        r.tools = scenario.tools.clone();
        r.tool_choice = Some(scenario.tool_choice.clone());
        r.system = scenario.system.clone().or(template.system.clone());
        r.messages = scenario.messages.clone();
        r.stream = stream;
        if scenario.reasoning.is_some() {
            r.sampling.reasoning_effort = scenario.reasoning;
        }
        if scenario.parallel.is_some() {
            r.sampling.parallel_tool_calls = scenario.parallel;
        }
        if scenario.max_tokens.is_some() {
            r.sampling.max_tokens = scenario.max_tokens;
        }
        r
    }
}

fn scenario(raw: RawScenario, defs: &[ToolDef], all: &ToolSet) -> Result<Scenario, String> {
    if raw.name.trim().is_empty() {
        return Err("a scenario needs a name".into());
    }
    let tools = match &raw.tools {
        None => all.clone(),
        Some(names) => {
            let mut picked = Vec::new();
            for n in names {
                match defs.iter().find(|d| &d.name == n) {
                    Some(d) => picked.push(d.clone()),
                    None => return Err(format!("tool \"{n}\" is not among the suite's [[tools]]")),
                }
            }
            ToolSet::new(picked).map_err(|e| e.to_string())?
        }
    };
    let tool_choice = ToolChoice::parse(raw.tool_choice.as_deref().unwrap_or("auto"))?;
    tool_choice.validate(&tools).map_err(|e| e.message)?;
    let mut messages = Vec::new();
    for (i, m) in raw.history.into_iter().enumerate() {
        let m: Message =
            serde_json::from_value(m).map_err(|e| format!("history entry {}: {e}", i + 1))?;
        messages.push(m);
    }
    let mut prompt = raw.prompt.unwrap_or_default();
    if let Some(block) = &raw.block {
        let times = raw.block_repeat.unwrap_or(1).max(1);
        prompt.push_str("\n```\n");
        prompt.push_str(&block.repeat(times));
        if !prompt.ends_with('\n') {
            prompt.push('\n');
        }
        prompt.push_str("```\n");
    } else if raw.block_repeat.is_some() {
        return Err("block_repeat without a block".into());
    }
    if !prompt.trim().is_empty() {
        messages.push(Message::user(prompt));
    }
    if messages.is_empty() {
        return Err("a scenario needs a prompt or a history".into());
    }
    let reasoning = raw
        .reasoning
        .as_deref()
        .map(ReasoningEffort::parse)
        .transpose()?;
    let mut calls = Vec::new();
    for c in raw.expect.calls {
        if tools.get(&c.tool).is_none() {
            return Err(format!(
                "expect.calls names \"{}\", which is not among the scenario's tools",
                c.tool
            ));
        }
        for (arg, t) in &c.args {
            if !TYPES.contains(&t.as_str()) {
                return Err(format!(
                    "expect.calls: argument \"{arg}\" of {}: unknown type \"{t}\" (one of {})",
                    c.tool,
                    TYPES.join(", ")
                ));
            }
        }
        calls.push(ExpectedCall {
            tool: c.tool,
            args: c.args,
            contains: c.contains,
            min_length: c.min_length,
        });
    }
    let expect = Expect {
        calls,
        text: raw.expect.text,
    };
    match &tool_choice {
        ToolChoice::None if !expect.calls.is_empty() => {
            return Err("tool_choice \"none\" cannot expect calls".into());
        }
        ToolChoice::Required | ToolChoice::Tool(_) if expect.calls.is_empty() => {
            return Err(format!(
                "tool_choice \"{}\" must expect at least one call",
                tool_choice.label()
            ));
        }
        ToolChoice::Tool(x) if expect.calls.iter().any(|c| &c.tool != x) => {
            return Err(format!(
                "tool_choice forces \"{x}\": expect only calls of it"
            ));
        }
        _ => {}
    }
    if expect.calls.is_empty() && !expect.text {
        return Err("expect neither calls nor text: say what must hold".into());
    }
    Ok(Scenario {
        name: raw.name,
        about: raw.about,
        tools,
        tool_choice,
        system: raw.system,
        messages,
        reasoning,
        parallel: raw.parallel,
        max_tokens: raw.max_tokens,
        expect,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_suite_reads_and_has_every_kind_of_scenario() {
        let s = Suite::bundled();
        assert!(s.scenarios.len() >= 14, "{}", s.scenarios.len());
        let has = |f: &dyn Fn(&Scenario) -> bool| s.scenarios.iter().any(f);
        assert!(has(&|s| s.expect.calls.len() == 2));
        assert!(has(&|s| s.expect.calls.len() == 3));
        assert!(has(&|s| s.tool_choice == ToolChoice::Required));
        assert!(has(&|s| s.tool_choice == ToolChoice::None));
        assert!(has(&|s| matches!(s.tool_choice, ToolChoice::Tool(_))));
        assert!(has(&|s| s.reasoning.is_some()));
        assert!(has(&|s| s
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { .. }))));
        assert!(has(&|s| s
            .expect
            .calls
            .iter()
            .any(|c| c.min_length.values().any(|n| *n >= 20_000))));
    }

    #[test]
    fn a_broken_suite_says_where() {
        let err = Suite::parse("[[scenario]]\nname = 1\n", "x").unwrap_err();
        assert!(err.starts_with("line 2:"), "{err}");
        let err = Suite::parse(
            "[[tools]]\nname = \"f\"\n[[scenario]]\nname = \"a\"\nprompt = \"p\"\ntools = [\"g\"]\n",
            "x",
        )
        .unwrap_err();
        assert!(err.contains("\"g\""), "{err}");
        let err = Suite::parse(
            "[[tools]]\nname = \"f\"\n[[scenario]]\nname = \"a\"\nprompt = \"p\"\n[[scenario.expect.calls]]\ntool = \"f\"\nargs = { x = \"float\" }\n",
            "x",
        )
        .unwrap_err();
        assert!(err.contains("unknown type"), "{err}");
        let err = Suite::parse("name = \"x\"\n", "x").unwrap_err();
        assert!(err.contains("no [[scenario]]"), "{err}");
        let err = Suite::parse(
            "[[tools]]\nname = \"f\"\n[[scenario]]\nname = \"a\"\nprompt = \"p\"\ntool_choice = \"none\"\n",
            "x",
        )
        .unwrap_err();
        assert!(err.contains("expect neither"), "{err}");
    }
}

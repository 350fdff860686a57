//! The native half of the `toolscope` Python package: toolscope-core's protocols, detection,
//! stream parser and coercion behind a small surface that speaks JSON text. The Python half
//! (`python/toolscope/__init__.py`) turns that text into dicts and lists, and Python objects
//! into JSON, so every value crosses the boundary the way the command line prints it.
//!
//! Errors are `ValueError`s carrying the core's messages. Parsing a whole text runs with the
//! interpreter released, so other Python threads go on meanwhile.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::{Value, json};
use toolscope_core::part::Part;
use toolscope_core::protocol::{Protocol, StreamParser};
use toolscope_core::tool::{ToolDef, ToolSet};

fn bad(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The tools from their JSON text (an array of definitions, or one); none: no tools.
fn tools(json: Option<&str>) -> PyResult<ToolSet> {
    match json {
        None => Ok(ToolSet::default()),
        Some(text) => ToolSet::from_json_text(text).map_err(|e| bad(format!("tools: {e}"))),
    }
}

fn protocol(name: &str, reasoning_open: Option<bool>) -> PyResult<Protocol> {
    Ok(Protocol::from_name(name)
        .map_err(bad)?
        .with_reasoning_open(reasoning_open))
}

fn parts_json(parts: &[Part]) -> PyResult<String> {
    serde_json::to_string(parts).map_err(bad)
}

/// Every protocol of the registry, in its order: name, aliases, the model families it serves,
/// its reasoning markers and whether an output starts inside reasoning.
#[pyfunction]
fn protocols() -> PyResult<String> {
    let list: Vec<Value> = Protocol::all()
        .iter()
        .map(|p| {
            let reasoning = p.reasoning();
            json!({
                "name": p.name(),
                "aliases": p.aliases(),
                "families": p.families(),
                "reasoning": reasoning.markers.map(|(open, close)| json!([open, close])),
                "reasoningOpen": p.reasoning_open(),
            })
        })
        .collect();
    serde_json::to_string(&list).map_err(bad)
}

/// Which protocol an output is written in, and why.
#[pyfunction]
#[pyo3(signature = (text, tools_json=None))]
fn detect(py: Python<'_>, text: &[u8], tools_json: Option<&str>) -> PyResult<String> {
    let tools = tools(tools_json)?;
    let found = py.detach(|| Protocol::detect(&tools, text));
    Ok(json!({"protocol": found.protocol.name(), "reason": found.reason}).to_string())
}

/// The whole output's parts: reasoning, text, tool calls (arguments coerced), errors.
#[pyfunction]
#[pyo3(signature = (text, protocol_name, tools_json=None, reasoning_open=None))]
fn parse(
    py: Python<'_>,
    text: &[u8],
    protocol_name: &str,
    tools_json: Option<&str>,
    reasoning_open: Option<bool>,
) -> PyResult<String> {
    let p = protocol(protocol_name, reasoning_open)?;
    let tools = tools(tools_json)?;
    let parsed = py.detach(|| p.parse_generated(&tools, text));
    parts_json(&parsed.parts)
}

/// The system prompt that offers `tools` in the protocol's own convention.
#[pyfunction]
fn render_tools(protocol_name: &str, tools_json: &str) -> PyResult<String> {
    let p = protocol(protocol_name, None)?;
    Ok(p.system_prompt(&tools(Some(tools_json))?))
}

/// Arguments coerced to a JSON Schema: `[value, coercions, violations]`, the violations those
/// of the coerced value.
#[pyfunction]
fn coerce(arguments_json: &str, schema_json: &str) -> PyResult<String> {
    let arguments: Value =
        serde_json::from_str(arguments_json).map_err(|e| bad(format!("arguments: {e}")))?;
    let schema: Value =
        serde_json::from_str(schema_json).map_err(|e| bad(format!("schema: {e}")))?;
    let set = ToolSet::new(vec![ToolDef::new("arguments", "", schema.clone())])
        .map_err(|e| bad(format!("schema: {e}")))?;
    let coerced = toolscope_core::coerce::coerce(arguments, &schema);
    let violations = set
        .get("arguments")
        .map(|t| t.validate(&coerced.value))
        .unwrap_or_default();
    serde_json::to_string(&json!([coerced.value, coerced.coercions, violations])).map_err(bad)
}

/// A stream parser: feed the output as it arrives, get the parts it completes.
#[pyclass(unsendable, module = "toolscope._toolscope")]
struct NativeStreamParser {
    protocol: Protocol,
    tools: ToolSet,
    parser: StreamParser,
    finished: bool,
}

#[pymethods]
impl NativeStreamParser {
    #[new]
    #[pyo3(signature = (protocol_name, tools_json=None, reasoning_open=None))]
    fn new(
        protocol_name: &str,
        tools_json: Option<&str>,
        reasoning_open: Option<bool>,
    ) -> PyResult<Self> {
        let protocol = protocol(protocol_name, reasoning_open)?;
        let tools = tools(tools_json)?;
        let parser = protocol.stream_parser(&tools);
        Ok(NativeStreamParser {
            protocol,
            tools,
            parser,
            finished: false,
        })
    }

    /// The parts this piece of output completes (a piece may end inside a UTF-8 character or a
    /// marker: what cannot be decided yet is held until more arrives).
    fn feed(&mut self, chunk: &[u8]) -> PyResult<String> {
        if self.finished {
            return Err(bad("the output was finished: reset() starts a new one"));
        }
        let mut out = Vec::new();
        self.parser.push(chunk, &mut out);
        parts_json(&out)
    }

    /// The output ended: what was held is decided, and the parts that ends.
    fn finish(&mut self) -> PyResult<String> {
        if self.finished {
            return Err(bad(
                "the output was finished already: reset() starts a new one",
            ));
        }
        self.finished = true;
        let mut out = Vec::new();
        self.parser.finish(&mut out);
        parts_json(&out)
    }

    /// Starts a new output with the same protocol and tools.
    fn reset(&mut self) {
        self.parser = self.protocol.stream_parser(&self.tools);
        self.finished = false;
    }
}

#[pymodule]
fn _toolscope(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(protocols, m)?)?;
    m.add_function(wrap_pyfunction!(detect, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(render_tools, m)?)?;
    m.add_function(wrap_pyfunction!(coerce, m)?)?;
    m.add_class::<NativeStreamParser>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

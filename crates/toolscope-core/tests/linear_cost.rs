//! Semantics 4: stream parsing costs O(total bytes), whatever the chunk size and however large
//! one tool call is.
//!
//! Time is not measured here (benchmarks do that); what is counted is deterministic: the bytes
//! the parser allocates while parsing at one byte per chunk. A parser that re-reads or rebuilds
//! a call's body on every chunk (as the reference does) allocates in proportion to the square of
//! the call's size; a linear one in proportion to its size. Four times the input must cost at
//! most about four times the bytes. Every protocol of the registry is checked, on calls it
//! writes itself.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use serde_json::json;
use toolscope_core::part::Part;
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::{ToolDef, ToolSet};

struct Counting;

thread_local! {
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.with(|a| a.set(a.get() + layout.size() as u64));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.with(|a| a.set(a.get() + new_size as u64));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn tools() -> ToolSet {
    ToolSet::new(vec![ToolDef::new(
        "write",
        "Write a file",
        json!({"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"},"body":{"type":"string"}}}),
    )])
    .unwrap()
}

/// Call `i` of the text, written by the protocol itself.
fn call(protocol: &Protocol, i: usize, body: &str) -> String {
    protocol.format_call(
        "write",
        &json!({"path": format!("/tmp/f{i}.txt"), "n": i, "body": body}),
    )
}

/// Bytes allocated while parsing `text` one byte per chunk (parts are dropped as they come).
/// The bytes allocated reading a text and one with 4x as much in it (calls, or call text) grow
/// less than 5x; `calls` are the calls each must hold, `label` names the case in the output,
/// `what` says what grows in the message.
fn grows_linearly(
    p: &Protocol,
    (small_text, large_text): (String, String),
    calls: (usize, usize),
    label: &str,
    what: &str,
) {
    let protocol = p.name();
    let (small, c1) = allocated(p, &small_text);
    let (large, c4) = allocated(p, &large_text);
    assert_eq!((c1, c4), calls, "{protocol}");
    let ratio = large as f64 / small as f64;
    eprintln!("{protocol} {label} {ratio:.2} ({small} -> {large})");
    assert!(ratio < 5.0, "{protocol}: {what} {ratio:.2}x the bytes");
}

fn allocated(protocol: &Protocol, text: &str) -> (u64, usize) {
    let t = tools();
    let mut parser = protocol.stream_parser(&t);
    let mut out: Vec<Part> = Vec::with_capacity(64);
    let mut calls = 0;
    let before = ALLOCATED.with(|a| a.get());
    for b in text.as_bytes().chunks(1) {
        parser.push(b, &mut out);
        calls += out
            .iter()
            .filter(|p| matches!(p, Part::ToolCall(_)))
            .count();
        out.clear();
    }
    parser.finish(&mut out);
    calls += out
        .iter()
        .filter(|p| matches!(p, Part::ToolCall(_)))
        .count();
    (ALLOCATED.with(|a| a.get()) - before, calls)
}

#[test]
fn cost_grows_linearly_with_calls_and_with_one_calls_size() {
    for p in Protocol::all() {
        // Read as an output that is not inside reasoning at its start: calls are the point.
        let p = p.with_reasoning_open(Some(false));
        // Many small calls.
        let many = |n: usize| {
            (0..n)
                .map(|i| format!("note {i} y y y\n{}\n", call(&p, i, "BODY")))
                .collect::<String>()
        };
        let texts = (many(100), many(400));
        grows_linearly(&p, texts, (100, 400), "many", "4x the calls allocate");

        // One call, growing.
        let one = |size: usize| call(&p, 0, &"x".repeat(size));
        let texts = (one(20_000), one(80_000));
        grows_linearly(&p, texts, (1, 1), "one", "a call 4x as large allocates");
    }
}

/// Values full of text that looks like the protocols' own close tags (each one followed by
/// text, so that it is value text): deciding each candidate close holds back only the tail in
/// doubt, so the cost still grows with the size, not its square.
#[test]
fn cost_stays_linear_when_values_hold_markup() {
    let piece = "a </body> b </parameter>\n c </write> d </function> e </tool_call> f ``` g\n";
    for p in Protocol::all() {
        // Read as an output that is not inside reasoning at its start: calls are the point.
        let p = p.with_reasoning_open(Some(false));
        let one = |n: usize| call(&p, 0, &piece.repeat(n));
        let texts = (one(250), one(1000));
        let what = "a value with 4x the markup allocates";
        grows_linearly(&p, texts, (1, 1), "markup", what);
    }
}

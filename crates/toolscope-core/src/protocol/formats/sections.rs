//! The special-token section family of the framed-marker engine: calls are blocks between
//! special tokens, `<call>HEADER<sep>ARGUMENTS<end>`, parallel calls more blocks inside one
//! section (`deepseek-v3`, `deepseek-v3.1`, `kimi-k2`, `plamo3`). Each member's file holds its
//! table entry ([`Sectioned`]): its tokens (in the engine's syntax, which also gives the section's
//! tokens and, unless the card names others, the markers `--protocol auto` knows it by), how it
//! writes one call block and its results, and its prompt text.

use serde_json::Value;

use crate::protocol::scan::framed::{FramedScanner, FramedSyntax};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, ResultWrap, card_methods};
use crate::protocol::text::prompt::{args_json, broken_args};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// One member of the family.
pub(crate) struct Sectioned {
    /// Its names, models, end tokens and reasoning markers; call markers only where the
    /// section's opening and a call's do not tell it (see [`Sectioned::markers`]).
    pub card: Card,
    /// How the engine reads it, the tokens that open and close the section of calls with it.
    pub syntax: &'static FramedSyntax,
    /// One call block: the tool's name, the call's index in the answer, the arguments' JSON.
    pub block: fn(&str, usize, &str) -> String,
    /// What the family writes between the blocks of one section.
    pub joiner: &'static str,
    /// The prompt text, and reading it back (given the protocol's name).
    pub prompt: fn(&ToolSet) -> String,
    pub read_prompt: fn(&str, &str) -> Option<(Protocol, ToolSet)>,
    /// How it writes the results of one turn, and reads the payload of one.
    pub results: SectionResults,
}

/// How a member writes its results.
pub(crate) enum SectionResults {
    /// Each wrapped in a fixed pair of markers.
    Wrapped(ResultWrap),
    /// Its own way: the results of one turn (one result is a turn of one), and the payload of
    /// one.
    Own {
        write: fn(&[(&str, &str)]) -> String,
        read: fn(&str) -> String,
    },
}

impl Sectioned {
    /// The blocks of one answer in the section.
    fn section(&self, blocks: &str) -> String {
        let (open, close) = self.syntax.section.unwrap_or(("", ""));
        format!("{open}{blocks}{close}")
    }
}

impl ProtocolSpec for Sectioned {
    card_methods!();

    /// The card's markers; where it names none, the tokens that open the section and a call.
    fn markers(&self, tools: &ToolSet) -> Vec<String> {
        if !self.card.markers.is_empty() {
            return self.card.markers_for(tools);
        }
        let section = self.syntax.section.map(|(open, _)| open);
        section
            .into_iter()
            .chain([self.syntax.call_begin])
            .map(String::from)
            .collect()
    }

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        (self.prompt)(tools)
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        (self.read_prompt)(self.card.name, system)
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        self.section(&(self.block)(name, 0, &args_json(input)))
    }

    /// One section, the blocks one after the other, the index counting up.
    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        let blocks: Vec<String> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, input))| (self.block)(name, i, &args_json(input)))
            .collect();
        self.section(&blocks.join(self.joiner))
    }

    fn format_result(&self, p: &Protocol, name: &str, result: &str) -> String {
        self.format_results(p, &[(name, result)])
    }

    fn format_results(&self, _: &Protocol, results: &[(&str, &str)]) -> String {
        match self.results {
            SectionResults::Wrapped(wrap) => {
                let each: Vec<String> = results.iter().map(|(_, r)| wrap.around(r)).collect();
                each.join(wrap.joiner)
            }
            SectionResults::Own { write, .. } => write(results),
        }
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        match self.results {
            SectionResults::Wrapped(wrap) => wrap.inside(text),
            SectionResults::Own { read, .. } => read(text),
        }
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(FramedScanner::new(self.syntax, tools.clone()))
    }

    /// Arguments with a key and no value.
    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        self.section(&(self.block)(name, 0, &broken_args(input)))
    }
}

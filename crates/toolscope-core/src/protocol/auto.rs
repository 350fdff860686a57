//! `--protocol auto` on a stream: the output held back until a marker names the protocol.

use crate::part::Part;
use crate::tool::ToolSet;

use super::detect::{self, Detected, Detector};
use super::parser::StreamParser;
use super::span::Span;

/// A stream parser for `--protocol auto`: holds the output back until a marker identifies the
/// protocol (or the output ends), then parses all of it, from the first byte, exactly as that
/// protocol's [`StreamParser`] does.
pub struct AutoParser {
    tools: ToolSet,
    reasoning_open: Option<bool>,
    detector: Detector,
    held: Vec<u8>,
    parser: Option<(Detected, StreamParser)>,
    /// The writer of parts written beside the parser before the choice (a wire's native
    /// reasoning); the chosen parser takes it over, so that ids come from one count.
    writer: crate::part::PartWriter,
}

impl AutoParser {
    /// `reasoning_open` overrides the chosen family's default (`None`: its default).
    pub fn new(tools: &ToolSet, reasoning_open: Option<bool>) -> Self {
        AutoParser {
            tools: tools.clone(),
            reasoning_open,
            detector: Detector::new(tools),
            held: Vec::new(),
            parser: None,
            writer: crate::part::PartWriter::new(),
        }
    }

    /// Parses the next chunk. Gives the choice on the push that makes it (once).
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Part>) -> Option<Detected> {
        if let Some((_, parser)) = &mut self.parser {
            parser.push(chunk, out);
            return None;
        }
        self.held.extend_from_slice(chunk);
        let detected = self.detector.push(chunk).cloned()?;
        Some(self.start(detected, out))
    }

    /// Ends the output. Gives the choice if it is made only now.
    pub fn finish(&mut self, out: &mut Vec<Part>) -> Option<Detected> {
        self.finish_as(false, out)
    }

    /// Ends an output that was cut off (see [`StreamParser::finish_cut`]).
    pub fn finish_cut(&mut self, out: &mut Vec<Part>) -> Option<Detected> {
        self.finish_as(true, out)
    }

    fn finish_as(&mut self, cut: bool, out: &mut Vec<Part>) -> Option<Detected> {
        let made_now = match self.parser {
            Some(_) => None,
            None => {
                let detected = self.detector.finish();
                Some(self.start(detected, out))
            }
        };
        if let Some((detected, parser)) = &mut self.parser {
            parser.finish_as(cut, out);
            let calls = parser.call_count();
            if calls > 0 && detected.reason == detect::PLAIN_TEXT {
                detected.reason = detect::found_without_marker(&detected.protocol, calls);
            }
        }
        made_now.map(|mut d| {
            if let Some((chosen, _)) = &self.parser {
                d.reason.clone_from(&chosen.reason);
            }
            d
        })
    }

    /// The choice, once made.
    pub fn detected(&self) -> Option<&Detected> {
        self.parser.as_ref().map(|(d, _)| d)
    }

    /// How many tool calls were completed so far.
    pub fn call_count(&self) -> usize {
        self.parser.as_ref().map_or(0, |(_, p)| p.call_count())
    }

    /// The spans recognised so far (none before the choice); byte offsets into the output.
    pub fn spans(&self) -> &[Span] {
        self.parser.as_ref().map_or(&[], |(_, p)| p.spans())
    }

    /// The output's reasoning arrived apart from it (a wire's own reasoning field): unless the
    /// caller set it, the text is then read as starting outside reasoning, whatever the chosen
    /// family's default. Takes effect only before the choice.
    pub fn reasoning_given_apart(&mut self) {
        if self.parser.is_none() && self.reasoning_open.is_none() {
            self.reasoning_open = Some(false);
        }
    }

    /// The writer of this output's parts, shared with a caller that writes into the same answer
    /// (the chosen parser's, once there is one). Only between pushes.
    pub(crate) fn writer(&mut self) -> &mut crate::part::PartWriter {
        match &mut self.parser {
            Some((_, parser)) => parser.writer(),
            None => &mut self.writer,
        }
    }

    fn start(&mut self, detected: Detected, out: &mut Vec<Part>) -> Detected {
        let protocol = match self.reasoning_open {
            Some(open) => detected.protocol.clone().with_reasoning_open(Some(open)),
            None => detected.protocol.clone(),
        };
        let mut parser = protocol.stream_parser(&self.tools);
        *parser.writer() = std::mem::take(&mut self.writer);
        parser.push(&std::mem::take(&mut self.held), out);
        self.parser = Some((detected.clone(), parser));
        detected
    }
}

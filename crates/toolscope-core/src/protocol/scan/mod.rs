//! The engines, each named for the shape of call it reads. An engine implements
//! [`Scanner`](super::text::scanner::Scanner) and is configured by the formats that use it.

/// An engine's standard-cases test (see `tests_support::engine_cases`), written in its `tests`
/// module (which imports `EngineCase`, `engine_cases`, `Scanner` and `ToolSet`): what makes the
/// scanner of a tool set, then a call, the call cut off unfinished, and a malformed call (each of
/// `get_weather` with the city Paris).
#[cfg(test)]
macro_rules! standard_cases {
    ($make:expr; $call:expr, $unfinished:expr, $malformed:expr $(,)?) => {
        /// A call, text around it, every split, an unfinished call, a malformed one.
        #[test]
        fn the_engine_answers_the_standard_cases() {
            let make = |tools: ToolSet| -> Box<dyn Scanner> { Box::new($make(tools)) };
            let case = EngineCase {
                call: $call,
                unfinished: $unfinished,
                malformed: $malformed,
            };
            engine_cases(&make, &case);
        }
    };
}

pub(crate) mod forked;
pub(crate) mod forms;
pub(crate) mod framed;
pub(crate) mod gemma_values;
pub(crate) mod harmony;
pub(crate) mod json_calls;
pub(crate) mod markup;
pub(crate) mod morph;
pub(crate) mod python_calls;
pub(crate) mod yaml;

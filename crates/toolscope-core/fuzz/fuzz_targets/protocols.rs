//! Fuzzes every protocol's stream parser under arbitrary chunkings (see common.rs). The first
//! byte of the input picks the protocol from the registry, so one target covers every protocol,
//! new ones included; `-only_ascii` or a dictionary are not needed. `TOOLSCOPE_FUZZ_PROTOCOL=NAME`
//! fuzzes that one protocol only (a campaign per protocol); the first byte is then ignored.
#![no_main]

#[path = "common.rs"]
mod common;

static ONLY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let only = ONLY.get_or_init(|| std::env::var("TOOLSCOPE_FUZZ_PROTOCOL").ok());
    match only {
        Some(name) => common::check(name, rest),
        None => {
            let names = toolscope_core::protocol::Protocol::names();
            common::check(names[pick as usize % names.len()], rest)
        }
    }
});

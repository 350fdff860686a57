//! `toolscope protocols`: the text protocols this build speaks, from the registry, one per line
//! (name, the model families that write it, then the servers' names for its parser, as
//! `vllm: hermes, sglang: qwen25`), or as JSONL with `--json`. Scripts iterate it
//! instead of listing protocol names by hand.

use clap::Args;
use serde_json::json;

use toolscope_core::protocol::Protocol;

use super::Output;

#[derive(Args, Debug)]
pub struct ProtocolsArgs {
    /// One JSON object per protocol: name, aliases, families, the servers' parser names,
    /// reasoning markers.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ProtocolsArgs) -> u8 {
    let mut out = Output::stdout();
    for p in Protocol::all() {
        if args.json {
            let r = p.reasoning();
            out.line(
                &json!({
                    "name": p.name(),
                    "aliases": p.aliases(),
                    "families": p.families(),
                    "serverParsers": p.server_parsers().iter()
                        .map(|(server, name)| json!({"server": server, "name": name}))
                        .collect::<Vec<_>>(),
                    "reasoning": r.markers.map(|(open, close)| json!({"open": open, "close": close})),
                    "startsInsideReasoning": r.starts_inside,
                    "callsInsideReasoning": r.calls_inside,
                })
                .to_string(),
            );
        } else {
            let servers: Vec<String> = p
                .server_parsers()
                .iter()
                .map(|(server, name)| format!("{server}: {name}"))
                .collect();
            out.line(&format!(
                "{}\t{}\t{}",
                p.name(),
                p.families(),
                servers.join(", ")
            ));
        }
    }
    out.close()
}

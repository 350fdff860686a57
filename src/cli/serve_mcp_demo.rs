//! `toolscope serve-mcp-demo`: the demo MCP server on stdin and stdout, with the playground's
//! example tools (`get_weather`, `search_web`, `write_file`) and deterministic results, so that
//! `toolscope run --provider demo --mcp 'toolscope serve-mcp-demo' --execute …` runs a whole
//! tool loop with no key and no network. It serves until the client closes the connection.
//!
//! The hidden flags are test hooks: `--page-size N` cuts `tools/list` into pages, and
//! `--test-tools` adds `add_tool` (lists one more tool and sends
//! `notifications/tools/list_changed`), `hang` (answers only when cancelled) and `exit_now`
//! (the server exits mid-call).

use clap::Args;

use toolscope_demo::mcp::DemoMcpOptions;

#[derive(Args, Debug)]
pub struct ServeMcpDemoArgs {
    /// Tools per tools/list page (a test hook).
    #[arg(long, value_name = "N", hide = true, value_parser = clap::value_parser!(u16).range(1..))]
    pub page_size: Option<u16>,
    /// Offer the test tools add_tool, hang and exit_now (a test hook).
    #[arg(long, hide = true)]
    pub test_tools: bool,
}

pub fn run(args: ServeMcpDemoArgs) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("toolscope serve-mcp-demo: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let options = DemoMcpOptions {
        page_size: args.page_size.map(usize::from),
        test_tools: args.test_tools,
    };
    match runtime.block_on(toolscope_demo::mcp::serve_stdio(options)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("toolscope serve-mcp-demo: {e}");
            1
        }
    }
}

//! `toolscope serve-demo`: serve the built-in demo model on loopback with the OpenAI wire, for
//! any OpenAI client (`base_url = http://127.0.0.1:PORT/v1`).

use std::net::SocketAddr;

use clap::Args;

use toolscope::core::provider::DemoServer;

#[derive(Args, Debug)]
pub struct ServeDemoArgs {
    /// The port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
}

pub fn run(args: ServeDemoArgs) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolscope serve-demo: cannot start the async runtime: {e}");
            return 1;
        }
    };
    runtime.block_on(async {
        let addr = SocketAddr::from(([127, 0, 0, 1], args.port));
        let server = match DemoServer::serve(addr).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("toolscope serve-demo: {}", e.message);
                return 1;
            }
        };
        // The first line is a contract: tests and scripts read the port from it.
        println!("listening on http://{}", server.addr());
        // Serve until interrupted (the default SIGINT handling ends the process).
        std::future::pending::<()>().await;
        0
    })
}

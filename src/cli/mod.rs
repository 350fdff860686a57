//! The headless subcommands, one file each.

pub mod parse;
pub mod run;
pub mod serve_demo;

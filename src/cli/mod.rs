//! The headless subcommands, one file each.

pub mod parse;
pub mod run;

//! Which MCP servers to talk to: a stdio command (split like a shell would, never run through one)
//! or a streamable-HTTP URL with the name of a variable holding its bearer token.

use std::fmt;

use super::McpError;

/// One MCP server, as the command line names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpServerSpec {
    /// A server run as a child process, speaking MCP on its stdin and stdout.
    Stdio {
        /// The command as typed (`--mcp 'npx -y server'`), for messages.
        command: String,
        /// The program and its arguments, as [`split_command`] cut them.
        argv: Vec<String>,
    },
    /// A server reached over streamable HTTP.
    Http {
        /// The endpoint (`http://127.0.0.1:8000/mcp`).
        url: String,
        /// The name of the environment variable whose value is sent as `Authorization: Bearer
        /// …`. The variable is read when connecting; the token is never kept or shown.
        token_env: Option<String>,
    },
}

impl McpServerSpec {
    /// A stdio server from a command line such as `python3 server.py --flag 'a b'`.
    pub fn stdio(command: &str) -> Result<Self, McpError> {
        let argv = split_command(command)?;
        if argv.is_empty() {
            return Err(McpError::Spec("the MCP server command is empty".into()));
        }
        Ok(McpServerSpec::Stdio {
            command: command.to_string(),
            argv,
        })
    }

    /// A streamable-HTTP server from `URL` or `URL=TOKEN_ENV`.
    ///
    /// The text after the last `=` is read as the name of the token's environment variable when
    /// it is one in capitals (`[A-Z_][A-Z0-9_]*`, e.g. `MCP_TOKEN`); a URL that itself ends in
    /// such a query value is given with a trailing `=` (`…?key=ABC=`: no token variable).
    pub fn http(arg: &str) -> Result<Self, McpError> {
        let (url, token_env) = match arg.rsplit_once('=') {
            Some((url, "")) => (url, None),
            Some((url, var)) if is_env_name(var) && url.contains("://") => {
                (url, Some(var.to_string()))
            }
            _ => (arg, None),
        };
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"));
        match rest {
            Some(host) if !host.is_empty() && !host.starts_with('/') => {}
            _ => {
                return Err(McpError::Spec(format!(
                    "\"{url}\" is not an http:// or https:// URL"
                )));
            }
        }
        Ok(McpServerSpec::Http {
            url: url.to_string(),
            token_env,
        })
    }

    /// The server as a session records it, under the name it told (`name`): the command or the
    /// URL and the token's variable, never the token.
    pub fn record(&self, name: &str) -> crate::session::McpServerRecord {
        match self {
            McpServerSpec::Stdio { command, .. } => {
                crate::session::McpServerRecord::stdio(name, command)
            }
            McpServerSpec::Http { url, token_env } => {
                crate::session::McpServerRecord::http(name, url, token_env.as_deref())
            }
        }
    }

    /// A name for the server before it tells its own: the program's file name, or the URL's host.
    pub fn fallback_name(&self) -> String {
        match self {
            McpServerSpec::Stdio { argv, .. } => {
                let program = argv.first().map(String::as_str).unwrap_or("mcp");
                program
                    .rsplit(['/', '\\'])
                    .next()
                    .unwrap_or(program)
                    .to_string()
            }
            McpServerSpec::Http { url, .. } => {
                let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
                let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
                let host = host.rsplit('@').next().unwrap_or(host);
                host.to_string()
            }
        }
    }
}

impl fmt::Display for McpServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpServerSpec::Stdio { command, .. } => write!(f, "{command}"),
            // The variable's name only: its value is never shown.
            McpServerSpec::Http {
                url,
                token_env: Some(var),
            } => write!(f, "{url} (token from ${var})"),
            McpServerSpec::Http { url, .. } => write!(f, "{url}"),
        }
    }
}

fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Splits a command line into words the way a POSIX shell would, without running one: blanks
/// separate words; `'…'` keeps everything literally; `"…"` keeps everything except that `\`
/// escapes `"`, `\`, `$` and `` ` ``; a `\` outside quotes keeps the next character (and a
/// `\` before a newline joins the lines). No expansion of any kind (`$HOME`, `*`, `~`) is done.
/// An unclosed quote or a trailing `\` is an error.
pub fn split_command(line: &str) -> Result<Vec<String>, McpError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => {
                            return Err(McpError::Spec(format!(
                                "unclosed single quote in \"{line}\""
                            )));
                        }
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                            Some('\n') => {}
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => {
                                return Err(McpError::Spec(format!(
                                    "unclosed double quote in \"{line}\""
                                )));
                            }
                        },
                        Some(c) => word.push(c),
                        None => {
                            return Err(McpError::Spec(format!(
                                "unclosed double quote in \"{line}\""
                            )));
                        }
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => {
                    return Err(McpError::Spec(format!(
                        "a backslash ends \"{line}\" with nothing to escape"
                    )));
                }
            },
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        split_command(s).unwrap()
    }

    #[test]
    fn blanks_separate_words_and_runs_of_them_count_once() {
        assert_eq!(split("  a  b\tc\n"), ["a", "b", "c"]);
        assert!(split("   ").is_empty());
    }

    #[test]
    fn single_quotes_keep_everything_literally() {
        assert_eq!(
            split(r#"echo 'a b' '$HOME' 'x\y' '"'"#),
            ["echo", "a b", "$HOME", r"x\y", "\""]
        );
        assert_eq!(split("''"), [""]);
    }

    #[test]
    fn double_quotes_escape_only_what_a_shell_escapes() {
        assert_eq!(split(r#""a \"b\" \\ \$x \n""#), [r#"a "b" \ $x \n"#]);
        assert_eq!(split(r#""it's""#), ["it's"]);
    }

    #[test]
    fn quotes_join_the_word_around_them() {
        assert_eq!(split(r#"--name='a b'"c d"e"#), ["--name=a bc de"]);
    }

    #[test]
    fn a_backslash_outside_quotes_keeps_the_next_character() {
        assert_eq!(split(r"a\ b c\\d \'"), ["a b", r"c\d", "'"]);
        assert_eq!(split("a \\\nb"), ["a", "b"]);
    }

    #[test]
    fn nothing_is_expanded() {
        assert_eq!(
            split("ls * ~ $HOME `x` ;"),
            ["ls", "*", "~", "$HOME", "`x`", ";"]
        );
    }

    #[test]
    fn unbalanced_quotes_and_a_trailing_backslash_are_clear_errors() {
        for bad in ["echo 'a", "echo \"a", r#"echo "a\"#, "echo a\\"] {
            let e = split_command(bad).unwrap_err().to_string();
            assert!(
                e.contains("unclosed") || e.contains("backslash"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_stdio_spec_needs_a_command() {
        assert!(McpServerSpec::stdio("  ").is_err());
        let s = McpServerSpec::stdio("/usr/bin/python3 -m 'my server'").unwrap();
        assert_eq!(s.fallback_name(), "python3");
        match s {
            McpServerSpec::Stdio { argv, .. } => {
                assert_eq!(argv, ["/usr/bin/python3", "-m", "my server"])
            }
            _ => panic!("not stdio"),
        }
    }

    #[test]
    fn an_http_spec_takes_an_optional_token_variable() {
        let s = McpServerSpec::http("http://127.0.0.1:9/mcp=MCP_TOKEN").unwrap();
        assert_eq!(
            s,
            McpServerSpec::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                token_env: Some("MCP_TOKEN".into())
            }
        );
        assert_eq!(s.fallback_name(), "127.0.0.1:9");
        assert_eq!(
            s.to_string(),
            "http://127.0.0.1:9/mcp (token from $MCP_TOKEN)"
        );
        // A query value stays in the URL unless it reads as a variable name; a trailing `=`
        // keeps one that would.
        let q = McpServerSpec::http("https://h/mcp?k=v").unwrap();
        assert_eq!(
            q,
            McpServerSpec::Http {
                url: "https://h/mcp?k=v".into(),
                token_env: None
            }
        );
        let kept = McpServerSpec::http("https://h/mcp?k=ABC=").unwrap();
        assert_eq!(
            kept,
            McpServerSpec::Http {
                url: "https://h/mcp?k=ABC".into(),
                token_env: None
            }
        );
        for bad in ["127.0.0.1:9/mcp", "ftp://h/x", "http://", "http:///x"] {
            assert!(McpServerSpec::http(bad).is_err(), "{bad}");
        }
    }
}

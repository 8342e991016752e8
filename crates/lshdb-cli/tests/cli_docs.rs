//! `docs/cli.md` agrees with `--help`: every long flag a command's help
//! lists is described in that command's section, with the default the help
//! gives on the same line, and the exit codes of `lshdb --help` are those of
//! the exit-code table.

mod cli_support;

use cli_support::Cli;
use std::collections::BTreeSet;

const COMMANDS: [&str; 19] = [
    "scan", "dedup", "create", "add", "query", "pairs", "groups", "clusters", "get", "remove",
    "expire", "stats", "check", "compact", "rebuild", "export", "import", "tune", "inspect",
];

fn docs() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md"))
        .expect("docs/cli.md")
}

/// The text of the section headed `## name`, up to the next `## `.
fn section<'a>(docs: &'a str, name: &str) -> &'a str {
    let heading = format!("\n## {name}\n");
    let start = docs
        .find(&heading)
        .unwrap_or_else(|| panic!("docs/cli.md has no section `## {name}`"));
    let rest = &docs[start + heading.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// Whether `text` mentions `--flag` as a whole word.
fn mentions(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(at, _)| {
        !text[at + flag.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// (flag, default) of every long option in a help text's `Options:`.
fn options(help: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line == "Options:" {
            inside = true;
            continue;
        }
        if inside && !line.starts_with(' ') {
            break;
        }
        if !inside {
            continue;
        }
        let Some(at) = line.find("--") else { continue };
        let flag: String = line[at..]
            .chars()
            .take_while(|c| *c == '-' || c.is_ascii_alphanumeric())
            .collect();
        if flag == "--help" || flag == "--version" {
            continue;
        }
        let default = line
            .split("[default: ")
            .nth(1)
            .map(|rest| rest.split(']').next().unwrap_or_default().to_owned());
        out.push((flag, default));
    }
    out
}

#[test]
fn every_flag_of_every_help_is_in_its_section_with_its_default() {
    let cli = Cli::new();
    let docs = docs();
    let mut missing = Vec::new();
    for command in COMMANDS {
        let help = cli.run(&[command, "--help"]).ok().stdout;
        let section = section(&docs, command);
        assert!(help.contains("\nOptions:\n"), "{command}: {help}");
        for (flag, default) in options(&help) {
            if !mentions(section, &flag) {
                missing.push(format!("{command}: {flag} is not described"));
                continue;
            }
            if let Some(default) = default {
                let stated = section
                    .lines()
                    .any(|line| mentions(line, &flag) && line.contains(default.as_str()));
                if !stated {
                    missing.push(format!(
                        "{command}: the default of {flag} ({default}) is not on a line with the flag"
                    ));
                }
            }
        }
    }
    assert!(missing.is_empty(), "docs/cli.md:\n{}", missing.join("\n"));
}

#[test]
fn exit_codes_of_the_help_are_those_of_the_table() {
    let cli = Cli::new();
    let help = cli.run(&["--help"]).ok().stdout;
    let listed = help
        .split("Exit codes: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .expect("an exit-code line in lshdb --help");
    let from_help: BTreeSet<u32> = listed
        .split(", ")
        .map(|item| {
            item.split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{item:?} in {listed:?}"))
        })
        .collect();
    let docs = docs();
    let table = section(&docs, "Exit codes");
    let from_docs: BTreeSet<u32> = table
        .lines()
        .filter_map(|line| line.strip_prefix("| "))
        .filter_map(|rest| rest.split(' ').next())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert_eq!(from_help, from_docs, "lshdb --help: {listed}");
}

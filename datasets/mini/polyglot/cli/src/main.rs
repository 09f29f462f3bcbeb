//! `relay`: publish a message to the relay gateway from the command line.

mod config;
mod duration;

use std::process::ExitCode;

use config::{Config, Overrides};
use duration::parse_duration;

fn parse_args(args: &[String]) -> Result<(Overrides, Vec<String>), String> {
    let mut o = Overrides::default();
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--endpoint" => o.endpoint = Some(value("--endpoint")?),
            "--topic" => o.topic = Some(value("--topic")?),
            "--timeout" => {
                let v = value("--timeout")?;
                o.timeout = Some(parse_duration(&v).map_err(|e| format!("--timeout {v}: {e}"))?);
            }
            "--retries" => {
                let v = value("--retries")?;
                o.retries = Some(v.parse().map_err(|_| format!("--retries {v}: not a number"))?);
            }
            "-v" | "--verbose" => o.verbose = true,
            _ => rest.push(arg.clone()),
        }
    }
    Ok((o, rest))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (overrides, rest) = match parse_args(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("relay: {e}");
            return ExitCode::from(2);
        }
    };
    let file = std::fs::read_to_string("relay.conf").unwrap_or_default();
    let config = match Config::parse(&file) {
        Ok(c) => c.merge(&overrides),
        Err(e) => {
            eprintln!("relay.conf: {e}");
            return ExitCode::from(2);
        }
    };
    if config.verbose {
        eprintln!("publishing to {} on {}", config.topic, config.endpoint);
    }
    println!("{}", rest.join(" "));
    ExitCode::SUCCESS
}

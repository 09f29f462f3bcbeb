//! The CLI's configuration: defaults, a config file and command-line overrides.

use std::time::Duration;

use crate::duration::{parse_duration, DurationError};

/// Settings of the relay CLI.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub endpoint: String,
    pub topic: String,
    pub timeout: Duration,
    pub retries: u32,
    pub verbose: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            endpoint: "http://127.0.0.1:8080".to_string(),
            topic: "default".to_string(),
            timeout: Duration::from_secs(10),
            retries: 3,
            verbose: false,
        }
    }
}

/// Settings given on the command line; `None` leaves the configured value.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub endpoint: Option<String>,
    pub topic: Option<String>,
    pub timeout: Option<Duration>,
    pub retries: Option<u32>,
    pub verbose: bool,
}

impl Config {
    /// Reads `key = value` lines; `#` starts a comment.
    pub fn parse(text: &str) -> Result<Config, String> {
        let mut config = Config::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| format!("line {}: expected key = value", n + 1))?;
            let value = value.trim().to_string();
            match key.trim() {
                "endpoint" => config.endpoint = value,
                "topic" => config.topic = value,
                "timeout" => {
                    config.timeout = parse_duration(&value)
                        .map_err(|e: DurationError| format!("line {}: {e}", n + 1))?
                }
                "retries" => {
                    config.retries = value
                        .parse()
                        .map_err(|_| format!("line {}: retries must be a number", n + 1))?
                }
                "verbose" => config.verbose = value == "true",
                other => return Err(format!("line {}: unknown key {other}", n + 1)),
            }
        }
        Ok(config)
    }

    /// The configuration with the command line's overrides applied.
    pub fn merge(mut self, o: &Overrides) -> Config {
        if let Some(endpoint) = &o.endpoint {
            self.endpoint = endpoint.clone();
        }
        if let Some(topic) = &o.topic {
            self.topic = topic.clone();
        }
        if let Some(timeout) = o.timeout {
            self.timeout = timeout;
        }
        if let Some(retries) = o.retries {
            if retries > 0 {
                self.retries = retries;
            }
        }
        self.verbose |= o.verbose;
        self
    }
}

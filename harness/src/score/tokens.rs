//! Token counting for cost metrics: what a tool's responses and schemas cost an agent.

use std::fmt;
use std::str::FromStr;

use tiktoken_rs::CoreBPE;

/// The tokenizers the harness can count with (OpenAI's BPEs, via tiktoken-rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tokenizer {
    /// GPT-4 / GPT-3.5's BPE; the default, as most published token budgets use it.
    #[default]
    Cl100kBase,
    /// GPT-4o's BPE.
    O200kBase,
}

impl Tokenizer {
    /// The tokenizer's canonical name, as accepted by `--tokenizer`.
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Cl100kBase => "cl100k_base",
            Tokenizer::O200kBase => "o200k_base",
        }
    }

    fn bpe(self) -> &'static CoreBPE {
        match self {
            Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
        }
    }

    /// Number of tokens in `text`; special-token markers are counted as plain text.
    pub fn count(self, text: &str) -> usize {
        self.bpe().encode_ordinary(text).len()
    }
}

impl fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tokenizer {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cl100k_base" | "cl100k" => Ok(Tokenizer::Cl100kBase),
            "o200k_base" | "o200k" => Ok(Tokenizer::O200kBase),
            other => Err(format!(
                "unknown tokenizer '{other}': use cl100k_base (default) or o200k_base"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        // "hello world" is two tokens in both BPEs.
        assert_eq!(Tokenizer::Cl100kBase.count("hello world"), 2);
        assert_eq!(Tokenizer::O200kBase.count("hello world"), 2);
        assert_eq!(Tokenizer::Cl100kBase.count(""), 0);
        // Special-token text is not special here.
        assert!(Tokenizer::Cl100kBase.count("<|endoftext|>") > 1);
    }

    #[test]
    fn parses_names() {
        assert_eq!("o200k_base".parse::<Tokenizer>(), Ok(Tokenizer::O200kBase));
        let err = "gpt2".parse::<Tokenizer>().unwrap_err();
        assert!(err.contains("cl100k_base"), "{err}");
    }
}

//! Stage 5, scoring: what was right and what it cost.
//!
//! - [`gold`]: the gold locations derived from an instance's patch (LocAgent's rules;
//!   Python and every `navbench-lang` language).
//! - [`metrics`]: LocAgent's Acc@k, recall, NDCG and MAP per level.
//! - [`tokens`]: response and schema tokens, the cost side.
//! - [`agreement`]: derived gold against a dataset's own (`navbench gold`).

pub mod agreement;
pub mod gold;
pub mod metrics;
pub mod tokens;

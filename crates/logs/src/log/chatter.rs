//! What ordinary output reveals: sizes the script printed (`num_classes = 5`,
//! `Vocab size: 10000`) and signs that training diverged (a loss or gradient norm that
//! turned NaN or inf).

use regex::Regex;
use std::sync::OnceLock;

/// A size the log states, normalised to one of a few keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatedSize {
    pub key: &'static str,
    pub value: i64,
    pub log_line: u64,
    pub text: String,
}

fn size_pattern() -> &'static Regex {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| {
        Regex::new(
            r"(?i)\b(?P<key>num[_ ]?classes|n[_ ]?classes|num[_ ]?labels|n[_ ]?labels|vocab(?:ulary)?(?:[_ ]?size)?|n[_ ]?vocab|num[_ ]?embeddings|max[_ ]?position[_ ]?embeddings|max[_ ]?positions)\b\s*(?:=|:|is)?\s*(?P<value>\d{1,9})\b",
        )
        .unwrap()
    })
}

/// Sizes stated on a line.
pub fn stated_sizes(text: &str, log_line: u64) -> Vec<StatedSize> {
    size_pattern()
        .captures_iter(text)
        .filter_map(|c| {
            let key = normalise_key(&c["key"])?;
            Some(StatedSize { key, value: c["value"].parse().ok()?, log_line, text: text.trim().to_string() })
        })
        .collect()
}

fn normalise_key(raw: &str) -> Option<&'static str> {
    let k: String = raw.to_ascii_lowercase().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    Some(match k.as_str() {
        "numclasses" | "nclasses" => "num_classes",
        "numlabels" | "nlabels" => "num_labels",
        "vocab" | "vocabulary" | "vocabsize" | "vocabularysize" | "nvocab" => "vocab_size",
        "numembeddings" => "num_embeddings",
        "maxpositionembeddings" | "maxpositions" => "max_position_embeddings",
        _ => return None,
    })
}

fn divergence_pattern() -> &'static Regex {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| {
        Regex::new(
            r"(?i)\b(?P<metric>[\w/.]*(?:loss|grad|norm|nll|ppl|perplexity|entropy|kl|reward|value)[\w/.]*)\b['\x22]?\s*[=:]?\s*(?:tensor\()?(?P<value>[-+]?(?:nan|inf(?:inity)?)|[-+]?\d+(?:\.\d+)?e\+?(?:[2-9]\d|\d{3}))\b",
        )
        .unwrap()
    })
}

/// A metric printed as NaN or inf, or as a number of 1e20 or more: training diverged.
pub fn divergence(text: &str) -> Option<(String, String)> {
    let c = divergence_pattern().captures(text)?;
    Some((c["metric"].to_string(), c["value"].to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let s = stated_sizes("Model: IntentCNN(vocab=12000, emb=300, num_classes=7)", 3);
        let found: Vec<_> = s.iter().map(|s| (s.key, s.value)).collect();
        assert_eq!(found, vec![("vocab_size", 12000), ("num_classes", 7)]);
        assert_eq!(stated_sizes("Vocab size: 10000", 1)[0].value, 10000);
        assert_eq!(stated_sizes("Loading tokenizer gpt2 (vocab 50257)", 1)[0].key, "vocab_size");
        assert_eq!(stated_sizes("num_classes = 5", 1)[0].key, "num_classes");
        assert!(stated_sizes("epoch 5 loss 2.0", 1).is_empty());
    }

    #[test]
    fn diverging_metrics() {
        assert_eq!(
            divergence("step    4 | loss_click 88.6719 | loss_value 9.036e+27 | grad_norm inf"),
            Some(("loss_value".into(), "9.036e+27".into()))
        );
        assert_eq!(divergence("{'loss': nan, 'lr': 1e-05}").map(|d| d.1), Some("nan".into()));
        assert_eq!(divergence("entropy=nan value_loss=nan"), Some(("entropy".into(), "nan".into())));
        assert!(divergence("epoch 3 loss 0.512 grad_norm 1.2e+01").is_none());
        assert!(divergence("loading info from inference.json").is_none());
    }
}

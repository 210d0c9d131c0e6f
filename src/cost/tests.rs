//! Cost rules, checked against sums worked out by hand from the published rates in
//! `prices.json` (litellm 1.110.2).

use super::*;

fn usage(model: &str, input: u64, read: u64, write: u64, write_1h: Option<u64>, output: u64) -> Usage {
    Usage {
        input_tokens: Some(input),
        cache_read_tokens: Some(read),
        cache_write_tokens: Some(write),
        cache_write_1h_tokens: write_1h,
        output_tokens: Some(output),
        model: Some(model.to_owned()),
        ..Usage::default()
    }
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-12)
}

#[test]
fn one_hour_cache_writes_are_priced_at_their_own_rate() {
    let prices = Prices::embedded();
    // claude-opus-4-6: input $5/M, output $25/M, cache read $0.50/M, 5-minute write $6.25/M,
    // 1-hour write $10/M.
    // 10 × 5e-6 + 1 000 × 5e-7 + 1 000 × 6.25e-6 + 2 000 × 1e-5 + 500 × 2.5e-5
    //   = 0.00005 + 0.0005 + 0.00625 + 0.02 + 0.0125 = 0.0393
    let split = usage("claude-opus-4-6", 10, 1000, 3000, Some(2000), 500);
    assert!(close(prices.cost(&split), 0.0393), "{:?}", prices.cost(&split));
    // Without the split, all 3 000 writes at the 5-minute rate: 0.00005 + 0.0005 + 0.01875 + 0.0125.
    let unsplit = usage("claude-opus-4-6", 10, 1000, 3000, None, 500);
    assert!(close(prices.cost(&unsplit), 0.0318), "{:?}", prices.cost(&unsplit));
}

#[test]
fn a_request_above_the_long_context_threshold_pays_long_rates_on_all_its_tokens() {
    let prices = Prices::embedded();
    // claude-sonnet-4-20250514: $3 / $15 / read $0.30 / write $3.75 per million up to 200K input
    // tokens; $6 / $22.50 / $0.60 / $7.50 above.
    // At 200 000 input tokens exactly: 1 000 × 3e-6 + 150 000 × 3e-7 + 49 000 × 3.75e-6 + 1 000 × 1.5e-5
    //   = 0.003 + 0.045 + 0.18375 + 0.015 = 0.24675
    let at = usage("claude-sonnet-4-20250514", 1000, 150_000, 49_000, None, 1000);
    assert!(close(prices.cost(&at), 0.24675), "{:?}", prices.cost(&at));
    // One token more: 1 000 × 6e-6 + 150 000 × 6e-7 + 49 001 × 7.5e-6 + 1 000 × 2.25e-5
    //   = 0.006 + 0.09 + 0.3675075 + 0.0225 = 0.4860075
    let above = usage("claude-sonnet-4-20250514", 1000, 150_000, 49_001, None, 1000);
    assert!(close(prices.cost(&above), 0.4860075), "{:?}", prices.cost(&above));
}

#[test]
fn codex_cached_input_is_billed_at_the_cached_rate_and_reasoning_as_output() {
    let prices = Prices::embedded();
    // gpt-5.3-codex: input $1.75/M, cached input $0.175/M, output $14/M. A Codex row of 10 000
    // input tokens of which 8 000 cached, 600 output of which 400 reasoning:
    // 2 000 × 1.75e-6 + 8 000 × 1.75e-7 + 600 × 1.4e-5 = 0.0035 + 0.0014 + 0.0084 = 0.0133
    let mut row = usage("gpt-5.3-codex", 2000, 8000, 0, None, 600);
    row.cache_write_tokens = None;
    row.reasoning_tokens = Some(400);
    assert!(close(prices.cost(&row), 0.0133), "{:?}", prices.cost(&row));
    row.model = Some("openai/gpt-5.3-codex".into());
    assert!(close(prices.cost(&row), 0.0133), "a provider prefix names the same model");
}

#[test]
fn an_unknown_model_has_no_cost_and_is_named() {
    let prices = Prices::with_file(Path::new("corpus/prices/extra.json")).unwrap();
    let unknown = usage("claude-made-up-9", 10, 0, 0, None, 10);
    assert_eq!(prices.cost(&unknown), None);
    assert_eq!(prices.cost(&unknown), None);
    assert_eq!(prices.unpriced(), BTreeMap::from([("claude-made-up-9".to_owned(), 2)]));
    let no_model = Usage { model: None, ..unknown };
    assert_eq!(prices.cost(&no_model), None);
}

#[test]
fn a_price_file_adds_and_replaces_models() {
    let prices = Prices::with_file(Path::new("corpus/prices/extra.json")).unwrap();
    // corpus/prices/extra.json: local-coder at $1 / $2 per million; gpt-5.3-codex replaced by
    // $2 / $20 per million without a cached rate (so cached input pays the input rate).
    let local = usage("local-coder", 1_000_000, 0, 0, None, 500_000);
    assert!(close(prices.cost(&local), 2.0), "{:?}", prices.cost(&local));
    let codex = usage("gpt-5.3-codex", 1000, 1000, 0, None, 1000);
    // 1 000 × 2e-6 + 1 000 × 2e-6 + 1 000 × 2e-5 = 0.024
    assert!(close(prices.cost(&codex), 0.024), "{:?}", prices.cost(&codex));
    assert!(prices.get("claude-opus-4-6").is_some(), "embedded models stay");
    assert_eq!(prices.files(), ["corpus/prices/extra.json"]);
}

#[test]
fn a_file_that_is_not_a_price_file_is_an_error_naming_it() {
    let e = Prices::with_file(Path::new("corpus/claude/hostile-text.jsonl")).unwrap_err();
    assert!(e.to_string().contains("hostile-text.jsonl is not a price file"), "{e}");
    let e = Prices::with_file(Path::new("corpus/no-such-prices.json")).unwrap_err();
    assert!(matches!(e, PriceError::Unreadable { .. }), "{e}");
}

#[test]
fn the_embedded_table_names_its_source() {
    let prices = Prices::embedded();
    let source = prices.source().unwrap();
    assert_eq!((source.package.as_str(), source.sha256.len()), ("litellm", 64));
    for model in ["claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "gpt-5.3-codex"] {
        assert!(prices.get(model).is_some(), "{model}");
    }
}

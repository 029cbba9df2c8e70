//! Distils the static model from the installed MiniLM into
//! `<models>/static` (where `trine_embed::load` looks for it). Slow (about a
//! minute or more), so ignored by default; run it with
//! `cargo test -p trine-embed --test distill -- --ignored --nocapture`.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

mod common;

use std::time::Instant;

use common::{dot, minilm, models_dir};
use trine_embed::distill::{DEFAULT_DIMS, distill};
use trine_embed::{Embedder, StaticEmbedder};

#[test]
#[ignore = "slow: distils the whole vocabulary; run by hand"]
fn distil_static_model_from_minilm() {
    let model = minilm();
    let out = models_dir().join(StaticEmbedder::DIR);
    let start = Instant::now();
    let progress = |done: usize, total: usize| {
        if done == total || done % 8192 < 1024 {
            println!("distil: {done}/{total} tokens, {:?}", start.elapsed());
        }
    };
    distill(model, &out, DEFAULT_DIMS, &progress).expect("distil");
    println!("distil: wrote {} in {:?}", out.display(), start.elapsed());

    let static_model = StaticEmbedder::load(&out).expect("load distilled model");
    assert_eq!(static_model.dim(), DEFAULT_DIMS);
    let texts = [
        "The new movie is awesome",
        "The new movie is so great",
        "A man is eating food.",
        "A man is eating a piece of bread.",
        "The stock market fell sharply today.",
    ];
    let v = static_model.embed_sync(&texts).expect("embed");
    let related = dot(&v[0], &v[1]);
    let related2 = dot(&v[2], &v[3]);
    let unrelated = dot(&v[0], &v[4]);
    let unrelated2 = dot(&v[2], &v[4]);
    println!(
        "static cosines: movie/movie {related:.3}, eat/eat {related2:.3}, movie/stocks {unrelated:.3}, eat/stocks {unrelated2:.3}"
    );
    assert!(related > unrelated && related2 > unrelated2);

    let start = Instant::now();
    let many: Vec<&str> = texts.iter().cycle().take(10_000).copied().collect();
    static_model.embed_sync(&many).expect("embed");
    println!(
        "static: {:?} per text over 10000 texts",
        start.elapsed() / 10_000
    );
}

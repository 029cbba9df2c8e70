//! The messages around a hit (docs/search.md, "Threads"): a memory of a
//! thread is ranked by its own text and, at a lower weight, by its window —
//! itself and the messages of its thread whose `seq` lies within `window`
//! of its own, scored by BM25 as one text. The evidence for a question often
//! sits a message or two away from the one that shares its words (the answer
//! to a question, the reply that names the place).
//!
//! The windows are read around the best hits only ([`Context::top`]):
//! [`spans`] says which stretches of which threads hold every message whose
//! window touches one of them, and [`widen`] rescores the list from what was
//! read. A memory that names no thread, or no `seq`, stands alone.
//!
//! One rule keeps the evidence first: a message whose own text holds none
//! of the query's terms (it only borrows them from its neighbours) ranks
//! below the best message of its window that holds them.

use std::collections::{BTreeMap, HashMap};

use uuid::Uuid;

use crate::bm25::{self, Bm25Params, CorpusStats, TermCounts};
use crate::model::Span;

/// How the messages around a hit count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Context {
    /// Messages on each side of a message that make its window (0: off).
    pub window: u64,
    /// The window's weight beside the message's own score, once both are
    /// on one scale (the window's best scores as the list's best).
    pub weight: f64,
    /// The windows are read around this many of the best hits.
    pub top: usize,
}

impl Default for Context {
    fn default() -> Self {
        // The lexical channel's default, chosen with common words left out
        // on the chats' tune halves (docs/search.md, "Threads"): two
        // messages each side at the message's own weight lifted the hybrid
        // most with both embedders there.
        Self {
            window: 2,
            weight: 1.0,
            top: 32,
        }
    }
}

impl Context {
    /// Each channel's default: the lexical channel's [`Context::default`],
    /// the semantic channel's off (docs/search.md, "Threads", says why).
    pub fn channels() -> (Self, Self) {
        let off = Self {
            weight: 0.0,
            ..Self::default()
        };
        (Self::default(), off)
    }
}

/// `[context]`: the messages around a hit (docs/search.md, "Threads"): a
/// thread's message is ranked by its own text and, at these weights, by its
/// window in each channel.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Messages on each side of a thread's message that make its window,
    /// by `seq`; 0: each message alone.
    pub window: u64,
    /// The windows are read around this many of each channel's best hits.
    pub top: usize,
    /// The window's weight beside a message's own BM25 in the lexical
    /// channel; 0: off there.
    pub lexical: f64,
    /// The window's weight beside a message's own similarity in the
    /// semantic channel; 0: off there.
    pub semantic: f64,
}

impl Default for Settings {
    fn default() -> Self {
        let (lexical, semantic) = Context::channels();
        Self {
            window: lexical.window,
            top: lexical.top,
            lexical: lexical.weight,
            semantic: semantic.weight,
        }
    }
}

impl Settings {
    /// The lexical channel's context and the semantic channel's.
    pub fn channels(&self) -> (Context, Context) {
        let at = |weight| Context {
            window: self.window,
            weight,
            top: self.top,
        };
        (at(self.lexical), at(self.semantic))
    }
}

/// The widest window a setting may ask.
pub const MAX_WINDOW: u64 = 8;
/// The most hits windows may be read around.
pub const MAX_TOP: usize = 256;

impl Context {
    /// Refuses a window wider than [`MAX_WINDOW`], more than [`MAX_TOP`]
    /// hits, or a weight that is not a finite non-negative number.
    pub fn check(&self) -> Result<(), String> {
        if self.window > MAX_WINDOW {
            return Err(format!(
                "context window {} is wider than the {MAX_WINDOW} allowed",
                self.window
            ));
        }
        if self.top > MAX_TOP {
            return Err(format!(
                "context top {} is more than the {MAX_TOP} allowed",
                self.top
            ));
        }
        if !self.weight.is_finite() || self.weight < 0.0 {
            return Err(format!(
                "context weight {} is not a finite non-negative number",
                self.weight
            ));
        }
        Ok(())
    }

    /// Off: no window, no weight, or no hit to read around.
    pub fn is_off(&self) -> bool {
        self.window == 0 || self.weight == 0.0 || self.top == 0
    }
}

/// A message's place: its thread and its `seq` there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    pub thread: String,
    pub seq: u64,
}

impl Place {
    /// A memory's place, where it names both its thread and its `seq`.
    pub fn of(memory: &crate::model::Memory) -> Option<Self> {
        Some(Self {
            thread: memory.thread.clone()?,
            seq: memory.seq?,
        })
    }
}

/// The most messages a read of `spans` asks for: twice the places its
/// stretches cover (two messages may share a `seq`), at most
/// [`MAX_SPAN_READ`]. A stretch merged from several places covers more
/// than one place's `4 · window + 1`: each is counted whole.
pub fn read_limit(spans: &[Span]) -> usize {
    spans
        .iter()
        .map(|s| {
            usize::try_from(s.to.saturating_sub(s.from).saturating_add(1)).unwrap_or(usize::MAX)
        })
        .fold(0usize, usize::saturating_add)
        .saturating_mul(2)
        .min(MAX_SPAN_READ)
}

/// The most messages one read of the spans returns.
pub const MAX_SPAN_READ: usize = 4096;

/// The stretches of threads to read so that the window of every message
/// within `window` of a hit's place is whole: `2 · window` on each side of
/// each place, the overlapping ones merged, in thread order.
pub fn spans<'a>(places: impl IntoIterator<Item = &'a Place>, window: u64) -> Vec<Span> {
    let reach = window.saturating_mul(2);
    let mut by_thread: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    for p in places {
        let from = p.seq.saturating_sub(reach);
        let to = p.seq.saturating_add(reach);
        by_thread.entry(&p.thread).or_default().push((from, to));
    }
    let mut out = Vec::new();
    for (thread, mut ranges) in by_thread {
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (from, to) in ranges {
            match merged.last_mut() {
                Some(last) if from <= last.1.saturating_add(1) => last.1 = last.1.max(to),
                _ => merged.push((from, to)),
            }
        }
        out.extend(merged.into_iter().map(|(from, to)| Span {
            thread: thread.to_string(),
            from,
            to,
        }));
    }
    out
}

/// A message read in a span: its id, its place and its own counts of the
/// query's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub id: Uuid,
    pub place: Place,
    pub counts: TermCounts,
}

/// What the window scores read: the query's terms (as the counts are in
/// order) and their statistics within the filters, BM25's parameters.
#[derive(Debug, Clone, Copy)]
pub struct Scoring<'a> {
    pub terms: &'a [String],
    pub stats: &'a CorpusStats,
    pub params: Bm25Params,
}

/// The list rescored with the windows: `own` is the channel's list (id and
/// score, any order), `tops` the places of its best hits, `members` every
/// message of the spans read around them ([`spans`]). Each message within
/// `window` of a top place scores
/// `own + weight · window_score · (best own / best window score)`;
/// a message holding none of the terms, at most just below the best
/// holder of its window. Messages of the spans that were not in `own` join
/// the list; the rest of `own` keeps its score. Best first, ties by id.
pub fn widen(
    own: &[(Uuid, f64)],
    tops: &[Place],
    members: &[Member],
    scoring: Scoring<'_>,
    context: Context,
) -> Vec<(Uuid, f64)> {
    let mut scores: HashMap<Uuid, f64> = own.iter().copied().collect();
    let best_own = own.iter().map(|(_, s)| *s).fold(0.0, f64::max);
    if context.is_off() || tops.is_empty() || members.is_empty() || best_own <= 0.0 {
        return sorted(scores);
    }
    let threads = by_thread(members);
    let windowed = windowed(&threads, tops, context.window);
    if windowed.is_empty() {
        return sorted(scores);
    }
    // Each windowed message's window, as one text.
    let windows: Vec<(&Member, TermCounts)> = windowed
        .iter()
        .map(|m| {
            (
                *m,
                window_counts(&threads[m.place.thread.as_str()], m, context.window),
            )
        })
        .collect();
    let avg_len = windows.iter().map(|(_, c)| c.len as f64).sum::<f64>() / windows.len() as f64;
    let stats = CorpusStats {
        avg_len,
        ..scoring.stats.clone()
    };
    let window_scores: Vec<f64> = windows
        .iter()
        .map(|(_, c)| bm25::score_counts(scoring.terms, c, &stats, scoring.params))
        .collect();
    let best_window = window_scores.iter().copied().fold(0.0, f64::max);
    if best_window <= 0.0 {
        return sorted(scores);
    }
    let scale = context.weight * best_own / best_window;
    // Holders first: a borrower's bound is its holders' final score.
    for ((m, _), w) in windows.iter().zip(&window_scores) {
        if holds(m) {
            let own = scores.get(&m.id).copied().unwrap_or(0.0);
            scores.insert(m.id, own + w * scale);
        }
    }
    for ((m, _), w) in windows.iter().zip(&window_scores) {
        if holds(m) {
            continue;
        }
        let own = scores.get(&m.id).copied().unwrap_or(0.0);
        let mut score = own + w * scale;
        let best_holder = neighbours(&threads[m.place.thread.as_str()], m, context.window)
            .filter(|n| holds(n))
            .filter_map(|n| scores.get(&n.id).copied())
            .fold(None, |best: Option<f64>, s| {
                Some(best.map_or(s, |b| b.max(s)))
            });
        if let Some(bound) = best_holder {
            score = score.min(below(bound));
        }
        if score > 0.0 {
            scores.insert(m.id, score);
        }
    }
    sorted(scores)
}

/// A message of a span read with its similarity to the query.
#[derive(Debug, Clone, PartialEq)]
pub struct Near {
    pub id: Uuid,
    pub place: Place,
    pub similarity: f64,
}

/// The semantic list blended with the windows: `own` is the channel's
/// list (id and similarity), `tops` the places of its best hits, `near`
/// every message of the spans read around them with its similarity. Each
/// message within `window` of a top place scores
/// `(similarity + weight · mean similarity of its window) / (1 + weight)`
/// (a similarity still); the rest of `own` keeps its own; messages of the
/// spans that were not in `own` join it. Best first, ties by id.
pub fn blend(
    own: &[(Uuid, f64)],
    tops: &[Place],
    near: &[Near],
    context: Context,
) -> Vec<(Uuid, f64)> {
    let mut scores: HashMap<Uuid, f64> = own.iter().copied().collect();
    if context.is_off() || tops.is_empty() || near.is_empty() {
        return sorted(scores);
    }
    let mut threads: HashMap<&str, Vec<&Near>> = HashMap::new();
    for n in near {
        threads.entry(n.place.thread.as_str()).or_default().push(n);
    }
    let mut seen = std::collections::HashSet::new();
    for top in tops {
        let Some(list) = threads.get(top.thread.as_str()) else {
            continue;
        };
        for n in list
            .iter()
            .filter(|n| n.place.seq.abs_diff(top.seq) <= context.window)
        {
            if !seen.insert(n.id) {
                continue;
            }
            let window: Vec<f64> = list
                .iter()
                .filter(|m| m.place.seq.abs_diff(n.place.seq) <= context.window)
                .map(|m| m.similarity)
                .collect();
            let mean = window.iter().sum::<f64>() / window.len().max(1) as f64;
            let score = (n.similarity + context.weight * mean) / (1.0 + context.weight);
            scores.insert(n.id, score);
        }
    }
    sorted(scores)
}

/// The step a borrower stays below its best holder, relative to it.
const BELOW: f64 = 1e-3;

fn below(score: f64) -> f64 {
    score - score.abs() * BELOW
}

/// The message's own text holds one of the terms.
fn holds(m: &Member) -> bool {
    m.counts.tf.iter().any(|tf| *tf > 0)
}

/// The members of each thread, by `seq` then id.
fn by_thread(members: &[Member]) -> HashMap<&str, Vec<&Member>> {
    let mut threads: HashMap<&str, Vec<&Member>> = HashMap::new();
    for m in members {
        threads.entry(m.place.thread.as_str()).or_default().push(m);
    }
    for list in threads.values_mut() {
        list.sort_by(|a, b| a.place.seq.cmp(&b.place.seq).then(a.id.cmp(&b.id)));
        list.dedup_by_key(|m| m.id);
    }
    threads
}

/// The members within `window` of a top place (each once).
fn windowed<'a>(
    threads: &HashMap<&str, Vec<&'a Member>>,
    tops: &[Place],
    window: u64,
) -> Vec<&'a Member> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for top in tops {
        let Some(list) = threads.get(top.thread.as_str()) else {
            continue;
        };
        for m in list
            .iter()
            .filter(|m| m.place.seq.abs_diff(top.seq) <= window)
        {
            if seen.insert(m.id) {
                out.push(*m);
            }
        }
    }
    out
}

/// The members of `m`'s window other than `m`.
fn neighbours<'a>(
    list: &'a [&'a Member],
    m: &'a Member,
    window: u64,
) -> impl Iterator<Item = &'a Member> + 'a {
    list.iter()
        .copied()
        .filter(move |n| n.id != m.id && n.place.seq.abs_diff(m.place.seq) <= window)
}

/// The counts of `m`'s window as one text: its own and its neighbours'.
fn window_counts(list: &[&Member], m: &Member, window: u64) -> TermCounts {
    let mut total = m.counts.clone();
    for n in neighbours(list, m, window) {
        for (t, tf) in total.tf.iter_mut().zip(&n.counts.tf) {
            *t = t.saturating_add(*tf);
        }
        total.len = total.len.saturating_add(n.counts.len);
    }
    total
}

fn sorted(scores: HashMap<Uuid, f64>) -> Vec<(Uuid, f64)> {
    let mut list: Vec<(Uuid, f64)> = scores.into_iter().collect();
    list.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window the tables were written for (one message each side at
    /// half weight), whatever the default.
    const ON: Context = Context {
        window: 1,
        weight: 0.5,
        top: 32,
    };

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    fn place(thread: &str, seq: u64) -> Place {
        Place {
            thread: thread.into(),
            seq,
        }
    }

    fn span(thread: &str, from: u64, to: u64) -> Span {
        Span {
            thread: thread.into(),
            from,
            to,
        }
    }

    #[test]
    fn spans_reach_twice_the_window_and_merge() {
        let cases: Vec<(Vec<Place>, u64, Vec<Span>)> = vec![
            (vec![], 1, vec![]),
            (vec![place("a", 10)], 1, vec![span("a", 8, 12)]),
            (vec![place("a", 10)], 2, vec![span("a", 6, 14)]),
            // At the thread's start, and at the largest seq.
            (vec![place("a", 1)], 1, vec![span("a", 0, 3)]),
            (
                vec![place("a", u64::MAX)],
                1,
                vec![span("a", u64::MAX - 2, u64::MAX)],
            ),
            // Overlapping and touching stretches merge; others do not.
            (
                vec![
                    place("a", 10),
                    place("a", 13),
                    place("a", 18),
                    place("a", 30),
                ],
                1,
                vec![span("a", 8, 20), span("a", 28, 32)],
            ),
            // Threads apart, in thread order.
            (
                vec![place("b", 5), place("a", 5)],
                1,
                vec![span("a", 3, 7), span("b", 3, 7)],
            ),
        ];
        for (places, window, want) in cases {
            assert_eq!(spans(&places, window), want, "{places:?} ±{window}");
        }
    }

    fn member(n: u128, thread: &str, seq: u64, tf: &[u32], len: usize) -> Member {
        Member {
            id: id(n),
            place: place(thread, seq),
            counts: TermCounts {
                tf: tf.to_vec(),
                len,
            },
        }
    }

    fn terms() -> Vec<String> {
        vec!["pottery".into(), "class".into()]
    }

    fn stats() -> CorpusStats {
        CorpusStats {
            n: 1000,
            avg_len: 10.0,
            df: [("pottery".to_string(), 5), ("class".to_string(), 50)].into(),
        }
    }

    /// [`widen`] over the query `pottery class` and [`stats`].
    fn scored(
        own: &[(Uuid, f64)],
        tops: &[Place],
        members: &[Member],
        context: Context,
    ) -> Vec<(Uuid, f64)> {
        let (terms, stats) = (terms(), stats());
        let scoring = Scoring {
            terms: &terms,
            stats: &stats,
            params: Bm25Params::default(),
        };
        widen(own, tops, members, scoring, context)
    }

    fn rank(list: &[(Uuid, f64)]) -> Vec<u128> {
        list.iter().map(|(id, _)| id.as_u128()).collect()
    }

    /// A thread `t`: 1 asks about the class, 2 answers without its words,
    /// 3 is small talk; 9 elsewhere holds the rarer term alone.
    fn thread() -> Vec<Member> {
        vec![
            member(1, "t", 1, &[0, 1], 8),
            member(2, "t", 2, &[0, 0], 8),
            member(3, "t", 3, &[0, 0], 8),
            member(4, "t", 4, &[0, 0], 8),
            member(9, "u", 7, &[1, 0], 8),
        ]
    }

    #[test]
    fn the_window_rules_hold() {
        let on = ON;
        let own = [(id(9), 2.0), (id(1), 1.0)];
        let tops = [place("u", 7), place("t", 1)];
        let members = thread();
        let cases: Vec<(&str, Context, Vec<Member>, Vec<u128>)> = vec![
            // Off, or nothing read: the list as it was.
            (
                "off",
                Context { window: 0, ..on },
                members.clone(),
                vec![9, 1],
            ),
            (
                "no weight",
                Context { weight: 0.0, ..on },
                members.clone(),
                vec![9, 1],
            ),
            ("nothing read", on, vec![], vec![9, 1]),
            // The answer next to the question joins the list, below the
            // question that holds the words; 3 is out of every top's
            // window (read only to make 2's whole).
            ("window 1", on, members.clone(), vec![9, 1, 2]),
            // Wider: 3 joins too, below 2 (a longer way from the words
            // reads as the same window here, so the ids decide).
            (
                "window 2",
                Context { window: 2, ..on },
                members.clone(),
                vec![9, 1, 2, 3],
            ),
        ];
        for (name, context, members, want) in cases {
            let got = scored(&own, &tops, &members, context);
            assert_eq!(rank(&got), want, "{name}: {got:?}");
        }
    }

    #[test]
    fn a_borrower_stays_below_the_message_that_holds_the_words() {
        // 1 holds a term, weakly; its neighbour 2 holds none, but 2's
        // window is shorter than 1's (0 is long) and scores higher.
        let members = vec![
            member(0, "t", 0, &[0, 0], 500),
            member(1, "t", 1, &[0, 1], 20),
            member(3, "t", 3, &[0, 0], 1),
            member(2, "t", 2, &[0, 0], 1),
            member(5, "v", 1, &[1, 1], 8),
        ];
        let own = [(id(5), 9.0), (id(1), 0.1)];
        let tops = [place("v", 1), place("t", 1)];
        for weight in [0.5, 1.0, 4.0, 100.0] {
            let context = Context { weight, ..ON };
            let got = scored(&own, &tops, &members, context);
            let at = |n: u128| got.iter().position(|(id, _)| id.as_u128() == n);
            assert!(at(1) < at(2), "weight {weight}: {got:?}");
            assert!(at(2).is_some(), "weight {weight}: the neighbour joins");
        }
    }

    #[test]
    fn a_window_with_more_of_the_terms_ranks_higher() {
        // 1 and 11 each hold "class"; 1's neighbour holds "pottery" too.
        let members = vec![
            member(1, "t", 1, &[0, 1], 8),
            member(2, "t", 2, &[1, 0], 8),
            member(11, "w", 1, &[0, 1], 8),
            member(12, "w", 2, &[0, 0], 8),
        ];
        let own = [(id(11), 1.0), (id(1), 1.0), (id(2), 1.5)];
        let tops = [place("t", 1), place("w", 1), place("t", 2)];
        let got = scored(&own, &tops, &members, ON);
        let at = |n: u128| got.iter().position(|(id, _)| id.as_u128() == n).unwrap();
        assert!(at(1) < at(11), "{got:?}");
    }

    fn near(n: u128, thread: &str, seq: u64, similarity: f64) -> Near {
        Near {
            id: id(n),
            place: place(thread, seq),
            similarity,
        }
    }

    #[test]
    fn a_semantic_window_lifts_the_reply_to_a_close_message() {
        // 1 is close to the query; 2 replies to it; 3 and 4 are far; 9
        // alone is a little closer than 2 on its own.
        let near = vec![
            near(1, "t", 1, 0.8),
            near(2, "t", 2, 0.3),
            near(3, "t", 3, 0.1),
            near(4, "t", 4, 0.0),
            near(9, "u", 4, 0.34),
        ];
        let own = [(id(1), 0.8), (id(9), 0.34), (id(2), 0.3)];
        let tops = [place("t", 1), place("u", 4)];
        let on = Context { weight: 1.0, ..ON };
        let cases: Vec<(&str, Context, Vec<u128>)> = vec![
            ("off", Context { window: 0, ..on }, vec![1, 9, 2]),
            ("window 1", on, vec![1, 2, 9]),
            // The window is the mean similarity: the far messages pull 2
            // back under 9.
            ("window 2", Context { window: 2, ..on }, vec![1, 9, 2, 3]),
        ];
        for (name, context, want) in cases {
            let got = blend(&own, &tops, &near, context);
            assert_eq!(rank(&got), want, "{name}: {got:?}");
            assert!(
                got.iter().all(|(_, s)| (0.0..=1.0).contains(s)),
                "{name}: a similarity still"
            );
        }
    }

    #[test]
    fn settings_are_checked() {
        let ok = ON;
        assert_eq!(ok.check(), Ok(()));
        for bad in [
            Context {
                window: MAX_WINDOW + 1,
                ..ok
            },
            Context {
                top: MAX_TOP + 1,
                ..ok
            },
            Context { weight: -1.0, ..ok },
            Context {
                weight: f64::NAN,
                ..ok
            },
            Context {
                weight: f64::INFINITY,
                ..ok
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_read_asks_for_every_place_its_stretches_cover() {
        let span = |from: u64, to: u64| span("t", from, to);
        // (stretches, messages asked for)
        let table: Vec<(Vec<Span>, usize)> = vec![
            (vec![], 0),
            (vec![span(3, 7)], 10),
            // Merged from several places: counted whole, not as one place's.
            (vec![span(0, 40)], 82),
            (vec![span(0, 4), span(10, 14)], 20),
            (vec![span(0, u64::MAX)], MAX_SPAN_READ),
        ];
        for (spans, want) in table {
            assert_eq!(read_limit(&spans), want, "{spans:?}");
        }
    }
}

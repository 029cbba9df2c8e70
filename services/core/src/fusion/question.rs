//! The question rule's fusion: whether a question is fused as Qdrant's one
//! call fuses ([`as_question`]), and the spread of a confident question's
//! first hits ([`fuse_spread`]).

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use super::{Fused, LexicalEntry, Lists, Settings, confidence, fuse};

/// Whether a question's lists are fused as a question ([`Settings::for_questions`],
/// from the question strategy's list): its dense list (`cosines`, best
/// first) is flat — its [`confidence`] below `question_confidence` —, so
/// neither channel's first stands out and both lists count alike. A dense list whose
/// first stands out keeps the configured fusion of the configured strategy's
/// list: a paraphrased question whose words flood the lexical list with
/// near-duplicates is answered by meaning.
pub fn as_question(cosines: &[f64], settings: &Settings) -> bool {
    settings.question_confidence > 0.0
        && confidence(cosines, settings.semantic_floor) < settings.question_confidence
}

/// Of a question whose dense list stands out (not [`as_question`]): how
/// many of its own fusion's first hits are kept first (every tier member
/// too, when there are more) ...
pub const QUESTION_KEEP: usize = 5;
/// ... and how many hits the first are filled to from Qdrant's one-call
/// fusion of the question strategy's list ([`Settings::for_questions`]),
/// its best first, each hit once.
pub const QUESTION_SPREAD: usize = 8;

/// A question whose dense list stands out: its lists fused as any search's,
/// the first [`QUESTION_KEEP`] hits kept (every tier member, when more), then
/// filled to [`QUESTION_SPREAD`] with the best of the one-call fusion of the
/// dense list and `asked` (the question strategy's list, RRF 1:1) not yet
/// in, then the rest of its own fusion — a hedge: what score fusion puts
/// first stays first, and the one call's own picks that it ranked lower are
/// still among the first eight. A hit placed from the one call keeps its
/// own fusion's explain where that fusion holds it (else the one call's),
/// and the score of the hit before it, so that scores never rise down the
/// list.
pub fn fuse_spread(
    lists: &Lists<'_>,
    asked: &[LexicalEntry],
    settings: &Settings,
    limit: usize,
) -> Vec<Fused> {
    let own = fuse(lists, settings, usize::MAX);
    let one_call = Lists {
        lexical: asked,
        lexical_reference: 0.0,
        ..*lists
    };
    let theirs = fuse(&one_call, &settings.for_questions(), QUESTION_SPREAD);
    let keep = own.iter().take_while(|h| h.tier).count().max(QUESTION_KEEP);
    let mut placed: HashSet<Uuid> = own.iter().take(keep).map(|h| h.id).collect();
    let mut own_at: HashMap<Uuid, usize> = HashMap::with_capacity(own.len());
    for (at, hit) in own.iter().enumerate() {
        own_at.insert(hit.id, at);
    }
    let mut out: Vec<Fused> = own.iter().take(keep).cloned().collect();
    for hit in theirs {
        if out.len() >= QUESTION_SPREAD {
            break;
        }
        if !placed.insert(hit.id) {
            continue;
        }
        let mut hit = match own_at.get(&hit.id) {
            Some(&at) => own[at].clone(),
            None => hit,
        };
        hit.score = out.last().map_or(hit.score, |before| before.score);
        hit.tier = false;
        out.push(hit);
    }
    out.extend(own.into_iter().filter(|h| !placed.contains(&h.id)));
    out.truncate(limit);
    out
}

//! Which tenants have ever been written into the shard, recorded in
//! `tenants.json` beside it: none, one, or many.
//!
//! Where it is one tenant, every point the shard holds — live, or deleted and
//! not yet vacuumed — is that tenant's, so a BM25 query of that tenant may
//! take Qdrant's text statistics over the whole shard, which the text index
//! keeps as counts, instead of gathering them over the tenant's points on
//! every query (the BM25 ranking, `rank.rs`): no statistic from another
//! tenant either way.
//!
//! The record changes at most twice in a shard's life (none → one → many),
//! written whole (a temporary file, synced, renamed) under the writes lock
//! before the first write naming a new tenant reaches the shard; a record
//! that cannot be written fails that write. A shard without the record (made
//! before it, or adopted), or whose record disagrees with its points at
//! load, counts as many.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::*;

/// The record's file, beside `shard/`.
pub(super) const TENANTS_FILE: &str = "tenants.json";

/// What the record says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Written {
    None,
    One(String),
    Many,
}

/// The tenants written into an open shard.
pub(super) struct Tenants {
    state: Mutex<State>,
}

struct State {
    written: Written,
    /// Counts the changes of `written`: a query compares the number it began
    /// with to the one it ends with ([`Tenants::sole`]).
    changes: u64,
}

impl Tenants {
    /// Writes the record of a new, empty shard in `dir`.
    pub(super) fn create(dir: &Path) -> Result<()> {
        write(dir, &Written::None)
    }

    /// The record in `dir`, checked against the shard's live points: a
    /// record of none over points, or of one tenant over another's points,
    /// is not believed (many).
    pub(super) fn load(dir: &Path, open: impl FnOnce(Option<&str>) -> Result<u64>) -> Result<Self> {
        let written = match read(dir)? {
            Some(Written::None) => match open(None)? {
                0 => Written::None,
                _ => Written::Many,
            },
            Some(Written::One(tenant)) => match open(Some(&tenant))? {
                0 => Written::One(tenant),
                _ => Written::Many,
            },
            Some(Written::Many) | None => Written::Many,
        };
        Ok(Self::new(written))
    }

    fn new(written: Written) -> Self {
        Self {
            state: Mutex::new(State {
                written,
                changes: 0,
            }),
        }
    }

    /// `Some` mark where every point ever written into the shard is
    /// `tenant`'s (or there is none): a query of the whole shard's
    /// statistics is then one of the tenant's. A query taking them compares
    /// the mark with the one it gets after it ran: equal, no other tenant's
    /// point can have reached the shard meanwhile (the record changes
    /// before the shard does).
    pub(super) fn sole(&self, tenant: &str) -> Option<u64> {
        let state = locked(&self.state);
        match &state.written {
            Written::None => Some(state.changes),
            Written::One(one) if one == tenant => Some(state.changes),
            _ => None,
        }
    }

    /// Whether at most one tenant was ever written into the shard.
    pub(super) fn one(&self) -> bool {
        !matches!(locked(&self.state).written, Written::Many)
    }

    /// Records `tenants`, about to be written into the shard in `dir`, under
    /// the writes lock (`_writing`): the record on disk first, then here.
    pub(super) fn admit<'a>(
        &self,
        dir: &Path,
        _writing: &kept::Writing<'_>,
        tenants: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        let mut state = locked(&self.state);
        let mut next = state.written.clone();
        for tenant in tenants {
            next = match next {
                Written::Many => break,
                Written::None => Written::One(tenant.to_string()),
                Written::One(one) if one == tenant => Written::One(one),
                Written::One(_) => Written::Many,
            };
        }
        if next != state.written {
            write(dir, &next)?;
            state.written = next;
            state.changes += 1;
        }
        Ok(())
    }
}

/// The record in `dir`; `None` where there is none.
fn read(dir: &Path) -> Result<Option<Written>> {
    let Some(bytes) = schema::read_if_present(&dir.join(TENANTS_FILE))? else {
        return Ok(None);
    };
    // An unreadable record only costs the shortcut: it counts as many.
    Ok(Some(
        serde_json::from_slice(&bytes).unwrap_or(Written::Many),
    ))
}

/// Records `written` in `dir` atomically: a temporary file, synced, renamed.
fn write(dir: &Path, written: &Written) -> Result<()> {
    let json = serde_json::to_vec(written)
        .map_err(|e| StoreError::Backend(format!("cannot encode the tenants record: {e}")))?;
    schema::write_atomically(dir, TENANTS_FILE, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_goes_from_none_to_one_to_many() {
        let dir = tempfile::tempdir().expect("tempdir");
        Tenants::create(dir.path()).expect("create");
        let kept = kept::Kept::default();
        let tenants = Tenants::load(dir.path(), |_| Ok(0)).expect("load");
        assert_eq!(tenants.sole("acme"), Some(0), "no point yet");

        let write = |names: &[&str]| {
            let writing = kept.writing();
            tenants.admit(dir.path(), &writing, names.iter().copied())
        };
        write(&["acme", "acme"]).expect("admit");
        let one = tenants.sole("acme");
        assert_eq!(one, Some(1));
        assert_eq!(tenants.sole("globex"), None);
        write(&["acme"]).expect("admit");
        assert_eq!(tenants.sole("acme"), one, "the same tenant changes nothing");
        assert_eq!(
            read(dir.path()).expect("read"),
            Some(Written::One("acme".into()))
        );

        write(&["acme", "globex"]).expect("admit");
        assert_eq!(tenants.sole("acme"), None);
        assert_eq!(tenants.sole("globex"), None);
        assert_eq!(read(dir.path()).expect("read"), Some(Written::Many));
        // Reloaded, it is what was recorded.
        let again = Tenants::load(dir.path(), |_| Ok(0)).expect("load");
        assert_eq!(again.sole("acme"), None);
    }

    #[test]
    fn a_record_the_points_contradict_counts_as_many() {
        let dir = tempfile::tempdir().expect("tempdir");
        // No record: a shard made before it.
        let tenants = Tenants::load(dir.path(), |_| Ok(0)).expect("load");
        assert_eq!(tenants.sole("acme"), None);

        write(dir.path(), &Written::One("acme".into())).expect("write");
        let believed = Tenants::load(dir.path(), |other| {
            assert_eq!(
                other,
                Some("acme"),
                "the points of tenants but acme are counted"
            );
            Ok(0)
        })
        .expect("load");
        assert_eq!(believed.sole("acme"), Some(0));
        let contradicted = Tenants::load(dir.path(), |_| Ok(3)).expect("load");
        assert_eq!(contradicted.sole("acme"), None);

        write(dir.path(), &Written::None).expect("write");
        let contradicted = Tenants::load(dir.path(), |all| {
            assert_eq!(all, None, "every point is counted");
            Ok(1)
        })
        .expect("load");
        assert_eq!(contradicted.sole("acme"), None);

        fs::write(dir.path().join(TENANTS_FILE), b"{not json").expect("write");
        let unreadable = Tenants::load(dir.path(), |_| Ok(0)).expect("load");
        assert_eq!(unreadable.sole("acme"), None);
    }
}

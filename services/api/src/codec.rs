//! The codec of every trine service: prost's, with each request's wire bytes
//! checked before they are decoded, so that a hostile message is refused
//! for the cost of reading its field headers, not of decoding it. A search
//! message is bounded by what a valid search can hold; an Upsert may carry
//! at most [`MAX_UPSERT`] records, each one's metadata at most
//! [`MAX_METADATA_WIRE_BYTES`] on the wire; a Get or Delete at most
//! [`MAX_IDS`] ids' worth. A request that does not decode is the caller's
//! error (INVALID_ARGUMENT), not the server's.

use std::any::TypeId;
use std::marker::PhantomData;

use prost::Message;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder};
use tonic_prost::{ProstDecoder, ProstEncoder};
use trine_core::model::{MAX_FILTER_VALUES, MAX_LABEL_BYTES, MAX_METADATA_BYTES, MAX_QUERY_BYTES};

use crate::v1;

/// Most records one Upsert may carry.
pub const MAX_UPSERT: usize = 1024;
/// Most ids one Get or Delete may carry.
pub const MAX_IDS: usize = 1024;

/// The largest search message (Search, Candidates, Nearest): a query of
/// [`MAX_QUERY_BYTES`], a filter of [`MAX_FILTER_VALUES`] projects and kinds
/// of [`MAX_LABEL_BYTES`] each, and room for the rest.
pub const MAX_SEARCH_MESSAGE_BYTES: usize =
    MAX_QUERY_BYTES + 2 * MAX_FILTER_VALUES * (MAX_LABEL_BYTES + 3) + 16 * 1024;

/// The largest Get or Delete message: [`MAX_IDS`] UUIDs and a tenant.
pub const MAX_IDS_MESSAGE_BYTES: usize = MAX_IDS * 40 + MAX_LABEL_BYTES + 64;
/// A Backup request is a name ([`MAX_BACKUP_NAME_BYTES`]) and its header.
pub const MAX_BACKUP_MESSAGE_BYTES: usize = MAX_BACKUP_NAME_BYTES + 8;
/// The longest backup name.
pub const MAX_BACKUP_NAME_BYTES: usize = 128;

/// The most bytes a memory's metadata may take on the wire: a JSON object of
/// [`MAX_METADATA_BYTES`] encodes to at most about 5.5 times as many (a list
/// of one-digit numbers); beyond 8 times, it cannot be within the limit.
pub const MAX_METADATA_WIRE_BYTES: usize = 8 * MAX_METADATA_BYTES;

/// prost's codec with [`precheck`] before each decode.
#[derive(Debug, Clone)]
pub struct BoundedCodec<T, U> {
    _pd: PhantomData<(T, U)>,
}

impl<T, U> Default for BoundedCodec<T, U> {
    fn default() -> Self {
        Self { _pd: PhantomData }
    }
}

impl<T, U> Codec for BoundedCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = BoundedDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        BoundedDecoder {
            inner: ProstDecoder::default(),
        }
    }
}

/// Decodes `U` after [`precheck`].
#[derive(Debug)]
pub struct BoundedDecoder<U> {
    inner: ProstDecoder<U>,
}

impl<U: Message + Default + 'static> Decoder for BoundedDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        use bytes::Buf;
        precheck::<U>(buf.chunk()).map_err(Status::invalid_argument)?;
        let request = is_request::<U>();
        self.inner.decode(buf).map_err(|e| {
            if request {
                Status::invalid_argument(format!("the request does not decode: {}", e.message()))
            } else {
                e
            }
        })
    }

    fn buffer_settings(&self) -> tonic::codec::BufferSettings {
        self.inner.buffer_settings()
    }
}

fn is<U: 'static, M: 'static>() -> bool {
    TypeId::of::<U>() == TypeId::of::<M>()
}

fn is_request<U: 'static>() -> bool {
    is::<U, v1::SearchRequest>()
        || is::<U, v1::UpsertRequest>()
        || is::<U, v1::GetRequest>()
        || is::<U, v1::DeleteRequest>()
        || is::<U, v1::ValidityRequest>()
        || is::<U, v1::BackupRequest>()
        || is::<U, v1::CandidatesRequest>()
        || is::<U, v1::NearestRequest>()
        || is::<U, v1::EmbedRequest>()
        || is::<U, v1::FuseRequest>()
}

/// Refuses the wire bytes of a `U` that cannot be a valid request, saying
/// why, without decoding them. Other messages (responses) pass.
pub fn precheck<U: 'static>(bytes: &[u8]) -> Result<(), String> {
    let bounded = |what: &str, max: usize| {
        if bytes.len() > max {
            Err(format!(
                "a {what} message is {} bytes, more than the {max} a valid one can be",
                bytes.len()
            ))
        } else {
            Ok(())
        }
    };
    if is::<U, v1::SearchRequest>() {
        bounded("Search", MAX_SEARCH_MESSAGE_BYTES).and_then(|()| filters(bytes))
    } else if is::<U, v1::CandidatesRequest>() {
        bounded("Candidates", MAX_SEARCH_MESSAGE_BYTES).and_then(|()| filters(bytes))
    } else if is::<U, v1::NearestRequest>() {
        bounded("Nearest", MAX_SEARCH_MESSAGE_BYTES).and_then(|()| filters(bytes))
    } else if is::<U, v1::GetRequest>() {
        bounded("Get", MAX_IDS_MESSAGE_BYTES)
    } else if is::<U, v1::DeleteRequest>() {
        bounded("Delete", MAX_IDS_MESSAGE_BYTES)
    } else if is::<U, v1::ValidityRequest>() {
        bounded("Forget or Restore", MAX_IDS_MESSAGE_BYTES)
    } else if is::<U, v1::BackupRequest>() {
        bounded("Backup", MAX_BACKUP_MESSAGE_BYTES)
    } else if is::<U, v1::UpsertRequest>() {
        upsert(bytes)
    } else {
        Ok(())
    }
}

/// A search message's `filters` (field 2 of Search, Candidates and Nearest)
/// names at most [`MAX_FILTER_VALUES`] projects (its field 2) and kinds (3).
fn filters(bytes: &[u8]) -> Result<(), String> {
    for field in Fields(bytes) {
        let Ok((2, Some(filters))) = field else {
            continue;
        };
        let (mut projects, mut kinds) = (0usize, 0usize);
        for inner in Fields(filters) {
            match inner {
                Ok((2, _)) => projects += 1,
                Ok((3, _)) => kinds += 1,
                _ => {}
            }
        }
        for (name, n) in [("projects", projects), ("kinds", kinds)] {
            if n > MAX_FILTER_VALUES {
                return Err(format!(
                    "filters.{name} names {n} values, more than the {MAX_FILTER_VALUES} allowed"
                ));
            }
        }
    }
    Ok(())
}

/// `UpsertRequest.records` (field 1) and each record's `metadata` (field 10)
/// by their length prefixes. Bytes that are not a well-formed message pass,
/// for the decoder to refuse.
fn upsert(bytes: &[u8]) -> Result<(), String> {
    let mut records = 0usize;
    for field in Fields(bytes) {
        let Ok((1, Some(record))) = field else {
            continue;
        };
        if records == MAX_UPSERT {
            return Err(format!(
                "more than the {MAX_UPSERT} records allowed in one upsert: send smaller batches"
            ));
        }
        for inner in Fields(record) {
            if let Ok((10, Some(metadata))) = inner
                && metadata.len() > MAX_METADATA_WIRE_BYTES
            {
                return Err(format!(
                    "record {records}: metadata is {} bytes on the wire, more than a JSON object of {MAX_METADATA_BYTES} bytes can be",
                    metadata.len()
                ));
            }
        }
        records += 1;
    }
    Ok(())
}

/// The fields of a protobuf message: (number, the bytes of a
/// length-delimited field); `Err` once the bytes are not well formed (and
/// then the end).
struct Fields<'a>(&'a [u8]);

fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Option<&'a [u8]>), ()>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let mut rest = self.0;
        let parsed = (|| {
            let key = varint(&mut rest)?;
            let (number, wire) = (key >> 3, key & 7);
            let skip = |rest: &mut &'a [u8], n: usize| -> Option<&'a [u8]> {
                let (taken, after) = (rest.get(..n)?, rest.get(n..)?);
                *rest = after;
                Some(taken)
            };
            let body = match wire {
                0 => {
                    varint(&mut rest)?;
                    None
                }
                1 => skip(&mut rest, 8).map(|_| None)?,
                2 => {
                    let n = usize::try_from(varint(&mut rest)?).ok()?;
                    Some(skip(&mut rest, n)?)
                }
                5 => skip(&mut rest, 4).map(|_| None)?,
                _ => return None,
            };
            Some((number, body))
        })();
        match parsed {
            Some(field) => {
                self.0 = rest;
                Some(Ok(field))
            }
            None => {
                self.0 = &[];
                Some(Err(()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_types::{Struct, Value, value::Kind};

    fn metadata(fields: usize) -> Struct {
        Struct {
            fields: (0..fields)
                .map(|i| {
                    (
                        format!("k{i}"),
                        Value {
                            kind: Some(Kind::NumberValue(1.0)),
                        },
                    )
                })
                .collect(),
        }
    }

    fn upsert_of(records: usize, fields: usize) -> Vec<u8> {
        v1::UpsertRequest {
            records: (0..records)
                .map(|_| v1::Record {
                    text: "t".into(),
                    tenant: "acme".into(),
                    metadata: (fields > 0).then(|| metadata(fields)),
                    ..v1::Record::default()
                })
                .collect(),
        }
        .encode_to_vec()
    }

    #[test]
    fn requests_that_cannot_be_valid_are_refused_before_decoding() {
        let search = |query: usize, projects: usize| {
            v1::SearchRequest {
                query: "q".repeat(query),
                filters: Some(v1::Filters {
                    tenant: "t".repeat(MAX_LABEL_BYTES),
                    projects: vec!["p".repeat(MAX_LABEL_BYTES); projects],
                    kinds: vec!["k".repeat(MAX_LABEL_BYTES); MAX_FILTER_VALUES],
                    source_prefix: "s".repeat(4096),
                    ..v1::Filters::default()
                }),
                ..v1::SearchRequest::default()
            }
            .encode_to_vec()
        };
        let ids = |n: usize| {
            v1::GetRequest {
                tenant: "t".repeat(MAX_LABEL_BYTES),
                ids: vec!["00000000-0000-4000-8000-000000000000".into(); n],
            }
            .encode_to_vec()
        };
        // The largest valid ones pass.
        assert_eq!(
            precheck::<v1::SearchRequest>(&search(MAX_QUERY_BYTES, MAX_FILTER_VALUES)),
            Ok(())
        );
        assert_eq!(precheck::<v1::GetRequest>(&ids(MAX_IDS)), Ok(()));
        assert_eq!(
            precheck::<v1::UpsertRequest>(&upsert_of(MAX_UPSERT, 0)),
            Ok(())
        );
        assert_eq!(precheck::<v1::UpsertRequest>(&upsert_of(2, 5_000)), Ok(()));
        // Beyond: refused, saying why.
        let e = precheck::<v1::SearchRequest>(&search(4 << 20, 0)).unwrap_err();
        assert!(e.starts_with("a Search message is 4"), "{e}");
        assert!(precheck::<v1::NearestRequest>(&search(0, 10_000)).is_err());
        let short = v1::CandidatesRequest {
            filters: Some(v1::Filters {
                tenant: "t".into(),
                kinds: (0..1000).map(|i| i.to_string()).collect(),
                ..v1::Filters::default()
            }),
            ..v1::CandidatesRequest::default()
        }
        .encode_to_vec();
        assert_eq!(
            precheck::<v1::CandidatesRequest>(&short),
            Err("filters.kinds names 1000 values, more than the 64 allowed".to_string())
        );
        assert!(precheck::<v1::DeleteRequest>(&ids(2 * MAX_IDS)).is_err());
        let e = precheck::<v1::UpsertRequest>(&upsert_of(MAX_UPSERT + 1, 0)).unwrap_err();
        assert!(e.contains("more than the 1024 records"), "{e}");
        let e = precheck::<v1::UpsertRequest>(&upsert_of(1, 100_000)).unwrap_err();
        assert!(e.starts_with("record 0: metadata is "), "{e}");
        // Responses and malformed bytes are the decoder's business.
        assert_eq!(precheck::<v1::SearchResponse>(&search(4 << 20, 0)), Ok(()));
        assert_eq!(
            precheck::<v1::UpsertRequest>(&[0x0a, 0xff, 0xff, 0xff]),
            Ok(())
        );
    }

    #[test]
    fn metadata_within_the_json_limit_fits_the_wire_bound() {
        // A list of small numbers: the densest JSON against its wire size.
        let of = |n: usize| {
            let list = Value {
                kind: Some(Kind::ListValue(prost_types::ListValue {
                    values: vec![
                        Value {
                            kind: Some(Kind::NumberValue(1.0)),
                        };
                        n
                    ],
                })),
            };
            let s = Struct {
                fields: [("l".to_string(), list)].into(),
            };
            let json = serde_json::to_vec(&crate::convert::struct_to_json(s.clone()))
                .unwrap()
                .len();
            (s, json)
        };
        let (_, json) = of(1000);
        let (s, json) = of(1000 * (MAX_METADATA_BYTES - 64) / json);
        assert!(
            json <= MAX_METADATA_BYTES && json > MAX_METADATA_BYTES - 256,
            "{json}"
        );
        assert!(
            s.encoded_len() <= MAX_METADATA_WIRE_BYTES,
            "{} on the wire",
            s.encoded_len()
        );
    }

    #[test]
    fn fields_are_read_by_their_headers() {
        let bytes = v1::DeleteRequest {
            tenant: "acme".into(),
            ids: vec!["a".into(), "bc".into()],
        }
        .encode_to_vec();
        let fields: Vec<_> = Fields(&bytes).collect();
        assert_eq!(
            fields,
            [
                Ok((1, Some(&b"acme"[..]))),
                Ok((2, Some(&b"a"[..]))),
                Ok((2, Some(&b"bc"[..])))
            ]
        );
        assert_eq!(Fields(&[0x0a, 0x05, 0x01]).collect::<Vec<_>>(), [Err(())]);
        assert_eq!(
            Fields(&[0x08, 0x96, 0x01]).collect::<Vec<_>>(),
            [Ok((1, None))]
        );
    }
}

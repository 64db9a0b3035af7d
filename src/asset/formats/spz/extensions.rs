//! SPZ extension records: `[u32 type][u32 byte length][payload]`, back to back, after
//! the SH bytes (v1–3) or between the header and the TOC (v4). None changes how the
//! core arrays decode except Adobe's coordinate-system record, which says the data is
//! stored in a frame other than RUB; the loader reports the types so a caller can warn.

/// Adobe's record naming the frame the data is stored in (payload: one u32 enum).
pub const ADOBE_COORDINATE_SYSTEM: u32 = 0xADBE_0003;

/// The type IDs of the whole records in `bytes`; a trailing partial record is dropped.
pub(crate) fn record_types(mut bytes: &[u8]) -> Vec<u32> {
    let mut types = Vec::new();
    while let Some((head, rest)) = bytes.split_first_chunk::<8>() {
        let [t0, t1, t2, t3, l0, l1, l2, l3] = *head;
        let len = u32::from_le_bytes([l0, l1, l2, l3]) as usize;
        let Some(after) = rest.get(len..) else { break };
        types.push(u32::from_le_bytes([t0, t1, t2, t3]));
        bytes = after;
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_records_only() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&ADOBE_COORDINATE_SYSTEM.to_le_bytes());
        bytes.extend_from_slice(&4u32.to_le_bytes());
        bytes.extend_from_slice(&6u32.to_le_bytes());
        bytes.extend_from_slice(&0xADBE_0002u32.to_le_bytes());
        bytes.extend_from_slice(&100u32.to_le_bytes());
        bytes.extend_from_slice(&[0; 10]);
        assert_eq!(record_types(&bytes), vec![ADOBE_COORDINATE_SYSTEM]);
        assert!(record_types(&[1, 2, 3]).is_empty());
    }
}

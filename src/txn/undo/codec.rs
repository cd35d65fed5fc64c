//! Little-endian fields of undo blocks and undo segment headers, and the 8-byte encodings
//! of a transaction id and an undo record address that both use.
//!
//! ```text
//!  xid (8 bytes):  0 usn u16 | 2 slot u16 | 4 wrap u32
//!  uba (8 bytes):  0 block address u32 | 4 block sequence u16 | 6 record u8 | 7 (pad)
//! ```
//!
//! Callers check that a field lies inside the block before reading it; these helpers
//! index directly.

use crate::txn::{Uba, Xid};

pub(super) const XID_LEN: usize = 8;
pub(super) const UBA_LEN: usize = 8;

pub(super) fn get_u16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

pub(super) fn put_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}

pub(super) fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

pub(super) fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

pub(super) fn get_u64(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

pub(super) fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

pub(super) fn get_xid(b: &[u8], off: usize) -> Xid {
    Xid { usn: get_u16(b, off), slot: get_u16(b, off + 2), wrap: get_u32(b, off + 4) }
}

pub(super) fn put_xid(b: &mut [u8], off: usize, xid: Xid) {
    put_u16(b, off, xid.usn);
    put_u16(b, off + 2, xid.slot);
    put_u32(b, off + 4, xid.wrap);
}

pub(super) fn get_uba(b: &[u8], off: usize) -> Uba {
    Uba { rdba: get_u32(b, off), seq: get_u16(b, off + 4), record: b[off + 6] }
}

pub(super) fn put_uba(b: &mut [u8], off: usize, uba: Uba) {
    put_u32(b, off, uba.rdba);
    put_u16(b, off + 4, uba.seq);
    b[off + 6] = uba.record;
    b[off + 7] = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xid_and_uba_round_trip() {
        let mut b = [0u8; 16];
        let xid = Xid { usn: 7, slot: 33, wrap: 0xdead_beef };
        let uba = Uba { rdba: 0x0080_0012, seq: 65_000, record: 254 };
        put_xid(&mut b, 0, xid);
        put_uba(&mut b, 8, uba);
        assert_eq!(get_xid(&b, 0), xid);
        assert_eq!(get_uba(&b, 8), uba);
    }
}

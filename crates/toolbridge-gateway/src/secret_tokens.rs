//! Secret tokens: made of 32 random bytes from the system (`getrandom`),
//! written in hex, and compared in constant time (`subtle`). The gateway's
//! own token, the page's sessions, client tokens and held-call states all
//! come from here; a module of its own so that those parts do not depend on
//! each other for it.

/// 32 random bytes from the system, as hex.
pub(crate) fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
    Ok(hex(&bytes))
}

/// `bytes` in lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// True when `a` equals `b`, in a time that does not depend on where they
/// differ (`subtle`; a length mismatch returns at once: the lengths of the
/// tokens compared here are not secret).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq as _;
    a.ct_eq(b).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_32_random_bytes_in_hex_and_compare_by_content() {
        let (a, b) = (
            random_token().expect("token"),
            random_token().expect("token"),
        );
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
        assert!(constant_time_eq(b"abc", b"abc") && !constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
